"""Numba kernels for the working set: sparse-row · dense dot and scatter-add.

No validation here (callers pass sorted, unique CSR row indices). Plain numpy
equivalents, which the tests compare against:

    gather_dot(indices, data, v)      == data @ v[indices]
    scatter_add(w, indices, data, a)  :  w[indices] += a * data
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


def gather_dots(rows, v):
    """ψ_c · v for every CSR row in ``rows``."""
    return np.array([gather_dot(r.indices, r.data, v) for r in rows], dtype=float)
