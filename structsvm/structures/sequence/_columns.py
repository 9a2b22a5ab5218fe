"""Vocabulary columns of the built-in string feature sets, without building the strings.

At prediction time the observation strings of a token type matter only through
their columns. For the ``"pos"`` and ``"word"`` feature sets every string is a
role prefix (``+0|``, ``-1|``, ...), a slot prefix (``w=``, ``p2=``, ``T``, ...) and a
*piece* of the token (the word, its lower case, an affix; empty for flags and the
bias). :class:`ColumnLookup` splits the vocabulary once into one dictionary per
(role, slot), piece -> column, so a type's columns come from slicing the token and
one dictionary look-up per slot, with no string concatenation. A dictionary holds
exactly the vocabulary's strings that start with its role and slot prefixes, so a
look-up returns the column the full string has (the same columns as
:meth:`TokenFeaturizer._columns` on the extractors' strings, which the tests check).
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["SLOT_SPECS", "ColumnLookup"]


def _affix_pieces(words, lows):
    """Pieces of every type: words, lower case, prefixes/suffixes 1-4, shape flags."""
    out = {"w": words, "l": lows, "s3l": [lw[-3:] for lw in lows],
           "b": [""] * len(words),
           "T": ["" if w[:1].isupper() else None for w in words],
           "U": ["" if w.isupper() else None for w in words],
           "D": ["" if any(map(str.isdigit, w)) else None for w in words],
           "H": ["" if "-" in w else None for w in words]}
    for k in range(1, 5):
        out[f"p{k}"] = [w[:k] if len(w) >= k else None for w in words]
        out[f"s{k}"] = [w[-k:] if len(w) >= k else None for w in words]
    return out


_POS_CURRENT = (("b", "b"), ("w=", "w"), ("l=", "l")) \
    + tuple((f"p{k}=", f"p{k}") for k in range(1, 5)) \
    + tuple((f"s{k}=", f"s{k}") for k in range(1, 5)) \
    + (("T", "T"), ("U", "U"), ("D", "D"), ("H", "H"))
_POS_NEAR = (("l=", "l"), ("s3=", "s3l"))

#: feature set -> per role (offset, ((slot prefix, piece name), ...)), the same
#: strings, in the same order, as the set's extractors in FEATURE_SETS
SLOT_SPECS = {
    "pos": ((0, _POS_CURRENT), (-1, _POS_NEAR), (1, _POS_NEAR), (-2, (("l=", "l"),)),
            (2, (("l=", "l"),))),
    "word": ((0, (("b", "b"), ("w=", "w"))),),
}


class ColumnLookup:
    """Per-role column tables of token types for a built-in set and a vocabulary.

    Parameters
    ----------
    features : str
        A key of :data:`SLOT_SPECS`.
    vocabulary : dict
        Observation string -> column.
    """

    def __init__(self, features, vocabulary):
        self.roles = SLOT_SPECS[features]
        self.vocabulary = vocabulary
        # one pass over the vocabulary: the (role, slot) dictionaries whose full
        # prefix ("+0|w=", "-1|s3=", ...) a string starts with are found by looking
        # up its heads of every prefix length
        self._dicts = [[{} for _ in slots] for _, slots in self.roles]
        where = {}
        for (off, slots), role in zip(self.roles, self._dicts):
            for (prefix, _), d in zip(slots, role):
                where.setdefault(f"{off:+d}|{prefix}", []).append(d)
        lengths = sorted({len(p) for p in where})
        for s, j in vocabulary.items():
            for n in lengths:
                for d in where.get(s[:n], ()):
                    d[s[n:]] = j
        # the whole-word slot of the current token, whose words are memoised
        self._word_slot = next((j for j, (prefix, name) in enumerate(self.roles[0][1])
                                if name == "w" and self.roles[0][0] == 0), -1)
        self._memo = None  # (known word -> row, per-role rows; last row -1), grown
        # by every call that meets known words not in it yet

    def tables(self, words):
        """One (2 + n_types, width) int64 table per role: rows 0 and 1 the
        ``<BOS>`` / ``<EOS>`` pads, row 2 + u type u; -1 for absent features.

        The rows of the words the vocabulary knows as whole words (``+0|w=``) are
        computed once, on the first call that meets them, and gathered afterwards;
        the others are computed on every call.
        """
        index, known_rows = self._memo or ({}, [np.full((1, len(slots)), -1, np.int64)
                                                for _, slots in self.roles])
        at = np.fromiter(map(index.get, words, itertools.repeat(-1)),
                         dtype=np.int64, count=len(words))
        miss = np.flatnonzero(at < 0)
        missing = [words[i] for i in miss]
        fresh = self._rows(missing)
        whole = self._dicts[0][self._word_slot] if self._word_slot >= 0 else {}
        keep = [k for k, w in enumerate(missing) if w in whole]
        if keep:  # remember the rows of the known words met so far (one assignment:
            # threads see all of it or none)
            grown = dict(index)
            grown.update(zip([missing[k] for k in keep], range(len(index), len(index)
                                                              + len(keep))))
            self._memo = (grown, [np.vstack([r[:-1], f[keep], r[-1:]])
                                  for r, f in zip(known_rows, fresh)])
        out = []
        for (off, slots), rows, new in zip(self.roles, known_rows, fresh):
            table = np.empty((len(words) + 2, len(slots)), dtype=np.int64)
            table[:2] = -1
            if off:  # both pad rows hold the role's one boundary string
                table[:2, 0] = self.vocabulary.get(
                    f"{off:+d}|<{'BOS' if off < 0 else 'EOS'}>", -1)
            table[2:] = rows[at]  # unknown words (-1): the last row, then replaced
            table[2 + miss] = new
            out.append(table)
        return out

    def _rows(self, words):
        """Per role the (n_words, width) columns of ``words``."""
        pieces = _affix_pieces(words, [w.lower() for w in words])
        out = []
        for (_, slots), dicts in zip(self.roles, self._dicts):
            table = np.empty((len(words), len(slots)), dtype=np.int64)
            for j, ((_, name), d) in enumerate(zip(slots, dicts)):
                # an absent piece (None) is no key: -1 as for an unknown one
                table[:, j] = np.fromiter(map(d.get, pieces[name], itertools.repeat(-1)),
                                          dtype=np.int64, count=len(words))
            out.append(table)
        return out
