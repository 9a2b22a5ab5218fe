"""Numba kernels, taken from the ahead-of-time extension where it has them (private).

``kernels("structsvm.learners._dual_cd_jit")`` stands for that kernel module: its
attributes are the module's numba kernels, except that a kernel listed in
:data:`structsvm._compiled._table.KERNELS` is a :class:`Kernel` when the extension
module ``structsvm._aot`` (compiled by ``setup.py`` at installation) is present and
was built from the same kernel source. A :class:`Kernel` calls the compiled version
when every argument has exactly the type it was compiled for (dtype, dimensions,
C-contiguous, aligned and writeable arrays; int, float and bool scalars) and numba's
JIT version otherwise, which compiles a specialisation for the types it gets (the
compiled code cannot check its arguments: the check happens here, before the call).
Both run the same source through the same compiler, so a result does not depend on
which one ran.

Nothing here imports numba: a kernel module is imported when one of its kernels
without a compiled version, or with other argument types, is first called.
``STRUCTSVM_AOT=0`` leaves the extension unused.
"""
from __future__ import annotations

import importlib
import logging
import os
import threading

import numpy as np

from . import _table as _kernel_table

__all__ = ["Kernel", "compiled", "has_compiled", "kernels", "path_compiled"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_lock = threading.Lock()
_extension = None  # None: not looked for yet; False: none usable; else the module
_namespaces = {}


def _load_extension():
    """The extension module, or False: absent, turned off, or built from other
    kernel source (the package was edited after its installation)."""
    if os.environ.get("STRUCTSVM_AOT", "1") == "0":
        return False
    try:
        module = importlib.import_module(_kernel_table.MODULE)
    except ImportError:
        return False
    if module.source_stamp() != _kernel_table.source_stamp(_PACKAGE):
        logging.getLogger("structsvm").info(
            "%s was compiled from other kernel source than this package's (edited "
            "since the installation?): numba compiles the kernels instead; reinstall "
            "to compile them ahead of time again", _kernel_table.MODULE)
        return False
    return module


def compiled():
    """The ahead-of-time extension module in use, or None."""
    global _extension
    if _extension is None:
        with _lock:
            if _extension is None:
                _extension = _load_extension()
    return _extension or None


def _array_check(dtype, ndim):
    dtype = np.dtype(dtype)

    def check(a):
        if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim:
            return False
        flags = a.flags
        return flags.c_contiguous and flags.aligned and flags.writeable
    return check


def _int_check(a):
    return ((type(a) is int or isinstance(a, np.integer)) and type(a) is not bool
            and -2**63 <= a < 2**63)


def _float_check(a):
    return type(a) is float or type(a) is np.float64


def _bool_check(a):
    return type(a) is bool or type(a) is np.bool_


def _checks(arguments):
    out = []
    for spec in arguments.split():
        code, _, ndim = spec.partition(":")
        if ndim:
            out.append(_array_check(code, int(ndim)))
        else:
            out.append({"i8": _int_check, "f8": _float_check, "b1": _bool_check}[code])
    return tuple(out)


class Kernel:
    """A kernel with an ahead-of-time compiled version (see the module's text).

    Parameters
    ----------
    key : str
        ``"module:function"``, a key of :data:`structsvm._compiled._table.KERNELS`.
    function : callable
        The compiled version, from the extension module.
    """

    __slots__ = ("key", "function", "_checks", "_jit")

    def __init__(self, key, function):
        self.key = key
        self.function = function
        self._checks = _checks(_kernel_table.KERNELS[key][0])
        self._jit = None

    @property
    def jit(self):
        """numba's version of the kernel (its module is imported on first use)."""
        if self._jit is None:
            module, function = _kernel_table.split_key(self.key)
            self._jit = getattr(importlib.import_module(module), function)
        return self._jit

    def accepts(self, args):
        """Whether ``args`` have exactly the compiled version's types."""
        return (len(args) == len(self._checks)
                and all(check(a) for check, a in zip(self._checks, args)))

    def __call__(self, *args):
        if self.accepts(args):
            return self.function(*args)
        return self.jit(*args)

    def __repr__(self):
        return f"<compiled kernel {self.key}>"


class _Namespace:
    """A kernel module's kernels, compiled versions first (see :func:`kernels`)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        key = f"{self._module}:{name}"
        if has_compiled(key):
            value = Kernel(key, getattr(compiled(), _kernel_table.export_name(key)))
        else:
            value = getattr(importlib.import_module(self._module), name)
        setattr(self, name, value)
        return value


def kernels(module):
    """The kernels of the kernel module ``module`` (a dotted name), each the
    ahead-of-time compiled :class:`Kernel` where there is one, else numba's
    dispatcher (importing the module on the first such attribute)."""
    try:
        return _namespaces[module]
    except KeyError:
        return _namespaces.setdefault(module, _Namespace(module))


def path_compiled(learner, structure):
    """Whether every kernel a fit of ``learner`` on ``structure`` (and its model's
    predictions) calls runs compiled ahead of time
    (:data:`structsvm._compiled._table.LEARNER_KERNELS`, ``STRUCTURE_KERNELS``; a
    learner or structure not listed there compiles its kernels on first use)."""
    if learner not in _kernel_table.LEARNER_KERNELS or \
            structure not in _kernel_table.STRUCTURE_KERNELS:
        return False
    keys = (_kernel_table.LEARNER_KERNELS[learner]
            + _kernel_table.STRUCTURE_KERNELS[structure])
    return all(has_compiled(k) for k in keys)


def has_compiled(key):
    """Whether the kernel ``"module:function"`` runs compiled ahead of time (for the
    types in the kernel table)."""
    return (key in _kernel_table.KERNELS and compiled() is not None
            and hasattr(compiled(), _kernel_table.export_name(key)))
