"""Strict line reading shared by the file-format readers.

Every malformed input is a ``ValueError`` that names the file and the line: bytes
that are not UTF-8, feature numbers that are not plain positive integers, repeated
or decreasing feature numbers, feature numbers above :data:`MAX_FEATURE_NUMBER`,
values that are not finite numbers, integers (tags, qids) outside 64 bits.
"""
from __future__ import annotations

import math
import os
import stat
from itertools import repeat
from operator import ge

__all__ = ["MAX_FEATURE_NUMBER", "MAX_ID", "MAX_QUOTED", "read_lines", "parse_pairs",
           "parse_id", "parse_number", "open_data", "quote"]

#: Largest feature number the svm_light / svm_rank / svm_hmm readers accept (feature
#: numbers index weight columns; a larger number is almost always a damaged file,
#: and 10^11 would ask for terabytes of weights).
MAX_FEATURE_NUMBER = 10_000_000
#: Largest tag or qid (64-bit signed integers).
MAX_ID = 2 ** 63 - 1
#: Characters of a malformed line (or token) an error message quotes; longer text is
#: cut and the message says how long it was.
MAX_QUOTED = 80


def quote(text, n=MAX_QUOTED):
    """``repr`` of ``text`` cut to ``n`` characters, saying how long it was if cut."""
    text = str(text)
    if len(text) <= n:
        return repr(text)
    return f"{text[:n]!r}... ({len(text)} characters)"


def open_data(path):
    """Open a data file for reading (binary), refusing anything but a regular file.

    The file is opened without blocking and checked with ``fstat`` before a byte is
    read, so a FIFO, a device or a folder given as data is an error, never a hang.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    file object
        Opened in binary mode (``"rb"``).

    Raises
    ------
    ValueError
        "<file>: not a regular file (a FIFO)" for FIFOs, devices, sockets, folders.
    FileNotFoundError, PermissionError
        As ``open`` raises them.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except IsADirectoryError:
        raise ValueError(f"{name}: not a regular file (a folder)") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"{name}: not a regular file ({_kind(mode)}); data is read "
                             "only from regular files")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _kind(mode):
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return what
    return "not a plain file"


def source_name(source):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def read_lines(source, encoding="utf-8"):
    """Yield ``(line_number, text)`` of a path or file object, decoding strictly.

    Parameters
    ----------
    source : str, path-like, or text or binary file object
    encoding : str, default="utf-8"

    Raises
    ------
    ValueError
        "<file>, line N: ..." for bytes that do not decode.
    """
    name = source_name(source)
    if isinstance(source, (str, os.PathLike)):
        with open_data(source) as fh:
            yield from _decoded(fh, name, encoding)
    else:
        yield from _decoded(source, name, encoding)


def _decoded(fh, name, encoding):
    for lineno, line in enumerate(fh, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode(encoding)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{name}, line {lineno}: byte 0x{line[exc.start]:02x} at "
                                 f"column {exc.start + 1} is not {encoding.upper()} "
                                 "text") from None
        yield lineno, line


def _digits(text):
    return text.isascii() and text.isdigit()


def parse_id(text, what, where, minimum=0):
    """A non-negative decimal integer (tag, qid) of at most 64 bits."""
    if not _digits(text) or len(text) > 19 or int(text) > MAX_ID:
        raise ValueError(f"{where}: {what} {_short(text)} is not an integer between "
                         f"{minimum} and 2^63 - 1")
    value = int(text)
    if value < minimum:
        raise ValueError(f"{where}: {what} {value} is below {minimum}")
    return value


def parse_number(text, what, where):
    """A finite float."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {what} {_short(text)} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: {what} {_short(text)} is not a finite number")
    return value


def parse_pairs(tokens, where, n_features=None):
    """``FEAT:VAL`` tokens -> (0-based columns, values), strictly increasing features.

    Raises
    ------
    ValueError
        Naming ``where`` (file and line) and the offending token.
    """
    limit = MAX_FEATURE_NUMBER if n_features is None else int(n_features)
    fast = _fast_pairs(tokens, limit)
    if fast is not None:
        return fast
    cols, vals, prev = [], [], 0
    for tok in tokens:
        j, sep, v = tok.partition(":")
        if not sep or not _digits(j):
            raise ValueError(f"{where}: expected FEAT:VALUE with FEAT a positive integer, "
                             f"got {_short(tok)}")
        if len(j) > 18 or int(j) > limit:
            what = (f"MAX_FEATURE_NUMBER = {MAX_FEATURE_NUMBER}" if n_features is None
                    else f"n_features = {limit}")
            raise ValueError(f"{where}: feature number {_short(j)} is above {what}")
        j = int(j)
        if j < 1:
            raise ValueError(f"{where}: feature numbers start at 1, got {j}")
        if j <= prev:
            kind = "repeated" if j == prev else "decreasing"
            raise ValueError(f"{where}: feature {j} after feature {prev} ({kind} feature "
                             "numbers; they must increase along a line)")
        prev = j
        cols.append(j - 1)
        vals.append(parse_number(v, f"value of feature {j}", where))
    return cols, vals


def _fast_pairs(tokens, limit):
    """The common case of a well-formed line, with C-level checks; None otherwise
    (then :func:`parse_pairs` goes token by token and names the problem)."""
    if not tokens:
        return [], []
    joined = " ".join(tokens)
    # exactly one colon per token (every token has one, and no more in total)
    if joined.count(":") != len(tokens) or \
            not all(map(str.__contains__, tokens, repeat(":"))):
        return None
    flat = joined.replace(":", " ").split()
    js, vs = flat[0::2], flat[1::2]
    digits = "".join(js)
    if len(js) != len(vs) or not (digits.isascii() and digits.isdigit()) or \
            max(map(len, js)) > 18:
        return None
    try:
        cols = list(map(int, js))
        vals = list(map(float, vs))
    except ValueError:
        return None
    if cols[0] < 1 or cols[-1] > limit or not all(map(math.isfinite, vals)) or \
            any(map(ge, cols, cols[1:])):
        return None
    return [j - 1 for j in cols], vals


def _short(text, n=40):
    return quote(text, n)
