"""Pair learners solved by Bregman projections: LogDet (ITML), VonNeumann, DefiniteBoost,
and their cross-validated forms (Kulis, Sustik & Dhillon, 2009; Tsuda, Rätsch & Warmuth,
2005)."""

from ._cv import LogDetCV, VonNeumannCV
from ._definite_boost import DefiniteBoost
from ._logdet import LogDet
from ._von_neumann import VonNeumann

__all__ = ["DefiniteBoost", "LogDet", "LogDetCV", "VonNeumann", "VonNeumannCV"]
