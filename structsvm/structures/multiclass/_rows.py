"""Sparse rows of a multiclass batch built by compiled passes: the chosen inputs as
canonical CSR, the oracle's δΦ rows, and the class scores of sparse inputs.

:class:`structsvm.structures.multiclass.features.MulticlassFeatures` checks its arguments and calls these;
the loops (:mod:`._multiclass_jit`) check nothing.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._compiled import loops


__all__ = ["csr_rows", "difference_rows", "sparse_class_scores"]


def csr_rows(Xe, idx):
    """(canonical CSR, row numbers) of the examples ``idx``: a sparse ``Xe`` in
    canonical form (as ``encode_inputs`` returns it) is used as it is, the chosen
    rows of a dense one are converted by a compiled pass."""
    jit = loops("structsvm.structures.multiclass._jit")

    n = Xe.shape[0]
    rows = np.arange(n) if idx is None else np.asarray(idx, dtype=np.intp).reshape(-1)
    if rows.size and (rows.min() < -n or rows.max() >= n):
        raise IndexError(f"idx out of range for {n} examples")
    rows = np.where(rows < 0, rows + n, rows)
    if sp.issparse(Xe):
        # the same object when already CSR: scipy caches its canonical-format check
        Xs = Xe if Xe.format == "csr" else sp.csr_matrix(Xe)
        if not Xs.has_canonical_format:
            Xs = Xs.copy()
            Xs.sum_duplicates()
        return Xs, rows
    X = np.ascontiguousarray(Xe, dtype=float)
    small = X.size < np.iinfo(np.int32).max
    ptr, ind, dat = jit.dense_rows_to_csr(X, rows, np.empty(0, np.int32 if small
                                                            else np.int64))
    return sp.csr_matrix((dat, ind, ptr), shape=(len(rows), X.shape[1])), \
        np.arange(len(rows))


def difference_rows(Xs, rows, y, yh, lam, n_input, n_features):
    """CSR whose row m is Φ(x, y[m]) − Φ(x, yh[m]) for x = row ``rows[m]`` of ``Xs``.

    ``Xs`` is canonical CSR (:func:`csr_rows`), ``lam`` the attribute matrix Λ or
    None (one-hot), ``n_input`` the width d of φ(x). The result has sorted column
    indices and no stored zeros (``has_canonical_format`` set).
    """
    jit = loops("structsvm.structures.multiclass._jit")

    width = 2 if lam is None else lam.shape[1]
    bound = width * int(np.sum(Xs.indptr[rows + 1] - Xs.indptr[rows]))
    small = max(bound, n_features) < np.iinfo(np.int32).max
    like = np.empty(0, dtype=np.int32 if small else np.int64)
    if lam is None:
        ptr, ind, dat = jit.one_hot_differences(Xs.indptr, Xs.indices, Xs.data, rows,
                                                y, yh, n_input, like)
    else:
        ptr, ind, dat = jit.attribute_differences(Xs.indptr, Xs.indices, Xs.data, rows,
                                                  lam, y, yh, n_input, like)
    out = sp.csr_matrix((dat, ind, ptr), shape=(len(rows), n_features))
    out.has_canonical_format = True  # sorted within each row, no duplicates
    return out


def sparse_class_scores(Xe, W, idx):
    """``Xe[idx] @ W.T`` for sparse ``Xe``, compiled: scipy would copy W.T (all of w)
    on every call. ``W`` has one row per block (class or attribute)."""
    jit = loops("structsvm.structures.multiclass._jit")

    Xs, rows = csr_rows(Xe, idx)
    scores = np.empty((len(rows), W.shape[0]))
    jit.class_scores(Xs.indptr, Xs.indices, Xs.data, rows, np.ascontiguousarray(W), scores)
    return scores
