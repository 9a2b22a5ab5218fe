"""The spam data set of Andrew Ng's machine-learning course (exercise 6).

4000 training and 1000 test e-mails, each a binary bag of 1899 stemmed words
(``vocab.txt``); the label is 1 for spam and 0 for ham. The files are MATLAB v5
``.mat`` files read with :func:`scipy.io.loadmat` (no pickle involved).
"""
from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

import numpy as np
import scipy.io
import scipy.sparse as sp

from ..limits import check_array_size
from ._lines import open_data, read_lines
from ._paths import find_data

__all__ = ["SpamData", "load_spam"]

_FILES = ("spamTrain.mat", "spamTest.mat", "vocab.txt")
_HINT = ("The files spamTrain.mat, spamTest.mat and vocab.txt come with exercise 6 of "
         "Andrew Ng's Coursera machine-learning course (folder spam_ng_ex6).")


class SpamData(NamedTuple):
    """Train/test split of the spam data.

    Attributes
    ----------
    X_train : csr_matrix of shape (4000, 1899)
        Binary word indicators (float64).
    y_train : ndarray of shape (4000,)
        Labels in {-1, +1} (+1 = spam) by default, {0, 1} with ``signed=False``.
    X_test : csr_matrix of shape (1000, 1899)
    y_test : ndarray of shape (1000,)
    vocabulary : list of str
        The stemmed word of each column.
    """

    X_train: sp.csr_matrix
    y_train: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    vocabulary: list


# MATLAB class codes of the numeric arrays (bytes per entry), and of the others
_NUMERIC = {6: ("double", 8), 7: ("single", 4), 8: ("int8", 1), 9: ("uint8", 1),
            10: ("int16", 2), 11: ("uint16", 2), 12: ("int32", 4), 13: ("uint32", 4),
            14: ("int64", 8), 15: ("uint64", 8)}
_OTHER = {1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse"}
_MI_MATRIX, _MI_COMPRESSED = 14, 15


def _variables(fh, path):
    """{name: (shape, class name, bytes per entry)} of a MATLAB v5 file, read from
    the variables' headers only: a compressed variable is inflated just far enough to
    read its dimensions and name, so nothing here grows with the arrays."""
    head = fh.read(128)
    if len(head) < 128 or head[126:128] not in (b"IM", b"MI"):
        raise ValueError(f"{path}: not a MATLAB version 5 .mat file")
    order = "<" if head[126:128] == b"IM" else ">"
    out, pos = {}, 128
    while True:
        fh.seek(pos)
        tag = fh.read(8)
        if len(tag) < 8:
            return out
        mtype, nbytes = struct.unpack(order + "II", tag)
        step = 8 + nbytes + (0 if mtype == _MI_COMPRESSED else -nbytes % 8)
        if mtype == _MI_COMPRESSED:
            zd, body = zlib.decompressobj(), b""
            while len(body) < 512 and not zd.eof:
                chunk = fh.read(min(65536, nbytes))
                if not chunk:
                    break
                try:
                    body += zd.decompress(chunk, 512 - len(body))
                except zlib.error:
                    break
                if zd.unconsumed_tail:
                    break
            if len(body) < 8:
                raise ValueError(f"{path}: a damaged compressed variable at byte {pos}")
            mtype, _ = struct.unpack(order + "II", body[:8])
            body = body[8:]
        else:
            body = fh.read(min(nbytes, 512))
        if mtype == _MI_MATRIX:
            name, shape, cls = _matrix_header(body, order, path, pos)
            out[name] = (shape, cls)
        pos += step


def _matrix_header(body, order, path, pos):
    """(name, shape, class code) from the start of a miMATRIX element's data."""
    try:
        fields, k = [], 0
        for _ in range(3):  # array flags, dimensions, name
            first, = struct.unpack(order + "I", body[k:k + 4])
            if first >> 16:  # small data element: size and type in one word
                size, data, k = first >> 16, body[k + 4:k + 4 + (first >> 16)], k + 8
            else:
                size, = struct.unpack(order + "I", body[k + 4:k + 8])
                data, k = body[k + 8:k + 8 + size], k + 8 + size + (-size % 8)
            if len(data) != size:
                raise struct.error("short")
            fields.append(data)
        flags, dims, name = fields
        cls = struct.unpack(order + "I", flags[:4])[0] & 0xFF
        shape = struct.unpack(order + f"{len(dims) // 4}i", dims)
        return name.decode("ascii", "replace"), tuple(shape), cls
    except (struct.error, IndexError):
        raise ValueError(f"{path}: a damaged variable header at byte {pos}") from None


def _read_mat(path, x_key, y_key, n_words):
    """(X as CSR float64, y in {0, 1}) of one .mat file, checked before converting:
    the variables' shapes and classes from the file's headers (``n_words`` columns,
    one label per row), the sizes against the memory budget, then the values (finite
    features, labels 0 or 1). Every error names the file."""
    with open_data(path) as fh:
        found = _variables(fh, path)
        for key in (x_key, y_key):
            if key not in found:
                raise ValueError(f"{path}: variable {key!r} not found (has "
                                 f"{sorted(found)[:10]})")
        (xshape, xcls), (yshape, ycls) = found[x_key], found[y_key]
        for key, shape, cls in ((x_key, xshape, xcls), (y_key, yshape, ycls)):
            if cls not in _NUMERIC or len(shape) != 2 or min(shape) < 0:
                kind = _NUMERIC.get(cls, (_OTHER.get(cls, f"class-{cls}"),))[0]
                raise ValueError(f"{path}: {key} is a {'x'.join(map(str, shape))} "
                                 f"{kind} array, expected a 2-D numeric matrix")
        if xshape[1] != n_words:
            raise ValueError(f"{path}: {x_key} has {xshape[1]} columns, expected one per "
                             f"word of vocab.txt ({n_words})")
        if min(yshape) != 1 or max(yshape) != xshape[0]:
            raise ValueError(f"{path}: {y_key} is {yshape[0]}x{yshape[1]}, expected one "
                             f"label per row of {x_key} ({xshape[0]}x1)")
        kind, itemsize = _NUMERIC[xcls]
        check_array_size(xshape, itemsize, f"{x_key} ({xshape[0]} x {xshape[1]} {kind})",
                         source=path)
        fh.seek(0)
        try:
            data = scipy.io.loadmat(fh, variable_names=[x_key, y_key])
        except Exception as exc:
            raise ValueError(f"{path}: not a readable MATLAB file ({type(exc).__name__}: "
                             f"{str(exc)[:80]})") from None
    X, y = data[x_key], data[y_key]
    if sp.issparse(X) or X.dtype.kind not in "biuf" or X.shape != tuple(xshape):
        raise ValueError(f"{path}: {x_key} is not a dense numeric matrix of shape {xshape}")
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        raise ValueError(f"{path}: {x_key} holds {int(np.sum(~np.isfinite(X)))} values that "
                         "are not finite numbers (NaN or infinity)")
    y = np.asarray(y).ravel()
    if y.dtype.kind not in "biuf":
        raise ValueError(f"{path}: {y_key} is not numeric")
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path}: {y_key} holds {int(bad.sum())} labels other than 0 and 1 "
                         f"(the first, row {i + 1}: {float(y[i]):g})")
    return sp.csr_matrix(X).astype(np.float64), y.astype(np.int64)


def load_spam(path=None, *, signed=True, dense=False):
    """Load the spam training and test sets.

    Parameters
    ----------
    path : str or path-like, optional
        Folder holding ``spamTrain.mat``, ``spamTest.mat`` and ``vocab.txt``. By
        default ``$STRUCTSVM_DATA/spam_ng_ex6``.
    signed : bool, default=True
        Return labels in {-1, +1} (the SVM convention) instead of the files' {0, 1}.
    dense : bool, default=False
        Return dense float arrays instead of CSR matrices.

    Returns
    -------
    SpamData
        ``(X_train, y_train, X_test, y_test, vocabulary)``.

    Raises
    ------
    structsvm.corpora.DataNotFoundError
        When the folder cannot be found (the message lists where it looked).
    ValueError
        Naming the file, checked before any conversion: a matrix whose number of
        columns is not the number of words of ``vocab.txt``, labels not one per row,
        labels other than 0 and 1 (NaN included), features that are NaN or infinite,
        a file that is not a readable MATLAB file or not a regular file.
    structsvm.limits.MemoryLimitError
        When a matrix's declared size exceeds the memory budget.

    Examples
    --------
    >>> data = load_spam()  # doctest: +SKIP
    >>> data.X_train.shape, data.X_test.shape  # doctest: +SKIP
    ((4000, 1899), (1000, 1899))
    """
    root = find_data("spam_ng_ex6", path=path, must_contain=_FILES, hint=_HINT)
    vocabulary = []
    for _, line in read_lines(root / "vocab.txt"):
        if line.strip():
            vocabulary.append(line.rstrip("\r\n").split("\t", 1)[-1])
    X_train, y_train = _read_mat(root / "spamTrain.mat", "X", "y", len(vocabulary))
    X_test, y_test = _read_mat(root / "spamTest.mat", "Xtest", "ytest", len(vocabulary))
    if signed:
        y_train, y_test = 2 * y_train - 1, 2 * y_test - 1
    if dense:
        for name, X in (("spamTrain.mat", X_train), ("spamTest.mat", X_test)):
            check_array_size(X.shape, 8, f"dense float64 features ({X.shape[0]} x "
                             f"{X.shape[1]})", source=root / name)
        X_train, X_test = X_train.toarray(), X_test.toarray()
    return SpamData(X_train, y_train, X_test, y_test, vocabulary)
