"""CRAFT: clustering of mixed data with cluster-specific feature selection."""

from .exceptions import CraftInputError

__all__ = ["CraftInputError"]
