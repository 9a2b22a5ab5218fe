"""svm_rank / LETOR files: ``rel qid:N i:v ... # comment``, one document per line.

Documents sharing a ``qid`` form one query; preference pairs are formed only within
a query, between documents with different relevance (svm_rank semantics). Feature
indices are 1-based in the file.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["RankingData", "read_svm_rank", "write_svm_rank"]


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
        When a line lacks ``qid:`` (the error names the line).
    """
    from sklearn.datasets import load_svmlight_file

    path = os.fspath(path)
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.split(b"#", 1)[0].strip()
            if line and b"qid:" not in line:
                raise ValueError(f"{path}, line {lineno}: no 'qid:' field; svm_rank files "
                                 "need one per document")
    X, y, qid = load_svmlight_file(path, n_features=n_features, query_id=True,
                                   zero_based=False, dtype=np.float64)
    uniq, first = np.unique(qid, return_index=True)
    order = uniq[np.argsort(first)]
    Xs, Ys = [], []
    X = sp.csr_matrix(X)
    for q in order:
        rows = np.flatnonzero(qid == q)
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
