"""Shared numerical machinery: the iteration driver and the compiled kernels."""

from ._cyclic import cyclic_projections, dual_change, paired_rows, screen_violations
from ._driver import ArrayCheckpoint, EstimatorCheckpoint, Round, iterate
from ._definite_boost_kernels import definite_boost_steps
from ._eigen_update import rank_one_eigen_update
from ._logdet_kernels import cholupdatemult, logdet_sweep, pair_squared_distances
from ._meg_kernels import meg_pass
from ._online_kernels import (
    burg_matrix_pass,
    burg_vector_pass,
    kernel_pola_block,
    pola_pass,
)
from ._threads import one_blas_thread, threadpool_controller
from ._von_neumann_kernels import von_neumann_krylov_sweep, von_neumann_sweep

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
    "one_blas_thread",
    "pair_squared_distances",
    "paired_rows",
    "pola_pass",
    "rank_one_eigen_update",
    "screen_violations",
    "threadpool_controller",
    "von_neumann_krylov_sweep",
    "von_neumann_sweep",
]
