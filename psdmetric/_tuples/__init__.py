"""Meta-estimators whose samples are tuples of points: pairs and triplets."""

from ._pairs import PairsClassifier
from ._triplets import TripletsClassifier

__all__ = ["PairsClassifier", "TripletsClassifier"]
