"""Compiled loops for the learners: sparse-row · dense dot and scatter-add (their
size-dispatching callers are in :mod:`._sparse`).

No validation here (callers pass sorted, unique CSR row indices). Plain numpy
equivalents, which the tests compare against:

    gather_dot(indices, data, v)      == data @ v[indices]
    scatter_add(w, indices, data, a)  :  w[indices] += a * data
    average_inplace(w_avg, w, rho)    :  w_avg += rho * (w - w_avg)
"""
import numba
import numpy as np

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "gather_dot": ("i4:1 f8:1 f8:1", "f8"),
    "scatter_add": ("f8:1 i4:1 f8:1 f8", "void"),
    "average_inplace": ("f8:1 f8:1 f8", "void"),
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
