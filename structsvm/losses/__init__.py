"""Task losses Δ(y, ŷ): the registry and every loss structsvm ships.

- :mod:`structsvm.losses.basic`: the registry (:func:`get_loss`,
  :func:`register_loss`), zero-one, Hamming and user callables;
- :mod:`structsvm.losses.tree`: tree distance between taxonomy paths;
- :mod:`structsvm.losses.ranking`: swapped preference pairs (ranking SVM);
- :mod:`structsvm.losses.spans`: labelled spans of parse trees;
- :mod:`structsvm.losses.alignment`: gold pairs missed by an alignment.

Losses are resolved by name (``"zero_one"``, ``"hamming"``, ``"tree_distance"``,
``"swapped_pairs"``, ``"spans"``, ``"alignment"``), passed as instances, or given
as callables.

>>> from structsvm.losses import get_loss
>>> get_loss("hamming")([0, 1, 2], [0, 2, 2])
1.0
"""
from .alignment import AlignmentLoss
from .basic import (LOSSES, BaseLoss, CallableLoss, HammingLoss, ZeroOneLoss, get_loss,
                    register_loss)
from .ranking import SwappedPairsLoss
from .spans import SpanLoss
from .tree import TreeDistanceLoss, common_depth

__all__ = ["BaseLoss", "ZeroOneLoss", "HammingLoss", "CallableLoss", "TreeDistanceLoss",
           "SwappedPairsLoss", "SpanLoss", "AlignmentLoss", "common_depth", "LOSSES",
           "get_loss", "register_loss"]
