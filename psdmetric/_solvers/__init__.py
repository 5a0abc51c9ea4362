"""Shared numerical machinery: projection drivers and compiled kernels."""

from ._cyclic import checkpoint, cyclic_projections, dual_change, roll_back
from ._eigen_update import (
    definite_boost_steps,
    meg_pass,
    rank_one_eigen_update,
    von_neumann_sweep,
)
from ._logdet_kernels import cholupdatemult, logdet_sweep
from ._online_kernels import (
    burg_matrix_pass,
    burg_vector_pass,
    kernel_pola_block,
    pola_pass,
)

__all__ = [
    "burg_matrix_pass",
    "burg_vector_pass",
    "checkpoint",
    "cholupdatemult",
    "cyclic_projections",
    "definite_boost_steps",
    "dual_change",
    "kernel_pola_block",
    "logdet_sweep",
    "meg_pass",
    "pola_pass",
    "rank_one_eigen_update",
    "roll_back",
    "von_neumann_sweep",
]
