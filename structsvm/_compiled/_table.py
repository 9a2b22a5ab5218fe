"""The loops compiled ahead of time, read from their modules' source (private).

Numba compiles a loop on its first call in a process whose on-disk cache does not
hold it yet: seconds per loop, paid by a user's first run. The loops on the default
paths are also compiled when the package is installed, by ``numba.pycc`` in
``setup.py``, into the extension module :data:`MODULE`. Each loop module (a
``*_jit.py`` file, in the folder of the structure or learner it serves) declares
which of its loops are compiled so, and for which argument types, in a dict
``SIGNATURES = {"function": ("argument types", "result type")}``;
:func:`signatures` collects them from the source text, without importing numba.

This module is read by ``setup.py`` in a build environment without the package's
dependencies: it imports nothing but the standard library.

Type codes: ``"f8:2"`` is a float64, 2-D, C-contiguous array; ``"i4:1"`` an int32
array; ``"i8"`` / ``"f8"`` / ``"b1"`` int64, float64 and bool scalars; a result in
parentheses is a tuple, ``"void"`` none.
"""
from __future__ import annotations

import ast
import hashlib
import os

__all__ = ["MODULE", "loop_files", "signatures", "export_name", "numba_signature",
           "source_stamp", "split_key"]

MODULE = "structsvm._compiled._aot"  # the extension module built by setup.py


def loop_files(root):
    """Every loop module (``*_jit.py``) under the package folder ``root``, sorted."""
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        paths += [os.path.join(folder, f) for f in files if f.endswith("_jit.py")]
    return sorted(paths)


def _module_name(root, path):
    rel = os.path.relpath(path, os.path.dirname(root))
    return rel[:-len(".py")].replace(os.sep, ".")


def _declared(path):
    """The ``SIGNATURES`` literal of one loop module ({} when it declares none)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "SIGNATURES"):
            return ast.literal_eval(node.value)
    return {}


def signatures(root):
    """``{"package.module:function": (argument types, result type)}`` of every loop
    compiled ahead of time, read from the loop modules under ``root``."""
    out = {}
    for path in loop_files(root):
        module = _module_name(root, path)
        for function, types in _declared(path).items():
            out[f"{module}:{function}"] = tuple(types)
    return out


def split_key(key):
    """``"pkg.module:function"`` -> ``("pkg.module", "function")``."""
    module, _, function = key.partition(":")
    return module, function


def export_name(key):
    """The loop's name in the extension module (unique: its module path spelt out)."""
    module, function = split_key(key)
    return module.replace(".", "_") + "__" + function


def numba_signature(types):
    """The numba signature ``result(arguments)`` of ``(argument types, result type)``
    (imports numba)."""
    import numba
    import numpy as np

    def typ(spec):
        if spec == "void":
            return numba.types.void
        if spec.startswith("("):
            return numba.types.Tuple(tuple(typ(s) for s in spec[1:-1].split()))
        code, _, ndim = spec.partition(":")
        scalar = numba.from_dtype(np.dtype(code))
        return numba.types.Array(scalar, int(ndim), "C") if ndim else scalar

    args, result = types
    return typ(result)(*(typ(a) for a in args.split()))


def source_stamp(root):
    """A 63-bit digest of the loops' source: every loop module under the package
    folder ``root`` and this file. The extension module records the stamp of the
    source it was compiled from; a different stamp at run time (the source was
    edited after the build) leaves the extension unused."""
    digest = hashlib.sha256()
    paths = loop_files(root) + [os.path.abspath(__file__)]
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return int.from_bytes(digest.digest()[:8], "little") >> 1
