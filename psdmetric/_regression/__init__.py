"""Metric learning for regression: MLKR (continuous targets)."""

from ._mlkr import MLKR

__all__ = ["MLKR"]
