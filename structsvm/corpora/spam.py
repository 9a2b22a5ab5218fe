"""The spam data set of Andrew Ng's machine-learning course (exercise 6).

4000 training and 1000 test e-mails, each a binary bag of 1899 stemmed words
(``vocab.txt``); the label is 1 for spam and 0 for ham. The files are MATLAB v5
``.mat`` files read with :func:`scipy.io.loadmat` (no pickle involved).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.io
import scipy.sparse as sp

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


def _read_mat(path, x_key, y_key):
    data = scipy.io.loadmat(str(path))
    for key in (x_key, y_key):
        if key not in data:
            raise ValueError(f"{path}: variable {key!r} not found (has "
                             f"{sorted(k for k in data if not k.startswith('__'))})")
    X = sp.csr_matrix(np.asarray(data[x_key], dtype=np.float64))
    y = np.asarray(data[y_key]).ravel().astype(np.int64)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"{path}: {X.shape[0]} rows in {x_key} but {y.shape[0]} labels")
    return X, y


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

    Examples
    --------
    >>> data = load_spam()  # doctest: +SKIP
    >>> data.X_train.shape, data.X_test.shape  # doctest: +SKIP
    ((4000, 1899), (1000, 1899))
    """
    root = find_data("spam_ng_ex6", path=path, must_contain=_FILES, hint=_HINT)
    X_train, y_train = _read_mat(root / "spamTrain.mat", "X", "y")
    X_test, y_test = _read_mat(root / "spamTest.mat", "Xtest", "ytest")
    if X_train.shape[1] != X_test.shape[1]:
        raise ValueError(f"spamTrain.mat has {X_train.shape[1]} features but "
                         f"spamTest.mat has {X_test.shape[1]}")
    with open(root / "vocab.txt", encoding="utf-8") as fh:
        vocabulary = [line.rstrip("\n").split("\t", 1)[-1] for line in fh if line.strip()]
    if signed:
        y_train, y_test = 2 * y_train - 1, 2 * y_test - 1
    if dense:
        X_train, X_test = X_train.toarray(), X_test.toarray()
    return SpamData(X_train, y_train, X_test, y_test, vocabulary)
