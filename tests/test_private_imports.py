"""Private modules stay inside their package directory.

Rule: a private module (one whose name, or a package on its path below
``structsvm``, starts with ``_``) is imported only by modules of the directory that
holds it: ``structsvm/features/_x.py`` by ``structsvm/features/*.py``,
``structsvm/learners/_parallel.py`` by ``structsvm/*.py``. Every import statement counts,
module-level or inside a function. Examples in docstrings (doctests) are what users
copy, so they import no private module at all.
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
    ("structsvm.structures.sequence._oracle_jit", "structsvm.structures.sequence._viterbi_jit"):
        "compiled code calls only compiled functions: the fused sequence oracle runs "
        "the Viterbi decoder's numba kernels inside its own kernel",
    **{(m, "structsvm._compiled.warmup"):
       "a kernel's wrapper waits, before the kernel's first call, for the helper "
       "process compiling it (started by the fit, in structsvm.estimator._training)"
       for m in ("structsvm.structures.sequence.features", "structsvm.structures.sequence.viterbi",
                 "structsvm.learners.dual_cd")},
    ("structsvm.svm.kernel_cutting_plane", "structsvm.learners._qp"):
        "the kernel cutting plane solves the dual QP of the structural learners with "
        "their solver, which structsvm.learners does not export",
}
# the wrappers reach their numba kernels through structsvm._compiled, which calls the
# version compiled at installation where there is one (and imports numba only when
# a kernel without one runs)
EXCEPTIONS.update({
    (f"structsvm.{m}", "structsvm._compiled"):
        "kernels are taken from the extension compiled at installation where it has "
        "them, else from numba (imported on a kernel's first call)"
    for m in ("features._grammar_encoding", "features._sequence_oracle",
              "features._sequence_rows", "features.grammar", "features.ranking",
              "features.sequence", "inference.cky", "inference.max_product",
              "inference.needleman_wunsch", "inference.viterbi",
              "learners._dual_cd_pool", "learners.dual_cd", "learners.multiclass_cd",
              "learners._qp", "learners._sparse", "learners.pegasos",
              "learners.frank_wolfe", "features._multiclass_rows", "svm._pegasos_losses",
              "svm.kernel_pegasos", "svm._pegasos_solver", "svm.pegasos")})
# every package's __init__ loads its exports on first use with one helper (PEP 562)
EXCEPTIONS.update({
    (f"structsvm.{package}", "structsvm._lazy"):
        "the packages' lazy exports (import structsvm loads no heavy library)"
    for package in ("corpora", "features", "metrics", "model_selection", "svm")})


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
            if home is None or home == package_of(module, is_package):
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
    ("structsvm.structures.grammar._trees", "structsvm.features"),
    ("structsvm.learners._parallel", "structsvm"),
    ("structsvm.structures.grammar.features", None),
    ("structsvm.features.__init__", None),
    ("numpy._core", None),
])
def test_private_home(name, home):
    assert private_home(name) == home


def test_the_rule_catches_a_cross_package_import():
    code = ("from ..features._grammar_trees import clean_tree\n"
            "def f():\n"
            "    from structsvm.learners import _qp\n"
            "    from .. import _parallel\n")
    names = [n for _, n in _imported_modules(ast.parse(code), "structsvm.metrics_x.m", False)]
    assert "structsvm.structures.grammar._trees" in names
    assert "structsvm.learners._qp" in names
    assert "structsvm.learners._parallel" in names
    homes = {private_home(n) for n in names} - {None}
    assert homes == {"structsvm.features", "structsvm.learners", "structsvm"}
