"""Aligned sequence pairs: a simulator with known gold alignments, and a text format.

The format (the command line's ``--task alignment``; see the Command line page): a
pair is a block of two rows, blocks are separated by blank lines, lines starting with
``#`` are comments::

    # two aligned pairs and one pair to be aligned
    ACD-EF
    A-DGEF

    MKV--LLA
    MKVQILL-

    MKVLLA
    MRVLA

One character is one symbol. In an *aligned* block at least one row holds the gap
character ``-``; both rows have the same length and a column of two symbols is an
aligned pair (i, j), a column with a gap leaves its symbol unaligned, a column of two
gaps is ignored. A block without any ``-`` is a pair *to be aligned* (no gold
alignment; its rows may have any lengths). An aligned pair that needs no gap (equal
lengths, every position aligned) is written with a final column of two gaps.
"""
from __future__ import annotations

import os

import numpy as np

from ._alignment_evolution import (AMINO_ACID_GROUPS, AMINO_ACIDS,
                                   BACKGROUND_FREQUENCIES, simulate_alignment_pairs,
                                   substitution_rate_matrix)
from ._lines import open_data, quote, source_name

__all__ = ["read_alignment_pairs", "write_alignment_pairs", "simulate_alignment_pairs",
           "substitution_rate_matrix", "AMINO_ACIDS", "AMINO_ACID_GROUPS",
           "BACKGROUND_FREQUENCIES", "GAP", "MAX_ROW_LENGTH", "MAX_PAIRS"]

#: The gap character.
GAP = "-"
#: Longest row (characters) the reader accepts; an alignment of two such rows is a
#: dynamic program of 10^10 cells, beyond any sensible use.
MAX_ROW_LENGTH = 100_000
#: Most pairs (blocks) the reader accepts in one file.
MAX_PAIRS = 1_000_000
_MAX_LINE_BYTES = 4 * MAX_ROW_LENGTH + 2  # UTF-8: at most 4 bytes a character, + CR LF


def _lines(fh, name):
    """(line number, text without the line end) with bounded line length."""
    lineno = 0
    while True:
        line = fh.readline(_MAX_LINE_BYTES + 1)
        if not line:
            return
        lineno += 1
        if len(line) > _MAX_LINE_BYTES:
            raise ValueError(f"{name}, line {lineno}: longer than {_MAX_LINE_BYTES} "
                             f"bytes (rows hold at most MAX_ROW_LENGTH = "
                             f"{MAX_ROW_LENGTH} symbols)")
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{name}, line {lineno}: byte 0x{line[exc.start]:02x} "
                                 f"at column {exc.start + 1} is not UTF-8 text") from None
        yield lineno, line.rstrip("\r\n")


def _check_row(row, where):
    if len(row) > MAX_ROW_LENGTH:
        raise ValueError(f"{where}: a row of {len(row)} symbols is longer than "
                         f"MAX_ROW_LENGTH = {MAX_ROW_LENGTH}")
    if len(row.split()) != 1:
        raise ValueError(f"{where}: white space inside the row {quote(row)}; a row is "
                         "one word of one-character symbols")
    if not row.isprintable() or "#" in row:
        bad = next(c for c in row if not c.isprintable() or c == "#")
        raise ValueError(f"{where}: the character {bad!r} cannot be a symbol (symbols "
                         "are printable characters other than '#' and white space)")


def _parse_block(rows, where):
    """(s, t), y-or-None of one block's two stripped rows."""
    (a, la), (b, lb) = rows
    _check_row(a, f"{where(la)}")
    _check_row(b, f"{where(lb)}")
    if GAP not in a and GAP not in b:
        return (a, b), None
    if len(a) != len(b):
        raise ValueError(f"{where(lb)}: the rows of an aligned pair (rows with '{GAP}') "
                         f"must have the same length; line {la} has {len(a)} columns, "
                         f"line {lb} has {len(b)}")
    ca = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32)
    cb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    gap = ord(GAP)
    in_a, in_b = ca != gap, cb != gap
    i = np.cumsum(in_a) - 1
    j = np.cumsum(in_b) - 1
    both = in_a & in_b
    y = np.column_stack([i[both], j[both]]).astype(np.intp)
    return (a.replace(GAP, ""), b.replace(GAP, "")), y


def read_alignment_pairs(f, *, require_alignment=False):
    """Read sequence pairs, aligned or to be aligned, from the text format.

    Parameters
    ----------
    f : str, path-like, or text or binary file object
        Paths are opened only if they name a regular file (never a FIFO or device).
    require_alignment : bool, default=False
        Refuse blocks without a gold alignment (training data).

    Returns
    -------
    X : list of (str, str)
        The sequences (gaps removed).
    Y : list of ndarray of shape (m, 2) or None
        The aligned index pairs (i, j), increasing in both columns; None for a pair
        to be aligned.

    Raises
    ------
    ValueError
        Naming the file and the line: bytes that are not UTF-8, a line longer than
        4 * :data:`MAX_ROW_LENGTH` + 2 bytes or a row of more than
        :data:`MAX_ROW_LENGTH` symbols, more than :data:`MAX_PAIRS` pairs, a block
        of one or of three or more rows, rows of an aligned pair of different
        lengths, white space inside a row, characters that cannot be symbols, and
        (with ``require_alignment``) a pair without an alignment.

    Examples
    --------
    >>> import io
    >>> text = "# a pair\\nACD-EF\\nA-DGEF\\n\\nMKV\\nMRLV\\n"
    >>> X, Y = read_alignment_pairs(io.StringIO(text))
    >>> X
    [('ACDEF', 'ADGEF'), ('MKV', 'MRLV')]
    >>> Y[0].tolist(), Y[1]
    ([[0, 0], [2, 1], [3, 3], [4, 4]], None)
    """
    name = source_name(f)
    if isinstance(f, (str, os.PathLike)):
        with open_data(f) as fh:
            return _read(fh, name, require_alignment)
    return _read(f, name, require_alignment)


def _read(fh, name, require_alignment):
    X, Y, block = [], [], []

    def where(lineno):
        return f"{name}, line {lineno}"

    def close():
        if not block:
            return
        if len(block) != 2:
            raise ValueError(f"{where(block[0][1])}: a pair is a block of two rows, this "
                             f"block has {len(block)} (blocks are separated by blank "
                             "lines)")
        if len(X) >= MAX_PAIRS:
            raise ValueError(f"{where(block[0][1])}: more than MAX_PAIRS = {MAX_PAIRS} "
                             "pairs in one file")
        x, y = _parse_block(block, where)
        if y is None and require_alignment:
            raise ValueError(f"{where(block[0][1])}: the pair has no alignment (neither "
                             f"row holds a gap '{GAP}'); training needs aligned pairs")
        X.append(x)
        Y.append(y)
        block.clear()

    for lineno, line in _lines(fh, name):
        text = line.strip()
        if text.startswith("#"):
            continue
        if not text:
            close()
            continue
        block.append((text, lineno))
        if len(block) > 2:
            close()  # raises: three rows in a block
    close()
    return X, Y


def _symbols(seq, where):
    if isinstance(seq, str):
        chars = seq
    else:
        try:
            chars = list(seq)
        except TypeError:
            raise ValueError(f"{where} is not a sequence of symbols: {type(seq)}") \
                from None
        if not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise ValueError(f"{where}: the text format writes one-character symbols "
                             "(a str, or a list of one-character str)")
        chars = "".join(chars)
    for c in chars:
        if c == GAP or c == "#" or not c.isprintable() or c.isspace():
            raise ValueError(f"{where}: the symbol {c!r} cannot be written (symbols are "
                             f"printable characters other than '{GAP}', '#' and white "
                             "space)")
    return chars


def _check_alignment(y, n_s, n_t, where):
    y = np.asarray(y)
    if y.size == 0:
        return np.zeros((0, 2), dtype=np.intp)
    if y.ndim != 2 or y.shape[1] != 2 or y.dtype.kind not in "iu":
        raise ValueError(f"{where}: y must be an integer array of shape (m, 2), got "
                         f"shape {y.shape} and dtype {y.dtype}")
    if (np.diff(y, axis=0) <= 0).any():
        raise ValueError(f"{where}: the aligned pairs must increase strictly in both "
                         "columns")
    if y.min() < 0 or y[:, 0].max() >= n_s or y[:, 1].max() >= n_t:
        raise ValueError(f"{where}: an aligned pair lies outside the sequences "
                         f"(lengths {n_s} and {n_t})")
    return y.astype(np.intp)


def _pair_rows(s, t, y):
    """The two gapped rows of the alignment y of s and t (s's residues first in a run
    of gaps)."""
    ra, rb, i, j = [], [], 0, 0
    for a, b in list(map(tuple, y.tolist())) + [(len(s), len(t))]:
        ra.append(s[i:a] + GAP * (b - j))
        rb.append(GAP * (a - i) + t[j:b])
        ra.append(s[a:a + 1])
        rb.append(t[b:b + 1])
        i, j = a + 1, b + 1
    a, b = "".join(ra), "".join(rb)
    if GAP not in a and GAP not in b:  # no gap needed: mark the pair as aligned
        a, b = a + GAP, b + GAP
    return a, b


def _pair_lines(X, Y=None):
    """The lines of the text format for pairs X with alignments Y (or None)."""
    if Y is None:
        Y = [None] * len(X)
    if len(X) != len(Y):
        raise ValueError(f"X has {len(X)} pairs but Y has {len(Y)} alignments")
    lines = []
    for k, (x, y) in enumerate(zip(X, Y)):
        try:
            s, t = x
        except (TypeError, ValueError):
            raise ValueError(f"Pair {k}: x must be a pair (s, t) of sequences") from None
        s, t = _symbols(s, f"Pair {k}: s"), _symbols(t, f"Pair {k}: t")
        if y is None:
            if not s or not t:
                raise ValueError(f"Pair {k}: an empty sequence can be written only in "
                                 "an aligned pair (as a row of gaps)")
            rows = (s, t)
        else:
            rows = _pair_rows(s, t, _check_alignment(y, len(s), len(t), f"Pair {k}"))
        if lines:
            lines.append("")
        lines.extend(rows)
    return lines


def write_alignment_pairs(f, X, Y=None):
    """Write sequence pairs in the text format read by :func:`read_alignment_pairs`.

    Parameters
    ----------
    f : str, path-like or text file object
    X : list of (s, t)
        Sequences as str, or lists of one-character str.
    Y : list of (ndarray of shape (m, 2) or None), optional
        The alignments; None (or a None entry) writes a pair to be aligned.

    Raises
    ------
    ValueError
        Naming the pair: symbols that cannot be written (``-``, ``#``, white space,
        more than one character), alignments not increasing or outside the
        sequences, an empty sequence in a pair to be aligned.

    Examples
    --------
    >>> import io, numpy as np
    >>> out = io.StringIO()
    >>> y = np.array([[0, 0], [2, 1], [3, 3], [4, 4]])
    >>> write_alignment_pairs(out, [("ACDEF", "ADGEF")], [y])
    >>> print(out.getvalue(), end="")
    ACD-EF
    A-DGEF
    """
    text = "\n".join(_pair_lines(X, Y))
    text = text + "\n" if text else ""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    else:
        f.write(text)
