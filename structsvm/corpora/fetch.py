"""``structsvm data fetch``: a verified copy of a corpus in the corpora folder.

A corpus is copied from a local folder (``--from DIR``) or, for the corpora NLTK
distributes, downloaded with ``nltk.download``. Either way every file listed in the
manifest is written into a temporary folder beside the target and checked against its
size and SHA-256; only a complete, verified copy is renamed into place, so an
interrupted or corrupt fetch leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from ._lines import open_data
from ._paths import DataNotFoundError, corpora_dir
from .manifest import (ChecksumError, _check_files, corpus_info, file_sha256,
                       locate_corpus)

__all__ = ["fetch_corpus"]


def _copy_verified(info, src, dest_parent):
    """Copy the manifest's files from ``src`` into a new temporary folder in
    ``dest_parent``, checking each; return the folder or raise ChecksumError.

    A file's size is compared with the manifest's before a byte is copied, and the
    copy stops at that size, so a wrong file costs no more than its expected size.
    """
    tmp = Path(tempfile.mkdtemp(prefix=f".{info.name}.partial-", dir=dest_parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private (0700)
        problems = []
        for rel, (size, digest) in info.files.items():
            what = _copy_one(src / PurePosixPath(rel), tmp / PurePosixPath(rel), size,
                             digest)
            if what is not None:
                problems.append((rel, what))
        if problems:
            raise ChecksumError(_problem_text(info.name, src, problems))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _copy_one(s, d, size, digest):
    """Copy ``s`` to the new file ``d`` if it has ``size`` bytes hashing to
    ``digest``; None when it does, else what is wrong (``d`` is then not kept)."""
    try:
        fi = open_data(s)
    except FileNotFoundError:
        return "missing"
    except ValueError as exc:  # a FIFO, a device, a folder
        return str(exc).rpartition(": ")[2]
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    with fi:
        actual = os.fstat(fi.fileno()).st_size
        if actual != size:
            return f"size {actual}, expected {size}"
        d.parent.mkdir(parents=True, exist_ok=True)
        h, left = hashlib.sha256(), size
        with open(d, "xb") as fo:
            while left > 0:
                block = fi.read(min(left, 1 << 20))
                if not block:
                    break
                h.update(block)
                fo.write(block)
                left -= len(block)
    if left != 0 or h.hexdigest() != digest:
        d.unlink()
        return "sha256 differs"
    return None


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _problem_text(name, where, problems, limit=10):
    lines = [f"{rel}: {what}" for rel, what in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"... and {len(problems) - limit} more")
    return (f"Corpus {name!r} in {where} does not match the manifest "
            f"({len(problems)} bad file(s)): " + "; ".join(lines))


def _install(tmp, target):
    """Move the verified folder ``tmp`` to ``target``, replacing it atomically enough:
    the old folder is renamed aside first and removed only after the new one is in."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _nltk_download(info, workdir):
    """Download an NLTK package into ``workdir``; return the unpacked corpus folder."""
    import nltk

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            ok = nltk.download(info.nltk_package, download_dir=str(workdir), quiet=True,
                               raise_on_error=True, print_error_to=log)
    except Exception as exc:  # nltk raises ValueError, URLError, OSError ...
        ok, log = False, io.StringIO(f"{type(exc).__name__}: {exc}")
    folder = workdir / info.nltk_subdir
    archive = folder.with_name(folder.name + ".zip")
    if ok and not folder.is_dir() and archive.is_file():
        _extract_verified(info, archive, folder)
    if not ok or not folder.is_dir():
        detail = " ".join(log.getvalue().split())
        detail = detail if len(detail) <= 200 else detail[:197] + "..."
        raise DataNotFoundError(
            f"Could not download {info.name!r} with nltk.download({info.nltk_package!r}); "
            f"no network? ({detail or 'no details'}). Copy it from a folder that has it "
            f"instead: structsvm data fetch {info.name} --from /path/to/data")
    return folder


def _extract_verified(info, archive, folder):
    """Unpack the corpus files of NLTK's zip into ``folder``, checking first.

    When the manifest lists the archive, its size and SHA-256 are checked before it is
    opened. Every file of the manifest must be a member ``<folder name>/<file>``
    declaring the manifest's size, or nothing is unpacked; only those members are
    unpacked, never past that size, and then verified like any copy.
    """
    expected = info.archive or {}
    if expected:
        actual = archive.stat().st_size
        if actual != int(expected["bytes"]) or file_sha256(archive) != expected["sha256"]:
            raise ChecksumError(f"{archive.name}: the downloaded archive does not match "
                                f"the manifest (size {actual}, expected "
                                f"{expected['bytes']}, or its sha256 differs); nothing "
                                "was unpacked")
    try:
        with zipfile.ZipFile(archive) as zf:
            members = {m.filename: m for m in zf.infolist()}
            problems = []
            for rel, (size, _) in info.files.items():
                m = members.get(f"{folder.name}/{rel}")
                if m is None or m.is_dir():
                    problems.append((rel, "not in the archive"))
                elif m.file_size != size:
                    problems.append((rel, f"size {m.file_size} in the archive, expected "
                                          f"{size}"))
            if problems:
                raise ChecksumError(_problem_text(info.name, archive.name, problems) +
                                    "; nothing was unpacked")
            for rel, (size, _) in info.files.items():
                m = members[f"{folder.name}/{rel}"]
                out = folder / PurePosixPath(rel)
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(m) as fi, open(out, "xb") as fo:
                    shutil.copyfileobj(_Capped(fi, size), fo)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError,
            RuntimeError) as exc:  # also a bad CRC or an encrypted member
        raise ChecksumError(f"{archive.name}: not a readable zip archive "
                            f"({type(exc).__name__}: {str(exc)[:80]}); nothing was "
                            "installed") from None


class _Capped:
    """A reader that returns at most ``left`` bytes of ``fh``."""

    def __init__(self, fh, left):
        self.fh, self.left = fh, left

    def read(self, n=-1):
        n = self.left if n is None or n < 0 else min(n, self.left)
        block = self.fh.read(n) if n else b""
        self.left -= len(block)
        return block


def fetch_corpus(name, *, source=None, dest=None, force=False):
    """Put a verified copy of a corpus into the corpora folder.

    Every file is copied into a temporary folder beside the target and checked against
    the manifest; only a complete, verified copy is renamed into place, so an
    interrupted or corrupt fetch leaves nothing behind.

    Parameters
    ----------
    name : str
        Corpus name from the manifest.
    source : str or path-like, optional
        A local folder holding the corpus (e.g. a data folder like ``$STRUCTSVM_DATA``; see
        :func:`structsvm.corpora.manifest.locate_corpus` for the layouts accepted).
        Without it, NLTK corpora are downloaded with ``nltk.download``; other
        corpora need ``source``.
    dest : str or path-like, optional
        Corpora folder to fill (the corpus goes to ``<dest>/<name>``). Default:
        :func:`structsvm.corpora.corpora_dir` (``$STRUCTSVM_CORPORA`` or the
        checkout's ``corpora/``).
    force : bool, default=False
        Replace a copy already in place even when it verifies.

    Returns
    -------
    path : pathlib.Path
        The corpus folder, ``<dest>/<name>``.
    copied : bool
        False when a verified copy was already in place and nothing was done.

    Raises
    ------
    DataNotFoundError
        When ``source`` does not hold the corpus, a download fails, or there is no
        corpora folder to fill.
    ChecksumError
        When the source's files do not match the manifest (nothing is installed).
    """
    info = corpus_info(name)
    dest = corpora_dir() if dest is None else Path(dest).expanduser()
    if dest is None:
        raise DataNotFoundError(
            "No corpora folder: this is not a source checkout. Set $STRUCTSVM_CORPORA "
            "to the folder that should hold the corpora, then run the command again.")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / name
    if not force and target.is_dir() and not _check_files(info, target):
        return target, False
    if source is not None:
        src, where = locate_corpus(name, root=source)
        if src is None:
            raise DataNotFoundError(f"Corpus {name!r} not found in {source}; searched: "
                                    f"{where}.")
        tmp = _copy_verified(info, src, dest)
    elif info.nltk_package is not None:
        work = Path(tempfile.mkdtemp(prefix=f".{name}.download-", dir=dest))
        try:
            tmp = _copy_verified(info, _nltk_download(info, work), dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    else:
        raise DataNotFoundError(
            f"Corpus {name!r} cannot be downloaded automatically; copy it from a folder "
            f"that has it: structsvm data fetch {name} --from /path/to/data (where it "
            f"comes from: {info.source})")
    _install(tmp, target)
    return target, True
