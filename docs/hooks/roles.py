"""mkdocs hook: the Sphinx roles of docstrings as links in the built API reference.

numpydoc docstrings name other objects with roles, ``:class:`~structsvm.Structure```;
mkdocstrings shows them as ``:class:`` followed by the name in code. After the build,
each becomes the name in code (the last part only for ``~``), linked to the object's
entry where the reference documents it (its anchor, or the anchor of a name that ends
with it), unlinked otherwise. No page then shows a raw role.
"""
import html
import os
import re

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):"
                   r"<code>(?P<tilde>~)?(?P<name>[\w.\s]+?)(?P<call>\(\))?</code>")
_ID = re.compile(r'\bid="([\w.]+)"')


def _pages(site):
    for folder, _, files in os.walk(site):
        for f in files:
            if f.endswith(".html"):
                yield os.path.join(folder, f)


def on_post_build(config):
    """Replace every role of every page by a link or plain code."""
    site = config.site_dir
    anchors = {}
    texts = {}
    for path in _pages(site):
        with open(path, encoding="utf-8") as f:
            texts[path] = f.read()
        for ident in _ID.findall(texts[path]):
            if ident.startswith("structsvm"):
                anchors.setdefault(ident, path)
    by_suffix = {}
    for ident in sorted(anchors, key=len):
        parts = ident.split(".")
        for k in range(1, len(parts)):
            by_suffix.setdefault(".".join(parts[k:]), ident)

    def target(name):
        if name in anchors:
            return name
        return by_suffix.get(name) or by_suffix.get(name.rsplit(".", 1)[-1]
                                                     if "." not in name else name)

    for path, text in texts.items():
        def link(match):
            name = re.sub(r"\s+", "", match.group("name"))  # a name wrapped in the source
            shown = name.rsplit(".", 1)[-1] if match.group("tilde") else name
            shown = html.escape(shown + (match.group("call") or ""))
            ident = target(name)
            if ident is None:
                return f"<code>{shown}</code>"
            href = os.path.relpath(anchors[ident], os.path.dirname(path))
            return f'<a href="{href}#{ident}"><code>{shown}</code></a>'

        new = _ROLE.sub(link, text)
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
