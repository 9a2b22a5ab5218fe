"""Locating data sets on disk (never downloading them).

Every loader looks for its files in this order:

1. an explicit ``path`` given by the caller;
2. ``$STRUCTSVM_DATA/<subdir>`` (one folder holding several data sets);
3. NLTK's own search path (``nltk.data.path``, which honours ``$NLTK_DATA``),
   for the corpora NLTK distributes (treebank, conll2000, qc).

When nothing is found a :class:`DataNotFoundError` says where it looked and how to
get the data.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DataNotFoundError", "find_data", "require_data"]


class DataNotFoundError(FileNotFoundError):
    """A data set could not be found in any of the searched locations."""


def _candidates(subdir, path, nltk_subdir):
    if path is not None:
        yield Path(path).expanduser()
        return
    root = os.environ.get("STRUCTSVM_DATA")
    if root:
        yield Path(root).expanduser() / subdir
        if nltk_subdir is not None:
            yield Path(root).expanduser() / "nltk_data" / nltk_subdir
    if nltk_subdir is not None:
        try:
            import nltk.data

            search = list(nltk.data.path)
        except ImportError:  # pragma: no cover - nltk is a core dependency
            search = []
        env = os.environ.get("NLTK_DATA")
        if env:
            search = env.split(os.pathsep) + search
        for base in search:
            yield Path(base) / nltk_subdir


def find_data(subdir, *, path=None, nltk_subdir=None, must_contain=(), hint=""):
    """Return the first existing directory holding a data set.

    Parameters
    ----------
    subdir : str
        Folder name below ``$STRUCTSVM_DATA`` (e.g. ``"spam_ng_ex6"``).
    path : str or path-like, optional
        Explicit location; when given, only it is searched.
    nltk_subdir : str, optional
        Folder below an NLTK data root (e.g. ``"corpora/treebank"``).
    must_contain : sequence of str, default=()
        File names that must exist in the directory for it to count.
    hint : str, default=""
        How to obtain the data, appended to the error message.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataNotFoundError
        When no candidate directory exists (message lists every place searched).
    """
    tried = []
    for cand in _candidates(subdir, path, nltk_subdir):
        tried.append(str(cand))
        if cand.is_dir() and all((cand / name).exists() for name in must_contain):
            return cand
    where = ", ".join(tried) if tried else "(no location configured)"
    msg = (f"Data set {subdir!r} not found; searched: {where}. Pass path=..., or set "
           f"$STRUCTSVM_DATA to the folder that holds {subdir!r}")
    if nltk_subdir is not None:
        msg += " (or $NLTK_DATA to an nltk_data folder)"
    msg += "."
    if hint:
        msg += " " + hint
    raise DataNotFoundError(msg)


def require_data():
    """True when tests must fail (not skip) on missing data (``STRUCTSVM_REQUIRE_DATA=1``)."""
    return os.environ.get("STRUCTSVM_REQUIRE_DATA", "") not in ("", "0", "false", "no")
