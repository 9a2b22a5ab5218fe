"""Deprecated: moved to :mod:`structsvm.losses.tree` (this re-export warns)."""
import warnings

from .losses.tree import TreeDistanceLoss, common_depth  # noqa: F401

warnings.warn("structsvm.tree_losses is deprecated; import from structsvm.losses.tree "
              "(or structsvm.losses)", DeprecationWarning, stacklevel=2)

__all__ = ["TreeDistanceLoss", "common_depth"]
