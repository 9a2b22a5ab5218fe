r"""Losses over the whole data set for binary classification, each with its exact
most violated labelling (Joachims 2005; the multivariate SVM of SVM-perf).

The output is the labelling Ȳ of all n training examples at once, and
Δ(Y, Ȳ) = 1 − the measure of Ȳ: the error rate, 1 − F_β, 1 − precision or recall
at k, 1 − the precision-recall break-even point (PRBEP), or the fraction of swapped
positive-negative pairs (1 − ROC area). Training asks each loss for

.. math::

    \bar Y^* = \operatorname{argmax}_{\bar Y}\; \Delta(Y, \bar Y) + w\cdot\Phi(X, \bar Y),
    \qquad w\cdot\Phi(X, \bar Y) = \mathrm{const} + \sum_{i:\, \bar y_i = +1} g_i,

g_i the gain of labelling example i positive (the potentials' ``gains``). Where Δ
depends on Ȳ only through its contingency table (tp = a positives and fp = b
negatives labelled positive), the best labelling with given a and b labels the a
highest-scoring positives and the b highest-scoring negatives positive, so one sort
of each class and prefix sums of their gains reduce the search to the table
(Joachims 2005, Algorithm 2):

- error rate: every example on its own, O(n);
- F_β: for fixed a, Δ is concave in b (and so is the prefix sum of the sorted
  gains), so the best b is found by bisection: O(n log n) in all, where the
  enumeration of every (a, b) costs O(P N);
- precision@k, recall@k, PRBEP (precision at P): every labelling read as a
  ranking (its positives first, ties in random order): concave in b as F_β for k
  positives or more, every (a, b) below k, O(n log n + P k);
- ROC area: a labelling of the P·N pairs (:class:`~.outputs.PairSwaps`); a pair
  is swapped exactly when its score difference is below its margin, and the swapped
  pairs of every example are counted from the sorted scores in O(n log n), never
  pair by pair.

References
----------
T. Joachims. A support vector method for multivariate performance measures.
ICML 2005.
T. Joachims. Training linear SVMs in linear time. KDD 2006.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._compiled import loops
from ..losses import BaseLoss
from .features import BinaryFeatures
from .metrics import contingency, resolve_k, swapped_pairs, top_k_hits
from .outputs import PairSwaps

__all__ = ["ErrorRateLoss", "FBetaLoss", "PrecisionAtKLoss", "RecallAtKLoss",
           "PRBEPLoss", "ROCAreaLoss"]


class _DataSetLoss(BaseLoss):
    """A loss over the labelling of the whole data set (``decomposition =
    "dataset"``): ``loss(Y, Ŷ)`` and ``most_violated(batch, Y)`` take all n
    examples' labels at once."""

    decomposition: ClassVar[str] = "dataset"

    def max_loss(self, Y_true):
        """1: every measure lies in [0, 1]."""
        return 1.0

    def _truth(self, Y):
        y = np.atleast_1d(np.asarray(Y, dtype=float)).reshape(-1)
        if not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError(f"loss {self.name!r}: the true labelling must hold +1 and "
                             "-1 for every example (the binary map's encoded outputs)")
        return y > 0

    def _predicted(self, Y_pred, n):
        s = np.atleast_1d(np.asarray(Y_pred, dtype=float)).reshape(-1)
        if s.size != n:
            raise ValueError(f"loss {self.name!r}: {n} true labels but {s.size} "
                             "predicted")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"loss {self.name!r}: a prediction is NaN or infinite")
        return s

    def _gains(self, batch, n):
        g = np.asarray(batch.gains, dtype=float).reshape(-1)
        if g.size != n:
            raise ValueError(f"loss {self.name!r}: {n} true labels but a batch of "
                             f"{g.size} examples")
        return g

    def batch(self, Y_true, Y_pred):
        """Not available (raises TypeError): the loss is a function of the whole
        labelling, not a sum over examples."""
        raise TypeError(f"loss {self.name!r} is a function of the whole data set's "
                        "labelling: call it on all labels at once")

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"


# --------------------------------------------------------------------------- search
def _ranked(g, y):
    """Positives and negatives, each sorted by decreasing gain, and the prefix sums
    of their gains (SP[a]: the a best positives, SN[b]: the b best negatives)."""
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    pos = pos[np.argsort(-g[pos], kind="stable")]
    neg = neg[np.argsort(-g[neg], kind="stable")]
    SP = np.concatenate([[0.0], np.cumsum(g[pos])])
    SN = np.concatenate([[0.0], np.cumsum(g[neg])])
    return pos, neg, SP, SN


def _labelling(n, pos, neg, a, b):
    """The a first of ``pos`` and the b first of ``neg`` positive, the rest negative."""
    out = np.full(n, -1, dtype=np.int8)
    out[pos[:a]] = 1
    out[neg[:b]] = 1
    return out


#: the loss kinds of the compiled searches (:mod:`._jit`)
_F_BETA, _PRECISION, _RECALL = 0, 1, 2


def _search():
    return loops("structsvm.structures.binary._jit")


def _contingency_search(g, y, kind, p1, k=0):
    """The most violated labelling of a contingency-table loss: a = tp and b = fp
    from the compiled concave search over a + b ≥ k (O(n log n)) and, for a
    measure at k (k > 0), the search below k (O(P k))."""
    pos, neg, SP, SN = _ranked(g, y)
    a, b, value = _search().concave_search(SP, SN, int(kind), float(p1), int(k))
    if k > 0:
        den = float(k) if kind == _PRECISION else float(pos.size)
        a2, b2, value2 = _search().below_k_search(SP, SN, int(y.size), int(k), den)
        if value2 > value:
            a, b = a2, b2
    return _labelling(y.size, pos, neg, int(a), int(b))


# --------------------------------------------------------------------------- losses
class ErrorRateLoss(_DataSetLoss):
    r"""Δ(Y, Ȳ) = (fp + fn) / n, the error rate of the labelling.

    It decomposes over the examples, and with the binary map (scale R) the 1-slack
    objective is ½‖w‖² + (C/n) Σ_i max(0, 1 − y_i w·x_i / R): scikit-learn's
    ``LinearSVC(C=C/(n R²), loss="hinge")`` with a regularised intercept (Joachims
    2005, Theorem 1; 2006).

    Examples
    --------
    >>> ErrorRateLoss()([1, -1, -1, 1], [1, 1, -1, -1])
    0.5
    """

    name = "error_rate"

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        p = self._predicted(Y_pred, y.size) > 0
        return float(np.count_nonzero(y != p)) / y.size

    def most_violated(self, batch, Y_true):
        """Each example on its own: wrong where 1/n exceeds its margin, O(n)."""
        y = self._truth(Y_true)
        g = self._gains(batch, y.size)
        step = 1.0 / y.size
        # a positive labelled −1 adds 1/n − g_i; a negative labelled +1, 1/n + g_i
        positive = np.where(y, g >= step, g > -step)
        return np.where(positive, 1, -1).astype(np.int8)


class FBetaLoss(_DataSetLoss):
    r"""Δ(Y, Ȳ) = 1 − F_β of the labelling (F1 by default).

    .. math::

        F_\beta = \frac{(1 + \beta^2)\,tp}{(1 + \beta^2)\,tp + \beta^2 fn + fp},

    0 when nothing right is found and 1 when there is no positive either way.

    Parameters
    ----------
    beta : float, default=1.0
        Weight of recall: β > 1 favours recall, β < 1 precision.

    Notes
    -----
    Most violated labelling: for tp = a, Δ(a, fp) = 1 − K/(M + fp) with K, M > 0 is
    concave in fp, as is the sum of the fp largest negative gains; their sum is
    maximised by bisection over fp (fp = 0 apart: at a = 0 with no positive, Δ
    jumps from 0 to 1 there). O(n log n) in all.

    Examples
    --------
    >>> FBetaLoss()([1, 1, -1, -1], [1, -1, 1, -1])
    0.5
    """

    name = "f1"

    def __init__(self, beta=1.0):
        self.beta = beta

    def _b2(self):
        b = float(self.beta)
        if not (np.isfinite(b) and b > 0):
            raise ValueError(f"beta must be a finite number > 0, got {self.beta!r}")
        return b * b

    def default_C(self, Y_true):
        """10⁴ n / ((1 + β²) P + 1): the binary map's C (the error rate's) times the
        cost of one mistake under F_β against the error rate's 1/n (a rare class,
        P ≪ n, asks for margins that much larger).

        The cost: Δ of the truth with one negative labelled positive,
        1 / ((1 + β²) P + 1).
        """
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        return BinaryFeatures.default_C * y.size / ((1.0 + self._b2()) * P + 1.0)

    def _table_loss(self, a, b, n_pos):
        b2 = self._b2()
        a = np.asarray(a, dtype=float)
        den = (1.0 + b2) * a + b2 * (n_pos - a) + b
        safe = np.where(den > 0, den, 1.0)
        return 1.0 - np.where(den > 0, (1.0 + b2) * a / safe, 1.0)

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        tp, fp, fn, _ = contingency(y, self._predicted(Y_pred, y.size))
        return float(self._table_loss(tp, fp, tp + fn))

    def most_violated(self, batch, Y_true):
        """The contingency table search with bisection over fp, O(n log n)."""
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        return _contingency_search(self._gains(batch, y.size), y, _F_BETA, self._b2())


class _RankLoss(_DataSetLoss):
    """A measure of the ranking by score: its labellings have a fixed number of
    positives, so a constant added to every score changes nothing (``ranks``): train
    it without a bias feature (``BinaryFeatures(bias=0)``; a bias would shift every
    constraint alike where that number differs from the truth's)."""

    ranks: ClassVar[bool] = True
    # the top of a ranking moves with small changes of w: measured on the mini
    # newsgroups, precision at k fell from 0.90 to 0.86 with the map's 0.2
    default_tol: ClassVar[float] = 0.1

    def positives(self, Y_true):
        """The number of positive labels of the labellings the loss ranges over."""
        return int(np.count_nonzero(self._truth(Y_true)))


class _AtKLoss(_RankLoss):
    """Precision or recall at k: measures of the k highest-scoring examples."""

    _default_k: ClassVar[str] = "half"

    def __init__(self, k=None):
        self.k = k

    def _k(self, y):
        return resolve_k(self.k, int(np.count_nonzero(y)), y.size, self._default_k)

    def positives(self, Y_true):
        """k."""
        return self._k(self._truth(Y_true))


class PrecisionAtKLoss(_AtKLoss):
    r"""Δ(Y, Ȳ) = 1 − precision at k of the ranking by score.

    A labelling read as a ranking puts its m positives first in random order and
    the others after them, also in random order; Δ of every labelling is 1 − its
    expected precision at k: tp / m for m ≥ k (its precision, as SVM-perf's loss),
    (tp + (k − m)(P − tp)/(n − m)) / k for m < k. Training ranges over all
    labellings, so some have fewer positives than the truth and some more: a
    constant added to every score (or a direction every example shares, as the
    positive orthant of word counts) satisfies none of the constraints for free.

    Parameters
    ----------
    k : int, float or None, default=None
        An int: k itself; a float in (0, 1): that fraction of the examples; None:
        half the positives, rounded up (SVM-perf's default).

    Notes
    -----
    The measure reads the order of the scores only (``ranks``): train without a
    bias feature. A prediction passed as scores is scored by its top k (ties in
    random order: the expected precision). Most violated labelling: for tp = a
    and m ≥ k, Δ = fp / (a + fp) is concave in fp (bisection as for F_β,
    O(n log n)); below k the filled loss is convex in fp and every (tp, fp) with
    m < k is tried (a compiled loop, O(P k)).

    Examples
    --------
    >>> PrecisionAtKLoss(k=2)([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.5
    """

    name = "precision_at_k"

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        k = self._k(y)
        return float(1.0 - top_k_hits(y, self._predicted(Y_pred, y.size), k) / k)

    def most_violated(self, batch, Y_true):
        """The most violated labelling: O(n log n) for k positives or more,
        O(P k) below."""
        y = self._truth(Y_true)
        k = self._k(y)
        return _contingency_search(self._gains(batch, y.size), y, _PRECISION, 0.0, k)


class RecallAtKLoss(_AtKLoss):
    r"""Δ(Y, Ȳ) = 1 − recall at k of the ranking by score (0 when there is no
    positive).

    As :class:`PrecisionAtKLoss`, every labelling read as a ranking: its expected
    recall at k is (k / m) tp / P for m ≥ k positives and
    (tp + (k − m)(P − tp)/(n − m)) / P for m < k; training ranges over all
    labellings (O(n log n) for m ≥ k, O(P k) below).

    Parameters
    ----------
    k : int, float or None, default=None
        As :class:`PrecisionAtKLoss`, but None means twice the positives (at most
        n; SVM-perf's default).

    Examples
    --------
    >>> RecallAtKLoss(k=2)([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.5
    """

    name = "recall_at_k"
    _default_k: ClassVar[str] = "twice"

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        if P == 0:
            return 0.0
        return float(1.0 - top_k_hits(y, self._predicted(Y_pred, y.size), self._k(y)) / P)

    def most_violated(self, batch, Y_true):
        """The most violated labelling: O(n log n) for k positives or more,
        O(P k) below."""
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        k = self._k(y)

        if P == 0:  # every labelling has loss 0: the highest-scoring one
            return np.where(self._gains(batch, y.size) > 0, 1, -1).astype(np.int8)

        return _contingency_search(self._gains(batch, y.size), y, _RECALL, float(k), k)


class PRBEPLoss(_RankLoss):
    r"""Δ(Y, Ȳ) = 1 − PRBEP, the precision-recall break-even point of the ranking
    by score: precision (= recall) at k = P, the number of positives (0 when there
    is none).

    Joachims (2005) trains it over the labellings with P positives, where Δ =
    1 − tp / P; here, as :class:`PrecisionAtKLoss` with k = P, over every labelling
    read as a ranking (those with P positives included, with that Δ).

    Examples
    --------
    >>> PRBEPLoss()([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.5
    """

    name = "prbep"

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        if P == 0:
            return 0.0
        return float(1.0 - top_k_hits(y, self._predicted(Y_pred, y.size), P) / P)

    def most_violated(self, batch, Y_true):
        """As precision at k = P: O(n log n) for P positives or more, O(P²) below."""
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        g = self._gains(batch, y.size)
        if P == 0:  # every labelling has loss 0: the highest-scoring one
            return np.where(g > 0, 1, -1).astype(np.int8)
        return _contingency_search(g, y, _PRECISION, 0.0, P)


class ROCAreaLoss(_RankLoss):
    r"""Δ(Y, c̄) = fraction of positive-negative pairs ranked the wrong way round:
    1 − the area under the ROC curve.

    The output is a labelling c̄ of the P·N pairs (:class:`~.outputs.PairSwaps`),
    with the constraint w·(1/(PN R)) Σ_{swapped (i, j)} (x_i − x_j) ≥ Δ − ξ: every
    pair asks for the margin w·(x_i − x_j) ≥ R, R the binary map's scale (Joachims
    2005, normalised as SVM-perf does). A prediction passed as scores is scored by its ranking (a tie counts
    half).

    Notes
    -----
    Most violated labelling: the pair (i, j) is swapped exactly when
    w·(x_i − x_j) < R, i.e. g_i − g_j < 1/n for the gains g = w·x / (nR); the
    swapped pairs of every example are counted by binary search in the sorted
    scores, O(n log n), and the output holds those counts, never the pairs.

    Examples
    --------
    >>> ROCAreaLoss()([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.25
    """

    name = "roc_auc"

    def default_C(self, Y_true):
        """3 P N / n: C ξ is then 3/n times the summed pair hinges (the hinges of an
        example's pairs count as LinearSVC's hinge of that example); the factor 3
        was measured on the mini newsgroups and the spam data.

        C ξ = (3/n) Σ_pairs max(0, 1 − w·(x_i − x_j) / R).
        """
        y = self._truth(Y_true)
        P = int(np.count_nonzero(y))
        return max(3.0 * P * (y.size - P) / y.size, 1e-3)

    def __call__(self, Y_true, Y_pred):
        y = self._truth(Y_true)
        n_pairs = int(np.count_nonzero(y)) * int(np.count_nonzero(~y))
        if isinstance(Y_pred, PairSwaps):
            if len(Y_pred) != y.size or not np.array_equal(Y_pred.y > 0, y):
                raise ValueError(f"loss {self.name!r}: the pair labelling belongs to "
                                 "another data set")
            return Y_pred.n_swapped / n_pairs if n_pairs else 0.0
        if not n_pairs:
            return 0.0
        return float(swapped_pairs(y, self._predicted(Y_pred, y.size)) / n_pairs)

    def most_violated(self, batch, Y_true):
        """Every pair with w·(x_i − x_j) < R swapped, counted per example in
        O(n log n)."""
        y = self._truth(Y_true)
        g = self._gains(batch, y.size)
        p = g[y] - 1.0 / y.size   # pair (i, j) swapped iff p_i < q_j
        q = g[~y]
        swapped = np.zeros(y.size, dtype=np.int64)
        swapped[y] = q.size - np.searchsorted(np.sort(q), p, side="right")
        swapped[~y] = np.searchsorted(np.sort(p), q, side="left")
        return PairSwaps(np.where(y, 1, -1), swapped)
