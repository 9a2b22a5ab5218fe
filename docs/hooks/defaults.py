"""mkdocs hook: fill pages with tables read from the code.

Registered in mkdocs.yml under ``hooks:``. ``docs/defaults.md`` holds a marker line
that the build replaces with :func:`structsvm.estimator._defaults.defaults_markdown`;
``docs/which_learner.md`` one that becomes the table of what each registered learner
can do (its declared capabilities). A page without its marker fails the build. The
hooks' own directory is not part of the site.
"""
from structsvm.estimator._defaults import defaults_markdown

MARKERS = {"defaults.md": "<!-- structsvm-defaults -->",
           "which_learner.md": "<!-- structsvm-learner-capabilities -->"}

#: Capability (structsvm.protocols.LEARNER_CAPABILITIES) -> column heading.
_COLUMNS = {"certifies_gap": "certified duality gap",
            "accepts_constraints": "constraints on w",
            "trains_dataset_losses": "losses over the data set",
            "supports_warm_start": "warm start",
            "resumable": "resumes a checkpoint"}


def learner_capabilities_markdown():
    """One row per registered learner: which capabilities it declares."""
    from structsvm.protocols import capability
    from structsvm.registry import registered

    lines = ["| learner | " + " | ".join(_COLUMNS.values()) + " | trains |",
             "|" + "---|" * (len(_COLUMNS) + 2)]
    for name, cls in sorted(registered("learner").items()):
        marks = ["yes" if capability(cls, c) else "–" for c in _COLUMNS]
        scope = ("some problems (it says which it refuses)"
                 if capability(cls, "refusal") is not None else "every structure")
        lines.append(f"| `{name}` | " + " | ".join(marks) + f" | {scope} |")
    return "\n".join(lines)


def on_files(files, config):
    """Leave this hook's source out of the built site."""
    for file in list(files):
        if file.src_uri.startswith("hooks/"):
            files.remove(file)
    return files


def on_page_markdown(markdown, page, config, files):
    """Replace a page's marker with its generated table."""
    marker = MARKERS.get(page.file.src_uri)
    if marker is None:
        return markdown
    if marker not in markdown:
        raise ValueError(f"{page.file.src_uri} must contain the line {marker!r}")
    table = (defaults_markdown() if page.file.src_uri == "defaults.md"
             else learner_capabilities_markdown())
    return markdown.replace(marker, table)
