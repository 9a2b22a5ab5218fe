"""The mini 20 Newsgroups collection (100 posts per group) as a taxonomy.

A group name is a path: ``comp.sys.mac.hardware`` is comp → sys → mac → hardware,
so the 20 groups form an unbalanced tree of depth 2 to 5 (use
``TaxonomyFeatures(sep=".")``).
"""
from __future__ import annotations

from typing import NamedTuple

from ._paths import find_data

__all__ = ["NewsgroupsData", "load_mini_newsgroups"]


class NewsgroupsData(NamedTuple):
    """Posts and their dotted group names (sorted by group, then file name)."""

    texts: list
    labels: list
    filenames: list


def _body(raw, keep_subject):
    head, sep, body = raw.partition("\n\n")
    if not sep:
        return raw
    if keep_subject:
        for line in head.splitlines():
            if line.lower().startswith("subject:"):
                return line[8:].strip() + "\n" + body
    return body


def load_mini_newsgroups(path=None, *, strip_headers=True, keep_subject=True):
    """Load the 2,000 posts of mini_newsgroups.

    Parameters
    ----------
    path : str, optional
        Folder holding one sub-folder per group (default:
        ``$STRUCTSVM_DATA/mini_newsgroups``).
    strip_headers : bool, default=True
        Drop the mail headers (they name the group in ``Newsgroups:``).
    keep_subject : bool, default=True
        Keep the ``Subject:`` line when stripping headers.

    Returns
    -------
    NewsgroupsData
    """
    root = find_data("mini_newsgroups", path=path, must_contain=["sci.med"],
                     hint="mini_newsgroups is the UCI KDD archive's 2,000-post subset of "
                          "20 Newsgroups.")
    texts, labels, names = [], [], []
    for group in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(p for p in group.iterdir() if p.is_file()):
            raw = f.read_text(encoding="latin-1")
            texts.append(_body(raw, keep_subject) if strip_headers else raw)
            labels.append(group.name)
            names.append(str(f.relative_to(root)))
    if not texts:
        raise ValueError(f"{root}: no posts found (expected one folder per group)")
    return NewsgroupsData(texts, labels, names)
