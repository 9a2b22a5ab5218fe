"""mkdocs hook: the module table of the API reference, generated from the package.

``docs/api/index.md`` holds a marker line that the build replaces with one row per
public module of structsvm and of ``structsvm.structures`` (the structures' folders):
a link to the API page that documents it (the page with a ``::: module`` directive, or directives of its members),
the first paragraph of its docstring, and how many names it exports. A public module
without an API page fails the build, so the table cannot leave one out.
"""
import importlib
import pkgutil
import re
from pathlib import Path

PAGE = "api/index.md"
MARKER = "<!-- structsvm-api-modules -->"
_DIRECTIVE = re.compile(r"^::: (structsvm[\w.]*)\s*$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|mod|meth|data|attr|obj|exc):`~?([^`]+)`")


def public_modules():
    """structsvm, its public children, and the public children of its structures."""
    import structsvm
    import structsvm.structures

    names = ["structsvm"]
    for package in (structsvm, structsvm.structures):
        names += [m.name for m in pkgutil.iter_modules(package.__path__,
                                                       package.__name__ + ".")
                  if not m.name.rsplit(".", 1)[1].startswith("_")]
    return names


def _summary(module):
    """The first paragraph of a module's docstring, as one line of Markdown."""
    text = (module.__doc__ or "").strip().split("\n\n")[0]
    text = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    return " ".join(text.replace("``", "`").split()).replace("|", "\\|")


def api_table(docs_dir):
    """The Markdown table of :func:`public_modules`, each linked to its page."""
    api = Path(docs_dir) / "api"
    modules = public_modules()
    pages = {}
    for page in sorted(api.rglob("*.md")):
        for name in _DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            # a page documents a module when it renders the module or its members
            owner = max((m for m in modules if name == m or name.startswith(m + ".")),
                        key=len, default=None)
            if owner is not None:
                pages.setdefault(owner, page.relative_to(api).as_posix())
    rows = ["| module | what | names |", "| --- | --- | --- |"]
    missing = []
    for name in modules:
        if name not in pages:
            missing.append(name)
            continue
        module = importlib.import_module(name)
        exported = len(getattr(module, "__all__", ()))
        rows.append(f"| [`{name}`]({pages[name]}) | {_summary(module)} | {exported} |")
    if missing:
        raise ValueError(f"public modules without an API page (a '::: module' line in "
                         f"docs/api/): {', '.join(missing)}")
    return "\n".join(rows)


def on_page_markdown(markdown, page, config, files):
    """Replace the marker of the API index with the generated table."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} must contain the line {MARKER!r}")
    return markdown.replace(MARKER, api_table(config["docs_dir"]))
