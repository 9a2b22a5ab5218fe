"""Exhaustive search: the test oracle for every decoder (any enumerable structure)."""
from __future__ import annotations

import numpy as np

from ..protocols import Decoder, check_enumerable
from ..registry import registered

__all__ = ["exhaustive", "EXHAUSTIVE"]


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


EXHAUSTIVE = Decoder(name="exhaustive", structure="any", func=exhaustive)
