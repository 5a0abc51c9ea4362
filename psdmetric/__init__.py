"""psdmetric: metric learning with PSD matrices, the scikit-learn way."""

from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSION_SUFFIXES
from pathlib import Path as _Path


def _check_built():
    """Fail with instructions, not a bare ModuleNotFoundError, in an unbuilt source tree."""
    solvers = _Path(__file__).parent / "_solvers"
    built = {path.name.split(".")[0] for suffix in _EXTENSION_SUFFIXES
             for path in solvers.glob("*" + suffix)}
    missing = sorted(path.stem for path in solvers.glob("*.pyx") if path.stem not in built)
    if missing:
        raise ImportError(
            f"psdmetric is being imported from its source tree ({_Path(__file__).parent}), "
            f"whose compiled kernels are not built ({', '.join(missing)}). Either install "
            "psdmetric (`pip install .`) and run Python from outside the source tree (the "
            "installed `psdmetric demo` command works from anywhere), or build it in place "
            "for development: `pip install -e .`."
        )


_check_built()

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
from ._divergences import logdet_divergence, von_neumann_divergence
from ._logdet import LogDet
from ._meg import MEG
from ._pola import KernelPOLA, POLA
from ._psdboost import PSDBoost
from ._von_neumann import DefiniteBoost, VonNeumann

__version__ = "0.1.0.dev0"

__all__ = [
    "BurgRegressor",
    "DefiniteBoost",
    "DistanceTargets",
    "KernelPOLA",
    "LogDet",
    "MEG",
    "MahalanobisMixin",
    "OnlineLogDet",
    "POLA",
    "PSDBoost",
    "PairConstraints",
    "TripletConstraints",
    "VonNeumann",
    "distance_targets_from_labels",
    "logdet_divergence",
    "pairs_from_labels",
    "squared_distance_bounds",
    "triplets_from_labels",
    "von_neumann_divergence",
]
