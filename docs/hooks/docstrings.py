"""griffe extension: the reST math of numpydoc docstrings as the site's formulas.

Docstrings follow numpydoc: display math in ``.. math::`` blocks, inline math in
``:math:`...``` roles. Before mkdocstrings renders a docstring, each becomes the
``\\[ ... \\]`` / ``\\( ... \\)`` of the rest of the documentation, which the math hook
(``docs/hooks/math.py``) renders. A block with several lines that hold ``&`` or end in
``\\\\`` is an ``aligned`` environment, as in numpydoc. Registered in mkdocs.yml under
the Python handler's ``extensions``.
"""
import re

import griffe

_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*\n(?P<body>(?:[ \t]*\n)*"
                    r"(?:(?P=indent)[ \t]+\S.*\n?(?:[ \t]*\n)*)+)", re.M)
_INLINE = re.compile(r":math:`([^`]+)`")


def _block(match):
    indent = match.group("indent")
    lines = [line.strip() for line in match.group("body").splitlines() if line.strip()]
    tex = "\n".join(lines)
    if "&" in tex or "\\\\" in tex:
        tex = "\\begin{aligned}\n" + tex + "\n\\end{aligned}"
    return f"{indent}\\[\n{tex}\n{indent}\\]\n\n"


def rewrite(text):
    """The docstring text with its reST math in the site's delimiters."""
    text = _BLOCK.sub(_block, text)
    return _INLINE.sub(lambda m: "\\(" + m.group(1) + "\\)", text)


class ReSTMath(griffe.Extension):
    """Rewrite the math of every docstring griffe loads."""

    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
