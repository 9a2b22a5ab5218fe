"""Private modules stay inside their folder.

Rule: a private module (one whose name, or a package on its path below
``structsvm``, starts with ``_``) is imported only by modules of the folder that holds
it and the folders below it: ``structsvm/structures/sequence/_chain.py`` by the
sequence folder's modules, ``structsvm/structures/_ragged.py`` (a piece several
structures share) by any structure's, ``structsvm/_compiled`` (the compiled-loop
plumbing at the root) by any module. Every import statement counts, module-level or
inside a function. Examples in docstrings (doctests) are what users copy, so they
import no private module at all.
"""
from __future__ import annotations

import ast
import doctest
from pathlib import Path

import pytest

import structsvm

PACKAGE_DIR = Path(structsvm.__file__).resolve().parent
ROOT = PACKAGE_DIR.parent

#: (importing module, imported private module) -> why the import is allowed.
EXCEPTIONS = {
    ("structsvm.svm.kernel_cutting_plane", "structsvm.learners._qp"):
        "the kernel cutting plane solves the dual QP of the structural learners with "
        "their solver, which structsvm.learners does not export",
}


def _modules():
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        yield ".".join(parts), path


def _is_package(path):
    return path.name == "__init__.py"


def _resolve(module, is_package, node):
    """Absolute name of the module an ImportFrom node names."""
    if not node.level:
        return node.module
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _exists_as_module(name):
    rel = Path(*name.split("."))
    return (ROOT / rel.with_suffix(".py")).is_file() or (ROOT / rel / "__init__.py").is_file()


def _imported_modules(tree, module, is_package):
    """Every structsvm module an AST imports: ``import a.b``, ``from a import b``
    (``a.b`` when b is a module, else ``a``), relative forms resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            yield node.lineno, base
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if _exists_as_module(sub):
                    yield node.lineno, sub


def private_home(name):
    """The package directory a private module belongs to (None if not private)."""
    parts = name.split(".")
    if parts[0] != "structsvm":
        return None
    for k, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:k])
    return None


def package_of(module, is_package):
    return module if is_package else module.rpartition(".")[0]


def violations():
    found = []
    for module, path in _modules():
        is_package = _is_package(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _imported_modules(tree, module, is_package):
            home = private_home(name)
            package = package_of(module, is_package)
            if home is None or package == home or package.startswith(home + "."):
                continue
            if (module, name) in EXCEPTIONS:
                continue
            found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return found


def _doctest_sources(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=True)
            if doc and ">>>" in doc:
                for example in parser.get_examples(doc):
                    yield example.source


def doctest_violations():
    found = []
    for module, path in _modules():
        for source in _doctest_sources(path):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for _, name in _imported_modules(tree, "__doctest__", False):
                if name and private_home(name) is not None:
                    found.append(f"{path.relative_to(ROOT)}: doctest imports {name}")
    return found


def test_private_modules_are_imported_only_from_their_own_package():
    assert violations() == []


def test_doctests_import_no_private_module():
    assert doctest_violations() == []


def test_every_exception_is_still_needed():
    """An exception whose import is gone (or allowed by the rule) must be removed."""
    used = set()
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, name in _imported_modules(tree, module, _is_package(path)):
            if (module, name) in EXCEPTIONS:
                used.add((module, name))
    assert set(EXCEPTIONS) == used


@pytest.mark.parametrize("name, home", [
    ("structsvm.structures.grammar._trees", "structsvm.structures.grammar"),
    ("structsvm.learners._parallel", "structsvm.learners"),
    ("structsvm._compiled.warmup", "structsvm"),
    ("structsvm.structures.grammar.features", None),
    ("structsvm.structures.__init__", None),
    ("numpy._core", None),
])
def test_private_home(name, home):
    assert private_home(name) == home


def test_the_rule_catches_a_cross_package_import():
    code = ("from ..grammar._trees import clean_tree\n"
            "def f():\n"
            "    from structsvm.learners import _qp\n"
            "    from ...learners import _parallel\n")
    module = "structsvm.structures.sequence.m"
    names = [n for _, n in _imported_modules(ast.parse(code), module, False)]
    assert "structsvm.structures.grammar._trees" in names
    assert "structsvm.learners._qp" in names
    assert "structsvm.learners._parallel" in names
    homes = {private_home(n) for n in names} - {None}
    assert homes == {"structsvm.structures.grammar", "structsvm.learners"}
