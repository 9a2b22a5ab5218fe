"""Compiled loops: numba functions, taken from the ahead-of-time extension where it
has them (private).

A structure's or a learner's hot loops live in ``*_jit.py`` modules in its own folder,
as numba functions. ``loops("structsvm.learners._dual_cd_jit")`` stands for such a
module: its attributes are the module's numba functions, except that a loop the
module lists in its ``SIGNATURES`` (:mod:`structsvm._compiled._table`) is a
:class:`CompiledLoop` when the extension module (compiled by ``setup.py`` at
installation) is present and was built from the same loop source. A
:class:`CompiledLoop` calls the compiled version when every argument has exactly
the type it was compiled for (dtype, dimensions, C-contiguous, aligned and writeable
arrays; int, float and bool scalars) and numba's JIT version otherwise, which
compiles a specialisation for the types it gets (the compiled code cannot check its
arguments: the check happens here, before the call). Both run the same source
through the same compiler, so a result does not depend on which one ran.

Nothing here imports numba: a loop module is imported when one of its loops without
a compiled version, or with other argument types, is first called.
``STRUCTSVM_AOT=0`` leaves the extension unused. Feature maps and learners declare
the loops their default training path calls (``compiled_loops``);
:func:`all_compiled` says whether a fit will compile any of them, and
:mod:`structsvm._compiled.warmup` compiles them in a helper process when it would.
"""
from __future__ import annotations

import importlib
import logging
import os
import threading

import numpy as np

from . import _table

__all__ = ["CompiledLoop", "extension", "extension_status", "has_compiled", "loops",
           "all_compiled", "signatures"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_lock = threading.Lock()
_extension = None  # None: not looked for yet; False: none usable; else the module
_signatures = None
_namespaces = {}


def signatures():
    """``{"module:function": (argument types, result type)}`` of every loop compiled
    ahead of time (read once from the loop modules' source)."""
    global _signatures
    if _signatures is None:
        with _lock:
            if _signatures is None:
                _signatures = _table.signatures(_PACKAGE)
    return _signatures


def _load_extension():
    """The extension module, or False: absent, turned off, or built from other
    loop source (the package was edited after its installation)."""
    if os.environ.get("STRUCTSVM_AOT", "1") == "0":
        return False
    try:
        module = importlib.import_module(_table.MODULE)
    except ImportError:
        return False
    if module.source_stamp() != _table.source_stamp(_PACKAGE):
        logging.getLogger("structsvm").info(
            "%s was compiled from other loop source than this package's (edited since "
            "the installation?): numba compiles the loops instead; reinstall to compile "
            "them ahead of time again", _table.MODULE)
        return False
    return module


def extension():
    """The ahead-of-time extension module in use, or None."""
    global _extension
    if _extension is None:
        with _lock:
            if _extension is None:
                _extension = _load_extension()
    return _extension or None


def extension_status():
    """Whether the loops compiled at installation are in use, and if not why.

    Returns
    -------
    in_use : bool
    reason : str
        A sentence for a person: where the extension is, or why it is not used and
        what brings it back.
    """
    if os.environ.get("STRUCTSVM_AOT", "1") == "0":
        return False, "STRUCTSVM_AOT=0 is set: numba compiles every loop on first use"
    try:
        module = importlib.import_module(_table.MODULE)
    except ImportError as exc:
        return False, (f"not installed ({exc}): the installation found no C compiler or "
                       "its compilation failed (pip install -v shows why); numba "
                       "compiles the loops on first use")
    if module.source_stamp() != _table.source_stamp(_PACKAGE):
        return False, (f"{module.__file__} was compiled from other loop source than "
                       "this package's (edited since the installation?); reinstall to "
                       "compile the loops again")
    return True, f"{len(signatures())} loops from {module.__file__}"


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


class CompiledLoop:
    """A loop with an ahead-of-time compiled version (see the module's text).

    Parameters
    ----------
    key : str
        ``"module:function"``, a key of :func:`signatures`.
    function : callable
        The compiled version, from the extension module.
    """

    __slots__ = ("key", "function", "_checks", "_jit")

    def __init__(self, key, function):
        self.key = key
        self.function = function
        self._checks = _checks(signatures()[key][0])
        self._jit = None

    @property
    def jit(self):
        """numba's version of the loop (its module is imported on first use)."""
        if self._jit is None:
            module, function = _table.split_key(self.key)
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
        return f"<compiled loop {self.key}>"


class _Namespace:
    """A loop module's loops, compiled versions first (see :func:`loops`)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        key = f"{self._module}:{name}"
        if has_compiled(key):
            value = CompiledLoop(key, getattr(extension(), _table.export_name(key)))
        else:
            value = getattr(importlib.import_module(self._module), name)
        setattr(self, name, value)
        return value


def loops(module):
    """The loops of the loop module ``module`` (a dotted name), each the
    ahead-of-time :class:`CompiledLoop` where there is one, else numba's dispatcher
    (importing the module on the first such attribute)."""
    try:
        return _namespaces[module]
    except KeyError:
        return _namespaces.setdefault(module, _Namespace(module))


def has_compiled(key):
    """Whether the loop ``"module:function"`` runs compiled ahead of time (for the
    types in its module's ``SIGNATURES``)."""
    return (extension() is not None and key in signatures()
            and hasattr(extension(), _table.export_name(key)))


def all_compiled(keys):
    """Whether every loop of ``keys`` (``"module:function"``) runs compiled ahead of
    time (True for none): a fit of a learner and a structure whose declared
    ``compiled_loops`` all do compiles nothing."""
    return all(has_compiled(k) for k in keys)
