"""Compiled loop of the aggregated ranking oracle, with a numpy reference.

One pass over all queries of a training set (Joachims 2006, "Training linear SVMs
in linear time"). For query q with document scores s, margin m_q (the loss of one
swapped pair) and preference pairs P_q with weights ω_ab (see
:mod:`structsvm.structures.ranking.outputs`), the most violated labelling swaps
exactly the pairs (a, b) ∈ P_q with s_a < s_b + m_q (whatever their weight), and

    c_d    = Σ ω over the violated pairs won by d − Σ ω over those lost by d
    n_q    = Σ ω over the violated pairs
    hinge_q = Σ_violated ω (m_q − (s_a − s_b)) = n_q m_q − Σ_d c_d s_d

so Σ_q (Φ(q, y_q) − Φ(q, ŷ_q)) = Xᵀ c, Σ_q Δ_q = Σ_q n_q m_q and ξ_q = hinge_q.

Graded queries with few pairs for their size (|P| ≤ 8 n log2 n, every MQ2008
query): every pair tested, documents grouped by grade once (query-constant) so that
the pairs a document wins are one contiguous, branch-free, vectorised loop, O(|P|).
Other graded queries: documents sorted by score once, then two sweeps that insert
documents by grade rank (precomputed, dense) and count, per document, the violated
pairs it wins and loses: O(n log n) with a Fenwick tree over the ranks (a plain
count array when there are at most 8 grade levels); a graded query's one weight
scales its counts at the end. Explicit-pair queries (click preferences): one loop
over the pairs and their weights, O(|P|). Every comparison is
``s_a < s_b + m_q`` on the same floats as :func:`structsvm.structures.ranking.sort.sort_decode`,
so ties resolve identically.

Private module: no validation (:meth:`RankingFeatures.aggregate_violation` checks).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["aggregate_kernel", "aggregate_reference", "EXPLICIT", "SWEEP", "ENUMERATE"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "aggregate_kernel": (
        "f8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 "
        "i8:1 i8:1 i8:1 f8:1 f8:1 f8:1 f8:1 f8:1 f8:1",
        "void"),
}


@numba.njit(cache=True, nogil=True)
def _sort_idx(v, lo, n, idx):
    """idx[:n] = argsort(v[lo:lo+n]) ascending (insertion sort; a quicksort if large)."""
    if n > 48:
        o = np.argsort(v[lo:lo + n])
        for k in range(n):
            idx[k] = o[k]
        return
    for k in range(n):
        x = v[lo + k]
        j = k - 1
        while j >= 0 and v[lo + idx[j]] > x:
            idx[j + 1] = idx[j]
            j -= 1
        idx[j + 1] = k


# per-query methods (FlatTargets.method)
EXPLICIT, SWEEP, ENUMERATE = 0, 1, 2
# a graded query is enumerated pair by pair when it has at most this many pairs per
# n·log2(n) (the branch-free pair loop is several times cheaper per step than the
# sort and sweeps); MQ2008: every query
ENUMERATE_FACTOR = 8.0


# Counts of inserted documents by grade rank 1..R. Up to _FEW levels (LETOR-style
# data) cnt[r] holds the count of ranks <= r itself: a branch-free insert of fixed
# trip count R and an O(1) lookup; beyond, a Fenwick tree (O(log R) both).
_FEW = 8


@numba.njit(cache=True, nogil=True, inline="always")
def _insert(cnt, r, R):
    if R <= _FEW:
        for i in range(1, R + 1):
            cnt[i] += i >= r
    else:
        while r <= R:
            cnt[r] += 1
            r += r & (-r)


@numba.njit(cache=True, nogil=True, inline="always")
def _below(cnt, r, R):
    """Number of inserted documents with rank <= r."""
    if R <= _FEW:
        return cnt[r]
    total = 0
    while r > 0:
        total += cnt[r]
        r -= r & (-r)
    return total


@numba.njit(cache=True, nogil=True)
def aggregate_kernel(s, offsets, ranks, max_rank, method, perm, lower, pair_off, pair_a,
                     pair_b, pair_w, qweight, margins, coef, n_viol, hinge):
    """Fill ``coef`` (per document), ``n_viol`` and ``hinge`` (per query).

    ``method[q]``: EXPLICIT (loop over ``pair_a``/``pair_b``, the query-local
    (better, worse) pairs delimited by ``pair_off``, weighing ``pair_w``), SWEEP
    (sort + two sweeps over the dense grade ranks 1..max_rank[q] in ``ranks``) or
    ENUMERATE (every graded pair, branch-free: ``perm`` lists the query's documents
    by increasing grade and ``lower[k]`` counts the documents of lower grade than
    ``perm[k]``); a graded query's pairs all weigh ``qweight[q]``. ``n_viol[q]``:
    the summed weight of the violated pairs.
    """
    n_q = offsets.shape[0] - 1
    n_max = 1
    r_max = 1
    for q in range(n_q):
        n_max = max(n_max, offsets[q + 1] - offsets[q])
        r_max = max(r_max, max_rank[q])
    idx = np.empty(n_max, dtype=np.int64)
    t = np.empty(n_max)
    sp = np.empty(n_max)
    dn = np.empty(n_max, dtype=np.int64)
    bit = np.zeros(r_max + 1, dtype=np.int64)
    for q in range(n_q):
        lo = offsets[q]
        n = offsets[q + 1] - lo
        m = margins[q]
        for k in range(n):
            coef[lo + k] = 0.0
        cnt = 0.0
        if method[q] == ENUMERATE:
            # documents by increasing grade: the pairs won by the k-th are those with
            # the first lower[k]; one contiguous, vectorisable loop per document
            for k in range(n):
                d = perm[lo + k]
                sp[k] = s[lo + d]
                t[k] = s[lo + d] + m
                dn[k] = 0
            for k in range(n):
                sa = sp[k]
                up = 0
                for j in range(lower[lo + k]):
                    v = t[j] > sa
                    up += v
                    dn[j] += v
                coef[lo + perm[lo + k]] += up
                cnt += up
            for k in range(n):
                coef[lo + perm[lo + k]] -= dn[k]
        elif method[q] == SWEEP:
            R = max_rank[q]
            if n >= 2 and R >= 2:
                for k in range(n):
                    t[k] = s[lo + k] + m
                # fl(s + m) is monotone in s: one ascending order serves s and t
                _sort_idx(s, lo, n, idx)
                # wins: a by decreasing s; insert every b with t_b > s_a
                for i in range(R + 1):
                    bit[i] = 0
                j = n - 1
                for k in range(n - 1, -1, -1):
                    a = idx[k]
                    sa = s[lo + a]
                    while j >= 0 and t[idx[j]] > sa:
                        _insert(bit, ranks[lo + idx[j]], R)
                        j -= 1
                    up = _below(bit, ranks[lo + a] - 1, R)
                    coef[lo + a] += up
                    cnt += up
                # losses: b by increasing t; insert every a with s_a < t_b
                for i in range(R + 1):
                    bit[i] = 0
                j = 0
                for k in range(n):
                    b = idx[k]
                    tb = t[b]
                    while j < n and s[lo + idx[j]] < tb:
                        _insert(bit, ranks[lo + idx[j]], R)
                        j += 1
                    coef[lo + b] -= j - _below(bit, ranks[lo + b], R)
        else:
            for p in range(pair_off[q], pair_off[q + 1]):
                a = pair_a[p]
                b = pair_b[p]
                if s[lo + a] < s[lo + b] + m:
                    coef[lo + a] += pair_w[p]
                    coef[lo + b] -= pair_w[p]
                    cnt += pair_w[p]
        if method[q] != EXPLICIT and qweight[q] != 1.0:
            cnt *= qweight[q]
            for k in range(n):
                coef[lo + k] *= qweight[q]
        marg = 0.0
        for k in range(n):
            marg += coef[lo + k] * s[lo + k]
        n_viol[q] = cnt
        hinge[q] = max(0.0, cnt * m - marg)


def aggregate_reference(s, offsets, targets, margins):
    """numpy reference: every pair of every query listed and tested explicitly.

    Parameters
    ----------
    s : ndarray of shape (n_docs_total,)
    offsets : ndarray of int, shape (n_queries + 1,)
    targets : list of Preferences
    margins : ndarray of shape (n_queries,)

    Returns
    -------
    coef : ndarray of shape (n_docs_total,)
    n_viol : ndarray of shape (n_queries,)
        Summed weight of the violated pairs.
    hinge : ndarray of shape (n_queries,)
    """
    s = np.asarray(s, dtype=float)
    coef = np.zeros(s.size)
    n_viol = np.zeros(len(targets))
    hinge = np.zeros(len(targets))
    for q, y in enumerate(targets):
        lo, hi = offsets[q], offsets[q + 1]
        sq = s[lo:hi]
        pairs = y.pair_list()
        a, b = pairs[:, 0], pairs[:, 1]
        om = y.weights_of_pairs()
        v = sq[a] < sq[b] + margins[q]
        coef[lo:hi] = (np.bincount(a[v], weights=om[v], minlength=hi - lo)
                       - np.bincount(b[v], weights=om[v], minlength=hi - lo))
        n_viol[q] = float(om[v].sum())
        hinge[q] = float(np.sum(om[v] * (margins[q] - (sq[a[v]] - sq[b[v]]))))
    return coef, n_viol, hinge
