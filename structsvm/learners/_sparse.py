"""Sparse-row sums of the learners, and which problems the cutting planes solve with
compiled loops.

A compiled loop costs numba's set-up in every fresh process (most of a second) and,
the first time on a machine, its compilation (seconds); numpy's temporaries and
per-call overheads cost little on a small problem. So the cutting-plane learners run
a small problem of a researcher's own ``structsvm.Structure`` (whose joint features
and argmax run in Python: nothing else in the fit is compiled), one whose constraint
cache would hold fewer than :data:`COMPILED_FROM` entries (:func:`compiled_for`), in
numpy from its first round to its last (the working-set QP by an active-set method,
the cache's sums in numpy): it trains without importing numba. Larger problems, and
the built-in maps (whose oracles are compiled anyway), use the loops throughout.
Both paths compute the same sums; only the floating-point summation order may differ
(by round-off). The working set's products are sparse products either way
(:mod:`._working_set`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["COMPILED_FROM", "aggregate_rows", "compiled_for"]

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
