"""Numba kernels for the working set: sparse-row · dense dot and scatter-add.

No validation here (callers pass sorted, unique CSR row indices). Plain numpy
equivalents, which the tests compare against:

    gather_dot(indices, data, v)      == data @ v[indices]
    scatter_add(w, indices, data, a)  :  w[indices] += a * data
    average_inplace(w_avg, w, rho)    :  w_avg += rho * (w - w_avg)
"""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath=False)
def gather_dot(indices, data, v):
    total = 0.0
    for j in range(indices.shape[0]):
        total += data[j] * v[indices[j]]
    return total


@numba.njit(cache=True, nogil=True)
def scatter_add(w, indices, data, a):
    for j in range(indices.shape[0]):
        w[indices[j]] += a * data[j]


@numba.njit(cache=True, nogil=True)
def average_inplace(w_avg, w, rho):
    """w_avg ← (1 − ρ) w_avg + ρ w in one pass (numpy needs a temporary and two)."""
    for j in range(w.shape[0]):
        w_avg[j] += rho * (w[j] - w_avg[j])


def aggregate_rows(M, weights):
    """Σ_i weights_i M_i of a CSR matrix as (sorted unique columns, values), in
    O(nnz log nnz) — no dense vector of the full width is formed."""
    vals = M.data * np.repeat(np.asarray(weights, dtype=float), np.diff(M.indptr))
    cols, inv = np.unique(M.indices, return_inverse=True)
    agg = np.bincount(inv.ravel(), weights=vals, minlength=cols.size)
    keep = agg != 0.0
    return cols[keep].astype(np.int64), agg[keep]


_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        import os
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    return _POOL


def gather_dots(rows, v):
    """ψ_c · v for every CSR row in ``rows`` (big rows in parallel threads: the
    kernel releases the GIL)."""
    out = np.empty(len(rows))
    total = sum(r.nnz for r in rows)
    if total < 500_000 or len(rows) < 2:
        for k, r in enumerate(rows):
            out[k] = gather_dot(r.indices, r.data, v)
        return out
    futures = [_pool().submit(gather_dot, r.indices, r.data, v) for r in rows]
    for k, f in enumerate(futures):
        out[k] = f.result()
    return out
