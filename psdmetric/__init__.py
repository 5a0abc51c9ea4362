"""psdmetric: metric learning with PSD matrices, the scikit-learn way."""

# First: in an unbuilt source tree, fail with instructions.
from . import _check_build  # noqa: F401
from ._boost import PSDBoost
from ._bregman import DefiniteBoost, LogDet, LogDetCV, VonNeumann, VonNeumannCV
from ._closed_form import LFDA, RCA
from ._convex import LSML, MMC, SCML, SDML
from ._core import MahalanobisMixin, logdet_divergence, von_neumann_divergence
from ._core import (
    DistanceTargets,
    PairConstraints,
    QuadrupletConstraints,
    TripletConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    squared_distance_bounds,
    triplets_from_labels,
)
from ._large_margin import LMNN
from ._online import MEG, POLA, BurgRegressor, KernelPOLA, OnlineLogDet
from ._regression import MLKR
from ._tuples import PairsClassifier, QuadrupletsClassifier, TripletsClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "BurgRegressor",
    "DefiniteBoost",
    "DistanceTargets",
    "KernelPOLA",
    "LFDA",
    "LMNN",
    "LSML",
    "LogDet",
    "LogDetCV",
    "MEG",
    "MLKR",
    "MMC",
    "MahalanobisMixin",
    "OnlineLogDet",
    "POLA",
    "PSDBoost",
    "PairConstraints",
    "PairsClassifier",
    "QuadrupletConstraints",
    "QuadrupletsClassifier",
    "RCA",
    "SCML",
    "SDML",
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
