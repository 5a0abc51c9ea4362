"""Online learners with ``partial_fit``: MEG (Tsuda, Rätsch & Warmuth, 2005), the Burg
regressions (Jain, Kulis & Dhillon, 2007) and POLA (Shalev-Shwartz, Singer & Ng, 2004)."""

from ._burg import BurgRegressor, OnlineLogDet
from ._meg import MEG
from ._pola import KernelPOLA, POLA

__all__ = ["BurgRegressor", "KernelPOLA", "MEG", "OnlineLogDet", "POLA"]
