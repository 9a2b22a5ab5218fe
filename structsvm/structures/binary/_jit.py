"""Compiled loops of the binary losses' most violated labellings, each with a numpy
reference.

Both search a contingency table: with the positives and the negatives sorted by
decreasing gain and SP, SN the prefix sums of their gains, the best labelling with
tp = a and fp = b labels the a first positives and the b first negatives positive
and scores SP[a] + SN[b] (above the all-negative labelling); the loops find the
(a, b) maximising Δ(a, b) + SP[a] + SN[b].

- ``concave_search``: where Δ(a, ·) is concave on the allowed b (F_β; precision and
  recall at k for m = a + b ≥ k), so is Δ(a, ·) + SN (SN's increments decrease):
  bisection on its increments for every a, O(P log N);
- ``below_k_search``: precision and recall at k for m < k, read as a ranking whose
  k − m places below the positives are filled at random from the n − m others:
  expected hits a + (k − m)(P − a)/(n − m), a loss convex in b, so every (a, b) is
  tried, O(P k).

And ``squared_norm_sum``: Σ_i ‖x_i‖² of a CSR matrix whose rows may hold a column
twice (summed first, as scipy reads them) or in any order, without sorting, O(nnz).

The losses (``kind``): 0 F_β, Δ = 1 − (1 + β²) a / ((1 + β²) a + β² (P − a) + b)
(0 when the denominator is: no positive either way), ``p1`` = β²; 1 precision,
Δ = 1 − a / (a + b); 2 recall at k, Δ = 1 − k a / (P (a + b)), ``p1`` = k.

Private module: no validation (:mod:`structsvm.structures.binary.losses` checks
its inputs).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["concave_search", "below_k_search", "squared_norm_sum",
           "concave_search_reference", "below_k_reference", "table_loss_reference",
           "squared_norm_sum_reference"]

#: the loops compiled at installation, with their argument and result types
SIGNATURES = {
    "concave_search": ("f8:1 f8:1 i8 f8 i8", "(i8 i8 f8)"),
    "below_k_search": ("f8:1 f8:1 i8 i8 f8", "(i8 i8 f8)"),
    "squared_norm_sum": ("i4:1 i4:1 f8:1 i8", "f8"),
}


@numba.njit(cache=True, nogil=True, inline="always")
def _table_loss(kind, a, b, P, p1):
    if kind == 0:
        den = (1.0 + p1) * a + p1 * (P - a) + b
        return 0.0 if den == 0.0 else 1.0 - (1.0 + p1) * a / den
    m = max(a + b, 1.0)
    if kind == 1:
        return 1.0 - a / m
    return 1.0 - p1 * a / (P * m)


@numba.njit(cache=True, nogil=True)
def concave_search(SP, SN, kind, p1, min_positives):
    """(a, b, value) maximising Δ(a, b) + SP[a] + SN[b] over a + b ≥
    ``min_positives``, Δ(a, ·) concave on b ≥ max(1, min_positives − a) (b = 0
    tried apart)."""
    P = SP.shape[0] - 1
    N = SN.shape[0] - 1
    Pf = float(P)
    best_a, best_b, best = 0, 0, -np.inf
    for a in range(P + 1):
        af = float(a)
        lo = max(min_positives - a, 0)
        if lo > N:
            continue
        if lo == 0:
            value = _table_loss(kind, af, 0.0, Pf, p1) + SP[a]
            if value > best:
                best_a, best_b, best = a, 0, value
            lo = 1
        if lo > N:
            continue
        hi = N
        # the last b in [lo, hi] where the concave f(b) still rose from f(b − 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            rise = (_table_loss(kind, af, float(mid), Pf, p1)
                    - _table_loss(kind, af, float(mid - 1), Pf, p1)
                    + (SN[mid] - SN[mid - 1]))
            if rise > 0.0:
                lo = mid
            else:
                hi = mid - 1
        value = _table_loss(kind, af, float(lo), Pf, p1) + SP[a] + SN[lo]
        if value > best:
            best_a, best_b, best = a, lo, value
    return best_a, best_b, best


@numba.njit(cache=True, nogil=True)
def below_k_search(SP, SN, n, k, den):
    """(a, b, value) maximising 1 − hits(a, b)/den + SP[a] + SN[b] over a + b < k
    (value −inf when k = 0)."""
    P = SP.shape[0] - 1
    N = SN.shape[0] - 1
    best_a, best_b, best = 0, 0, -np.inf
    for a in range(min(P, k - 1) + 1):
        top = min(N, k - 1 - a)
        for b in range(top + 1):
            m = a + b
            hits = a + (k - m) * (P - a) / (n - m)
            value = 1.0 - hits / den + SP[a] + SN[b]
            if value > best:
                best_a, best_b, best = a, b, value
    return best_a, best_b, best


@numba.njit(cache=True, nogil=True)
def squared_norm_sum(indptr, indices, data, n_cols):
    """Σ_i ‖x_i‖² of the CSR rows (indptr, indices, data), a column's entries of
    one row summed before squaring."""
    acc = np.zeros(n_cols)
    seen = np.full(n_cols, -1, dtype=np.int64)
    total = 0.0
    for i in range(indptr.shape[0] - 1):
        start, stop = indptr[i], indptr[i + 1]
        for p in range(start, stop):
            j = indices[p]
            if seen[j] != i:
                seen[j] = i
                acc[j] = data[p]
            else:
                acc[j] += data[p]
        for p in range(start, stop):
            j = indices[p]
            if seen[j] == i:
                total += acc[j] * acc[j]
                seen[j] = -2 - i  # counted
    return total


# --------------------------------------------------------------------------- references
def squared_norm_sum_reference(X):
    """:func:`squared_norm_sum` with scipy: duplicates summed, then squared."""
    X = X.copy()
    X.sum_duplicates()
    return float(X.data @ X.data)


def table_loss_reference(kind, a, b, P, p1):
    """Δ(a, b) of the loss ``kind``, vectorised over arrays a and b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if kind == 0:
        den = (1.0 + p1) * a + p1 * (P - a) + b
        return np.where(den == 0, 0.0, 1.0 - (1.0 + p1) * a / np.where(den == 0, 1, den))
    m = np.maximum(a + b, 1.0)
    return 1.0 - a / m if kind == 1 else 1.0 - p1 * a / (P * m)


def concave_search_reference(SP, SN, kind, p1, min_positives):
    """:func:`concave_search` by trying every allowed (a, b) in numpy."""
    P, N = SP.size - 1, SN.size - 1
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    value = table_loss_reference(kind, a, b, float(P), p1) + SP[:, None] + SN[None, :]
    value = np.where(a + b >= min_positives, value, -np.inf)
    i = int(np.argmax(value))
    return i // (N + 1), i % (N + 1), float(value.flat[i])


def below_k_reference(SP, SN, n, k, den):
    """:func:`below_k_search` on a grid over a and b in numpy."""
    P, N = SP.size - 1, SN.size - 1
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    m = a + b
    ok = m < k
    hits = a + (k - m) * (P - a) / np.where(ok, n - m, 1)
    value = np.where(ok, 1.0 - hits / den + SP[:, None] + SN[None, :], -np.inf)
    i = int(np.argmax(value))
    return i // (N + 1), i % (N + 1), float(value.flat[i])
