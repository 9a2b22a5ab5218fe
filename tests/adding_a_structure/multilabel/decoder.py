"""Decoding label by label: switch a label on when its score is positive."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["independent", "INDEPENDENT"]


def independent(batch, exclude=None):
    """The best 0/1 vector of every example: label l on where its score is > 0.

    ``exclude`` (the best output other than a given one) flips the label whose score
    is closest to 0.
    """
    out = (batch.scores > 0).astype(np.intp)
    if exclude is not None:
        for i, y in enumerate(exclude):
            if np.array_equal(out[i], y):
                k = int(np.argmin(np.abs(batch.scores[i])))
                out[i, k] = 1 - out[i, k]
    return list(out)


INDEPENDENT = Decoder(name="independent", structure="multilabel", func=independent)
