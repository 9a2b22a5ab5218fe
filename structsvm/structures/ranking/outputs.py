"""Encoded ranking outputs: a query's preference pairs and labellings of them.

For a query with documents φ_1 .. φ_n and preference pairs P (a ≻ b), the ranking
SVM's output space is the set of labellings c ∈ {0, 1}^P (c_ab = 1: ranked
correctly) with Φ(x, c) = Σ_{(a,b)∈P} c_ab (φ_a − φ_b) and Δ(y, c) = Σ (1 − c_ab)
(Joachims 2006). Every such vector is Σ_a coef_a φ_a, so an encoded output only
stores ``coef`` (and the number of swapped pairs).

- :class:`Preferences`: the truth, from grades (a ≻ b iff r_a > r_b) or explicit
  pairs (click logs); every pair correct.
- :class:`PairLabelling`: a labelling found by loss-augmented decoding.
- an int array: a full ordering (document indices, best first); its Φ is that of
  the total order (every pair of documents).
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
    """

    __slots__ = ("n_docs", "grades", "pairs", "_coef", "_n_pairs")

    def __init__(self, n_docs, grades=None, pairs=None):
        if (grades is None) == (pairs is None):
            raise ValueError("Preferences need exactly one of grades and pairs")
        self.n_docs = int(n_docs)
        self.grades = None if grades is None else np.asarray(grades, dtype=float)
        self.pairs = None if pairs is None else np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        self._coef = None      # computed on first use (the aggregated oracle needs
        self._n_pairs = None   # only n_pairs, and that one cheaply for explicit pairs)

    def _count(self):
        if self.grades is not None:
            r = self.grades
            srt = np.sort(r)
            lower = np.searchsorted(srt, r, side="left")
            higher = r.size - np.searchsorted(srt, r, side="right")
            self._n_pairs = int(lower.sum())
            self._coef = (lower - higher).astype(float)
        else:
            a, b = self.pairs[:, 0], self.pairs[:, 1]
            self._n_pairs = len(self.pairs)
            self._coef = (np.bincount(a, minlength=self.n_docs)
                          - np.bincount(b, minlength=self.n_docs)).astype(float)

    @property
    def coef(self):
        """Coefficients of Φ(x, y) = Σ_P (φ_a − φ_b) = Σ_a coef_a φ_a."""
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
                np.array_equal(self.coef, other.coef) and self.n_pairs == other.n_pairs)

    __hash__ = None

    def __repr__(self):
        kind = "grades" if self.grades is not None else "pairs"
        return f"Preferences(n_docs={self.n_docs}, {kind}, n_pairs={self.n_pairs})"


class PairLabelling:
    """A labelling of a query's preference pairs: Φ = Σ_a coef_a φ_a, Δ = n_swapped."""

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
