"""The package layout: no import cycles, layers import only below them, decoders free
of feature maps, no old paths.

The import graph is read from the source: every import statement of a module, at
module level and inside functions and methods (an import inside a function is a
dependency all the same; it only hides a cycle from the import order). So a cycle
is found even where the current import order happens to hide it; fresh
interpreters then import every module in random orders, which is what a user's
first import does.
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
        if module_path(info.name).exists():  # not the compiled extension (no source)
            names.append(info.name)
    return sorted(names)


def module_path(name):
    rel = Path(*name.split(".")[1:])
    pkg = PKG_DIR / rel / "__init__.py"
    return pkg if pkg.exists() else (PKG_DIR / rel).with_suffix(".py")


def imports_of(name):
    """structsvm modules that ``name`` imports anywhere: at module level, inside
    functions and methods, under ``if TYPE_CHECKING`` (doctest text is not code)."""
    path = module_path(name)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
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
    return out


def import_graph():
    mods = set(all_modules())
    graph = {}
    for m in mods:
        # edges to the modules named (a name taken from a partly initialised module
        # is what fails); a package being initialised may import its submodules
        graph[m] = {d for d in imports_of(m) if d in mods and d != m}
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
    assert "structsvm.protocols" in graph["structsvm.learners.problem"]
    assert "structsvm.structures.losses" in graph["structsvm.structures.taxonomy.losses"]
    assert "structsvm.registry" in graph["structsvm.structures.sequence.viterbi"]
    # imports inside functions count
    assert "structsvm.structures.sequence.viterbi" in graph["structsvm.inference"]
    assert "structsvm" in graph["structsvm.cli"]


def test_import_graph_parser_reads_function_level_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "structsvm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    return b\n")
    (pkg / "b.py").write_text("class C:\n    def g(self):\n        from .a import f\n"
                              "        return f\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG_DIR", pkg)
    assert imports_of("structsvm.a") == {"structsvm.b"}
    assert imports_of("structsvm.b") == {"structsvm.a"}


def test_find_cycle_detects_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_package_has_no_import_cycle():
    graph = import_graph()
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def reachable(graph, start):
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for d in graph[todo.pop()]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def _in(mods, *prefixes):
    return sorted(m for m in mods
                  if any(m == p or m.startswith(p + ".") for p in prefixes))


# the plugin contract's private parts: structsvm.protocols imports these alone
PROTOCOL_PARTS = {"structsvm._capabilities", "structsvm._learner_protocol",
                  "structsvm._samples"}


def test_bottom_layers_import_nothing_above_them():
    graph = import_graph()
    for leaf in ("structsvm.structures.ranking.outputs", "structsvm._version", *sorted(PROTOCOL_PARTS)):
        assert graph[leaf] == set(), leaf
    assert graph["structsvm.protocols"] <= PROTOCOL_PARTS, graph["structsvm.protocols"]
    assert all(not d.startswith("structsvm.features") for d in graph["structsvm.learners.problem"])


# the layers, top down: a module imports (directly or not) only layers below its own
ABOVE = {
    "structsvm.learners": ("structsvm.estimator", "structsvm.estimator._training",
                           "structsvm.estimator._saved_state", "structsvm.io"),
    "structsvm.learners.problem": ("structsvm.learners", "structsvm.estimator",
                          "structsvm.estimator._training", "structsvm.io"),
    "structsvm.features": ("structsvm.learners.problem", "structsvm.learners",
                           "structsvm.estimator", "structsvm.estimator._training", "structsvm.io"),
    "structsvm.inference": ("structsvm.features", "structsvm.learners.problem",
                            "structsvm.learners", "structsvm.estimator"),
    "structsvm.losses": ("structsvm.features", "structsvm.learners.problem", "structsvm.learners",
                         "structsvm.estimator"),
}


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_layers_import_nothing_above_them(layer):
    graph = import_graph()
    for mod in _in(graph, layer):
        deps = reachable(graph, mod)
        assert "structsvm" not in deps, f"{mod} imports the package's __init__"
        assert not _in(deps, *ABOVE[layer]), f"{mod} reaches {_in(deps, *ABOVE[layer])}"


def test_io_is_a_codec_importing_nothing_above_it():
    """The model-file format knows no estimator: the estimator side tells it which
    classes are allowed and how decoders are found."""
    graph = import_graph()
    deps = reachable(graph, "structsvm.io")
    assert not _in(deps, "structsvm.estimator", "structsvm.estimator._training",
                   "structsvm.estimator._saved_state"), deps
    assert deps <= {"structsvm.io._format", "structsvm.protocols"} | PROTOCOL_PARTS, deps
    assert "structsvm" not in deps


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
    import structsvm.svm.kernels

    for name in ("KernelPegasosClassifier", "KernelCuttingPlaneSVM"):
        assert not hasattr(structsvm.svm.kernels, name)


def test_new_homes_import_cleanly():
    code = ("import warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            "warnings.filterwarnings('ignore', category=DeprecationWarning, "
            "module='(?!structsvm)')\n"
            "import structsvm.svm, structsvm.svm.kernels, structsvm.model_selection, "
            "structsvm.losses, structsvm.protocols, structsvm.learners.problem\n")
    _run_fresh(code)


def test_import_does_not_load_nltk():
    """NLTK (~0.6 s to import) is loaded by the tree, parsing and tagger code that
    needs it, not by ``import structsvm`` (the command line and sequence models
    start faster); the tree helpers still work once it is loaded."""
    code = ("import sys, structsvm\n"
            "assert 'nltk' not in sys.modules, 'import structsvm loaded nltk'\n"
            "from structsvm.structures.grammar.features import clean_tree\n"
            "from nltk import Tree\n"
            "t = clean_tree(Tree('ROOT', [Tree('NP-SBJ', [Tree('DT', ['the'])])]))\n"
            "assert str(t) == '(NP (DT the))', str(t)\n")
    _run_fresh(code)
