"""Symbols of sequence pairs: input checks, the alphabet's codes and context channels."""
from __future__ import annotations

import numpy as np

from ...protocols import as_sequence
from .._validation import sorted_unique

__all__ = ["SymbolCodes", "check_pairs"]


def _as_symbols(seq, sample, which):
    if isinstance(seq, str):
        return seq
    if isinstance(seq, bytes):
        return seq.decode("latin-1")
    if isinstance(seq, np.ndarray):
        if seq.ndim != 1:
            raise ValueError(f"Sample {sample}: sequence {which} must be 1-D, got an "
                             f"array of shape {seq.shape}")
        return seq.tolist()
    if isinstance(seq, (list, tuple)):
        return seq
    raise TypeError(f"Sample {sample}: sequence {which} must be a string or a list of "
                    f"symbols, got {type(seq).__name__}")


def check_pairs(X):
    """X as a list of pairs (s, t) of sequences (str or list of symbols); errors name
    the sample."""
    X = as_sequence(X, "X")
    if len(X) == 0:
        raise ValueError("X is empty: at least one pair of sequences is needed")
    out = []
    for i, x in enumerate(X):
        if isinstance(x, (str, bytes)) or not isinstance(x, (tuple, list)) or len(x) != 2:
            raise TypeError(f"Sample {i}: x must be a pair (s, t) of sequences, got "
                            f"{type(x).__name__}"
                            + (f" of length {len(x)}" if isinstance(x, (tuple, list))
                               else ""))
        out.append((_as_symbols(x[0], i, "s"), _as_symbols(x[1], i, "t")))
    return out


class SymbolCodes:
    """Codes of an alphabet: symbol k of ``symbols`` is k, then ``<UNK>`` (a symbol
    never seen) and ``<END>`` (a position outside a sequence, for context).

    Parameters
    ----------
    symbols : list
        The alphabet in code order.
    """

    def __init__(self, symbols):
        self.symbols = list(symbols)
        K = len(self.symbols)
        self.unk, self.end, self.n_codes = K, K + 1, K + 2
        self._index = {}
        for k, a in enumerate(self.symbols):
            try:
                self._index[a] = k
            except TypeError:
                raise TypeError(f"symbol {a!r} is not hashable") from None
        chars = [a for a in self.symbols if isinstance(a, str) and len(a) == 1]
        top = max((ord(a) for a in chars), default=-1)
        self._lut = np.full(top + 1, self.unk, dtype=np.int32)
        for a in chars:
            self._lut[ord(a)] = self._index[a]

    @classmethod
    def from_symbols(cls, symbols):
        """Codes of a set of symbols, sorted (first-seen order when unorderable)."""
        return cls(sorted_unique(list(symbols)).tolist())

    def encode(self, seq):
        """Codes of a sequence (str or list of symbols), int32."""
        if isinstance(seq, str):
            o = np.frombuffer(seq.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
            inside = o < len(self._lut)
            return np.where(inside, self._lut[np.where(inside, o, 0)], self.unk) \
                .astype(np.int32)
        get, unk = self._index.get, self.unk
        try:
            return np.fromiter((get(a, unk) for a in seq), dtype=np.int32,
                               count=len(seq))
        except TypeError:
            bad = next(a for a in seq if not _hashable(a))
            raise TypeError(f"symbol {bad!r} is not hashable") from None

    def channels(self, code_list, context):
        """(codes of shape (1 + 2·context, total length), offsets): the symbol, then
        for k = 1..context the symbol k positions before and k positions after
        (``<END>`` outside the sequence)."""
        lens = np.fromiter((len(c) for c in code_list), dtype=np.int64,
                           count=len(code_list))
        off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        base = np.concatenate(code_list).astype(np.int32) if len(code_list) and \
            off[-1] else np.zeros(0, dtype=np.int32)
        out = np.empty((1 + 2 * context, base.size), dtype=np.int32)
        out[0] = base
        if context:
            pos = np.arange(base.size) - np.repeat(off[:-1], lens)
            length = np.repeat(lens, lens)
            idx = np.arange(base.size)
            for k in range(1, context + 1):
                ok = pos >= k
                out[2 * k - 1] = np.where(ok, base[np.where(ok, idx - k, 0)], self.end)
                ok = pos + k < length
                out[2 * k] = np.where(ok, base[np.where(ok, idx + k, 0)], self.end)
        return out, off


def _hashable(a):
    try:
        hash(a)
    except TypeError:
        return False
    return True
