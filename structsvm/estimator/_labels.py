"""Checks of training labels before anything is fitted: missing labels, labels that
print the same but differ, a single class."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

__all__ = ["check_labels"]


def _kind(v):
    if isinstance(v, str):
        return "str"
    if isinstance(v, (numbers.Number, np.number, np.bool_)):
        return "number"
    return type(v).__name__


def _is_missing(v):
    if v is None:
        return "None"
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return "NaN"
    return None


def _labels_of(Y, structure, latent=False):
    """(sample index, label) pairs: whole outputs, or the tags of each sequence (a
    latent map's unknown tags, None, are no labels)."""
    if structure == "sequence":
        for i, y in enumerate(Y):
            if y is None or isinstance(y, (str, bytes)):
                yield i, y
                continue
            try:
                tags = list(y)
            except TypeError:
                yield i, y
                continue
            for t in tags:
                if not (latent and t is None):
                    yield i, t
    else:
        yield from enumerate(Y)


def check_labels(Y, structure, latent=False):
    """Refuse missing or ambiguous labels; warn when there is only one.

    Parameters
    ----------
    Y : sequence
        Training outputs.
    structure : str
        The feature map's structure: "multiclass" and "taxonomy" outputs are checked
        whole, "sequence" outputs tag by tag; other structures are not checked here.
    latent : bool, default=False
        The map's outputs hold a hidden part: a sequence's None tags mark tokens
        whose tag is unknown (they train as hidden), not missing labels.

    Raises
    ------
    ValueError
        "Sample i: ..." for a None or NaN label, or for two labels of different
        types that print the same (``1`` and ``"1"``: different classes to Python,
        the same to anyone reading a file or a report).

    Warns
    -----
    UserWarning
        All training outputs have the same class (or all tags are the same).
    """
    if structure not in ("multiclass", "taxonomy", "sequence"):
        return
    what = "tag" if structure == "sequence" else "label"
    by_text, distinct = {}, set()
    for i, v in _labels_of(Y, structure, latent):
        missing = _is_missing(v)
        if missing:
            raise ValueError(f"Sample {i}: {what} is {missing}; every training output "
                             f"needs a {what}")
        try:
            if v in distinct:
                continue
            distinct.add(v)
        except TypeError:  # unhashable: the feature map reports it
            return
        text, kind = str(v), _kind(v)
        seen = by_text.setdefault(text, (kind, v, i))
        if seen[0] != kind:
            raise ValueError(f"Sample {i}: {what} {v!r} ({type(v).__name__}) and the "
                             f"{what} {seen[1]!r} ({type(seen[1]).__name__}) of sample "
                             f"{seen[2]} are different {what}s that print the same; "
                             f"convert the {what}s to one type")
    if len(distinct) == 1:
        only = next(iter(distinct))
        warnings.warn(f"Every training {what} is {only!r}: the model cannot learn to "
                      f"tell {what}s apart and will predict {only!r}", UserWarning,
                      stacklevel=4)
