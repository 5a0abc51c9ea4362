"""Large-margin nearest-neighbour metric learning (Weinberger & Saul, 2009)."""

from ._lmnn import LMNN

__all__ = ["LMNN"]
