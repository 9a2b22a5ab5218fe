"""Locating data sets on disk (loaders never download); shared by every loader.

Every loader looks for its files in this order and takes the first folder that has
them:

1. an explicit ``path`` given by the caller (then nothing else is searched);
2. ``$STRUCTSVM_DATA/<name>`` and ``$STRUCTSVM_DATA/nltk_data/corpora/<name>`` (one
   folder holding several data sets: ``<name>`` folders and an ``nltk_data`` tree);
3. the corpora folder, ``<corpora>/<name>``: ``$STRUCTSVM_CORPORA`` when set, else the
   ``corpora/`` folder of a source checkout (found next to the ``structsvm`` package,
   recognised by its ``manifest.json``); ``structsvm data fetch`` copies data here;
4. NLTK's search path (``$NLTK_DATA`` and ``nltk.data.path``), ``<root>/corpora/<name>``,
   for the corpora NLTK distributes (treebank, conll2000, conll2002, qc).

When nothing is found a :class:`DataNotFoundError` lists where it looked and names
the command that gets the data (``structsvm data fetch NAME --from DIR``, and
``nltk.download(...)`` for NLTK corpora).
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DataNotFoundError", "find_data", "require_data", "corpora_dir",
           "search_locations", "root_candidates", "nltk_search_path", "fetch_command"]


class DataNotFoundError(FileNotFoundError):
    """A data set could not be found in any of the searched locations."""


def corpora_dir():
    """The corpora folder that ``structsvm data fetch`` fills and loaders search.

    Returns
    -------
    pathlib.Path or None
        ``$STRUCTSVM_CORPORA`` when set (whether or not it exists yet); otherwise the
        ``corpora/`` folder beside the ``structsvm`` package when it holds
        ``manifest.json`` (a source checkout); otherwise None (an installed package
        with no corpora folder configured).

    Examples
    --------
    >>> folder = corpora_dir()  # e.g. PosixPath('.../structsvm/corpora') in a checkout
    >>> folder is None or folder.name != ""
    True
    """
    env = os.environ.get("STRUCTSVM_CORPORA")
    if env:
        return Path(env).expanduser()
    checkout = Path(__file__).resolve().parents[2] / "corpora"
    return checkout if (checkout / "manifest.json").is_file() else None


def nltk_search_path():
    """NLTK's data roots in search order, ``$NLTK_DATA`` first, without duplicates.

    Returns
    -------
    list of (str, pathlib.Path)
        Each root with where it comes from (``"$NLTK_DATA"`` or ``"nltk.data.path"``).
    """
    roots = []
    env = os.environ.get("NLTK_DATA")
    if env:
        roots += [("$NLTK_DATA", p) for p in env.split(os.pathsep) if p]
    try:
        import nltk.data

        roots += [("nltk.data.path", str(p)) for p in nltk.data.path]
    except ImportError:  # pragma: no cover - nltk is a core dependency
        pass
    seen, out = set(), []
    for origin, p in roots:
        if p not in seen:
            seen.add(p)
            out.append((origin, Path(p).expanduser()))
    return out


def root_candidates(root, name, nltk_subdir=None):
    """Folders that may hold data set ``name`` inside one data root.

    Parameters
    ----------
    root : str or path-like
        A data folder like ``$STRUCTSVM_DATA`` (``<root>/<name>`` or
        ``<root>/nltk_data/<nltk_subdir>``), or a corpora folder (``<root>/<name>``).
    name : str
        The data set's folder name (e.g. ``"spam_ng_ex6"``).
    nltk_subdir : str, optional
        Folder below an NLTK data root (e.g. ``"corpora/treebank"``).

    Returns
    -------
    list of pathlib.Path
    """
    root = Path(root).expanduser()
    out = [root / name]
    if nltk_subdir is not None:
        out.append(root / "nltk_data" / nltk_subdir)
    return out


def search_locations(name, *, path=None, nltk_subdir=None):
    """Every folder a loader searches for data set ``name``, in order.

    Parameters
    ----------
    name : str
        The data set's folder name (e.g. ``"treebank"``).
    path : str or path-like, optional
        Explicit location; when given, only it is returned.
    nltk_subdir : str, optional
        Folder below an NLTK data root (e.g. ``"corpora/treebank"``); without it NLTK's
        search path is not used.

    Returns
    -------
    list of (pathlib.Path, str)
        Candidate folders, each with the setting it comes from (``"path="``,
        ``"$STRUCTSVM_DATA"``, ``"corpora folder"``, ``"$NLTK_DATA"`` or
        ``"nltk.data.path"``). They need not exist.
    """
    if path is not None:
        return [(Path(path).expanduser(), "path=")]
    out = []
    root = os.environ.get("STRUCTSVM_DATA")
    if root:
        out += [(p, "$STRUCTSVM_DATA") for p in root_candidates(root, name, nltk_subdir)]
    corpora = corpora_dir()
    if corpora is not None:
        out.append((corpora / name, "corpora folder"))
    if nltk_subdir is not None:
        out += [(base / nltk_subdir, origin) for origin, base in nltk_search_path()]
    return out


def fetch_command(name, nltk_package=None):
    """The shell command(s) that put data set ``name`` where loaders find it.

    Parameters
    ----------
    name : str
        Corpus name as listed in ``corpora/manifest.json``.
    nltk_package : str, optional
        NLTK package id, for corpora NLTK distributes.

    Returns
    -------
    str

    Examples
    --------
    >>> fetch_command("spam_ng_ex6")
    'structsvm data fetch spam_ng_ex6 --from /path/to/data'
    >>> print(fetch_command("qc", "qc").split(" or ")[1])
    python -c "import nltk; nltk.download('qc')"
    """
    cmd = f"structsvm data fetch {name} --from /path/to/data"
    if nltk_package is not None:
        cmd += f" or python -c \"import nltk; nltk.download('{nltk_package}')\""
    return cmd


def find_data(subdir, *, path=None, nltk_subdir=None, must_contain=(), hint=""):
    """Return the first existing directory holding a data set.

    Parameters
    ----------
    subdir : str
        The data set's name: its folder below ``$STRUCTSVM_DATA`` and below the
        corpora folder (e.g. ``"spam_ng_ex6"``).
    path : str or path-like, optional
        Explicit location; when given, only it is searched.
    nltk_subdir : str, optional
        Folder below an NLTK data root (e.g. ``"corpora/treebank"``); its last part
        is the NLTK package id named in the error message.
    must_contain : sequence of str, default=()
        File names that must exist in the directory for it to count.
    hint : str, default=""
        Where the data comes from, appended to the error message.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataNotFoundError
        When no candidate directory has the data. The message lists every place
        searched and the command that fetches the data.

    Examples
    --------
    >>> try:
    ...     find_data("spam_ng_ex6", path="/nonexistent")
    ... except DataNotFoundError as exc:
    ...     print(str(exc).split(";")[0])
    Data set 'spam_ng_ex6' not found
    """
    tried = []
    for cand, _ in search_locations(subdir, path=path, nltk_subdir=nltk_subdir):
        tried.append(str(cand))
        if cand.is_dir() and all((cand / name).exists() for name in must_contain):
            return cand
    where = ", ".join(tried) if tried else "(no location configured)"
    nltk_package = (None if nltk_subdir is None
                    else nltk_subdir.rstrip("/").rsplit("/", 1)[-1])
    msg = (f"Data set {subdir!r} not found; searched: {where}. Get it with: "
           f"{fetch_command(subdir, nltk_package)}. Or pass path=..., or set "
           f"$STRUCTSVM_DATA to a folder that holds {subdir!r}")
    if nltk_subdir is not None:
        msg += " (or $NLTK_DATA to an nltk_data folder)"
    msg += "."
    if hint:
        msg += " " + hint
    raise DataNotFoundError(msg)


def require_data():
    """Whether tests must fail, not skip, when data is missing.

    Returns
    -------
    bool
        True when ``$STRUCTSVM_REQUIRE_DATA`` is set to anything but ``""``, ``"0"``,
        ``"false"`` or ``"no"`` (as in CI).
    """
    return os.environ.get("STRUCTSVM_REQUIRE_DATA", "") not in ("", "0", "false", "no")
