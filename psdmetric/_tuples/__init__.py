"""Meta-estimators whose samples are tuples of points: pairs, triplets and quadruplets."""

from ._pairs import PairsClassifier
from ._quadruplets import QuadrupletsClassifier
from ._triplets import TripletsClassifier

__all__ = ["PairsClassifier", "QuadrupletsClassifier", "TripletsClassifier"]
