"""The memory budget: array sizes checked before anything is allocated.

A few bytes of input can ask for gigabytes: one feature number of 10,000,000 in a
two-line training file makes the weight vector 10,000,000 × (number of classes)
floats. Before a feature map's ``fit`` allocates its weights, and before a loader
builds an array whose size comes from what it read, the size is computed and
compared with :func:`memory_limit`; above it a :class:`MemoryLimitError` names the
file (where there is one), the dimensions and the limit.

The limit is :data:`MAX_MEMORY` bytes per array unless the environment variable
``STRUCTSVM_MAX_MEMORY`` sets another: a number of bytes with an optional binary
suffix, ``K``, ``M``, ``G`` or ``T`` (``STRUCTSVM_MAX_MEMORY=4G``), or ``0`` for no
limit.
"""
from __future__ import annotations

import os
import re

__all__ = ["MAX_MEMORY", "MemoryLimitError", "memory_limit", "check_array_size",
           "check_weights", "format_bytes"]

#: Largest array (weights, or one array a loader builds), in bytes, when
#: ``STRUCTSVM_MAX_MEMORY`` is not set: 128 MiB, 16.7 million float64 weights.
MAX_MEMORY = 128 * 2 ** 20

_ENV = "STRUCTSVM_MAX_MEMORY"
_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


class MemoryLimitError(ValueError, MemoryError):
    """An array would exceed the memory budget; nothing was allocated.

    A ``ValueError`` (the input is what is wrong) and a ``MemoryError``.
    """


def memory_limit():
    """The largest array allowed, in bytes (None: no limit).

    Returns
    -------
    int or None
        ``STRUCTSVM_MAX_MEMORY`` when set (``0`` means no limit), else
        :data:`MAX_MEMORY`.

    Raises
    ------
    ValueError
        When ``STRUCTSVM_MAX_MEMORY`` is not a size such as ``512M`` or ``4G``.
    """
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return MAX_MEMORY
    m = re.fullmatch(r"(\d{1,15})\s*([KMGT]?)(?:i?B)?", raw, flags=re.IGNORECASE)
    if m is None:
        raise ValueError(f"{_ENV}={raw[:40]!r} is not a size in bytes (examples: "
                         "1073741824, 512M, 4G; 0 for no limit)")
    value = int(m.group(1)) * _UNITS[m.group(2).upper()]
    return None if value == 0 else value


def format_bytes(n):
    """``n`` bytes as a short text: ``'1.49 GiB'``, ``'128 MiB'``, ``'138 bytes'``."""
    n = int(n)
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20),
                       ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def check_array_size(shape, itemsize, what, source=None):
    """Raise :class:`MemoryLimitError` if an array of ``shape`` exceeds the budget.

    Parameters
    ----------
    shape : sequence of int
        The dimensions, as read (Python integers: no overflow).
    itemsize : int
        Bytes per entry (8 for float64).
    what : str
        What the array is, with its dimensions named, e.g. ``"weights of 10000001
        input features x 20 classes"``.
    source : str or path-like, optional
        The file the dimensions were read from; the message starts with it.

    Returns
    -------
    int
        The array's size in bytes.

    Raises
    ------
    MemoryLimitError
        "<file>: <what> need N bytes (1.49 GiB), above the memory limit of
        128 MiB; set STRUCTSVM_MAX_MEMORY (e.g. 4G) to allow more".
    """
    n = int(itemsize)
    for d in shape:
        n *= int(d)
    limit = memory_limit()
    if limit is not None and n > limit:
        where = f"{os.fspath(source)}: " if source is not None else ""
        raise MemoryLimitError(
            f"{where}{what} need {n} bytes ({format_bytes(n)}), above the memory limit "
            f"of {format_bytes(limit)}; set {_ENV} (e.g. {_ENV}=4G) to allow more")
    return n


def check_weights(n_weights, dims):
    """Check a feature map's weight vector (float64) against the budget, in ``fit``.

    Parameters
    ----------
    n_weights : int
        Length of w.
    dims : str
        The product it comes from, e.g. ``"10000001 features x 20 classes"``.

    Raises
    ------
    MemoryLimitError
        "the weights (N = 10000001 features x 20 classes) need ... bytes, above the
        memory limit ..."
    """
    check_array_size((n_weights,), 8, f"the weights ({n_weights} = {dims})")
