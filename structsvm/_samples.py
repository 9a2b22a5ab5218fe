"""Input checks at the public boundaries: samples as a sequence
(:func:`as_sequence`), the rows of a sparse matrix as one (:class:`SparseRows`).

Private: :mod:`structsvm.protocols` is the public interface (every name here is
exported there). Imports nothing from structsvm; SciPy is imported when a call
needs it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_sequence", "SparseRows"]


def as_sequence(X, name):
    """Turn X into a list-like of samples, with a clear error for non-sequences."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of samples, got a string")
    import scipy.sparse as sp  # here, not at import: importing the contract stays light

    if sp.issparse(X):
        return SparseRows(X)
    if isinstance(X, np.ndarray):
        return list(X) if X.ndim > 0 else _raise(TypeError(
            f"{name} must be a sequence of samples, got a 0-d array"))
    if not isinstance(X, Sequence):
        try:
            return list(X)
        except TypeError:
            raise TypeError(f"{name} must be a sequence of samples, got "
                            f"{type(X).__name__}") from None
    return X


def _raise(exc):
    raise exc


class SparseRows(Sequence):
    """The rows of a sparse matrix as a sequence, without splitting the matrix.

    ``rows[i]`` is ``matrix[i]`` (a one-row sparse matrix), a slice is again a
    :class:`SparseRows`; maps that take a matrix read ``rows.matrix`` in one piece.

    Parameters
    ----------
    matrix : sparse matrix or array of shape (n_samples, n_features)

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rows = SparseRows(sp.identity(3, format="csr"))
    >>> len(rows), rows[1].toarray().tolist()
    (3, [[0.0, 1.0, 0.0]])
    """

    __slots__ = ("matrix",)

    def __init__(self, matrix):
        self.matrix = matrix

    def __len__(self):
        return self.matrix.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return SparseRows(self.matrix[i])
        if not -len(self) <= i < len(self):
            raise IndexError(f"row {i} out of range for {len(self)} samples")
        return self.matrix[i]
