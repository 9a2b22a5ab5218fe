"""Number of swapped preference pairs: the ranking SVM's loss.

Outputs are encoded as in :mod:`structsvm.structures.ranking.outputs`: the truth is a
:class:`~structsvm.structures.ranking.outputs.Preferences`, a prediction a
:class:`~structsvm.structures.ranking.outputs.PairLabelling` (loss-augmented decoding) or an
ordering (an int array of document indices, best first).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .sort import violated_pair_counts
from .outputs import PairLabelling, Preferences
from ..losses import BaseLoss

__all__ = ["SwappedPairsLoss", "count_violated"]


def count_violated(prefs, s, margin):
    """Per-document weights of pairs with s_a < s_b + margin: (up, down), O(n log n).

    ``up[a]`` sums the weights of the violated pairs where a is the better document,
    ``down[b]`` those where b is the worse one; Σ up = Σ down = the summed weight of
    the violated pairs (their number when the pairs are unweighted).
    """
    s = np.asarray(s, dtype=float)
    if prefs.pairs is not None:
        a, b = prefs.pairs[:, 0], prefs.pairs[:, 1]
        om = prefs.weights_of_pairs()
        v = s[a] < s[b] + margin
        return (np.bincount(a[v], weights=om[v], minlength=s.size),
                np.bincount(b[v], weights=om[v], minlength=s.size))
    up, down = violated_pair_counts(s, s + margin, prefs.grades, [0, s.size])
    return prefs.weight * up, prefs.weight * down


class SwappedPairsLoss(BaseLoss):
    r"""Δ(y, ŷ) = number of preference pairs of y that ŷ ranks the wrong way round.

    .. math::

        \Delta(y, \hat y) = \sum_{(a, b) \in P(y)} \omega_{ab}\,[\hat y \text{ ranks } b
        \text{ above } a] \;(/\,\textstyle\sum_P \omega_{ab} \text{ when normalised}),

    with pair weights ω_ab = 1 unless the preferences are weighted.

    With Φ(x, ŷ) = Σ_{(a,b)∈P} c_ab (φ_a − φ_b) and margin rescaling the
    loss-augmented maximum decomposes over pairs, and the summed slacks equal
    Σ_pairs max(0, 1 − w·(φ_a − φ_b)): the objective of a linear SVM on pair
    differences (svm_rank; ``LinearSVC(loss="hinge", fit_intercept=False)`` on the
    explicit pairs at the same C), each pair's term weighted by ω_ab.

    Parameters
    ----------
    normalize : bool, default=False
        Divide by |P(y)| (Joachims 2006's per-query normalisation; by the summed
        pair weights of weighted preferences): every query weighs the same
        regardless of its number of pairs.

    Notes
    -----
    Ties in an ordering cannot occur (an ordering is a permutation). A query
    without pairs has loss 0.

    References
    ----------
    T. Joachims. Optimizing search engines using clickthrough data. KDD 2002.
    T. Joachims. Training linear SVMs in linear time. KDD 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.ranking.outputs import Preferences
    >>> y = Preferences(3, grades=[2, 1, 0])
    >>> SwappedPairsLoss()(y, np.array([1, 0, 2]))   # 1 ranked above 0: one swap
    1.0
    """

    name = "swapped_pairs"
    decomposition: ClassVar[str] = "pair"
    counts_wrong_parts: ClassVar[bool] = True

    def __init__(self, normalize=False):
        self.normalize = normalize

    def _check(self, y_true):
        if not isinstance(y_true, Preferences):
            raise TypeError(f"swapped_pairs: the true output must be encoded preferences "
                            f"(RankingFeatures.encode_outputs), got {type(y_true).__name__}")

    def part_cost(self, y_true):
        """Loss of one swapped pair of weight 1 of ``y_true`` (1, or 1/|P| when
        normalised: 1/Σω for weighted preferences)."""
        self._check(y_true)
        return float(self.pair_weights(np.array([y_true.total_weight]))[0])

    def part_costs(self, Y_true):
        """:meth:`part_cost` of every query (1 each unless normalised)."""
        if not self.normalize:
            return np.ones(len(Y_true))
        for y in Y_true:
            self._check(y)
        return self.pair_weights(np.array([y.total_weight for y in Y_true]))

    def pair_weights(self, n_pairs):
        """Loss of one swapped pair for queries with ``n_pairs`` pairs (vectorised).

        Parameters
        ----------
        n_pairs : ndarray of shape (n_queries,)
            The number of pairs of each query (their summed weight for weighted
            preferences).

        Returns
        -------
        ndarray of shape (n_queries,)
            1 each, or 1/|P| (0 for a query without pairs) when normalised.
        """
        n_pairs = np.asarray(n_pairs, dtype=float)
        if not self.normalize:
            return np.ones(n_pairs.shape)
        out = np.zeros(n_pairs.shape)
        np.divide(1.0, n_pairs, out=out, where=n_pairs > 0)
        return out

    def __call__(self, y_true, y_pred):
        self._check(y_true)
        if isinstance(y_pred, PairLabelling):
            n = y_pred.n_swapped
        elif isinstance(y_pred, Preferences):
            if not (y_pred is y_true or y_pred == y_true):
                raise ValueError("swapped_pairs: a prediction must be an ordering or a "
                                 "PairLabelling, not another query's preferences")
            n = 0.0
        else:
            order = np.asarray(y_pred, dtype=np.intp)
            if order.ndim != 1 or order.size != y_true.n_docs or \
                    not np.array_equal(np.sort(order), np.arange(y_true.n_docs)):
                raise ValueError(f"swapped_pairs: prediction must be an ordering of "
                                 f"{y_true.n_docs} documents, got {y_pred!r}")
            pos = np.empty(order.size)
            pos[order] = np.arange(order.size)
            n = float(count_violated(y_true, -pos, 0.0)[0].sum())
        return n * self.part_cost(y_true)

    def batch(self, Y_true, Y_pred):
        """Δ for a batch; vectorised when every prediction is a PairLabelling."""
        if len(Y_pred) and len(Y_true) == len(Y_pred) and \
                all(isinstance(p, PairLabelling) for p in Y_pred) and \
                all(isinstance(y, Preferences) for y in Y_true):
            n_swapped = np.array([p.n_swapped for p in Y_pred], dtype=float)
            return n_swapped * self.pair_weights(np.array([y.total_weight
                                                           for y in Y_true]))
        return super().batch(Y_true, Y_pred)

    def max_loss(self, y_true):
        """The number (summed weight) of the preference pairs of ``y_true`` (1 when
        normalised)."""
        self._check(y_true)
        return 1.0 if self.normalize else float(y_true.total_weight)

    def part_losses(self, y_true, n_states):
        """Not available (raises TypeError): the loss is applied per pair by the potentials."""
        raise TypeError("swapped_pairs is applied per preference pair by "
                        "RankingPotentials.augment, not through a per-part table")

    def __repr__(self):
        return f"SwappedPairsLoss(normalize={self.normalize})"
