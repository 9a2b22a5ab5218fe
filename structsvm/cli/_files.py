"""Paths the command line writes and reads: no output over an input, only regular
files as data, predictions written atomically."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile

__all__ = ["refuse_overwrite", "check_regular", "check_writable", "write_predictions"]


def _same_file(a, b):
    """True when paths ``a`` and ``b`` name the same file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwrite(outputs, inputs):
    """Raise ValueError when an output path is the same file as an input (or as
    another output); ``outputs`` and ``inputs`` map a role ("the model") to a path."""
    seen = [(role, p) for role, p in inputs.items() if p is not None]
    for role, path in outputs.items():
        if path is None:
            continue
        for other, q in seen:
            if _same_file(path, q):
                raise ValueError(f"{path}: {role} would overwrite {other} ({q}); choose "
                                 "another output path")
        seen.append((role, path))


def check_regular(path, what):
    """Raise ValueError unless ``path`` is a regular file (a FIFO or device would
    block or never end); a missing file is left to the reader's FileNotFoundError."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path}: {what} is not a regular file")


def check_writable(path, what):
    """Raise OSError now if ``what`` cannot be written to ``path`` later."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {what} to {path}: folder {folder} does "
                                "not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"cannot write {what} to {path}: it is a folder")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise ValueError(f"cannot write {what} to {path}: it is not a regular file, and "
                         "it would be replaced by one")


def write_predictions(path, lines):
    """Write the predictions to a temporary file beside ``path``, then rename it over
    ``path``: a reader never sees half a file, and a symbolic link at ``path`` is
    replaced, not followed."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
    except OSError as exc:
        raise OSError(f"cannot write the predictions to {path}: {exc.strerror or exc}") \
            from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("\n".join(lines) + "\n")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OSError(f"cannot write the predictions to {path}: "
                          f"{exc.strerror or exc}") from None
        raise


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
