"""Ragged batches: examples stored back to back with an offsets array (private)."""
from __future__ import annotations

import numpy as np

__all__ = ["consecutive_run", "gather_rows"]


def gather_rows(offsets, idx):
    """The rows of examples ``idx`` of a ragged batch, and their new offsets.

    Parameters
    ----------
    offsets : ndarray of shape (n_examples + 1,)
        Example e holds rows ``offsets[e]:offsets[e + 1]``.
    idx : ndarray of int
        The examples to take, in this order.

    Returns
    -------
    rows : ndarray of int
        The row indices of the selected examples, back to back.
    new_offsets : ndarray of int64 of shape (len(idx) + 1,)

    Examples
    --------
    >>> rows, off = gather_rows(np.array([0, 2, 3, 6]), np.array([2, 0]))
    >>> rows.tolist(), off.tolist()
    ([3, 4, 5, 0, 1], [0, 3, 5])
    """
    lo, hi = offsets[idx], offsets[idx + 1]
    lengths = hi - lo
    new = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    rows = np.repeat(lo - new[:-1], lengths) + np.arange(new[-1])
    return rows, new


def consecutive_run(idx):
    """``(a, b)`` when the example indices ``idx`` are a, a + 1, ..., b − 1 (at least
    one), else None: such a selection is one slice of a ragged batch, taken without
    copying.

    Examples
    --------
    >>> consecutive_run(np.array([3, 4, 5])), consecutive_run(np.array([3, 5]))
    ((3, 6), None)
    >>> consecutive_run(np.array([], dtype=np.int64)) is None
    True
    """
    if len(idx) and np.all(idx[1:] == idx[:-1] + 1):
        return int(idx[0]), int(idx[-1]) + 1
    return None
