"""The shared core every learner family builds on; it imports no family.

The estimator API (:class:`MahalanobisMixin`), the constraint types and how they are
drawn from labels, the iteration driver, thread control, the divergences, and the
compiled kernels more than one family needs: pair distances and CHOLUPDATEMULT on a
factored metric, the rank-one eigen update and its secular solver, cyclic projections.
"""

from ._base import MahalanobisMixin, PairClassifierMixin, column_signs, oriented_columns
from ._guards import AtomicFit, check_informative, check_scale
from ._constraints import (
    DistanceTargets,
    PairConstraints,
    QuadrupletConstraints,
    TripletConstraints,
    check_bounds,
    check_indices,
)
from ._cyclic import cyclic_projections, dual_change, paired_rows, screen_violations
from ._divergences import logdet_divergence, von_neumann_divergence
from ._driver import ArrayCheckpoint, EstimatorCheckpoint, Round, iterate
from ._eigen_update import rank_one_eigen_update
from ._lbfgs import LBFGS
from ._principal import (AUTO_COMPONENTS, leading_axes, learned_dimension, on_leading_axes,
                         principal_axes, span_coordinates, span_of_scatter,
                         spread_columns)
from ._projections import leading_eigenpairs, project_trace_bounded
from ._factor_kernels import cholupdatemult, pair_squared_distances
from ._sampling import (
    distance_targets_from_labels,
    pairs_from_labels,
    squared_distance_bounds,
    triplets_from_labels,
)
from ._threads import one_blas_thread, one_thread, threadpool_controller

__all__ = [
    "AUTO_COMPONENTS",
    "ArrayCheckpoint",
    "AtomicFit",
    "DistanceTargets",
    "EstimatorCheckpoint",
    "LBFGS",
    "MahalanobisMixin",
    "PairClassifierMixin",
    "PairConstraints",
    "QuadrupletConstraints",
    "Round",
    "TripletConstraints",
    "check_bounds",
    "check_scale",
    "check_indices",
    "check_informative",
    "cholupdatemult",
    "column_signs",
    "cyclic_projections",
    "distance_targets_from_labels",
    "dual_change",
    "iterate",
    "leading_axes",
    "leading_eigenpairs",
    "learned_dimension",
    "logdet_divergence",
    "on_leading_axes",
    "one_blas_thread",
    "one_thread",
    "oriented_columns",
    "pair_squared_distances",
    "principal_axes",
    "paired_rows",
    "pairs_from_labels",
    "project_trace_bounded",
    "rank_one_eigen_update",
    "screen_violations",
    "span_coordinates",
    "span_of_scatter",
    "spread_columns",
    "squared_distance_bounds",
    "threadpool_controller",
    "triplets_from_labels",
    "von_neumann_divergence",
]
