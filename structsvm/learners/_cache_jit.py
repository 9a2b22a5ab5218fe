"""Compiled loops of the constraint cache, on the raw arrays of a stacked CSR matrix.

The cache stacks its answers oldest first: row ``k * n + i`` is example i's answer of
the k-th stored oracle call. No validation here. Plain numpy equivalents, which the
tests compare against (``M`` the stacked CSR matrix, ``K = loss.size // n``):

    best_cached_rows(M.indptr, M.indices, M.data, loss, n, w, slack)
        m = M @ w
        v = (loss * (1 - m) if slack else loss - m).reshape(K, n)
        best = v.argmax(axis=0)                  # the oldest of equal violations
        (best * n + arange(n), v[best, arange(n)])
    gather_rows(M.indptr, M.indices, M.data, rows, weights)
        S = M[rows]; (S.indices, S.data * repeat(weights, diff(S.indptr)))
"""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def best_cached_rows(indptr, indices, data, loss, n, w, slack):
    """Per example the stacked row of its most violated cached answer and the
    violation there (Δ − w·δΦ, or Δ (1 − w·δΦ) with slack rescaling)."""
    best = np.zeros(n, dtype=np.int64)
    top = np.zeros(n)
    for r in range(loss.shape[0]):
        m = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            m += data[j] * w[indices[j]]
        v = loss[r] * (1.0 - m) if slack else loss[r] - m
        i = r % n
        if r < n or v > top[i]:
            top[i] = v
            best[i] = r
    return best, top


@numba.njit(cache=True, nogil=True)
def gather_rows(indptr, indices, data, rows, weights):
    """The column indices and weighted values of the given rows, concatenated."""
    nnz = 0
    for k in range(rows.shape[0]):
        nnz += indptr[rows[k] + 1] - indptr[rows[k]]
    cols = np.empty(nnz, dtype=np.int64)
    vals = np.empty(nnz)
    t = 0
    for k in range(rows.shape[0]):
        a = weights[k]
        for j in range(indptr[rows[k]], indptr[rows[k] + 1]):
            cols[t] = indices[j]
            vals[t] = data[j] * a
            t += 1
    return cols, vals
