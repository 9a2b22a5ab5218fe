"""Compiled loop counting margin-violated preference pairs, with a numpy reference.

For one query with document scores ``s``, grades ``r`` and margin ``m``, a pair
(a, b) with r_a > r_b is *violated* when s_a < s_b + m. With t = s + m,

    up[a]   = #{b : r_b < r_a, t_b > s_a}   (violated pairs where a is the better one)
    down[b] = #{a : r_a > r_b, s_a < t_b}   (violated pairs where b is the worse one)

Both are computed by sorting and a Fenwick tree over the grade ranks, O(n log n)
per query (Joachims 2006, Sec. 4, for any number of grades). Both counts use the
same comparison of the same floats (s_a against t_b), so they always agree.

Private module: no validation (the decoder in :mod:`structsvm.structures.ranking.sort` and
:mod:`structsvm.structures.ranking.outputs` check their inputs).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["violated_counts_batch", "violated_counts_reference"]


@numba.njit(cache=True, nogil=True)
def _bit_add(bit, i):
    n = bit.shape[0]
    while i < n:
        bit[i] += 1
        i += i & (-i)


@numba.njit(cache=True, nogil=True)
def _bit_prefix(bit, i):
    total = 0
    while i > 0:
        total += bit[i]
        i -= i & (-i)
    return total


@numba.njit(cache=True, nogil=True)
def _one_query(s, t, r, up, down):
    n = s.shape[0]
    if n < 2:
        for i in range(n):
            up[i] = 0
            down[i] = 0
        return
    # dense grade ranks 1..R
    og = np.argsort(r)
    rank = np.empty(n, dtype=np.int64)
    cur = 1
    rank[og[0]] = 1
    for k in range(1, n):
        if r[og[k]] > r[og[k - 1]]:
            cur += 1
        rank[og[k]] = cur
    bit = np.zeros(cur + 1, dtype=np.int64)
    # up: a by decreasing s, insert every b with t_b > s_a
    o_s = np.argsort(-s)
    o_t = np.argsort(-t)
    j = 0
    for k in range(n):
        a = o_s[k]
        while j < n and t[o_t[j]] > s[a]:
            _bit_add(bit, rank[o_t[j]])
            j += 1
        up[a] = _bit_prefix(bit, rank[a] - 1)
    # down: b by increasing t, insert every a with s_a < t_b
    bit[:] = 0
    o_s = np.argsort(s)
    o_t = np.argsort(t)
    j = 0
    for k in range(n):
        b = o_t[k]
        while j < n and s[o_s[j]] < t[b]:
            _bit_add(bit, rank[o_s[j]])
            j += 1
        down[b] = j - _bit_prefix(bit, rank[b])


@numba.njit(cache=True, nogil=True)
def violated_counts_batch(s, t, r, offsets, up, down):
    """Fill ``up``/``down`` for every query (query q owns ``offsets[q]:offsets[q+1]``)."""
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        _one_query(s[lo:hi], t[lo:hi], r[lo:hi], up[lo:hi], down[lo:hi])


def violated_counts_reference(s, t, r):
    """numpy reference for one query: one ``searchsorted`` per grade level."""
    s, t, r = (np.asarray(v, dtype=float) for v in (s, t, r))
    up = np.zeros(len(s), dtype=np.int64)
    down = np.zeros(len(s), dtype=np.int64)
    for g in np.unique(r):
        lvl = r == g
        t_sorted = np.sort(t[lvl])
        s_sorted = np.sort(s[lvl])
        higher = r > g   # better docs, counted against this (worse) level
        up[higher] += t_sorted.size - np.searchsorted(t_sorted, s[higher], side="right")
        lower = r < g    # worse docs, counted against this (better) level
        down[lower] += np.searchsorted(s_sorted, t[lower], side="left")
    return up, down
