"""Closed-form learners: RCA (chunklets) and LFDA (local Fisher discriminant analysis)."""

from ._lfda import LFDA
from ._rca import RCA

__all__ = ["LFDA", "RCA"]
