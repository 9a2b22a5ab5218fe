"""The input columns a feature map's weights cover: those that hold a value in training.

A feature number read from a file sizes nothing by itself. svm_light, svm_rank and
svm_hmm files may number features up to 10,000,000 in two lines, and a weight per
number and class would then take gigabytes. Fitted on sparse inputs, a map keeps
weights only for the columns that hold a non-zero value in some training example and
maps the columns of every later input onto those. Nothing is lost: a column that is
zero in every training example has weight 0 in every model the learners return
(w = Σ α δΦ is a combination of training rows), so dropping it changes no score.
Dense inputs keep every column: their width is what they hold.

Shared by the maps of several structures (not tied to one).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["kept_columns", "compact_columns"]


def kept_columns(Xm):
    """The sorted columns of the training inputs ``Xm`` that hold a non-zero value,
    or None when every column does or ``Xm`` is dense (then all are kept).

    Parameters
    ----------
    Xm : ndarray or sparse matrix of shape (n_rows, width)

    Returns
    -------
    ndarray of int64 or None

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> kept_columns(sp.csr_matrix(([1.0, 2.0], ([0, 1], [3, 9999999])),
    ...                            shape=(2, 10000000))).tolist()
    [3, 9999999]
    """
    if not sp.issparse(Xm):
        return None
    M = Xm.tocsr()
    cols = np.unique(M.indices[M.data != 0]).astype(np.int64)
    return None if cols.size == M.shape[1] else cols


def compact_columns(Xm, kept):
    """``Xm`` with only the columns ``kept`` (renumbered 0 .. len(kept) − 1); None
    keeps all. Column order and values are unchanged; a sparse result is CSR with
    sorted indices when ``Xm``'s were.

    Parameters
    ----------
    Xm : ndarray or sparse matrix of shape (n_rows, width)
    kept : ndarray of int or None
        Sorted, distinct columns of ``Xm``.

    Returns
    -------
    ndarray or csr_matrix of shape (n_rows, len(kept))

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1., 0., 2., 3.], [0., 4., 0., 5.]]))
    >>> compact_columns(X, np.array([0, 3])).toarray().tolist()
    [[1.0, 3.0], [0.0, 5.0]]
    """
    if kept is None:
        return Xm
    if not sp.issparse(Xm):
        return np.ascontiguousarray(np.asarray(Xm)[:, kept])
    M = Xm.tocsr()
    if kept.size == 0:
        return sp.csr_matrix((M.shape[0], 0))
    pos = np.searchsorted(kept, M.indices)
    hit = kept[np.minimum(pos, kept.size - 1)] == M.indices
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))[hit]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=M.shape[0]))])
    index_dtype = np.int32 if kept.size < 2 ** 31 else np.int64
    return sp.csr_matrix((M.data[hit], pos[hit].astype(index_dtype), indptr),
                         shape=(M.shape[0], kept.size))
