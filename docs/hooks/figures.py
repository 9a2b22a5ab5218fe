"""mkdocs hook: the page that lists every measured figure's source.

Every timing and accuracy figure of the documentation is a results file written by a
benchmark script (``benchmarks/results/NAME.md``, see ``benchmarks/_runner.py``) and
included in pages with ``--8<-- "benchmarks/results/NAME.md"``. ``docs/figures.md``
holds a marker line that the build replaces with one row per results file: when and
on which machine it was measured, the command that reproduces it, and the pages that
show it. A page that includes a results file that does not exist fails the build
(the snippets extension checks paths).
"""
import json
import re
from pathlib import Path

PAGE = "figures.md"
MARKER = "<!-- structsvm-figures -->"
_INCLUDE = re.compile(r'^--8<-- "(benchmarks/results/[\w.-]+\.md)"\s*$', re.MULTILINE)


def _provenance(path):
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if not (first.startswith("<!-- results ") and first.endswith(" -->")):
        raise ValueError(f"{path} is not a results file (benchmarks/_runner.py writes "
                         "them with --write)")
    return json.loads(first[len("<!-- results "):-len(" -->")])


def figures_table(root, docs_dir):
    """The Markdown table of every results file and the pages that include it."""
    root, docs_dir = Path(root), Path(docs_dir)
    shown = {}
    for page in sorted(docs_dir.rglob("*.md")):
        for rel in _INCLUDE.findall(page.read_text(encoding="utf-8")):
            shown.setdefault(rel, []).append(page.relative_to(docs_dir).as_posix())
    rows = ["| results | measured | machine | command | shown on |",
            "| --- | --- | --- | --- | --- |"]
    for path in sorted((root / "benchmarks" / "results").glob("*.md")):
        rel = path.relative_to(root).as_posix()
        meta = _provenance(path)
        pages = ", ".join(f"[{p}]({p})" for p in shown.get(rel, [])) or "none"
        rows.append(f"| `{path.stem}` | {meta['measured']} | {meta['machine']} | "
                    f"`{meta['command']}` | {pages} |")
    return "\n".join(rows)


def on_page_markdown(markdown, page, config, files):
    """Replace the marker of the figures page with the generated table."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} must contain the line {MARKER!r}")
    docs_dir = Path(config["docs_dir"])
    return markdown.replace(MARKER, figures_table(docs_dir.parent, docs_dir))
