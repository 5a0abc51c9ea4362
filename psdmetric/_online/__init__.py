"""Online learners with ``partial_fit``: MEG (Tsuda, Rätsch & Warmuth, 2005), the Burg
regressions (Jain, Kulis & Dhillon, 2007) and POLA (Shalev-Shwartz, Singer & Ng, 2004)."""

from ._burg import OnlineLogDet
from ._burg_regressor import BurgRegressor
from ._meg import MEG
from ._kernel_pola import KernelPOLA
from ._pola import POLA

__all__ = ["BurgRegressor", "KernelPOLA", "MEG", "OnlineLogDet", "POLA"]
