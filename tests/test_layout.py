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

# module paths that are gone (their contents live elsewhere)
REMOVED = ("structsvm.base", "structsvm.linear", "structsvm.kernel_pegasos",
           "structsvm.learners.kernel_cutting_plane", "structsvm.selection",
           "structsvm.clicks", "structsvm.tree_losses", "structsvm.rank_losses",
           "structsvm.features", "structsvm.inference", "structsvm.losses",
           "structsvm.metrics", "structsvm.problem", "structsvm.outputs",
           "structsvm.structure", "structsvm.tagger", "structsvm.kernels",
           "structsvm._kernels", "structsvm._kernel_table", "structsvm._jit_warmup")


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
    assert "structsvm.protocols" in graph["structsvm.structures.sequence.viterbi"]
    # imports inside functions count
    assert "structsvm.structures.sequence.viterbi" in \
        graph["structsvm.structures.sequence._oracle"]
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


#: The root's modules besides ``__init__``: the contract, the registry, the memory
#: budget, the conformance check, the plots, and four private helpers.
ROOT_MODULES = {"protocols", "registry", "limits", "testing", "plotting", "_lazy",
                "_version", "_progress"}
MAX_ROOT_MODULES = 8


def test_the_root_holds_few_modules():
    """The shared machinery lives in named subpackages; the root keeps __init__,
    __main__ (``python -m structsvm``) and at most eight modules (a compiled extension
    counts as one)."""
    here = sorted(p.name.split(".")[0] for p in PKG_DIR.iterdir()
                  if p.is_file() and p.suffix in (".py", ".so", ".pyd")
                  and p.name not in ("__init__.py", "__main__.py"))
    assert len(here) <= MAX_ROOT_MODULES, here
    assert set(here) == ROOT_MODULES, set(here) ^ ROOT_MODULES


def test_bottom_layers_import_nothing_above_them():
    graph = import_graph()
    for leaf in ("structsvm._version", "structsvm._lazy", "structsvm._progress",
                 "structsvm.limits", "structsvm.protocols", "structsvm.corpora._lines"):
        assert graph[leaf] == set(), (leaf, graph[leaf])
    assert graph["structsvm.registry"] == {"structsvm.protocols"}
    # the compiled-loop plumbing knows the contract, nothing else
    assert reachable(graph, "structsvm._compiled.warmup") <= {
        "structsvm._compiled", "structsvm._compiled._table", "structsvm.protocols"}


# the layers, top down: a module imports (directly or not) only layers below its own
ABOVE = {
    "structsvm.estimator": ("structsvm.cli",),
    "structsvm.learners": ("structsvm.estimator", "structsvm.cli", "structsvm.testing",
                           "structsvm.io"),
    "structsvm.structures": ("structsvm.learners", "structsvm.estimator",
                             "structsvm.cli", "structsvm.testing", "structsvm.svm",
                             "structsvm.model_selection"),
    "structsvm.io": ("structsvm.structures", "structsvm.learners", "structsvm.estimator",
                     "structsvm.cli"),
    "structsvm._compiled": ("structsvm.structures", "structsvm.learners",
                            "structsvm.estimator", "structsvm.cli", "structsvm.registry"),
    "structsvm.registry": ("structsvm.structures", "structsvm.learners",
                           "structsvm.estimator", "structsvm.cli"),
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
    assert deps <= {"structsvm.io._format", "structsvm.io._savable",
                    "structsvm.protocols"}, deps


def test_structure_folders_import_no_other_structure():
    """A structure's folder holds what is only its own: it imports the shared pieces
    (structsvm.structures' own modules) and no other structure's folder."""
    from structsvm.structures import BUILTIN

    graph = import_graph()
    for name in BUILTIN:
        folder = f"structsvm.structures.{name}"
        others = [f"structsvm.structures.{o}" for o in BUILTIN if o != name]
        for mod in _in(graph, folder):
            assert not _in(graph[mod], *others), (mod, _in(graph[mod], *others))


def _decoder_modules():
    from structsvm.registry import registered

    return sorted({d.func.__module__ for d in registered("decoder").values()
                   if d.func.__module__.startswith("structsvm.")})


@pytest.mark.parametrize("name", _decoder_modules())
def test_decoders_import_no_feature_map(name):
    """Decoders are pure functions of potentials: a decoder's module reaches no
    feature map."""
    deps = reachable(import_graph(), name)
    maps = [m for m in deps if m.rsplit(".", 1)[-1] == "features"]
    assert not maps, f"{name} reaches {maps}"


def _run_fresh(code):
    """Run ``code`` in a fresh interpreter (nothing imported yet); fail with its
    standard error."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_module_imports_in_a_fresh_interpreter_in_random_order(seed):
    mods = [m for m in all_modules() if not m.endswith(".__main__")]
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
            "structsvm.structures, structsvm.protocols, structsvm.registry, "
            "structsvm.learners.problem\n")
    _run_fresh(code)


def test_import_does_not_load_nltk():
    """NLTK (~0.6 s to import) is loaded by the tree, parsing and tagger code that
    needs it, not by ``import structsvm`` (the command line and sequence models
    start faster); the tree helpers still work once it is loaded."""
    code = ("import sys, structsvm\n"
            "assert 'nltk' not in sys.modules, 'import structsvm loaded nltk'\n"
            "from structsvm.structures.grammar import clean_tree\n"
            "from nltk import Tree\n"
            "t = clean_tree(Tree('ROOT', [Tree('NP-SBJ', [Tree('DT', ['the'])])]))\n"
            "assert str(t) == '(NP (DT the))', str(t)\n")
    _run_fresh(code)


# ------------------------------------------------------------------ a folder per structure
def _defined_in(obj):
    """The module that defines a plugin: a class's, a function's, a Decoder's func's."""
    return getattr(obj, "func", obj).__module__


def _builtin_plugins():
    """(structure, kind, name, module) of every plugin a built-in structure's folder
    registers, and the modules of the compiled loops its map declares."""
    import importlib

    from structsvm.protocols import capability
    from structsvm.registry import _builtin, registered
    from structsvm.structures import BUILTIN

    registered("structure"), registered("decoder"), registered("loss")  # the built-ins
    out = []
    for kind in ("structure", "decoder", "loss"):
        for name, plugin in _builtin[kind].items():
            if isinstance(plugin, str):
                module, _, attr = plugin.partition(":")
                plugin = getattr(importlib.import_module(module), attr)
            out.append((kind, name, _defined_in(plugin)))
    for name in BUILTIN:
        cls = registered("structure")[name]
        out += [("loop", key, key.partition(":")[0])
                for key in capability(cls, "compiled_loops")]
    return out


def test_every_built_in_structure_keeps_its_files_in_its_folder():
    """A built-in structure's feature map, decoders, losses and compiled loops are
    defined in its own folder, structsvm/structures/<name>/ (what several share,
    the zero-one and Hamming losses and the exhaustive decoder, in
    structsvm/structures/ itself): moving one out fails here."""
    from structsvm.registry import registered
    from structsvm.structures import BUILTIN

    shared = {"structsvm.structures.losses", "structsvm.structures.exhaustive"}
    folder_of = {}
    for name in BUILTIN:
        cls = registered("structure")[name]
        folder_of[name] = f"structsvm.structures.{name}"
        assert _defined_in(cls).startswith(folder_of[name] + "."), (name, cls)
        assert cls.structure == name
    for kind, name, module in _builtin_plugins():
        if module in shared:
            continue
        owner = [s for s, f in folder_of.items() if module.startswith(f + ".")]
        assert owner, f"{kind} {name!r} is defined in {module}, outside every " \
                      "structure's folder"
    for dec_name, decoder in registered("decoder").items():
        if decoder.structure in folder_of and _defined_in(decoder) not in shared:
            assert _defined_in(decoder).startswith(folder_of[decoder.structure] + "."), \
                (dec_name, _defined_in(decoder))


def _stray_decoder(batch, exclude=None):  # defined here, outside every folder
    return []


def test_a_structure_leaving_its_folder_is_caught(monkeypatch):
    """The check above fails for a built-in decoder defined outside its folder."""
    from structsvm.protocols import Decoder
    from structsvm.registry import _builtin, _plugins

    stray = Decoder("stray", "sequence", _stray_decoder)
    monkeypatch.setitem(_builtin["decoder"], "stray", stray)
    monkeypatch.setitem(_plugins["decoder"], "stray", stray)
    with pytest.raises(AssertionError, match="outside every structure's folder"):
        test_every_built_in_structure_keeps_its_files_in_its_folder()


def _loss_classes():
    """Every loss class structsvm defines, with the folder of its module."""
    from structsvm.registry import registered
    from structsvm.structures import BaseLoss
    from structsvm.structures.user import StructureLoss

    classes = set(registered("loss").values()) | {BaseLoss, StructureLoss}
    classes |= {c for c in BaseLoss.__subclasses__()}
    return {c.__name__: module_path(c.__module__).parent for c in classes}


def test_no_class_check_on_a_loss_outside_its_folder():
    """Decoders, maps, learners and the estimator ask a loss what it is (its declared
    decomposition), never its class: an isinstance or issubclass naming a loss
    class appears only in that loss's own folder."""
    losses = _loss_classes()
    found = []
    for name in all_modules():
        path = module_path(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass")
                    and len(node.args) == 2):
                continue
            target = node.args[1]
            names = [e for e in (target.elts if isinstance(target, ast.Tuple)
                                 else [target])]
            for e in names:
                cls = e.attr if isinstance(e, ast.Attribute) else getattr(e, "id", "")
                if cls in losses and not path.is_relative_to(losses[cls]):
                    found.append(f"{path.relative_to(PKG_DIR)}:{node.lineno} checks "
                                 f"{cls}")
    assert found == [], found
