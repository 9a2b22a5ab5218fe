"""svm_rank / LETOR files: ``rel qid:N i:v ... # comment``, one document per line.

Documents sharing a ``qid`` form one query; preference pairs are formed only within
a query, between documents with different relevance (svm_rank semantics). Feature
numbers are 1-based in the file, increase along a line and are at most
:data:`MAX_FEATURE_NUMBER` (10,000,000); files are UTF-8. Every malformed input is a
``ValueError`` naming the file and the line.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..limits import check_array_size
from ._lines import (MAX_FEATURE_NUMBER, SparseRows, next_token, parse_id, parse_target,
                     read_lines, source_name)

__all__ = ["RankingData", "read_svm_light", "read_svm_rank", "write_svm_rank",
           "MAX_FEATURE_NUMBER"]


class RankingData(NamedTuple):
    """Queries of a ranking data set.

    Attributes
    ----------
    X : list of ndarray or csr_matrix of shape (n_docs, n_features)
        Document features of each query (rows in file order).
    Y : list of ndarray of shape (n_docs,)
        Relevance grades.
    qids : ndarray
        Query id of each query (order of first appearance in the file).
    """

    X: list
    Y: list
    qids: np.ndarray


def read_svm_light(path, *, n_features=None, need_qid=False):
    """Read an svm_light / svm_multiclass / svm_rank file: one example per line.

    ``TARGET [qid:N] FEAT:VAL ... # comment`` with feature numbers that start at 1
    and increase along a line, up to :data:`MAX_FEATURE_NUMBER` (or ``n_features``).
    Files are UTF-8; ``#`` starts a comment; blank lines are skipped.

    Parameters
    ----------
    path : str, path-like or file object
    n_features : int, optional
        Number of features (default: the largest feature number in the file).
    need_qid : bool, default=False
        Every line must have a ``qid:`` (svm_rank).

    Returns
    -------
    X : csr_matrix of shape (n_lines, n_features)
    y : ndarray of float
    qid : ndarray of int64 or None
        None when no line has a qid.

    Raises
    ------
    ValueError
        Naming the file and the line: malformed tokens, bytes that are not UTF-8,
        repeated or decreasing feature numbers, feature numbers above the limit,
        non-finite numbers, targets beyond 2^53 that a float cannot hold exactly,
        qids beyond 2^63 - 1, a qid on some lines only.

    Notes
    -----
    The entries are gathered in typed arrays and a long line is parsed in pieces, so
    reading needs a small multiple of the file's size.

    Examples
    --------
    >>> import io
    >>> X, y, qid = read_svm_light(io.StringIO("2 1:0.5 3:1\\n1 2:2 # doc\\n"))
    >>> X.toarray().tolist(), y.tolist(), qid
    ([[0.5, 0.0, 1.0], [0.0, 2.0, 0.0]], [2.0, 1.0], None)
    """
    name = source_name(path)
    ys, qids, qid_lines = [], [], []
    rows = SparseRows()
    for lineno, line in read_lines(path):
        end = line.find("#")
        end = len(line) if end < 0 else end
        first, pos = next_token(line, 0, end)
        if first is None:
            continue
        where = f"{name}, line {lineno}"
        target = parse_target(first, "target", where)
        second, after = next_token(line, pos, end)
        if second is not None and second.startswith("qid:"):
            qids.append(parse_id(second[4:], "qid", where))
            qid_lines.append(lineno)
            pos = after
        elif need_qid:
            raise ValueError(f"{where}: no 'qid:' field; svm_rank files need one per "
                             "document")
        elif qids:
            raise ValueError(f"{where}: no 'qid:' field, but earlier lines have one")
        if qids and len(qids) != len(ys) + 1:
            raise ValueError(f"{where}: a 'qid:' field, but earlier lines have none")
        rows.add(line, pos, end, where, n_features)
        ys.append(target)
    X = rows.matrix(n_features)
    qid = np.asarray(qids, dtype=np.int64) if qids else None
    return X, np.asarray(ys, dtype=float), qid


def read_svm_rank(path, *, n_features=None, dense=False):
    """Read an svm_rank / LETOR file into per-query arrays.

    Parameters
    ----------
    path : str or path-like
        The file (``# ...`` comments and blank lines are skipped; CRLF is fine).
    n_features : int, optional
        Number of features (default: the largest index in the file).
    dense : bool, default=False
        Return dense arrays instead of CSR matrices.

    Returns
    -------
    RankingData

    Raises
    ------
    ValueError
        Naming the file and the line, for a line without ``qid:`` or any malformed
        input (see :func:`read_svm_light`).
    structsvm.limits.MemoryLimitError
        With ``dense=True``, when the documents' dense rows together exceed the memory
        budget (:func:`structsvm.limits.memory_limit`).
    """
    X, y, qid = read_svm_light(path, n_features=n_features, need_qid=True)
    if dense:  # the dense blocks together hold every document's row
        check_array_size(X.shape, 8, f"dense features ({X.shape[0]} documents x "
                         f"{X.shape[1]} features)", source=source_name(path))
    if qid is None:
        qid = np.zeros(0, dtype=np.int64)
    uniq, first = np.unique(qid, return_index=True)
    order = uniq[np.argsort(first)]
    Xs, Ys = [], []
    by_query = np.argsort(qid, kind="stable")
    bounds = np.searchsorted(qid[by_query], order)
    ends = np.searchsorted(qid[by_query], order, side="right")
    for a, b in zip(bounds, ends):
        rows = by_query[a:b]
        block = X[rows]
        Xs.append(block.toarray() if dense else block)
        Ys.append(y[rows].astype(float))
    return RankingData(Xs, Ys, order)


def _fmt(v):
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


def write_svm_rank(path, X, Y, qids=None, comments=None):
    """Write queries in svm_rank format (zero features are left out).

    Parameters
    ----------
    path : str or path-like
    X : list of array-like or sparse, each of shape (n_docs, n_features)
    Y : list of array-like of shape (n_docs,)
        Relevance grades.
    qids : sequence of int, optional
        Query ids (default 1, 2, ...).
    comments : list of list of str, optional
        Per document, text written after ``#``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "r.dat")
    >>> write_svm_rank(f, [np.array([[1., 0.], [0., .5]])], [[1, 0]])
    >>> open(f).read()
    '1 qid:1 1:1\\n0 qid:1 2:0.5\\n'
    """
    if len(X) != len(Y):
        raise ValueError(f"X has {len(X)} queries but Y has {len(Y)}")
    qids = np.arange(1, len(X) + 1) if qids is None else np.asarray(qids)
    if len(qids) != len(X):
        raise ValueError(f"{len(qids)} qids for {len(X)} queries")
    with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as fh:
        for i, (x, y, q) in enumerate(zip(X, Y, qids)):
            M = sp.csr_matrix(x, dtype=float)
            y = np.asarray(y, dtype=float).ravel()
            if M.shape[0] != y.size:
                raise ValueError(f"Sample {i}: {M.shape[0]} documents but {y.size} grades")
            for r in range(M.shape[0]):
                lo, hi = M.indptr[r], M.indptr[r + 1]
                feats = " ".join(f"{j + 1}:{_fmt(v)}" for j, v in
                                 sorted(zip(M.indices[lo:hi], M.data[lo:hi])) if v != 0)
                line = f"{_fmt(y[r])} qid:{int(q)}" + (f" {feats}" if feats else "")
                if comments is not None:
                    line += f" # {comments[i][r]}"
                fh.write(line + "\n")
