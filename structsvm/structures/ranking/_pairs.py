"""Ranking targets of many queries at once (FlatTargets) for the batched oracles.

The per-query output types live in :mod:`structsvm.structures.ranking.outputs`.
"""
from __future__ import annotations

import operator

import numpy as np

from .outputs import Preferences

__all__ = ["FlatTargets"]


class FlatTargets:
    """Query-constant arrays of a list of Preferences, flattened for the oracle loop.

    Built once per training set (see :meth:`RankingFeatures.aggregate_violation`):
    dense grade ranks 1..R per graded query (``ranks``, ``max_rank``), the documents
    of each graded query by increasing grade (``perm``, query-local) with the number
    of documents of lower grade (``lower``), the query-local explicit pairs
    (``pair_a``, ``pair_b`` delimited by ``pair_off``) and their weights
    (``pair_w``), the weight of each graded query's pairs (``qweight``), ``n_pairs``
    and the loop's ``method`` per query (:mod:`structsvm.structures.ranking._jit`). ``matches(Ye)`` tells
    whether it was built from exactly these (identical) Preferences objects, which it
    keeps alive.

    Parameters
    ----------
    Ye : list of Preferences
    offsets : ndarray of int, shape (n_queries + 1,)
    enumerate_factor : float, default=_ranking_jit.ENUMERATE_FACTOR
        Graded queries with at most ``enumerate_factor · n log2 n`` pairs are
        enumerated pair by pair, the others sorted and swept (0: always sort).

    Raises
    ------
    ValueError
        When an output is not a :class:`Preferences` of its query's documents.
    """

    __slots__ = ("targets", "ranks", "max_rank", "method", "perm", "lower", "pair_off",
                 "pair_a", "pair_b", "pair_w", "qweight", "n_pairs")

    def __init__(self, Ye, offsets, enumerate_factor=None):
        from . import _jit as _ranking_jit

        factor = _ranking_jit.ENUMERATE_FACTOR if enumerate_factor is None else \
            float(enumerate_factor)
        offsets = np.asarray(offsets, dtype=np.int64)
        n = len(offsets) - 1
        if len(Ye) != n:
            raise ValueError(f"{n} queries but {len(Ye)} outputs")
        self.targets = tuple(Ye)
        lens = np.diff(offsets)
        graded = np.zeros(n, dtype=bool)
        grades, pa, pb, pw, counts = [], [], [], [], np.zeros(n, dtype=np.int64)
        self.qweight = np.ones(n)
        for q, y in enumerate(self.targets):
            if not isinstance(y, Preferences) or y.n_docs != lens[q]:
                raise ValueError(f"Sample {q}: the true output does not match the "
                                 "query's documents (expected encoded Preferences)")
            if y.grades is not None:
                graded[q] = True
                grades.append(y.grades)
                self.qweight[q] = y.weight
            else:
                grades.append(np.zeros(y.n_docs))
                pa.append(y.pairs[:, 0])
                pb.append(y.pairs[:, 1])
                pw.append(y.weights_of_pairs())
                counts[q] = len(y.pairs)
        self.pair_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.pair_a = (np.concatenate(pa) if pa else np.zeros(0)).astype(np.int64)
        self.pair_b = (np.concatenate(pb) if pb else np.zeros(0)).astype(np.int64)
        self.pair_w = (np.concatenate(pw) if pw else np.zeros(0)).astype(np.float64)
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
        self.method = np.where(graded,
                               np.where(cheap, _ranking_jit.ENUMERATE, _ranking_jit.SWEEP),
                               _ranking_jit.EXPLICIT).astype(np.int64)

    def matches(self, Ye):
        t = self.targets
        return len(Ye) == len(t) and all(map(operator.is_, Ye, t))
