"""Argmax over a finite label set (multiclass, class attributes)."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["argmax", "class_max_marginals", "top_k", "ARGMAX"]


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


def class_max_marginals(batch):
    """Max-marginals of a multiclass batch: an example's one part is its class, and
    the best output that chooses class k scores ``scores[i, k]``.

    Parameters
    ----------
    batch : MulticlassPotentials

    Returns
    -------
    tables : list of ndarray of shape (1, n_classes)
    best : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from structsvm.structures.multiclass.features import MulticlassPotentials
    >>> tables, best = class_max_marginals(MulticlassPotentials(np.array([[0., 2.]])))
    >>> tables[0].tolist(), best.tolist()
    ([[0.0, 2.0]], [2.0])
    """
    scores = _checked(batch)
    best = scores.max(axis=1) if scores.size else np.full(len(scores), -np.inf)
    return [row[None, :] for row in scores], best


def top_k(batch, k):
    """The ``k`` highest-scoring classes of every example, best first.

    Parameters
    ----------
    batch : MulticlassPotentials
    k : int
        Classes per example (>= 1); fewer where fewer classes score above −inf.

    Returns
    -------
    list of (ndarray of int, ndarray of float)
        Every example's classes and their scores. Ties go to the lower class index.

    Examples
    --------
    >>> from structsvm.structures.multiclass.features import MulticlassPotentials
    >>> [(c.tolist(), s.tolist()) for c, s in
    ...  top_k(MulticlassPotentials(np.array([[0., 2., 1.]])), 2)]
    [([1, 2], [2.0, 1.0])]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    scores = _checked(batch)
    order = np.argsort(-scores, axis=1, kind="stable")[:, :int(k)]
    top = np.take_along_axis(scores, order, axis=1)
    out = []
    for classes, s in zip(order, top):
        keep = s > -np.inf
        out.append((classes[keep].astype(np.intp), s[keep].copy()))
    return out


def _checked(batch):
    scores = np.asarray(batch.scores, dtype=float)
    if scores.ndim != 2:
        raise ValueError(f"scores must have shape (n_samples, n_classes), got "
                         f"{scores.shape}")
    if not (scores < np.inf).all():
        raise ValueError("class scores contain NaN or +inf")
    return scores


ARGMAX = Decoder(name="argmax", structure="multiclass", func=argmax,
                 max_marginals=class_max_marginals, nbest=top_k)
