"""Strict line reading shared by the file-format readers.

Every malformed input is a ``ValueError`` that names the file and the line: bytes
that are not UTF-8, feature numbers that are not plain positive integers, repeated
or decreasing feature numbers, feature numbers above :data:`MAX_FEATURE_NUMBER`,
values that are not finite numbers, integers (tags, qids) outside 64 bits.
"""
from __future__ import annotations

import math
import os
import re
import stat
from array import array
from decimal import Decimal
from itertools import repeat
from operator import ge

import numpy as np

__all__ = ["MAX_FEATURE_NUMBER", "MAX_ID", "MAX_QUOTED", "read_lines", "parse_pairs",
           "parse_id", "parse_number", "parse_target", "open_data", "quote",
           "SparseRows", "next_token"]

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


def parse_target(text, what, where):
    """A finite float that holds the number of ``text`` exactly where it matters:
    beyond 2^53 a float cannot hold every integer, so a target there that the float
    does not equal (``4611686018427387905`` would read as 2^62 and join that class)
    is refused, naming the line."""
    value = parse_number(text, what, where)
    if abs(value) >= 2.0 ** 53 and Decimal(text) != Decimal(value):
        read = int(value) if value.is_integer() else repr(value)
        raise ValueError(f"{where}: {what} {_short(text)} is beyond 2^53, where a "
                         f"float cannot hold it exactly (it would read as {read} and "
                         "join another label)")
    return value


def parse_pairs(tokens, where, n_features=None, after=0):
    """``FEAT:VAL`` tokens -> (0-based columns, values), strictly increasing features.

    ``after`` is the feature number before the first token (the last one of the
    line's previous tokens, when a long line is parsed in pieces).

    Raises
    ------
    ValueError
        Naming ``where`` (file and line) and the offending token.
    """
    limit = MAX_FEATURE_NUMBER if n_features is None else int(n_features)
    fast = _fast_pairs(tokens, limit, after)
    if fast is not None:
        return fast
    cols, vals, prev = [], [], after
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


def _fast_pairs(tokens, limit, after=0):
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
    if cols[0] <= after or cols[0] < 1 or cols[-1] > limit or \
            not all(map(math.isfinite, vals)) or \
            any(map(ge, cols, cols[1:])):
        return None
    return [j - 1 for j in cols], vals


#: Characters of a line parsed at once: a line of millions of features is read in
#: pieces of about this size (cut at whitespace), so the Python objects of its tokens
#: never exist all at once.
PIECE = 1 << 16

_TOKEN = re.compile(r"\s*(\S+)")
_SPACE = re.compile(r"\s")


def next_token(line, pos, end):
    """``(token, position after it)`` of the first token of ``line[pos:end]``, or
    ``(None, end)``."""
    m = _TOKEN.match(line, pos, end)
    return (m.group(1), m.end()) if m else (None, end)


def _pieces(line, pos, end):
    """``line[pos:end]`` in pieces of about :data:`PIECE` characters, each cut at a
    whitespace character (a token is never split)."""
    while pos < end:
        stop = pos + PIECE
        if stop >= end:
            stop = end
        else:
            m = _SPACE.search(line, stop, end)
            stop = m.start() if m else end
        yield line[pos:stop]
        pos = stop


class SparseRows:
    """Rows of ``FEAT:VALUE`` pairs gathered while a file is read, in typed arrays
    (8 bytes a column and 8 a value, never a Python object per entry), so reading
    needs memory in proportion to the file.

    Examples
    --------
    >>> rows = SparseRows()
    >>> rows.add("1:0.5 3:2", 0, 9, "f, line 1")
    >>> rows.add("", 0, 0, "f, line 2")
    >>> rows.matrix(None).toarray().tolist()
    [[0.5, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """

    def __init__(self):
        self.indices = array("q")
        self.data = array("d")
        self.indptr = array("q", [0])
        self.width = 0  # largest column + 1

    def __len__(self):
        return len(self.indptr) - 1

    def add(self, line, pos, end, where, n_features=None):
        """Parse the pairs of ``line[pos:end]`` (one row), in pieces."""
        after = 0
        for piece in _pieces(line, pos, end):
            cols, vals = parse_pairs(piece.split(), where, n_features, after)
            if cols:
                self.indices.extend(cols)
                self.data.extend(vals)
                after = cols[-1] + 1
        self.indptr.append(len(self.indices))
        self.width = max(self.width, after)

    def matrix(self, n_features):
        """The rows as a CSR matrix of width ``n_features`` (default: the largest
        column + 1); column indices int32 when they fit."""
        import scipy.sparse as sp  # here: importing the readers loads no scipy

        width = self.width if n_features is None else int(n_features)
        dtype = np.int32 if width < 2 ** 31 else np.int64
        indices = np.frombuffer(self.indices, dtype=np.int64).astype(dtype)
        data = np.frombuffer(self.data, dtype=np.float64).copy()
        indptr = np.frombuffer(self.indptr, dtype=np.int64).copy()
        return sp.csr_matrix((data, indices, indptr), shape=(len(self), width))


def _short(text, n=40):
    return quote(text, n)
