"""Whether a model file can name and hold a user's object: its class imports back by
its module and qualified name (:func:`importable`), its parameters are JSON values
(:func:`not_json`).

Private: :func:`structsvm.structures.user.structure.check_savable` is the public interface.
"""
from __future__ import annotations

import inspect
import numbers

__all__ = ["importable", "not_json"]


def importable(cls):
    """Why instances of ``cls`` cannot be loaded back by their import path, or None.

    Examples
    --------
    >>> import fractions
    >>> importable(fractions.Fraction) is None
    True
    """
    module, qualname = cls.__module__, cls.__qualname__
    if module == "__main__" or module is None:
        return (f"{qualname} is defined in the script that runs (__main__), so a "
                "model file could not name it; define it in a module you import")
    if "<locals>" in qualname:
        return (f"{qualname} is defined inside a function, so a model file could not "
                "name it; define it at the top level of a module")
    mod = inspect.getmodule(cls)
    found = mod
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not cls:
        return f"{module}:{qualname} does not import back as the same class"
    return None


def not_json(value):
    """None when ``value`` is a JSON value, else a description of the part that is not."""
    if value is None or isinstance(value, (bool, str, numbers.Real)):
        return None
    if isinstance(value, (list, tuple)):
        return next((b for b in map(not_json, value) if b is not None), None)
    if isinstance(value, dict):
        if not all(isinstance(k, str) and not k.startswith("__") for k in value):
            return "a dict whose keys are not all strings"
        return next((b for b in map(not_json, value.values()) if b is not None), None)
    return f"a {type(value).__name__} ({value!r:.60})"
