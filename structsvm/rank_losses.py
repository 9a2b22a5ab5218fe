"""Deprecated: moved to :mod:`structsvm.losses.ranking` (this re-export warns)."""
import warnings

from .losses.ranking import SwappedPairsLoss  # noqa: F401

warnings.warn("structsvm.rank_losses is deprecated; import from structsvm.losses.ranking "
              "(or structsvm.losses)", DeprecationWarning, stacklevel=2)

__all__ = ["SwappedPairsLoss"]
