"""Every timing and accuracy figure of the documentation traces to a benchmark's
results file.

Pages show measured figures only by including a results file that a benchmark
script wrote (``--8<-- "benchmarks/results/NAME.md"``, see benchmarks/_runner.py):
a figure typed into a page by hand is found here and refused. What counts as a
measured figure: a time (``1.5 s``, ``10 ms``, ``3 minutes``), a ratio (``0.23x``), a
percentage with decimals (``96.76%``) and a score written as one (``F1 0.940``,
``accuracy of 0.766``, ``NDCG@10 0.462``). Code blocks, formulas and inline code are
not prose and are skipped; the changelog records history and is exempt.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"

FIGURE = re.compile(
    r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:s|ms|min|seconds|minutes|hours)\b"
    r"|(?<![\w.])\d+(?:\.\d+)?x\b"
    r"|(?<![\w.])\d+\.\d+\s?%"
    r"|\b(?:F1|accuracy|NDCG@10|MAP|Q)\s+(?:of\s+)?0\.\d{2,}")
INCLUDE = re.compile(r'^--8<-- "(benchmarks/results/[\w.-]+\.md)"\s*$', re.MULTILINE)
EXEMPT = {"changelog.md"}


def _blank(match):
    return "\n" * match.group(0).count("\n")


def figures(text):
    """(line, figure) of every measured figure in a page's prose."""
    for pattern in (r"```.*?```", r"<!--.*?-->", r"\$\$.*?\$\$", r"\\\(.*?\\\)"):
        text = re.sub(pattern, _blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [(i, m.group(0)) for i, line in enumerate(text.splitlines(), 1)
            for m in FIGURE.finditer(line)]


PAGES = sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).as_posix()
               not in EXEMPT)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_figure_typed_by_hand(page):
    found = figures(page.read_text(encoding="utf-8"))
    assert not found, (f"{page.relative_to(ROOT)}: figures typed by hand (include the "
                       f"benchmark's results file instead): {found}")


def test_readme_has_no_figure_typed_by_hand():
    found = figures((ROOT / "README.md").read_text(encoding="utf-8"))
    assert not found, f"README.md: figures typed by hand: {found}"


def test_included_results_exist_and_carry_provenance():
    included = {rel for page in PAGES
                for rel in INCLUDE.findall(page.read_text(encoding="utf-8"))}
    assert included, "no page includes a results file"
    for rel in sorted(included):
        path = ROOT / rel
        assert path.is_file(), f"{rel} is included by a page but does not exist"
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        meta = json.loads(first[len("<!-- results "):-len(" -->")])
        assert meta["command"].startswith("python benchmarks/"), rel
        assert meta["machine"] and meta["measured"], rel


def test_every_results_file_is_shown_somewhere():
    included = {rel for page in PAGES
                for rel in INCLUDE.findall(page.read_text(encoding="utf-8"))}
    unused = sorted(p.relative_to(ROOT).as_posix() for p in RESULTS.glob("*.md")
                    if p.relative_to(ROOT).as_posix() not in included)
    assert not unused, f"results files no page includes: {unused}"


def test_the_scan_finds_figures_and_spares_code():
    text = ("trains in 11.6 s, 0.23x crfsuite's time, 96.76 % accuracy, F1 0.9398\n"
            "```\nstructsvm learn  # 5.0 s\n```\n`tol=0.05` and C = 0.1, 3 passes, 10 %")
    assert [f for _, f in figures(text)] == ["11.6 s", "0.23x", "96.76 %", "F1 0.9398"]


def _public_docstrings():
    """(module path, line, docstring) of every docstring the API reference shows: the
    modules, classes and functions of public modules (no ``_`` in the path)."""
    import ast

    for path in sorted((ROOT / "structsvm").rglob("*.py")):
        rel = path.relative_to(ROOT)
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    yield rel.as_posix(), getattr(node, "lineno", 1), doc


def test_public_docstrings_have_no_figure_typed_by_hand():
    """The API reference is built from the docstrings: they quote no measured times,
    ratios or scores either (doctest lines are code and are skipped)."""
    found = []
    for rel, line, doc in _public_docstrings():
        prose = "\n".join(l for l in doc.splitlines()
                          if not l.lstrip().startswith((">>>", "...")))
        found += [f"{rel}:{line}: {fig}" for _, fig in figures(prose)]
    assert not found, found
