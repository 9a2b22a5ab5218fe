"""The SVM^hmm file format (Joachims): read and write, so svm_hmm users bring their data.

One token per line::

    TAG qid:SEQ FEAT:VAL FEAT:VAL ... # comment

``TAG`` is a positive integer, ``qid`` numbers the sequence (the tokens of a
sequence are consecutive lines) and feature numbers start at 1. Lines starting with
``#`` are comments.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["read_svm_hmm", "write_svm_hmm"]


def _open(f, mode):
    if isinstance(f, (str, Path)):
        return open(f, mode, encoding="utf-8", newline=None if "r" in mode else "\n"), True
    return f, False


def read_svm_hmm(f, *, n_features=None, return_comments=False):
    """Read an svm_hmm file into per-sequence sparse matrices and tag lists.

    Parameters
    ----------
    f : str, path-like or text file object
    n_features : int, optional
        Width of the matrices (feature j goes to column j - 1). By default the
        largest feature number in the file; pass the training file's width (or
        more) when reading a test file.
    return_comments : bool, default=False
        Also return the per-token comments (svm_hmm's examples put the word there).

    Returns
    -------
    X : list of csr_matrix of shape (T_i, n_features)
    Y : list of list of int
    comments : list of list of str
        Only with ``return_comments``.

    Raises
    ------
    ValueError
        Naming the line, for malformed lines, non-positive tags or feature numbers,
        split sequences, or features beyond ``n_features``.

    Examples
    --------
    >>> import io
    >>> X, Y = read_svm_hmm(io.StringIO("1 qid:1 1:1 3:0.5 # the\\n2 qid:1 2:1 # dog\\n"))
    >>> Y, X[0].toarray().tolist()
    ([[1, 2]], [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]])
    """
    fh, close = _open(f, "r")
    name = getattr(fh, "name", "<stream>")
    qids, tags, rows, cols, vals, comments = [], [], [], [], [], []
    try:
        for lineno, line in enumerate(fh, 1):
            body, _, comment = line.partition("#")
            parts = body.split()
            if not parts:
                continue
            where = f"{name}, line {lineno}"
            try:
                tag = int(parts[0])
            except ValueError:
                raise ValueError(f"{where}: tag {parts[0]!r} is not an integer") from None
            if tag < 1:
                raise ValueError(f"{where}: tags must be positive integers, got {tag}")
            if len(parts) < 2 or not parts[1].startswith("qid:"):
                raise ValueError(f"{where}: expected 'qid:N' after the tag")
            try:
                qid = int(parts[1][4:])
                feats = [p.split(":", 1) for p in parts[2:]]
                js = [int(j) for j, _ in feats]
                vs = [float(v) for _, v in feats]
            except ValueError:
                raise ValueError(f"{where}: malformed 'qid:N' or 'FEAT:VAL' pair") from None
            if any(j < 1 for j in js):
                raise ValueError(f"{where}: feature numbers start at 1")
            r = len(tags)
            qids.append(qid)
            tags.append(tag)
            rows += [r] * len(js)
            cols += [j - 1 for j in js]
            vals += vs
            comments.append(comment.strip())
    finally:
        if close:
            fh.close()
    width = (max(cols) + 1 if cols else 0) if n_features is None else int(n_features)
    if cols and max(cols) >= width:
        raise ValueError(f"{name}: feature {max(cols) + 1} is beyond n_features={width}")
    M = sp.csr_matrix((vals, (rows, cols)), shape=(len(tags), width))
    qids = np.asarray(qids)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]]) if len(qids) else \
        np.zeros(0, int)
    if len(set(qids[starts].tolist())) != len(starts):
        raise ValueError(f"{name}: the lines of a qid must be consecutive")
    bounds = np.r_[starts, len(tags)]
    X = [M[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    Y = [tags[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    if return_comments:
        return X, Y, [comments[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return X, Y


def write_svm_hmm(f, X, Y, comments=None):
    """Write sequences in svm_hmm format (qid = sequence number, starting at 1).

    Parameters
    ----------
    f : str, path-like or text file object
    X : list of (T_i, d) sparse matrices or arrays
    Y : list of list of int
        Positive integer tags (map string tags to 1..K first).
    comments : list of list of str, optional
        Written after ``#`` (e.g. the words).
    """
    if len(X) != len(Y):
        raise ValueError(f"X has {len(X)} sequences but Y has {len(Y)}")
    fh, close = _open(f, "w")
    try:
        for i, (x, y) in enumerate(zip(X, Y)):
            x = sp.csr_matrix(x)
            if x.shape[0] != len(y):
                raise ValueError(f"Sentence {i}: x has {x.shape[0]} tokens but y has "
                                 f"{len(y)} tags")
            for t, tag in enumerate(y):
                if not isinstance(tag, (int, np.integer)) or tag < 1:
                    raise ValueError(f"Sentence {i}, token {t}: svm_hmm tags are positive "
                                     f"integers, got {tag!r}")
                row = x[t]
                order = np.argsort(row.indices)
                feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in
                                 zip(row.indices[order], row.data[order]) if v != 0)
                line = f"{int(tag)} qid:{i + 1}" + (" " + feats if feats else "")
                if comments is not None:
                    line += f" # {comments[i][t]}"
                fh.write(line + "\n")
    finally:
        if close:
            fh.close()
