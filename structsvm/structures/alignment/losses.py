"""Alignment loss: the fraction of the gold aligned pairs a predicted alignment misses.

An encoded alignment of sequences s (length n) and t (length m) is an integer array of
shape (k, 2): the aligned index pairs (i, j), strictly increasing in both columns;
every other position is a gap. The loss counts the gold pairs missing from the
prediction, which decomposes over the match cells (i, j) of the alignment's dynamic
program: a predicted pair scores −1/|y| where it is gold.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..losses import BaseLoss

__all__ = ["AlignmentLoss", "as_pairs", "pair_keys", "common_pairs"]


def as_pairs(y):
    """An alignment as an int64 array of shape (k, 2) (no validation beyond the shape).

    Examples
    --------
    >>> as_pairs([(0, 0), (2, 1)]).tolist()
    [[0, 0], [2, 1]]
    """
    y = np.asarray(y, dtype=np.int64)
    if y.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if y.ndim != 2 or y.shape[1] != 2:
        raise ValueError(f"an alignment is an array of shape (k, 2) of index pairs, "
                         f"got shape {y.shape}")
    return y


def pair_keys(y):
    """One int64 key per aligned pair (i, j): ``i * 2**31 + j``."""
    y = as_pairs(y)
    return y[:, 0] * (1 << 31) + y[:, 1]


def common_pairs(y_true, y_pred):
    """Number of pairs of ``y_pred`` that are in ``y_true``.

    Examples
    --------
    >>> common_pairs([(0, 0), (1, 1), (2, 3)], [(0, 0), (1, 2), (2, 3)])
    2
    """
    return int(np.isin(pair_keys(y_pred), pair_keys(y_true)).sum())


class AlignmentLoss(BaseLoss):
    r"""Alignment loss: the fraction of the gold pairs of y missing from ŷ.

    .. math::

        \Delta(y, \hat y) = \frac{|y \setminus \hat y|}{|y|}
            = 1 - \frac{1}{|y|} \sum_{(i, j) \in \hat y} [(i, j) \in y],

    and Δ = 0 when y has no pairs. It is 1 − Q of the prediction (the measure of
    Joachims, Galor & Elber 2005, :func:`structsvm.structures.alignment.metrics.alignment_scores`).

    Notes
    -----
    Δ is a constant plus a sum over the predicted pairs, so loss-augmented decoding
    adds −1/|y| to the match score of every gold cell (i, j) and is the same dynamic
    program (:meth:`part_cost`).

    References
    ----------
    T. Joachims, T. Galor, R. Elber. Learning to align sequences: a maximum-margin
    approach. In New Algorithms for Macromolecular Simulation, Springer, 2005.

    Examples
    --------
    >>> y = [(0, 0), (1, 1), (2, 2), (3, 4)]
    >>> AlignmentLoss()(y, [(0, 0), (1, 2), (3, 4)])
    0.5
    """

    name = "alignment"
    decomposition: ClassVar[str] = "cell"
    counts_wrong_parts: ClassVar[bool] = True

    def __call__(self, y_true, y_pred):
        k = len(as_pairs(y_true))
        if k == 0:
            return 0.0
        return 1.0 - common_pairs(y_true, y_pred) / k

    def batch(self, Y_true, Y_pred):
        """Δ(y_n, ŷ_n) of every pair of alignments, by one membership test over all."""
        if len(Y_true) != len(Y_pred):
            raise ValueError(f"{len(Y_true)} true and {len(Y_pred)} predicted alignments")
        true = [as_pairs(y) for y in Y_true]
        pred = [as_pairs(y) for y in Y_pred]
        k = np.array([len(y) for y in true], dtype=np.int64)
        if not len(true) or not k.any():
            return np.zeros(len(true))
        kp = np.array([len(y) for y in pred], dtype=np.int64)
        if max(max(int(y.max(initial=0)) for y in true),
               max(int(y.max(initial=0)) for y in pred)) >= 1 << 21 or len(true) >= 1 << 21:
            return super().batch(true, pred)  # beyond the keys' range: one by one
        # keys (example, i, j): a pair of one example never matches another's
        a = _example_keys(true, k)
        b = _example_keys(pred, kp)
        hit = np.bincount(np.repeat(np.arange(len(pred)), kp), weights=np.isin(b, a),
                          minlength=len(pred))
        return np.where(k > 0, 1.0 - hit / np.maximum(k, 1), 0.0)

    def max_loss(self, y_true):
        """1, or 0 for an alignment without pairs (nothing to miss)."""
        return 1.0 if len(as_pairs(y_true)) else 0.0

    def part_cost(self, y_true):
        """1/|y|: the cost of a gold pair missed, what one found takes off the loss (0
        for no pairs)."""
        k = len(as_pairs(y_true))
        return 1.0 / k if k else 0.0

    def __repr__(self):
        return "AlignmentLoss()"


def _example_keys(Y, sizes):
    flat = np.concatenate(Y) if len(Y) else np.zeros((0, 2), dtype=np.int64)
    ex = np.repeat(np.arange(len(Y), dtype=np.int64), sizes)
    return (ex << 42) + (flat[:, 0] << 21) + flat[:, 1]
