"""The decoder of the binary structure: every example's label is the sign of its
score."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["sign", "SIGN"]


def sign(batch, exclude=None):
    """ŷ_i = +1 where w·x_i > 0, else −1 (ties to the negative class, as
    scikit-learn's linear classifiers).

    Parameters
    ----------
    batch : BinaryPotentials
    exclude : array-like of int, optional
        A label per example to avoid: the other one is returned.

    Returns
    -------
    ndarray of int8, shape (n_samples,)

    Examples
    --------
    >>> from structsvm.structures.binary import BinaryPotentials
    >>> sign(BinaryPotentials([0.5, -1.0, 0.0], 0.5)).tolist()
    [1, -1, -1]
    >>> sign(BinaryPotentials([0.5, -1.0], 0.5), exclude=[1, 1]).tolist()
    [-1, -1]
    """
    if exclude is not None:
        other = -np.sign(np.asarray(exclude, dtype=float)).astype(np.int8)
        if other.shape != (len(batch),) or np.any(other == 0):
            raise ValueError(f"exclude must hold one label (+1 or -1) per example, "
                             f"got {exclude!r:.60}")
        return other
    return np.where(np.asarray(batch.scores) > 0, 1, -1).astype(np.int8)


SIGN = Decoder(name="sign", structure="binary", func=sign)
