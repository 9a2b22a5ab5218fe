"""Encoded ranking outputs: a query's preference pairs and labellings of them.

For a query with documents φ_1 .. φ_n and preference pairs P (a ≻ b), each with a
weight ω_ab ≥ 0 (1 unless given), the ranking SVM's output space is the set of
labellings c ∈ {0, 1}^P (c_ab = 1: ranked correctly) with
Φ(x, c) = Σ_{(a,b)∈P} ω_ab c_ab (φ_a − φ_b) and Δ(y, c) = Σ ω_ab (1 − c_ab)
(Joachims 2006). Every such vector is Σ_a coef_a φ_a, so an encoded output only
stores ``coef`` (and the summed weight of the swapped pairs).

Weights scale a pair's constraint and its loss together. For ω > 0 the constraint
ω w·(φ_a − φ_b) ≥ ω − ξ' is the constraint w·(φ_a − φ_b) ≥ 1 − ξ with ξ' = ω ξ,
so every learner that minimises ½‖w‖² + C Σ_i ξ_i (margin rescaling, the one
rankings train with) minimises

    ½‖w‖² + C Σ_i Σ_{(a,b)∈P_i} ω_ab max(0, 1 − w·(φ_a − φ_b))

on weighted targets, with no weight of its own: the per-example weights
½‖w‖² + C Σ_i c_i ξ_i (every pair of example i weighing c_i) and the per-click
weights 1/p of Propensity SVM-Rank (Joachims, Swaminathan & Schnabel 2017) are
both weighted targets.

- :class:`Preferences`: the truth, from grades (a ≻ b iff r_a > r_b) or explicit
  pairs (click logs), optionally weighted; every pair correct.
- :class:`PairLabelling`: a labelling found by loss-augmented decoding.
- an int array: a full ordering (document indices, best first); its Φ is that of
  the total order (every pair of documents, unweighted).

References
----------
T. Joachims. Training linear SVMs in linear time. KDD 2006.
T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
feedback. WSDM 2017.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Preferences", "PairLabelling", "order_coef", "output_coef", "as_preferences"]


class Preferences:
    """Preference pairs of one query: graded relevance or explicit (better, worse) pairs.

    Parameters
    ----------
    n_docs : int
    grades : ndarray of shape (n_docs,), optional
        Relevance grades; a ≻ b iff grades[a] > grades[b] (svm_rank semantics).
    pairs : ndarray of shape (n_pairs, 2), optional
        Rows (better, worse) of document indices (duplicates count twice).
    weights : float or ndarray of shape (n_pairs,), optional
        Weight ω ≥ 0 of every pair's slack in the objective, ½‖w‖² + C Σ ω ξ: one
        number for all pairs of the query (the example's weight c_i), or one per
        explicit pair (e.g. the inverse propensity of the click behind it). None:
        every pair weighs 1.

    Raises
    ------
    ValueError
        When neither or both of ``grades`` and ``pairs`` are given, or ``weights``
        are negative, not finite, or per pair for graded targets or of the wrong
        length.

    Examples
    --------
    >>> y = Preferences(3, pairs=[[2, 0], [2, 1]], weights=[4.0, 0.5])
    >>> y.coef.tolist(), y.total_weight      # Φ = 4 (φ2 − φ0) + 0.5 (φ2 − φ1)
    ([-4.0, -0.5, 4.5], 4.5)
    """

    __slots__ = ("n_docs", "grades", "pairs", "weight", "pair_weights", "_coef",
                 "_n_pairs")

    def __init__(self, n_docs, grades=None, pairs=None, weights=None):
        if (grades is None) == (pairs is None):
            raise ValueError("Preferences need exactly one of grades and pairs")
        self.n_docs = int(n_docs)
        self.grades = None if grades is None else np.asarray(grades, dtype=float)
        self.pairs = None if pairs is None else np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        #: the query's weight (a scalar ``weights``; 1 otherwise)
        self.weight = 1.0
        #: per-pair weights of explicit pairs (an array ``weights``), else None
        self.pair_weights = None
        if weights is not None:
            wt = np.asarray(weights, dtype=float)
            if wt.ndim == 0:
                self.weight = float(wt)
            elif self.pairs is None:
                raise ValueError("per-pair weights need explicit pairs; graded "
                                 "preferences take one weight for the query")
            elif wt.shape != (len(self.pairs),):
                raise ValueError(f"weights has shape {wt.shape} for {len(self.pairs)} "
                                 "pairs")
            else:
                self.pair_weights = wt
            if not np.all(np.isfinite(wt)) or np.any(wt < 0):
                raise ValueError("weights must be finite and >= 0")
        self._coef = None      # computed on first use (the aggregated oracle needs
        self._n_pairs = None   # only n_pairs, and that one cheaply for explicit pairs)

    def _count(self):
        if self.grades is not None:
            r = self.grades
            srt = np.sort(r)
            lower = np.searchsorted(srt, r, side="left")
            higher = r.size - np.searchsorted(srt, r, side="right")
            self._n_pairs = int(lower.sum())
            self._coef = self.weight * (lower - higher).astype(float)
        else:
            a, b = self.pairs[:, 0], self.pairs[:, 1]
            pw = self.weights_of_pairs()
            self._n_pairs = len(self.pairs)
            self._coef = (np.bincount(a, weights=pw, minlength=self.n_docs)
                          - np.bincount(b, weights=pw, minlength=self.n_docs)).astype(float)

    @property
    def coef(self):
        """Coefficients of Φ(x, y) = Σ_P ω_ab (φ_a − φ_b) = Σ_a coef_a φ_a."""
        if self._coef is None:
            self._count()
        return self._coef

    @property
    def n_pairs(self):
        """Number of preference pairs (a ≻ b)."""
        if self._n_pairs is None:
            if self.pairs is not None:
                self._n_pairs = len(self.pairs)
            else:
                self._count()
        return self._n_pairs

    @property
    def weighted(self):
        """Whether any pair weighs other than 1."""
        return self.pair_weights is not None or self.weight != 1.0

    @property
    def total_weight(self):
        """Σ ω over the pairs: Δ of the labelling that swaps every pair."""
        if self.pair_weights is not None:
            return float(self.weight * self.pair_weights.sum())
        return self.weight * self.n_pairs

    def weights_of_pairs(self):
        """ω of every pair, in the order of :meth:`pair_list`."""
        if self.pair_weights is not None:
            return self.weight * self.pair_weights
        return np.full(self.n_pairs, self.weight)

    def pair_list(self):
        """All (better, worse) pairs as an array of shape (n_pairs, 2)."""
        if self.pairs is not None:
            return self.pairs
        r = self.grades
        a, b = np.nonzero(r[:, None] > r[None, :])
        return np.stack([a, b], axis=1)

    def __eq__(self, other):
        if not isinstance(other, Preferences):
            return NotImplemented
        return (self.n_docs == other.n_docs and
                np.array_equal(self.coef, other.coef) and self.n_pairs == other.n_pairs
                and self.total_weight == other.total_weight)

    __hash__ = None

    def __repr__(self):
        kind = "grades" if self.grades is not None else "pairs"
        extra = f", total_weight={self.total_weight:g}" if self.weighted else ""
        return f"Preferences(n_docs={self.n_docs}, {kind}, n_pairs={self.n_pairs}{extra})"


class PairLabelling:
    """A labelling of a query's preference pairs: Φ = Σ_a coef_a φ_a, Δ = n_swapped.

    ``n_swapped`` is the summed weight of the swapped pairs (their number when the
    pairs are unweighted).
    """

    __slots__ = ("coef", "n_swapped")

    def __init__(self, coef, n_swapped):
        self.coef = np.asarray(coef, dtype=float)
        self.n_swapped = float(n_swapped)

    def __eq__(self, other):
        if not isinstance(other, PairLabelling):
            return NotImplemented
        return np.array_equal(self.coef, other.coef) and self.n_swapped == other.n_swapped

    __hash__ = None

    def __repr__(self):
        return f"PairLabelling(n_docs={self.coef.size}, n_swapped={self.n_swapped:g})"


def order_coef(order):
    """Coefficients of the total order ``order`` (best first): n − 1 − 2·position."""
    order = np.asarray(order, dtype=np.intp)
    coef = np.empty(order.size)
    coef[order] = order.size - 1 - 2 * np.arange(order.size)
    return coef


def output_coef(y):
    """Coefficient vector of any encoded ranking output."""
    if isinstance(y, (Preferences, PairLabelling)):
        return y.coef
    return order_coef(y)


def as_preferences(y, n_docs, i):
    """Encode one raw ranking target: grades (1-D), pairs ((K, 2) ints) or Preferences."""
    if isinstance(y, Preferences):
        if y.n_docs != n_docs:
            raise ValueError(f"Sample {i}: preferences over {y.n_docs} documents but the "
                             f"query has {n_docs}")
        return y
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError):
        raise TypeError(f"Sample {i}: expected relevance grades or (better, worse) pairs, "
                        f"got {type(y).__name__}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"Sample {i}: relevance grades must be numeric, got dtype "
                        f"{arr.dtype}")
    if arr.ndim == 1:
        if arr.size != n_docs:
            raise ValueError(f"Sample {i}: {arr.size} relevance grades for a query with "
                             f"{n_docs} documents")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"Sample {i}: relevance grades contain NaN or infinity")
        return Preferences(n_docs, grades=arr)
    if arr.ndim == 2 and arr.shape[1] == 2 and arr.dtype.kind in "biu":
        if arr.size and (arr.min() < 0 or arr.max() >= n_docs):
            raise ValueError(f"Sample {i}: a preference pair names a document outside "
                             f"0..{n_docs - 1}")
        if np.any(arr[:, 0] == arr[:, 1]):
            raise ValueError(f"Sample {i}: a preference pair prefers a document to itself")
        return Preferences(n_docs, pairs=arr)
    raise ValueError(f"Sample {i}: expected a 1-D array of {n_docs} grades or an integer "
                     f"array of shape (n_pairs, 2), got shape {arr.shape}")
