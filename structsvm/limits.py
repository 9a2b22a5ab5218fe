"""The memory budget: sizes checked against the machine before anything is allocated.

A few bytes of input can ask for gigabytes: a 3,000-word sentence asks CKY for a
chart of 3001² cells per grammar symbol, a model file can claim a tree of any depth.
Before structsvm allocates an array whose size comes from its input (a feature map's
weights, a decoder's chart or trace, the arrays a loader builds from what it read,
a fit's estimated peak), the size is computed with Python integers and compared with
:func:`memory_limit`; above it a :class:`MemoryLimitError` names the file or sample
(where there is one), the size, the limit, the machine's memory and the knob.

The limit follows the machine: :data:`MEMORY_FRACTION` of the physical memory
available when the check runs (read with psutil), so an ordinary corpus trains with
nothing set on any machine that can hold it. The environment variable
``STRUCTSVM_MAX_MEMORY`` overrides it: a number of bytes with an optional binary
suffix, ``K``, ``M``, ``G`` or ``T`` (``STRUCTSVM_MAX_MEMORY=4G``), or ``0`` for no
limit. Where the machine's memory cannot be read, the limit is :data:`MAX_MEMORY`.
"""
from __future__ import annotations

import math
import os
import re

__all__ = ["MEMORY_FRACTION", "MAX_MEMORY", "MemoryLimitError", "machine_memory",
           "memory_limit", "describe_limit", "check_array_size", "check_weights",
           "check_total", "format_bytes"]

#: Fraction of the machine's available physical memory that one fit, load or decode
#: may plan to use when ``STRUCTSVM_MAX_MEMORY`` is not set. Half: the estimates of
#: a fit's peak are within a factor of about 1.5 of what it uses, and the rest of the
#: machine keeps running.
MEMORY_FRACTION = 0.5

#: The limit, in bytes, where the machine's memory cannot be read (and
#: ``STRUCTSVM_MAX_MEMORY`` is not set): 2 GiB.
MAX_MEMORY = 2 * 2 ** 30

_ENV = "STRUCTSVM_MAX_MEMORY"
_SMALL = 2 ** 20  # sizes the machine-derived limit never refuses (1 MiB)
_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


class MemoryLimitError(ValueError, MemoryError):
    """A size exceeds the memory budget; nothing was allocated.

    A ``ValueError`` (the input is what is wrong) and a ``MemoryError``.
    """


def machine_memory():
    """The machine's physical memory: ``(available, total)`` bytes, or ``(None, None)``
    when it cannot be read.

    "Available" is what the operating system can give a process without swapping
    (Linux ``MemAvailable``: free memory plus reclaimable caches), as psutil reports
    it.

    Returns
    -------
    tuple of (int or None, int or None)
    """
    try:
        import psutil

        vm = psutil.virtual_memory()
        return int(vm.available), int(vm.total)
    except Exception:  # noqa: BLE001 - no psutil, or an unsupported system
        return None, None


def configured_limit():
    """The budget set by ``STRUCTSVM_MAX_MEMORY``, in bytes (0: no limit), or None
    when it is not set: what a fit passes on to its worker processes, whose own
    environment may predate a change of it."""
    return _env_limit()


def _env_limit():
    """``STRUCTSVM_MAX_MEMORY`` in bytes; ``0`` for no limit; None when not set."""
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return None
    m = re.fullmatch(r"(\d{1,15})\s*([KMGT]?)(?:i?B)?", raw, flags=re.IGNORECASE)
    if m is None:
        raise ValueError(f"{_ENV}={raw[:40]!r} is not a size in bytes (examples: "
                         "1073741824, 512M, 4G; 0 for no limit)")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def memory_limit():
    """The memory budget, in bytes (None: no limit).

    Returns
    -------
    int or None
        ``STRUCTSVM_MAX_MEMORY`` when set (``0`` means no limit); else
        :data:`MEMORY_FRACTION` of the available physical memory
        (:func:`machine_memory`); else :data:`MAX_MEMORY`.

    Raises
    ------
    ValueError
        When ``STRUCTSVM_MAX_MEMORY`` is not a size such as ``512M`` or ``4G``.

    Examples
    --------
    >>> import os
    >>> os.environ["STRUCTSVM_MAX_MEMORY"] = "512M"
    >>> memory_limit()
    536870912
    >>> del os.environ["STRUCTSVM_MAX_MEMORY"]
    >>> memory_limit() > 0
    True
    """
    value = _env_limit()
    if value is not None:
        return None if value == 0 else value
    available, _ = machine_memory()
    if available is None:
        return MAX_MEMORY
    return int(MEMORY_FRACTION * available)


def describe_limit():
    """The budget in words: its size, where it comes from and the machine's memory.

    Examples
    --------
    >>> import os
    >>> os.environ["STRUCTSVM_MAX_MEMORY"] = "1G"
    >>> describe_limit().startswith("the memory limit of 1 GiB (STRUCTSVM_MAX_MEMORY=1G")
    True
    >>> del os.environ["STRUCTSVM_MAX_MEMORY"]
    """
    available, total = machine_memory()
    machine = ("this machine's memory is unknown" if total is None else
               f"this machine has {format_bytes(total)}, {format_bytes(available)} "
               "available")
    limit = memory_limit()
    if _env_limit() is not None:
        raw = os.environ[_ENV].strip()
        if limit is None:
            return f"no memory limit ({_ENV}={raw}; {machine})"
        return f"the memory limit of {format_bytes(limit)} ({_ENV}={raw}; {machine})"
    if available is None:
        return (f"the memory limit of {format_bytes(limit)} ({machine}, so the limit "
                "is structsvm.limits.MAX_MEMORY)")
    share = "half" if MEMORY_FRACTION == 0.5 else f"{MEMORY_FRACTION:.0%}"
    return (f"the memory limit of {format_bytes(limit)} ({share} of the "
            f"{format_bytes(available)} available; this machine has "
            f"{format_bytes(total)})")


def format_bytes(n):
    """``n`` bytes as a short text: ``'1.49 GiB'``, ``'128 MiB'``, ``'138 bytes'``."""
    n = int(n)
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20),
                       ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _suggestion(n):
    """A value of ``STRUCTSVM_MAX_MEMORY`` that allows ``n`` bytes (whole GiB)."""
    return f"{_ENV}={max(1, math.ceil(n / 2 ** 30))}G"


def _refuse(n, what, source, verb="need", limit=None):
    where = f"{os.fspath(source)}: " if source is not None else ""
    if limit is not None:  # a budget of the caller's (a worker's share)
        raise MemoryLimitError(f"{where}{what} {verb} {n} bytes ({format_bytes(n)}), "
                               f"above this worker's budget of {format_bytes(limit)}; "
                               "use more partitions or workers with more memory")
    _, total = machine_memory()
    if total is not None and n > total:
        advice = (f"more than this machine's {format_bytes(total)} of memory; "
                  f"{_ENV} sets the limit")
    else:
        advice = f"set {_ENV} (e.g. {_suggestion(n)}) to allow more"
    raise MemoryLimitError(f"{where}{what} {verb} {n} bytes ({format_bytes(n)}), above "
                           f"{describe_limit()}; {advice}")


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
        The file (or sample) the dimensions come from; the message starts with it.

    Returns
    -------
    int
        The array's size in bytes.

    Raises
    ------
    MemoryLimitError
        "<file>: <what> need N bytes (1.49 GiB), above the memory limit of 11.2 GiB
        (half of the 22.4 GiB available; this machine has 23.4 GiB); set
        STRUCTSVM_MAX_MEMORY (e.g. STRUCTSVM_MAX_MEMORY=2G) to allow more".
    """
    n = int(itemsize)
    for d in shape:
        n *= int(d)
    return check_total(n, what, source)


def check_total(n_bytes, what, source=None, verb="need", limit=None):
    """Raise :class:`MemoryLimitError` if ``n_bytes`` exceed the budget.

    Parameters
    ----------
    n_bytes : int
        A size already summed (several arrays, a fit's estimated peak).
    what : str
        What needs it; the message reads "<what> <verb> N bytes".
    source : str or path-like, optional
        The file or sample it comes from.
    verb : str, default="need"
    limit : int, optional
        A budget of its own (bytes), e.g. a worker's share; by default
        :func:`memory_limit`.

    Returns
    -------
    int
        ``n_bytes``.
    """
    n = int(n_bytes)
    if limit is not None:
        if n > int(limit):
            _refuse(n, what, source, verb, limit=int(limit))
        return n
    if n <= _SMALL and _env_limit() is None:
        return n  # no machine lacks this much; its memory is not read for it
    limit = memory_limit()
    if limit is not None and n > limit:
        _refuse(n, what, source, verb)
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
