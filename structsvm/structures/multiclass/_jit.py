"""Compiled loops of the multiclass map: class scores and δΦ rows (private).

No validation here: :class:`structsvm.structures.multiclass.features.MulticlassFeatures` checks shapes and
hands over a CSR matrix with sorted, unique column indices per row. The references
the tests compare against are the scipy constructions in ``multiclass.py``
(``X[idx] @ W.T`` and ``joint_features(y) − joint_features(ŷ)``).

Layout: Φ(x, y) = Λ(y) ⊗ φ(x), flattened attribute-major (one-hot: class-major), so
block a of a δΦ row holds (Λ(y)_a − Λ(ŷ)_a) x in columns ``a * d + j``.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["class_scores", "one_hot_differences", "attribute_differences",
           "dense_rows_to_csr"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "class_scores": ("i4:1 i4:1 f8:1 i8:1 f8:2 f8:2", "void"),
    "attribute_differences": (
        "i4:1 i4:1 f8:1 i8:1 "
        "f8:2 i8:1 i8:1 i8 i4:1",
        "(i4:1 i4:1 f8:1)"),
    "dense_rows_to_csr": ("f8:2 i8:1 i4:1", "(i4:1 i4:1 f8:1)"),
}


@numba.njit(cache=True, nogil=True)
def class_scores(indptr, indices, data, rows, W, out):
    """out[m, k] = Σ_j X[rows[m], j] W[k, j] (W C-ordered: one row per block).

    W is stored block-major, so reading W[k, j] for every k of one feature j
    touches K cache lines. The columns the examples use are therefore gathered
    first, feature-major and in sorted order (each line of W read once, in
    order), then every example's scores are sums over its entries in stored
    order: the operations, and so the values, of scipy's ``X[rows] @ W.T``.
    """
    m, K = rows.shape[0], W.shape[0]
    total = 0
    for q in range(m):
        total += indptr[rows[q] + 1] - indptr[rows[q]]
    cols = np.empty(total, dtype=np.int64)
    t = 0
    for q in range(m):
        for p in range(indptr[rows[q]], indptr[rows[q] + 1]):
            cols[t] = indices[p]
            t += 1
    used = np.unique(cols)
    n_used = used.shape[0]
    slot = np.empty(W.shape[1], dtype=np.int64)
    for u in range(n_used):
        slot[used[u]] = u
    Wu = np.empty((n_used, K))
    for u0 in range(0, n_used, 64):  # a block of rows of Wu stays in L1 across k
        u1 = min(u0 + 64, n_used)
        for k in range(K):
            wk = W[k]
            for u in range(u0, u1):
                Wu[u, k] = wk[used[u]]
    for q in range(m):
        r = rows[q]
        for k in range(K):
            out[q, k] = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            v = data[p]
            src = Wu[slot[indices[p]]]
            for k in range(K):
                out[q, k] += v * src[k]


@numba.njit(cache=True, nogil=True)
def _nonzeros(indptr, data, r):
    n = 0
    for p in range(indptr[r], indptr[r + 1]):
        if data[p] != 0.0:
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _copy_block(indptr, indices, data, r, offset, sign, out_ind, out_dat, pos):
    for p in range(indptr[r], indptr[r + 1]):
        v = data[p]
        if v != 0.0:
            out_ind[pos] = offset + indices[p]
            out_dat[pos] = sign * v
            pos += 1
    return pos


@numba.njit(cache=True, nogil=True)
def one_hot_differences(indptr, indices, data, rows, y, yh, d, index_like):
    """CSR arrays of δΦ_m = x ⊗ (e_y − e_ŷ) for x = X[rows[m]], y = y[m], ŷ = yh[m].

    ``index_like`` gives the dtype of the returned index arrays (scipy's for the
    shape). Row m holds +x in block y and −x in block ŷ (the lower block first, so columns
    stay sorted); it is empty when ŷ = y. Stored zeros of x are skipped.
    """
    m = rows.shape[0]
    out_ptr = np.zeros(m + 1, dtype=index_like.dtype)
    for k in range(m):
        n = 0 if y[k] == yh[k] else 2 * _nonzeros(indptr, data, rows[k])
        out_ptr[k + 1] = out_ptr[k] + n
    nnz = out_ptr[m]
    out_ind = np.empty(nnz, dtype=index_like.dtype)
    out_dat = np.empty(nnz)
    for k in range(m):
        a, b = y[k], yh[k]
        if a == b:
            continue
        r, pos = rows[k], out_ptr[k]
        if a < b:
            pos = _copy_block(indptr, indices, data, r, a * d, 1.0, out_ind, out_dat, pos)
            _copy_block(indptr, indices, data, r, b * d, -1.0, out_ind, out_dat, pos)
        else:
            pos = _copy_block(indptr, indices, data, r, b * d, -1.0, out_ind, out_dat, pos)
            _copy_block(indptr, indices, data, r, a * d, 1.0, out_ind, out_dat, pos)
    return out_ptr, out_ind, out_dat


@numba.njit(cache=True, nogil=True)
def attribute_differences(indptr, indices, data, rows, lam, y, yh, d, index_like):
    """CSR arrays of δΦ_m = x ⊗ (Λ(y) − Λ(ŷ)), block a holding Λ_ya x − Λ_ŷa x.

    Each entry is computed as ``Λ_ya * x − Λ_ŷa * x`` (two products, then the
    difference: bit for bit the value of the scipy subtraction of the two rows) and
    kept when non-zero; rows with ŷ = y are empty.
    """
    m, A = rows.shape[0], lam.shape[1]
    out_ptr = np.zeros(m + 1, dtype=index_like.dtype)
    for k in range(m):
        n = 0
        a, b = y[k], yh[k]
        if a != b:
            r = rows[k]
            for t in range(A):
                la, lb = lam[a, t], lam[b, t]
                for p in range(indptr[r], indptr[r + 1]):
                    if la * data[p] - lb * data[p] != 0.0:
                        n += 1
        out_ptr[k + 1] = out_ptr[k] + n
    nnz = out_ptr[m]
    out_ind = np.empty(nnz, dtype=index_like.dtype)
    out_dat = np.empty(nnz)
    for k in range(m):
        a, b = y[k], yh[k]
        if a == b:
            continue
        r, pos = rows[k], out_ptr[k]
        for t in range(A):
            la, lb = lam[a, t], lam[b, t]
            for p in range(indptr[r], indptr[r + 1]):
                v = la * data[p] - lb * data[p]
                if v != 0.0:
                    out_ind[pos] = t * d + indices[p]
                    out_dat[pos] = v
                    pos += 1
    return out_ptr, out_ind, out_dat


@numba.njit(cache=True, nogil=True)
def dense_rows_to_csr(X, rows, index_like):
    """CSR arrays (indptr, indices, data) of the rows ``rows`` of dense ``X``, zeros
    left out (what ``scipy.sparse.csr_matrix(X[rows])`` stores)."""
    m, d = rows.shape[0], X.shape[1]
    ptr = np.zeros(m + 1, dtype=index_like.dtype)
    for k in range(m):
        n = 0
        for j in range(d):
            if X[rows[k], j] != 0.0:
                n += 1
        ptr[k + 1] = ptr[k] + n
    ind = np.empty(ptr[m], dtype=index_like.dtype)
    dat = np.empty(ptr[m])
    for k in range(m):
        pos = ptr[k]
        for j in range(d):
            v = X[rows[k], j]
            if v != 0.0:
                ind[pos] = j
                dat[pos] = v
                pos += 1
    return ptr, ind, dat
