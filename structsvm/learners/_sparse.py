"""Sparse-row arithmetic of the learners: numpy for small inputs, numba kernels for
large ones (no validation here; callers pass sorted, unique CSR row indices).

A numba kernel costs numba's set-up in every fresh process (most of a second) and,
the first time on a machine, its compilation (seconds); numpy's temporaries cost
little until an input holds many entries. So a call that touches fewer than
:data:`COMPILED_FROM` stored entries runs in numpy, and a small problem (a
researcher's own structure on a few hundred examples) trains without importing numba.
Both paths compute the same sums; only their floating-point summation order may
differ (by round-off).
"""
from __future__ import annotations

import numpy as np

__all__ = ["COMPILED_FROM", "aggregate_rows", "gather_dots", "scatter_rows"]

# stored entries from which a call uses the compiled kernels
COMPILED_FROM = 100_000


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
    """ψ_c · v for every sparse row ψ_c in ``rows`` (objects with ``indices``,
    ``data`` and ``nnz``): numpy below :data:`COMPILED_FROM` entries in all, else the
    ``gather_dot`` kernel (big rows in parallel threads: it releases the GIL)."""
    out = np.empty(len(rows))
    total = sum(r.nnz for r in rows)
    if total < COMPILED_FROM:
        for k, r in enumerate(rows):
            out[k] = r.data @ v[r.indices]
        return out
    from ._sparse_jit import gather_dot

    if total < 500_000 or len(rows) < 2:
        for k, r in enumerate(rows):
            out[k] = gather_dot(r.indices, r.data, v)
        return out
    futures = [_pool().submit(gather_dot, r.indices, r.data, v) for r in rows]
    for k, f in enumerate(futures):
        out[k] = f.result()
    return out


def scatter_rows(w, rows, coef):
    """w += Σ_c coef_c ψ_c in place, skipping zero coefficients: numpy below
    :data:`COMPILED_FROM` entries in all, else the ``scatter_add`` kernel."""
    pairs = [(float(a), r) for a, r in zip(coef, rows) if a != 0.0]
    if sum(r.nnz for _, r in pairs) < COMPILED_FROM:
        for a, r in pairs:
            w[r.indices] += a * r.data  # unique indices: no repeated writes
        return w
    from ._sparse_jit import scatter_add

    for a, r in pairs:
        scatter_add(w, r.indices, r.data, a)
    return w
