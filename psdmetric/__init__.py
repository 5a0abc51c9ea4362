"""psdmetric: metric learning with PSD matrices, the scikit-learn way."""

from ._base import MahalanobisMixin
from ._constraints import (
    DistanceTargets,
    PairConstraints,
    TripletConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    squared_distance_bounds,
    triplets_from_labels,
)
from ._logdet import LogDet

__version__ = "0.1.0.dev0"

__all__ = [
    "DistanceTargets",
    "LogDet",
    "MahalanobisMixin",
    "PairConstraints",
    "TripletConstraints",
    "distance_targets_from_labels",
    "pairs_from_labels",
    "squared_distance_bounds",
    "triplets_from_labels",
]
