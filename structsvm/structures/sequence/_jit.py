"""Compiled loops of the sequence map: aggregated feature differences, unaries (private).

No validation here: :meth:`SequenceFeatures.joint_feature_difference_sum` and
:func:`structsvm.structures.sequence._oracle.aggregate_chain_violation` check their inputs. The
reference the tests compare against is the COO construction of
:meth:`SequenceFeatures.joint_feature_differences` (weighted sum of its rows); that of
``shared_unaries(table, rows, X.indptr, X.indices, W)`` is scipy's ``X @ W`` (X's
entries ones, row t starting with the columns ``table[rows[t]] >= 0``), which it
equals bit for bit: each sum adds the same terms in the same order from 0.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["scatter_differences", "scatter_differences_touched", "gather_touched",
           "shared_unaries"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "shared_unaries": ("i8:2 i8:1 i4:1 i4:1 f8:2", "f8:2"),
}


@numba.njit(cache=True, nogil=True)
def shared_unaries(table, rows, indptr, indices, W):
    """Unary scores X @ W: the sum over ``table``'s columns once per table row, then
    every token's other columns added to its row's sum."""
    K = W.shape[1]
    pre = np.zeros((table.shape[0], K))
    used = np.zeros(table.shape[0], dtype=np.bool_)
    for t in range(rows.shape[0]):
        used[rows[t]] = True
    for r in range(table.shape[0]):
        if not used[r]:
            continue
        for j in range(table.shape[1]):
            c = table[r, j]
            if c >= 0:
                for k in range(K):
                    pre[r, k] += W[c, k]
    out = np.empty((rows.shape[0], K))
    for t in range(rows.shape[0]):
        r = rows[t]
        skip = 0
        for j in range(table.shape[1]):
            if table[r, j] >= 0:
                skip += 1
        for k in range(K):
            out[t, k] = pre[r, k]
        for p in range(indptr[t] + skip, indptr[t + 1]):
            c = indices[p]
            for k in range(K):
                out[t, k] += W[c, k]
    return out


@numba.njit(cache=True, nogil=True)
def scatter_differences(indptr, indices, data, y, yh, tok_weight, offsets, n_states,
                        base, out):
    """out += Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) over tokens where y and ŷ differ.

    Emissions: column ``j * K + state`` of feature j; transitions ``base + a * K + b``;
    start ``base + K * K + s``; end ``base + K * K + K + s``. ``tok_weight[t]`` is
    the weight ω of token t's sentence.
    """
    K = n_states
    n_seq = offsets.shape[0] - 1
    for i in range(n_seq):
        lo = offsets[i]
        hi = offsets[i + 1]
        for t in range(lo, hi):
            a = y[t]
            b = yh[t]
            om = tok_weight[t]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    c = indices[p] * K
                    v = om * data[p]
                    out[c + a] += v
                    out[c + b] -= v
            if t > lo:
                pa = y[t - 1]
                pb = yh[t - 1]
                if a != b or pa != pb:
                    out[base + pa * K + a] += om
                    out[base + pb * K + b] -= om
        if hi > lo:
            if y[lo] != yh[lo]:
                out[base + K * K + y[lo]] += tok_weight[lo]
                out[base + K * K + yh[lo]] -= tok_weight[lo]
            if y[hi - 1] != yh[hi - 1]:
                out[base + K * K + K + y[hi - 1]] += tok_weight[hi - 1]
                out[base + K * K + K + yh[hi - 1]] -= tok_weight[hi - 1]


@numba.njit(cache=True, nogil=True, inline="always")
def _add(acc, touched, n, c, v):
    # record column c the first time it leaves zero (it may be recorded twice if it
    # returns to zero and is written again: gather_touched emits it once)
    a = acc[c]
    touched[n] = c  # kept only when acc[c] was zero (branch-free)
    acc[c] = a + v
    return n + (a == 0.0)


@numba.njit(cache=True, nogil=True)
def scatter_differences_touched(indptr, indices, data, y, yh, offsets, n_states, base,
                                acc, touched):
    """``scatter_differences`` with unit weights into a zeroed scratch ``acc``,
    recording in ``touched`` every column it writes; returns how many it recorded.

    ``touched`` needs room for one entry per write: 2·nnz(rows) + 2·n_tokens +
    4·n_sequences suffices. :func:`gather_touched` (after sorting the recorded
    columns) then reads the sum back as sparse entries and zeroes ``acc`` again, so
    the work is proportional to the differing tokens, never to ``acc.size`` (the
    map's n_features).
    """
    K = n_states
    n = 0
    n_seq = offsets.shape[0] - 1
    for i in range(n_seq):
        lo = offsets[i]
        hi = offsets[i + 1]
        for t in range(lo, hi):
            a = y[t]
            b = yh[t]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    c = indices[p] * K
                    n = _add(acc, touched, n, c + a, data[p])
                    n = _add(acc, touched, n, c + b, -data[p])
            if t > lo:
                pa = y[t - 1]
                pb = yh[t - 1]
                if a != b or pa != pb:
                    n = _add(acc, touched, n, base + pa * K + a, 1.0)
                    n = _add(acc, touched, n, base + pb * K + b, -1.0)
        if hi > lo:
            if y[lo] != yh[lo]:
                n = _add(acc, touched, n, base + K * K + y[lo], 1.0)
                n = _add(acc, touched, n, base + K * K + yh[lo], -1.0)
            if y[hi - 1] != yh[hi - 1]:
                n = _add(acc, touched, n, base + K * K + K + y[hi - 1], 1.0)
                n = _add(acc, touched, n, base + K * K + K + yh[hi - 1], -1.0)
    return n


@numba.njit(cache=True, nogil=True)
def gather_touched(acc, touched, cols, vals):
    """Move the nonzero entries of ``acc`` at the sorted columns ``touched`` (repeats
    allowed) into ``cols``/``vals``, each column once and in order, and zero them in
    ``acc``; returns how many were written."""
    m = 0
    for k in range(touched.shape[0]):
        c = touched[k]
        v = acc[c]
        if v != 0.0:
            cols[m] = c
            vals[m] = v
            m += 1
            acc[c] = 0.0
    return m
