"""Sparse-row arithmetic of the cutting planes: numpy for small problems of a
researcher's own structure, compiled loops otherwise (no validation here; callers pass
sorted, unique CSR row indices).

A compiled loop costs numba's set-up in every fresh process (most of a second) and,
the first time on a machine, its compilation (seconds); numpy's temporaries and
per-call overheads cost little on a small problem. So the cutting-plane learners run
a small problem of a researcher's own ``structsvm.Structure`` (whose joint features
and argmax run in Python: nothing else in the fit is compiled), one whose constraint
cache would hold fewer than :data:`COMPILED_FROM` entries (:func:`compiled_for`), in
numpy from its first round to its last: it trains without importing numba. Larger
problems, and the built-in maps (whose oracles are compiled anyway), use the loops
throughout. Both paths compute the same sums; only the floating-point summation order
of the dot products may differ (by round-off).
"""
from __future__ import annotations

import numpy as np

from .._compiled import loops

__all__ = ["COMPILED_FROM", "aggregate_rows", "compiled_for", "gather_dots",
           "scatter_rows"]

# cache entries (δΦ entries of all stored answers) from which a problem is solved with
# the compiled loops
COMPILED_FROM = 100_000


def compiled_for(problem, answers=1):
    """Whether the cutting planes solve ``problem`` with the compiled loops: unless
    its feature map is a ``structsvm.Structure``'s (structure ``"user"``) and
    ``answers`` oracle answers would hold fewer than :data:`COMPILED_FROM` δΦ entries,
    estimated as twice the entries of the true joint features Φ(x_i, y_i) (a δΦ row
    holds at most those of Φ(x_i, y_i) and Φ(x_i, ŷ_i))."""
    if type(problem.feature_map).structure != "user":
        return True
    return 2 * problem.truth_features().nnz * max(int(answers), 1) >= COMPILED_FROM


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


def gather_dots(rows, v, compiled=True):
    """ψ_c · v for every sparse row ψ_c in ``rows`` (objects with ``indices``,
    ``data`` and ``nnz``): in numpy, or with the ``gather_dot`` loop (big rows in
    parallel threads: it releases the GIL)."""
    out = np.empty(len(rows))
    if not compiled:
        for k, r in enumerate(rows):
            out[k] = r.data @ v[r.indices]
        return out
    gather_dot = loops("structsvm.learners._sparse_jit").gather_dot

    total = sum(r.nnz for r in rows)
    if total < 500_000 or len(rows) < 2:
        for k, r in enumerate(rows):
            out[k] = gather_dot(r.indices, r.data, v)
        return out
    futures = [_pool().submit(gather_dot, r.indices, r.data, v) for r in rows]
    for k, f in enumerate(futures):
        out[k] = f.result()
    return out


def scatter_rows(w, rows, coef, compiled=True):
    """w += Σ_c coef_c ψ_c in place, skipping zero coefficients: in numpy, or with
    the ``scatter_add`` loop (the same products and sums)."""
    pairs = [(float(a), r) for a, r in zip(coef, rows) if a != 0.0]
    if not compiled:
        for a, r in pairs:
            w[r.indices] += a * r.data  # unique indices: no repeated writes
        return w
    scatter_add = loops("structsvm.learners._sparse_jit").scatter_add

    for a, r in pairs:
        scatter_add(w, r.indices, r.data, a)
    return w
