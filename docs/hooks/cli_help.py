"""mkdocs hook: the command line's own ``--help`` text on the command-line page.

A line ``<!-- help: structsvm learn -->`` on a page is replaced at build time by the
help that ``structsvm learn --help`` prints, as a text block: the page shows every
option exactly as the installed command documents it, and cannot drift from it.
"""
import contextlib
import io
import os
import re

from structsvm.cli import build_parser

_MARKER = re.compile(r"^<!-- help: structsvm((?: [a-z]+)*) -->$", re.MULTILINE)
_WIDTH = "88"  # the help's line width on the page, whatever the building terminal


def _help(words):
    parser = build_parser()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = _WIDTH
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            parser.parse_args([*words, "--help"])
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return out.getvalue().rstrip()


def on_page_markdown(markdown, page, config, files):
    """Replace every help marker with the help text of that command."""
    return _MARKER.sub(lambda m: "```text\n" + _help(m.group(1).split()) + "\n```",
                       markdown)
