"""PSDBoost: column generation over rank-one bases (Shen, Welsh & Wang, 2008)."""

from ._psdboost import PSDBoost

__all__ = ["PSDBoost"]
