"""Meta-estimators whose samples are tuples of points: pairs and triplets."""

from ._base import PairsClassifier, TripletsClassifier

__all__ = ["PairsClassifier", "TripletsClassifier"]
