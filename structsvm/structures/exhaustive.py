"""Exhaustive search: the test oracle for every decoder (any enumerable structure)."""
from __future__ import annotations

import numpy as np

from ..protocols import Decoder, check_enumerable
from ..registry import registered

__all__ = ["exhaustive", "exhaustive_nbest", "EXHAUSTIVE"]


def _equal(a, b):
    return np.array_equal(np.asarray(a), np.asarray(b))


def exhaustive(batch, exclude=None):
    """Best structure of each example by scoring every output (``pot.enumerate()``).

    Parameters
    ----------
    batch : PotentialsBatch
        Any batch whose class sets ``enumerable = True``.
    exclude : list, optional
        ``exclude[i]`` is skipped for example i ("argmax over y ≠ y_i").

    Returns
    -------
    list
        One encoded output per example; ties go to the first enumerated output.

    Raises
    ------
    structsvm.protocols.EnumerationError
        Before enumerating anything, when the batch cannot enumerate its outputs or
        an example has more than ``MAX_ENUMERATED_OUTPUTS`` of them.
    """
    exact = sorted(n for n, d in registered("decoder").items()
                   if d.structure == batch.structure)
    check_enumerable(batch, "decoder='exhaustive'",
                     f"Use {' or '.join(repr(n) for n in exact) or 'a decoder'} (exact "
                     f"for {batch.structure!r} outputs)." if exact else
                     f"Use a decoder for {batch.structure!r} outputs.")
    out = []
    for i in range(len(batch)):
        pot = batch[i]
        best, best_score = None, -np.inf
        for y in pot.enumerate():
            if exclude is not None and _equal(y, exclude[i]):
                continue
            s = pot.score(y)
            if s > best_score:
                best, best_score = y, s
        if best is None:
            raise ValueError(f"Sample {i}: no output left to choose from")
        out.append(best)
    return out


def exhaustive_nbest(batch, k):
    """The ``k`` best outputs of every example by scoring all of them.

    Parameters
    ----------
    batch : PotentialsBatch
        Any batch whose class sets ``enumerable = True``.
    k : int
        Outputs per example (>= 1).

    Returns
    -------
    list of (list, ndarray of float)
        Every example's outputs, best first, and their scores; outputs scoring −inf
        are left out. Ties keep the enumeration's order.

    Raises
    ------
    structsvm.protocols.EnumerationError
        As :func:`exhaustive`.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures import MulticlassPotentials
    >>> [(list(y), s.tolist()) for y, s in
    ...  exhaustive_nbest(MulticlassPotentials(np.array([[0., 2., 1.]])), 2)]
    [([1, 2], [2.0, 1.0])]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    check_enumerable(batch, "the k best outputs by enumeration",
                     f"Use a decoder with a k-best search for {batch.structure!r} "
                     "outputs.")
    out = []
    for i in range(len(batch)):
        one = batch[i]
        ys = list(one.enumerate())
        scores = np.array([one.score(y) for y in ys], dtype=float).reshape(-1)
        order = np.argsort(-scores, kind="stable")[:int(k)]
        order = order[scores[order] > -np.inf]
        out.append(([ys[j] for j in order], scores[order]))
    return out


EXHAUSTIVE = Decoder(name="exhaustive", structure="any", func=exhaustive,
                     nbest=exhaustive_nbest)
