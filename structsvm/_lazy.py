"""Lazy attributes for the package and its subpackages (PEP 562).

A package's ``__init__`` lists what it exports as imports under
``if TYPE_CHECKING:`` (what static tools, type checkers and the API docs read);
:func:`attach` reads that block and imports a submodule the first time one of its
names is read. So ``import structsvm`` does not import scikit-learn, SciPy's
statistics, numba, cvxpy or NLTK until a call needs them, while
``from structsvm import StructuredSVM``, ``dir()`` and ``__all__`` behave as with
eager imports.
"""
from __future__ import annotations

import ast
import importlib

__all__ = ["attach"]


def attach(package, namespace, submodules=(), on_load=None):
    """Module-level ``__getattr__`` and ``__dir__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    namespace : dict
        The package's ``globals()``. Its ``__file__``'s ``if TYPE_CHECKING:`` block
        (``from .module import name`` statements) says which submodule defines each
        exported name; a name read once is stored in ``namespace``, so later reads
        cost what a plain attribute costs.
    submodules : iterable of str
        Submodules reachable as attributes (``structsvm.structures`` after
        ``import structsvm``), besides those the ``TYPE_CHECKING`` block imports from.
    on_load : dict of str to callable, optional
        Exported names whose value a function computes (a registry filled by
        importing the plugins that register themselves in it).

    Returns
    -------
    __getattr__, __dir__ : callable
    """
    exports = _type_checking_imports(namespace["__file__"])
    submodules = frozenset(submodules) | {module[1:] for module, _ in exports.values()
                                          if module.count(".") == 1}
    on_load = dict(on_load or {})

    def __getattr__(name):
        if name in on_load:
            value = on_load[name]()
        elif name in exports:
            module, attr = exports[name]
            value = getattr(importlib.import_module(module, package), attr)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(exports) | set(on_load) | submodules)

    return __getattr__, __dir__


def _type_checking_imports(path):
    """``{name: (".module", attribute)}`` from the relative imports under ``if TYPE_CHECKING:``."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level and stmt.module:
                    module = "." * stmt.level + stmt.module
                    out.update({a.asname or a.name: (module, a.name)
                                for a in stmt.names})
    return out
