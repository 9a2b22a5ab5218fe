"""mkdocs hook: formulas rendered to MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) wraps every formula of a page in an element
of class ``arithmatex``: ``\\( ... \\)`` inline, ``\\[ ... \\]`` on its own line. This
hook turns each into MathML (``latex2mathml``), which browsers draw themselves: the
built site needs no script and no network to show a formula, also when opened from
disk. ``aligned`` environments become MathML tables (rows at ``\\\\``, columns at
``&``, aligned right and left in turn, as in LaTeX). A formula that would show LaTeX
commands or ``&`` as text fails the build, naming the page and the formula.
"""
import html
import re

from latex2mathml.converter import convert

_FORMULA = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?P<open>\\\(|\\\[)(?P<tex>.*?)'
    r'(?:\\\)|\\\])\s*</(?P=tag)>', re.S)
_ALIGNED = re.compile(r"\\begin\{aligned\}(?P<body>.*?)\\end\{aligned\}", re.S)
# commands the converter does not know, in the words it does
_SPELLED = [(re.compile(r"\\arg\s*\\(max|min)(?![A-Za-z])"), r"\\operatorname{arg\\,\1}")]
_UNREAD = re.compile(r">(\\[A-Za-z]+|&)<")
_MATH = re.compile(r'<math xmlns="http://www.w3.org/1998/Math/MathML" '
                   r'display="(?:inline|block)">(?P<inner>.*)</math>', re.S)


def _inner(tex):
    """The MathML inside ``<math>`` of a formula without environments."""
    return _MATH.fullmatch(convert(tex)).group("inner")


def _aligned(body):
    """An ``aligned`` environment as a MathML table."""
    rows = []
    for line in re.split(r"\\\\", body):
        if not line.strip():
            continue
        cells = line.split("&")
        tds = []
        for k, cell in enumerate(cells):
            align = "right" if k % 2 == 0 else "left"
            tds.append(f'<mtd columnalign="{align}">{_inner(cell.strip() or "{}")}</mtd>')
        rows.append("<mtr>" + "".join(tds) + "</mtr>")
    return '<mtable displaystyle="true">' + "".join(rows) + "</mtable>"


def render(tex, display):
    """MathML of one formula (``display``: "block" or "inline")."""
    for pattern, spelled in _SPELLED:
        tex = pattern.sub(spelled, tex)
    parts, pos = [], 0
    for match in _ALIGNED.finditer(tex):
        if tex[pos:match.start()].strip():
            parts.append(_inner(tex[pos:match.start()]))
        parts.append(_aligned(match.group("body")))
        pos = match.end()
    if tex[pos:].strip() or not parts:
        parts.append(_inner(tex[pos:]))
    out = (f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="{display}">'
           "<mrow>" + "".join(parts) + "</mrow></math>")
    unread = _UNREAD.search(out)
    if unread:
        raise ValueError(f"{unread.group(1)!r} would show as text")
    return out


def _mathml(match, page):
    tex = html.unescape(match.group("tex"))
    display = "block" if match.group("open") == "\\[" else "inline"
    try:
        return render(tex, display)
    except Exception as exc:  # noqa: BLE001 - named in the build's error
        raise ValueError(f"{page.file.src_uri}: the formula {tex[:80]!r} cannot be "
                         f"rendered ({type(exc).__name__}: {exc})") from None


def on_page_content(content, page, config, files):
    """Replace every arithmatex formula of the page by its MathML."""
    return _FORMULA.sub(lambda m: _mathml(m, page), content)
