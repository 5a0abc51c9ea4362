"""Convex metric learners: MMC, SDML, LSML and SCML."""

from ._mmc import MMC
from ._lsml import LSML
from ._scml import SCML
from ._sdml import SDML

__all__ = ["LSML", "MMC", "SCML", "SDML"]
