"""Shared numerical machinery: the iteration driver and the compiled kernels."""

from ._cyclic import cyclic_projections, dual_change
from ._driver import ArrayCheckpoint, EstimatorCheckpoint, Round, iterate
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
    "ArrayCheckpoint",
    "EstimatorCheckpoint",
    "Round",
    "burg_matrix_pass",
    "burg_vector_pass",
    "cholupdatemult",
    "cyclic_projections",
    "definite_boost_steps",
    "dual_change",
    "iterate",
    "kernel_pola_block",
    "logdet_sweep",
    "meg_pass",
    "pola_pass",
    "rank_one_eigen_update",
    "von_neumann_sweep",
]
