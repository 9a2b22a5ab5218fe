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

import operator

import numpy as np

from ..inference import _sort_jit

__all__ = ["Preferences", "PairLabelling", "output_coef", "count_violated",
           "as_preferences", "FlatTargets"]


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


def count_violated(prefs, s, margin):
    """Per-document counts of pairs with s_a < s_b + margin: (up, down), O(n log n).

    ``up[a]`` counts violated pairs where a is the better document, ``down[b]`` those
    where b is the worse one; Σ up = Σ down = number of violated pairs.
    """
    s = np.asarray(s, dtype=float)
    if prefs.pairs is not None:
        a, b = prefs.pairs[:, 0], prefs.pairs[:, 1]
        v = s[a] < s[b] + margin
        return (np.bincount(a[v], minlength=s.size), np.bincount(b[v], minlength=s.size))
    up = np.zeros(s.size, dtype=np.int64)
    down = np.zeros(s.size, dtype=np.int64)
    _sort_jit.violated_counts_batch(s, s + margin, prefs.grades,
                                    np.array([0, s.size], dtype=np.int64), up, down)
    return up, down


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


class FlatTargets:
    """Query-constant arrays of a list of Preferences, flattened for the oracle kernel.

    Built once per training set (see :meth:`RankingFeatures.aggregate_violation`):
    dense grade ranks 1..R per graded query (``ranks``, ``max_rank``), the documents
    of each graded query by increasing grade (``perm``, query-local) with the number
    of documents of lower grade (``lower``), the query-local explicit pairs
    (``pair_a``, ``pair_b`` delimited by ``pair_off``), ``n_pairs`` and the kernel's
    ``method`` per query (:mod:`structsvm.features._rank_jit`). ``matches(Ye)`` tells
    whether it was built from exactly these (identical) Preferences objects, which it
    keeps alive.

    Parameters
    ----------
    Ye : list of Preferences
    offsets : ndarray of int, shape (n_queries + 1,)
    enumerate_factor : float, default=_rank_jit.ENUMERATE_FACTOR
        Graded queries with at most ``enumerate_factor · n log2 n`` pairs are
        enumerated pair by pair, the others sorted and swept (0: always sort).

    Raises
    ------
    ValueError
        When an output is not a :class:`Preferences` of its query's documents.
    """

    __slots__ = ("targets", "ranks", "max_rank", "method", "perm", "lower", "pair_off",
                 "pair_a", "pair_b", "n_pairs")

    def __init__(self, Ye, offsets, enumerate_factor=None):
        from . import _rank_jit

        factor = _rank_jit.ENUMERATE_FACTOR if enumerate_factor is None else \
            float(enumerate_factor)
        offsets = np.asarray(offsets, dtype=np.int64)
        n = len(offsets) - 1
        if len(Ye) != n:
            raise ValueError(f"{n} queries but {len(Ye)} outputs")
        self.targets = tuple(Ye)
        lens = np.diff(offsets)
        graded = np.zeros(n, dtype=bool)
        grades, pa, pb, counts = [], [], [], np.zeros(n, dtype=np.int64)
        for q, y in enumerate(self.targets):
            if not isinstance(y, Preferences) or y.n_docs != lens[q]:
                raise ValueError(f"Sample {q}: the true output does not match the "
                                 "query's documents (expected encoded Preferences)")
            if y.grades is not None:
                graded[q] = True
                grades.append(y.grades)
            else:
                grades.append(np.zeros(y.n_docs))
                pa.append(y.pairs[:, 0])
                pb.append(y.pairs[:, 1])
                counts[q] = len(y.pairs)
        self.pair_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.pair_a = (np.concatenate(pa) if pa else np.zeros(0)).astype(np.int64)
        self.pair_b = (np.concatenate(pb) if pb else np.zeros(0)).astype(np.int64)
        # all queries at once: documents by (query, grade), stable, then dense ranks,
        # the local order by grade and the number of documents of lower grade
        size = int(offsets[-1])
        qid = np.repeat(np.arange(n), lens)
        local = np.arange(size) - np.repeat(offsets[:-1], lens)
        g = np.concatenate(grades) if size else np.zeros(0)
        order = np.lexsort((local, g, qid))
        gs, qs = g[order], qid[order]
        new_level = np.ones(size, dtype=bool)
        new_level[1:] = (gs[1:] != gs[:-1]) | (qs[1:] != qs[:-1])
        level = np.cumsum(new_level)                      # global level id, 1-based
        first_level = level[offsets[:-1][lens > 0]]       # of each non-empty query
        rank_sorted = level - np.repeat(first_level, lens[lens > 0]) + 1
        group_start = np.maximum.accumulate(np.where(new_level, np.arange(size), 0))
        self.perm = local[order].astype(np.int64)
        self.lower = (group_start - np.repeat(offsets[:-1], lens)).astype(np.int64)
        self.ranks = np.zeros(size, dtype=np.int64)
        self.ranks[order] = rank_sorted
        self.max_rank = np.zeros(n, dtype=np.int64)
        self.max_rank[lens > 0] = rank_sorted[offsets[1:][lens > 0] - 1]
        self.n_pairs = np.where(graded, np.bincount(qid, weights=self.lower, minlength=n),
                                counts).astype(np.int64)
        if np.isinf(factor):
            cheap = np.ones(n, dtype=bool)
        else:
            cheap = self.n_pairs <= factor * lens * np.log2(np.maximum(lens, 2))
        self.method = np.where(graded, np.where(cheap, _rank_jit.ENUMERATE, _rank_jit.SWEEP),
                               _rank_jit.EXPLICIT).astype(np.int64)

    def matches(self, Ye):
        t = self.targets
        return len(Ye) == len(t) and all(map(operator.is_, Ye, t))
