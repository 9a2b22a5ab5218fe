"""Compiled loops for the learners: sparse-row · dense dot and scatter-add, and the
same over all rows of a CSR block in one call (the cutting planes' working set,
:mod:`._working_set`).

No validation here (callers pass sorted, unique CSR row indices). Plain numpy
equivalents, which the tests compare against:

    gather_dot(indices, data, v)      == data @ v[indices]
    scatter_add(w, indices, data, a)  :  w[indices] += a * data
    average_inplace(w_avg, w, rho)    :  w_avg += rho * (w - w_avg)
    rows_dot(indptr, indices, data, v, out)     :  out[:] = M @ v
    rows_scatter(indptr, indices, data, coef, w):  w += M.T @ coef
"""
import numba
import numpy as np

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "average_inplace": ("f8:1 f8:1 f8", "void"),
    "rows_dot": ("i4:1 i4:1 f8:1 f8:1 f8:1", "void"),
    "rows_scatter": ("i4:1 i4:1 f8:1 f8:1 f8:1", "void"),
}


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


@numba.njit(cache=True, nogil=True)
def rows_dot(indptr, indices, data, v, out):
    """out[r] = ψ_r · v for every row r of the CSR arrays (each row's products summed
    in the order of its entries)."""
    for r in range(out.shape[0]):
        total = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            total += data[j] * v[indices[j]]
        out[r] = total


@numba.njit(cache=True, nogil=True)
def rows_scatter(indptr, indices, data, coef, w):
    """w += Σ_r coef[r] ψ_r, row by row (rows with coef 0 skipped)."""
    for r in range(coef.shape[0]):
        a = coef[r]
        if a != 0.0:
            for j in range(indptr[r], indptr[r + 1]):
                w[indices[j]] += a * data[j]
