"""The corpus manifest: what each data set is, where it lives, and its checksums.

``corpora/manifest.json`` (in a source checkout) lists every corpus that examples,
tests and benchmarks use, with its description, size, source, terms, folder layout
and the SHA-256 and byte size of every file. An identical copy ships inside the
package (``structsvm/corpora/manifest.json``) so installed copies can verify and
fetch too; ``corpora/make_manifest.py`` writes both and a test checks they agree.

The functions here back ``structsvm data list`` and ``structsvm data verify``:
:func:`locate_corpus` finds a corpus where the loaders would and
:func:`verify_corpus` checks its files. ``structsvm data fetch`` is
:func:`structsvm.corpora.fetch.fetch_corpus`.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ._paths import corpora_dir, fetch_command, root_candidates, search_locations

__all__ = ["CorpusInfo", "VerifyResult", "ChecksumError", "MANIFEST_PATH", "load_manifest",
           "corpus_info", "corpus_names", "file_sha256", "locate_corpus", "verify_corpus"]

#: the copy of the manifest shipped with the package
MANIFEST_PATH = Path(__file__).with_name("manifest.json")


class ChecksumError(ValueError):
    """Files of a corpus are missing or differ from the manifest's checksums."""


@dataclass(frozen=True)
class CorpusInfo:
    """One corpus of the manifest.

    Attributes
    ----------
    name : str
        Corpus name; also its folder name below a data root and the corpora folder.
    description, size, source, terms, loader : str
        Human-readable facts (``terms``: the conditions the data comes under).
    path : str
        Folder of the corpus below a data root such as ``$STRUCTSVM_DATA``
        (e.g. ``"nltk_data/corpora/treebank"``).
    nltk_subdir : str or None
        Folder below an NLTK data root (``"corpora/treebank"``), for NLTK corpora.
    nltk_package : str or None
        NLTK package id for ``nltk.download`` (``"treebank"``).
    files : dict of str to (int, str)
        Relative POSIX path inside the corpus folder -> (bytes, sha256).
    archive : dict or None
        The zip NLTK keeps beside the folder (``path`` below a data root, ``bytes``,
        ``sha256``); checked when present, never required or fetched.
    """

    name: str
    description: str
    size: str
    source: str
    terms: str
    loader: str
    path: str
    nltk_subdir: str | None
    nltk_package: str | None
    files: dict
    archive: dict | None = None

    @property
    def n_bytes(self):
        """Total size of the corpus files in bytes."""
        return sum(b for b, _ in self.files.values())

    @property
    def command(self):
        """The command that fetches this corpus."""
        return fetch_command(self.name, self.nltk_package)


class VerifyResult(NamedTuple):
    """Outcome of :func:`verify_corpus`.

    Attributes
    ----------
    name : str
    location : pathlib.Path or None
        The folder checked (None when the corpus was not found).
    problems : list of (str, str)
        ``(relative path, what is wrong)`` for every missing or differing file.
    n_files : int
        Number of files the manifest lists.
    """

    name: str
    location: Path | None
    problems: list
    n_files: int

    @property
    def ok(self):
        """True when the corpus was found and every file matches."""
        return self.location is not None and not self.problems


def load_manifest(path=None):
    """Read the corpus manifest.

    Parameters
    ----------
    path : str or path-like, optional
        A manifest file. By default the copy shipped with the package, or (if that
        is missing) ``manifest.json`` in the corpora folder.

    Returns
    -------
    dict of str to CorpusInfo
        Corpora by name, in the manifest's order.

    Raises
    ------
    FileNotFoundError
        When no manifest file exists.
    ValueError
        When the file is not a manifest of the expected version, or an entry is
        malformed: a file path (or the corpus's ``path``, NLTK folder or archive path)
        that is absolute, has a drive, a backslash or a ``..`` component; a corpus
        name that is not a plain folder name; a size or SHA-256 of the wrong form.

    Examples
    --------
    >>> manifest = load_manifest()
    >>> manifest["conll2002"].nltk_package
    'conll2002'
    >>> sorted(manifest["svm_rank_example3"].files)
    ['test.dat', 'train.dat']
    """
    if path is None:
        path = MANIFEST_PATH
        if not path.is_file() and corpora_dir() is not None:
            path = corpora_dir() / "manifest.json"
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No corpus manifest at {path}")
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    if raw.get("version") != 1 or not isinstance(raw.get("corpora"), dict):
        raise ValueError(f"{path}: expected a version-1 corpus manifest")
    out = {}
    for name, c in raw["corpora"].items():
        try:
            out[name] = _corpus_entry(name, c, path)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"{path}: corpus {name[:40]!r}: {detail}") from None
    return out


def _safe_relative(rel, what, single=False):
    """``rel`` if it is a relative POSIX path that stays inside its folder: no
    absolute path, drive, backslash, ``..``, ``.`` or empty component (``single``:
    one component only)."""
    if not isinstance(rel, str) or not rel:
        raise ValueError(f"{what} must be a non-empty string")
    parts = rel.split("/")
    if ("\\" in rel or "\0" in rel or ":" in parts[0]
            or any(p in ("", ".", "..") for p in parts)):
        raise ValueError(f"{what} {rel[:80]!r} is not a relative path inside the corpus "
                         "folder (no leading '/', drive, backslash, '.' or '..')")
    if single and len(parts) > 1:
        raise ValueError(f"{what} {rel[:80]!r} is not a plain folder name")
    return rel


def _corpus_entry(name, c, manifest):
    _safe_relative(name, "the corpus name", single=True)
    nltk = c.get("nltk") or {}
    for rel, what in ((c["path"], "path"), (nltk.get("subdir"), "nltk subdir"),
                      ((c.get("archive") or {}).get("path"), "archive path")):
        if rel is not None:
            _safe_relative(rel, what)
    files = {}
    for rel, f in c["files"].items():
        _safe_relative(rel, "file")
        size, digest = int(f["bytes"]), str(f["sha256"])
        if size < 0 or len(digest) != 64 or not all(ch in "0123456789abcdef"
                                                     for ch in digest):
            raise ValueError(f"file {rel[:80]!r}: expected bytes >= 0 and a 64-digit "
                             "lowercase hex sha256")
        files[rel] = (size, digest)
    return CorpusInfo(
        name=name, description=c["description"], size=c["size"], source=c["source"],
        terms=c["terms"], loader=c.get("loader", ""), path=c["path"],
        nltk_subdir=nltk.get("subdir"), nltk_package=nltk.get("package"), files=files,
        archive=c.get("archive"))


def corpus_names():
    """Names of the corpora in the manifest.

    Returns
    -------
    list of str
    """
    return list(load_manifest())


def corpus_info(name):
    """The manifest entry of one corpus.

    Parameters
    ----------
    name : str

    Returns
    -------
    CorpusInfo

    Raises
    ------
    KeyError
        For a name the manifest does not list (the message lists the known names).
    """
    manifest = load_manifest()
    if name not in manifest:
        raise KeyError(f"Unknown corpus {name!r}; the manifest lists: "
                       f"{', '.join(manifest)}")
    return manifest[name]


def file_sha256(path, chunk_size=1 << 20):
    """SHA-256 hex digest of a file.

    Parameters
    ----------
    path : str or path-like
    chunk_size : int, default=1048576

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            h.update(block)
    return h.hexdigest()


def _has_any(folder, info):
    return folder.is_dir() and any((folder / rel).is_file() for rel in info.files)


def _candidates(info, root):
    if root is not None:
        root = Path(root).expanduser()
        cands = [root / info.path, *root_candidates(root, info.name, info.nltk_subdir)]
        if info.nltk_subdir is not None:
            cands.append(root / info.nltk_subdir)  # root is an nltk_data folder
        return [(p, str(root)) for p in dict.fromkeys([*cands, root])]
    return search_locations(info.name, nltk_subdir=info.nltk_subdir)


def locate_corpus(name, *, root=None):
    """Find a corpus where its loader would.

    Parameters
    ----------
    name : str
        Corpus name from the manifest.
    root : str or path-like, optional
        Search only this folder: ``<root>/<path>`` (the manifest's layout, e.g.
        ``nltk_data/corpora/treebank``), ``<root>/<name>``, or ``root`` itself.
        By default the loaders' search order is used (see
        :func:`structsvm.corpora.find_data`).

    Returns
    -------
    location : pathlib.Path or None
        The first folder holding any of the corpus's files, or None.
    origin : str
        The setting it was found through (``"$STRUCTSVM_DATA"``, ``"corpora folder"``,
        ...), or a list of the places searched when not found.
    """
    info = corpus_info(name)
    tried = []
    for cand, origin in _candidates(info, root):
        if _has_any(cand, info):
            return cand, origin
        tried.append(str(cand))
    return None, ", ".join(dict.fromkeys(tried)) or "(no location configured)"


def _check_files(info, folder):
    problems = []
    for rel, (size, digest) in info.files.items():
        p = folder / PurePosixPath(rel)
        if not p.is_file():
            problems.append((rel, "missing"))
        elif p.stat().st_size != size:
            problems.append((rel, f"size {p.stat().st_size}, expected {size}"))
        elif file_sha256(p) != digest:
            problems.append((rel, "sha256 differs"))
    return problems


def verify_corpus(name, *, root=None):
    """Check every file of a corpus against the manifest's size and SHA-256.

    Parameters
    ----------
    name : str
        Corpus name from the manifest.
    root : str or path-like, optional
        Where to look (see :func:`locate_corpus`); by default the loaders' search order.

    Returns
    -------
    VerifyResult
        ``ok`` is True when the corpus was found and all its files match. Files not
        listed in the manifest are ignored; NLTK's zip beside the folder is checked
        when present.
    """
    info = corpus_info(name)
    folder, _ = locate_corpus(name, root=root)
    if folder is None:
        return VerifyResult(name, None, [("*", "corpus not found")], len(info.files))
    problems = _check_files(info, folder)
    if info.archive is not None:
        zpath = folder.parent / PurePosixPath(info.archive["path"]).name
        if zpath.is_file() and file_sha256(zpath) != info.archive["sha256"]:
            problems.append((f"../{zpath.name}", "sha256 differs"))
    return VerifyResult(name, folder, problems, len(info.files))
