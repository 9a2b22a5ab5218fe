"""Argmax over a finite label set (multiclass, class attributes)."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["argmax", "ARGMAX"]


def argmax(batch, exclude=None):
    """Highest-scoring class of each example.

    Parameters
    ----------
    batch : MulticlassPotentials
        Scores of shape (n_samples, n_classes).
    exclude : array-like of int, optional
        Class to skip per example: the lecture's argmax over y ≠ y_i.

    Returns
    -------
    ndarray of int, shape (n_samples,)
        Ties go to the lowest class index.

    Examples
    --------
    >>> from structsvm.structures.multiclass.features import MulticlassPotentials
    >>> argmax(MulticlassPotentials(np.array([[0., 2., 1.]]))).tolist()
    [1]
    >>> argmax(MulticlassPotentials(np.array([[0., 2., 1.]])), exclude=[1]).tolist()
    [2]
    """
    scores = np.asarray(batch.scores, dtype=float)
    if exclude is not None:
        scores = scores.copy()
        scores[np.arange(len(scores)), np.asarray(exclude, dtype=np.intp)] = -np.inf
    return np.argmax(scores, axis=1)


ARGMAX = Decoder(name="argmax", structure="multiclass", func=argmax)
