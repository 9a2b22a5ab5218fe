"""One way to register every kind of plugin: structures, decoders, losses, learners.

>>> from structsvm.registry import lookup, register, registered
>>> sorted(registered("learner"))[:3]
['cccp', 'dual_cd', 'frank_wolfe']

A plugin is registered under a name with :func:`register`, read back with
:func:`lookup` (one) or :func:`registered` (all of a kind), and removed with
:func:`unregister`. What a name stands for, per kind:

========== ==================================================================
kind       plugin
========== ==================================================================
structure  a feature-map class whose ``structure`` is the name (e.g.
           ``SequenceFeatures`` as "sequence")
decoder    a :class:`structsvm.protocols.Decoder` named so
loss       a loss class constructible without arguments
           (:class:`structsvm.protocols.Loss`)
learner    a learner class named so, constructible without arguments
           (:class:`structsvm.protocols.Learner`)
========== ==================================================================

A plugin may be given as the text ``"package.module:attribute"``: it is imported
when first read, so registering costs no import. The built-in plugins are
registered in exactly this way, each structure by its own folder
(``structsvm/structures/<name>/__init__.py``) and the learners by
:mod:`structsvm.learners`; the registry imports those packages
(:data:`PROVIDERS`) the first time a kind is read. A plugin that names a module of
structsvm is a built-in: a plugin registered under its name, before or after,
takes its place.

This module sits at the bottom of the package: it imports nothing from structsvm
but the plugin contract (:mod:`structsvm.protocols`), and the providers only by
name when a kind is first read.
"""
from __future__ import annotations

import importlib
import threading

from .protocols import Decoder

__all__ = ["KINDS", "PROVIDERS", "register", "unregister", "registered", "lookup"]

#: The kinds of plugins, and the packages whose import registers the built-in ones.
PROVIDERS = {"structure": ("structsvm.structures",),
             "decoder": ("structsvm.structures",),
             "loss": ("structsvm.structures",),
             "learner": ("structsvm.learners",)}
KINDS = tuple(PROVIDERS)

_plugins = {kind: {} for kind in KINDS}     # name -> plugin, or "module:attr" text
_builtin = {kind: {} for kind in KINDS}     # what the providers registered
_loaded = set()                             # kinds whose providers were imported
_lock = threading.RLock()


def _check_kind(kind):
    if kind not in _plugins:
        raise ValueError(f"Unknown plugin kind {kind!r}; choose one of {list(KINDS)}")


def register(kind, name, plugin=None):
    """Register ``plugin`` as the ``kind`` named ``name`` (a decorator without
    ``plugin``).

    Parameters
    ----------
    kind : {"structure", "decoder", "loss", "learner"}
    name : str
        What users pass (``decoder="viterbi"``, ``learner="dual_cd"``, ...).
    plugin : object or str, optional
        The plugin (see the module's table), or ``"package.module:attribute"``
        naming it (imported when first read).

    Returns
    -------
    plugin, or a decorator that registers and returns its argument.

    Raises
    ------
    ValueError
        An unknown kind, or an empty name.
    TypeError
        A plugin that is not of its kind (checked now, or when first read for a
        plugin given by name).

    Examples
    --------
    >>> from structsvm.protocols import Decoder
    >>> register("decoder", "first_class",
    ...          Decoder("first_class", "multiclass", lambda batch, exclude=None: [0]))
    ... # doctest: +ELLIPSIS
    Decoder(name='first_class', ...)
    >>> lookup("decoder", "first_class").structure
    'multiclass'
    >>> unregister("decoder", "first_class")
    """
    _check_kind(kind)
    if not isinstance(name, str) or not name:
        raise ValueError(f"register: a {kind} needs a non-empty name, got {name!r}")
    if plugin is None:
        return lambda p: register(kind, name, p)
    if not isinstance(plugin, str):
        _check(kind, name, plugin)
    with _lock:
        if isinstance(plugin, str) and plugin.startswith("structsvm."):  # a built-in
            _builtin[kind][name] = plugin
            _plugins[kind].setdefault(name, plugin)
        else:
            _plugins[kind][name] = plugin
    return plugin


def unregister(kind, name):
    """Remove the ``kind`` named ``name`` (a built-in comes back in its place)."""
    _check_kind(kind)
    _load(kind)
    with _lock:
        if name not in _plugins[kind]:
            raise KeyError(f"no {kind} named {name!r} is registered")
        if name in _builtin[kind]:
            _plugins[kind][name] = _builtin[kind][name]
        else:
            del _plugins[kind][name]


def lookup(kind, name):
    """The ``kind`` registered as ``name``.

    Raises
    ------
    ValueError
        No such name: the message lists the registered ones.
    """
    _check_kind(kind)
    _load(kind)
    with _lock:
        plugin = _plugins[kind].get(name) if isinstance(name, str) else None
        if plugin is None:
            raise ValueError(f"Unknown {kind} {name!r}; choose one of "
                             f"{sorted(_plugins[kind])}")
        if isinstance(plugin, str):
            plugin = _resolve(kind, name, plugin)
        return plugin


def registered(kind):
    """Every plugin of ``kind`` by name, the built-ins included (a new dict)."""
    _check_kind(kind)
    _load(kind)
    with _lock:
        return {name: lookup(kind, name) for name in list(_plugins[kind])}


# --------------------------------------------------------------------------- private
def _load(kind):
    """Import the packages that register the built-in plugins of ``kind`` (once)."""
    if kind in _loaded:
        return
    with _lock:
        if kind in _loaded:
            return
        for module in PROVIDERS[kind]:
            importlib.import_module(module)
        _loaded.add(kind)


def _resolve(kind, name, text):
    module, _, attr = text.partition(":")
    plugin = getattr(importlib.import_module(module), attr)
    _check(kind, name, plugin)
    if _plugins[kind].get(name) == text:
        _plugins[kind][name] = plugin
    if _builtin[kind].get(name) == text:
        _builtin[kind][name] = plugin
    return plugin


def _attribute(obj, attr):
    try:
        return getattr(obj, attr)
    except AttributeError:
        return None


def _check(kind, name, plugin):
    """Refuse a plugin that is not of its kind (a clear TypeError now, not later)."""
    if kind == "decoder":
        ok = isinstance(plugin, Decoder) and plugin.name == name
        need = f"a structsvm.protocols.Decoder named {name!r}"
    elif kind == "structure":
        ok = (isinstance(plugin, type) and _attribute(plugin, "structure") == name
              and callable(_attribute(plugin, "fit")))
        need = f"a feature-map class with structure = {name!r} and a fit method"
    elif kind == "loss":
        ok = (isinstance(plugin, type) and callable(plugin)
              and isinstance(_attribute(plugin, "decomposition"), str))
        need = "a loss class (with a decomposition; see structsvm.protocols.Loss)"
    else:
        ok = (isinstance(plugin, type) and _attribute(plugin, "name") == name
              and callable(_attribute(plugin, "solve")))
        need = f"a learner class with name = {name!r} and a solve method"
    if not ok:
        raise TypeError(f"register: {kind} {name!r} must be {need}, got {plugin!r:.80}")
