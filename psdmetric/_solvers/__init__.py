"""Shared numerical machinery: projection drivers and compiled kernels."""

from ._cyclic import cyclic_projections, dual_change
from ._logdet_kernels import cholupdatemult, logdet_sweep

__all__ = ["cholupdatemult", "cyclic_projections", "dual_change", "logdet_sweep"]
