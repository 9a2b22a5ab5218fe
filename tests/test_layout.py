"""The package layout: no import cycles, decoders free of feature maps, no old paths.

The import graph is read from the source (module-level imports only: imports inside
functions run later and cannot deadlock an import), so a cycle is found even where
the current import order happens to hide it; fresh interpreters then import every
module in random orders, which is what a user's first import does.
"""
import ast
import pkgutil
import random
import subprocess
import sys
from pathlib import Path

import pytest

import structsvm

PKG_DIR = Path(structsvm.__file__).parent

# module paths that never shipped and are gone (their contents live elsewhere)
REMOVED = ("structsvm.base", "structsvm.linear", "structsvm.kernel_pegasos",
           "structsvm.learners.kernel_cutting_plane", "structsvm.selection",
           "structsvm.clicks", "structsvm.tree_losses", "structsvm.rank_losses")


def all_modules():
    names = ["structsvm"]
    for info in pkgutil.walk_packages([str(PKG_DIR)], prefix="structsvm."):
        names.append(info.name)
    return sorted(names)


def module_path(name):
    rel = Path(*name.split(".")[1:])
    pkg = PKG_DIR / rel / "__init__.py"
    return pkg if pkg.exists() else (PKG_DIR / rel).with_suffix(".py")


def top_level_imports(name):
    """structsvm modules that ``name`` imports when it is executed (not lazily)."""
    path = module_path(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()

    def visit(body):
        for node in body:
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.startswith("structsvm"))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parent = base[:len(base) - node.level + 1]
                    mod = ".".join(parent + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                if not mod.startswith("structsvm"):
                    continue
                for a in node.names:  # "from . import x" may name a submodule
                    if module_path(f"{mod}.{a.name}").exists():
                        out.add(f"{mod}.{a.name}")
                    else:  # a name defined by ``mod`` itself
                        out.add(mod)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)
    visit(tree.body)
    return out


def import_graph():
    mods = set(all_modules())
    graph = {}
    for m in mods:
        # edges to the modules named (a name taken from a partly initialised module
        # is what fails); a package being initialised may import its submodules
        graph[m] = {d for d in top_level_imports(m) if d in mods and d != m}
    return graph


def find_cycle(graph):
    colour, stack = {}, []

    def dfs(u):
        colour[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if colour.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in colour:
                cyc = dfs(v)
                if cyc:
                    return cyc
        colour[u] = 2
        stack.pop()
        return None

    for u in sorted(graph):
        if u not in colour:
            cyc = dfs(u)
            if cyc:
                return cyc
    return None


def test_import_graph_parser_sees_known_edges():
    graph = import_graph()
    assert "structsvm.protocols" in graph["structsvm.problem"]
    assert "structsvm.losses.basic" in graph["structsvm.losses.tree"]
    assert "structsvm.inference" in graph["structsvm.inference.viterbi"]


def test_find_cycle_detects_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_package_has_no_import_cycle():
    graph = import_graph()
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_bottom_layers_import_nothing_above_them():
    graph = import_graph()
    assert graph["structsvm.protocols"] == set()
    assert graph["structsvm.outputs"] == set()
    assert all(not d.startswith("structsvm.features") for d in graph["structsvm.problem"])


@pytest.mark.parametrize("name", [m for m in all_modules()
                                  if m.startswith("structsvm.inference")])
def test_decoders_import_no_feature_map(name):
    src = module_path(name).read_text(encoding="utf-8")
    deps = {n.module for n in ast.walk(ast.parse(src))
            if isinstance(n, ast.ImportFrom) and n.module}
    deps |= {a.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import)
             for a in n.names}
    assert not any("features" in d for d in deps), f"{name} imports {deps}"


def _run_fresh(code):
    """Run ``code`` in a fresh interpreter (nothing imported yet); fail with its
    standard error."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_module_imports_in_a_fresh_interpreter_in_random_order(seed):
    mods = [m for m in all_modules() if m != "structsvm.__main__"]
    random.Random(seed).shuffle(mods)
    code = ("import importlib, warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            "warnings.filterwarnings('ignore', category=DeprecationWarning, "
            "module='(?!structsvm)')\n"
            f"for m in {mods!r}:\n    importlib.import_module(m)\n")
    _run_fresh(code)


@pytest.mark.parametrize("old", REMOVED)
def test_removed_module_paths_do_not_import(old):
    # an editable install of another checkout would serve that checkout's files
    code = ("import sys\nsys.meta_path[:] = [f for f in sys.meta_path if not "
            "getattr(f, '__module__', '').startswith('__editable__')]\n"
            f"try:\n    import {old}\nexcept ModuleNotFoundError as e:\n"
            f"    assert e.name == {old!r}, e.name\n"
            f"else:\n    raise SystemExit('{old} imported')\n")
    _run_fresh(code)


def test_kernel_estimators_live_only_in_svm():
    import structsvm.kernels

    for name in ("KernelPegasosClassifier", "KernelCuttingPlaneSVM"):
        assert not hasattr(structsvm.kernels, name)


def test_new_homes_import_cleanly():
    code = ("import warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            "warnings.filterwarnings('ignore', category=DeprecationWarning, "
            "module='(?!structsvm)')\n"
            "import structsvm.svm, structsvm.kernels, structsvm.model_selection, "
            "structsvm.losses, structsvm.protocols, structsvm.problem\n")
    _run_fresh(code)


def test_import_does_not_load_nltk():
    """NLTK (~0.6 s to import) is loaded by the tree, parsing and tagger code that
    needs it, not by ``import structsvm`` (the command line and sequence models
    start faster); the tree helpers still work once it is loaded."""
    code = ("import sys, structsvm\n"
            "assert 'nltk' not in sys.modules, 'import structsvm loaded nltk'\n"
            "from structsvm.features._trees import clean_tree\n"
            "from nltk import Tree\n"
            "t = clean_tree(Tree('ROOT', [Tree('NP-SBJ', [Tree('DT', ['the'])])]))\n"
            "assert str(t) == '(NP (DT the))', str(t)\n")
    _run_fresh(code)
