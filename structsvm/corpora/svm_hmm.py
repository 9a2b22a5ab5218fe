"""The SVM^hmm file format (Joachims): read and write, so svm_hmm users bring their data.

One token per line::

    TAG qid:SEQ FEAT:VAL FEAT:VAL ... # comment

``TAG`` is a positive integer, ``qid`` numbers the sequence (the tokens of a
sequence are consecutive lines) and feature numbers start at 1 and increase along a
line, up to :data:`MAX_FEATURE_NUMBER` (10,000,000). Lines starting with ``#`` are
comments. Files are UTF-8.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._lines import MAX_FEATURE_NUMBER, SparseRows, next_token, read_lines, source_name

__all__ = ["read_svm_hmm", "write_svm_hmm", "MAX_FEATURE_NUMBER"]


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
        Naming the file and line, for malformed lines, bytes that are not UTF-8,
        non-positive tags or feature numbers, repeated or decreasing feature numbers,
        feature numbers above ``n_features`` (or :data:`MAX_FEATURE_NUMBER`), values
        that are not finite, tags or qids beyond 2^63 - 1, split sequences.

    Examples
    --------
    >>> import io
    >>> X, Y = read_svm_hmm(io.StringIO("1 qid:1 1:1 3:0.5 # the\\n2 qid:1 2:1 # dog\\n"))
    >>> Y, X[0].toarray().tolist()
    ([[1, 2]], [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]])
    """
    name = source_name(f)
    qids, tags, comments, first_line = [], [], [], []
    rows = SparseRows()
    for lineno, line in read_lines(f):
        end = line.find("#")
        comment = "" if end < 0 else line[end + 1:].strip()
        end = len(line) if end < 0 else end
        first, pos = next_token(line, 0, end)
        if first is None:
            continue
        where = f"{name}, line {lineno}"
        tag = _parse_tag(first, where)
        second, pos = next_token(line, pos, end)
        if second is None or not second.startswith("qid:"):
            raise ValueError(f"{where}: expected 'qid:N' after the tag")
        qid = _parse_qid(second[4:], where)
        rows.add(line, pos, end, where, n_features)
        qids.append(qid)
        first_line.append(lineno)
        tags.append(tag)
        comments.append(comment)
    M = rows.matrix(n_features)
    qids = np.asarray(qids, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]]) if len(qids) else \
        np.zeros(0, int)
    seen = set()
    for s in starts:
        if int(qids[s]) in seen:
            raise ValueError(f"{name}, line {first_line[s]}: qid {int(qids[s])} appeared "
                             "before; the lines of a qid must be consecutive")
        seen.add(int(qids[s]))
    bounds = np.r_[starts, len(tags)]
    X = [M[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    Y = [tags[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    if return_comments:
        return X, Y, [comments[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return X, Y


def _parse_tag(text, where):
    body = text[1:] if text[:1] in "+-" else text
    if not (body.isascii() and body.isdigit()):
        raise ValueError(f"{where}: tag {text[:40]!r} is not an integer")
    if text.startswith("-") or int(body) == 0:
        raise ValueError(f"{where}: tags must be positive integers, got {text[:40]}")
    if len(body) > 19 or int(body) > 2 ** 63 - 1:
        raise ValueError(f"{where}: tag {text[:40]} is larger than 2^63 - 1")
    return int(body)


def _parse_qid(text, where):
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or \
            int(text) > 2 ** 63 - 1:
        raise ValueError(f"{where}: malformed 'qid:N' (N must be an integer from 0 to "
                         f"2^63 - 1), got {'qid:' + text[:40]!r}")
    return int(text)


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
