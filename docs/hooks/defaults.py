"""mkdocs hook: fill docs/defaults.md with the defaults read from the code.

Registered in mkdocs.yml under ``hooks:``. The page holds a marker line that the
build replaces with :func:`structsvm.estimator._defaults.defaults_markdown`; a page without the
marker fails the build. The hook's own directory is not part of the site.
"""
from structsvm.estimator._defaults import defaults_markdown

PAGE = "defaults.md"
MARKER = "<!-- structsvm-defaults -->"


def on_files(files, config):
    """Leave this hook's source out of the built site."""
    for file in list(files):
        if file.src_uri.startswith("hooks/"):
            files.remove(file)
    return files


def on_page_markdown(markdown, page, config, files):
    """Replace the marker of the defaults page with the generated tables."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} must contain the line {MARKER!r}")
    return markdown.replace(MARKER, defaults_markdown())
