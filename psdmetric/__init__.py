"""psdmetric: metric learning with PSD matrices, the scikit-learn way."""

# First: in an unbuilt source tree, fail with instructions.
from . import _check_build  # noqa: F401
from ._base import MahalanobisMixin
from ._burg import BurgRegressor, OnlineLogDet
from ._constraints import (
    DistanceTargets,
    PairConstraints,
    TripletConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    squared_distance_bounds,
    triplets_from_labels,
)
from ._cv import LogDetCV, VonNeumannCV
from ._definite_boost import DefiniteBoost
from ._divergences import logdet_divergence, von_neumann_divergence
from ._logdet import LogDet
from ._meg import MEG
from ._pola import KernelPOLA, POLA
from ._psdboost import PSDBoost
from ._von_neumann import VonNeumann
from ._weakly_supervised import PairsClassifier, TripletsClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "BurgRegressor",
    "DefiniteBoost",
    "DistanceTargets",
    "KernelPOLA",
    "LogDet",
    "LogDetCV",
    "MEG",
    "MahalanobisMixin",
    "OnlineLogDet",
    "POLA",
    "PSDBoost",
    "PairConstraints",
    "PairsClassifier",
    "TripletConstraints",
    "TripletsClassifier",
    "VonNeumann",
    "VonNeumannCV",
    "distance_targets_from_labels",
    "logdet_divergence",
    "pairs_from_labels",
    "squared_distance_bounds",
    "triplets_from_labels",
    "von_neumann_divergence",
]
