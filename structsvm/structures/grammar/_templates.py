"""Surface features of words and spans for the grammar map (Hall, Durrett & Klein 2014).

Every word of a sentence gets one value id per *kind* (lower-cased word, suffixes of
length 1-3, shape, and class = the POS tag when tags are given, else the shape),
with ids 0 = unknown, 1 = before the sentence, 2 = after it. A *template* picks a
kind at a position relative to the word (leaves) or to the span (``first``,
``last``, ``before``, ``after``), or pairs two of them, or is the bias or the
span's length bucket; it owns one block of columns, and every word or span has
exactly one active column per template. Columns are computed for whole corpora
with numpy gathers.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ...protocols import as_sequence

__all__ = ["KINDS", "LEAF_TEMPLATES", "SPAN_TEMPLATES", "TokenValues", "length_bucket",
           "template_name", "check_sentences"]

KINDS = ("word", "suf1", "suf2", "suf3", "shape", "cls")
_UNK, _BOS, _EOS = 0, 1, 2
_SPECIAL_NAMES = ("<UNK>", "<BOS>", "<EOS>")
N_BUCKETS = 11
_BUCKET_NAMES = ("1", "2", "3", "4", "5", "6-7", "8-10", "11-15", "16-20", "21-30", ">30")

LEAF_TEMPLATES = (
    ("bias",), ("word", 0), ("suf1", 0), ("suf2", 0), ("suf3", 0), ("shape", 0),
    ("cls", 0), ("cls", -1), ("cls", 1), ("word", -1), ("word", 1),
    ("pair", ("cls", -1), ("cls", 0)), ("pair", ("cls", 0), ("cls", 1)),
)
SPAN_TEMPLATES = (
    ("bias",), ("len",),
    ("word", "first"), ("word", "last"), ("word", "before"), ("word", "after"),
    ("cls", "first"), ("cls", "last"), ("cls", "before"), ("cls", "after"),
    ("suf3", "last"), ("shape", "first"), ("shape", "last"),
    ("pair", ("cls", "before"), ("cls", "first")),
    ("pair", ("cls", "last"), ("cls", "after")),
    ("pair", ("cls", "first"), ("cls", "last")),
    ("pair", ("len", None), ("cls", "first")),
    ("pair", ("len", None), ("cls", "last")),
)


def length_bucket(lengths):
    """Bucket of span lengths: 1..5 alone, then 6-7, 8-10, 11-15, 16-20, 21-30, >30."""
    lengths = np.asarray(lengths)
    edges = np.array([1, 2, 3, 4, 5, 7, 10, 15, 20, 30])
    return np.searchsorted(edges, lengths, side="left").astype(np.int64)


def check_sentences(X, tagged=None):
    """Words (tuples) and tags (tuples or None) of every sentence, and whether tagged.

    ``tagged=None`` takes it from the first sentence (``(word, tag)`` pairs or
    words); every sentence must then be of that kind.
    """
    X = as_sequence(X, "X")
    if len(X) == 0:
        raise ValueError("X is empty: at least one sentence is needed")
    words, tags = [], []
    for i, x in enumerate(X):
        if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
            raise TypeError(f"Sample {i}: expected a list of words or (word, tag) "
                            f"pairs, got {type(x).__name__} {x!r:.40}")
        if len(x) == 0:
            raise ValueError(f"Sample {i}: empty sentence; every sentence needs a "
                             "word")
        if tagged is None:
            tagged = not isinstance(x[0], str)
        if tagged:
            if not all(isinstance(t, (tuple, list)) and len(t) == 2 and
                       isinstance(t[0], str) and isinstance(t[1], str) for t in x):
                raise TypeError(f"Sample {i}: expected (word, tag) pairs of strings "
                                f"like the other sentences, got {x!r:.60}")
            words.append(tuple(t[0] for t in x))
            tags.append(tuple(t[1] for t in x))
        else:
            if not all(isinstance(t, str) for t in x):
                raise TypeError(f"Sample {i}: expected a list of words (strings) "
                                f"like the other sentences, got {x!r:.60}")
            words.append(tuple(x))
            tags.append(None)
    return words, tags, tagged


def template_name(template):
    """Readable name of a template: ``bias``, ``len``, ``word[-1]``, ``cls[first]``,
    ``cls[last]&cls[after]``."""
    if template[0] == "pair":
        return f"{template_name(template[1])}&{template_name(template[2])}"
    if len(template) == 1 or template[1] is None:
        return template[0]
    pos = template[1]
    pos = f"{pos:+d}" if isinstance(pos, int) and pos else str(pos)
    return f"{template[0]}[{pos}]"


def _shape(w):
    out = []
    for ch in w:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out[:6])


def _token_values(word, tag):
    lw = word.lower()
    return {"word": lw, "suf1": lw[-1:], "suf2": lw[-2:], "suf3": lw[-3:],
            "shape": _shape(word), "cls": tag if tag is not None else _shape(word)}


class TokenValues:
    """Value vocabularies per kind, and the column layout of the templates.

    Parameters
    ----------
    vocabularies : dict of str to list of str
        Values of each kind in id order (ids start at 3).
    tagged : bool
    """

    def __init__(self, vocabularies, tagged):
        self.vocab = {k: list(vocabularies[k]) for k in KINDS}
        self.index = {k: {v: 3 + n for n, v in enumerate(vals)}
                      for k, vals in self.vocab.items()}
        self.tagged = bool(tagged)
        self._triu = {}

    @classmethod
    def fit(cls, words, tags, min_count=1):
        counts = {k: Counter() for k in KINDS}
        for ws, ts in zip(words, tags):
            for t, w in enumerate(ws):
                for k, v in _token_values(w, None if ts is None else ts[t]).items():
                    counts[k][v] += 1
        vocab = {k: sorted(v for v, c in counts[k].items()
                           if k != "word" or c >= min_count) for k in KINDS}
        return cls(vocab, tags[0] is not None)

    def vocabularies(self):
        return dict(self.vocab)

    def size(self, kind):
        if kind == "len":
            return N_BUCKETS
        return 3 + len(self.vocab[kind])

    def _block(self, template):
        if template[0] == "bias":
            return 1
        if template[0] == "len":
            return N_BUCKETS
        if template[0] == "pair":
            return self.size(template[1][0]) * self.size(template[2][0])
        return self.size(template[0])

    def n_columns(self, templates):
        return int(sum(self._block(t) for t in templates))

    def value_names(self, kind):
        """Names of the value ids of ``kind`` in id order (``len``: length buckets)."""
        if kind == "len":
            return list(_BUCKET_NAMES)
        return list(_SPECIAL_NAMES) + [str(v) for v in self.vocab[kind]]

    def column_names(self, templates):
        """``template=value`` for every column of ``templates``, in column order
        (``bias`` for the bias template, ``a=u&b=v`` for pairs)."""
        out = []
        for t in templates:
            if t[0] == "bias":
                out.append("bias")
            elif t[0] == "pair":
                na, nb = template_name(t[1]), template_name(t[2])
                out += [f"{na}={a}&{nb}={b}" for a in self.value_names(t[1][0])
                        for b in self.value_names(t[2][0])]
            else:
                name = template_name(t)
                out += [f"{name}={v}" for v in self.value_names(t[0])]
        return out

    # ------------------------------------------------------------------ encoding
    def _padded(self, words, tags):
        """Value ids of every kind, sentences padded with BOS/EOS, and pad offsets."""
        n_tok = sum(len(w) for w in words) + 2 * len(words)
        vals = {k: np.empty(n_tok, dtype=np.int64) for k in KINDS}
        pos = 0
        for s, ws in enumerate(words):
            ts = tags[s]
            for k in KINDS:
                vals[k][pos] = _BOS
                vals[k][pos + len(ws) + 1] = _EOS
            for t, w in enumerate(ws):
                tv = _token_values(w, None if ts is None else ts[t])
                for k in KINDS:
                    vals[k][pos + 1 + t] = self.index[k].get(tv[k], _UNK)
            pos += len(ws) + 2
        lengths = np.array([len(w) for w in words], dtype=np.int64)
        pad_off = np.concatenate([[0], np.cumsum(lengths + 2)]).astype(np.int64)
        return vals, pad_off, lengths

    def _columns(self, templates, vals, positions, length):
        cols = np.empty((positions["bias"].size, len(templates)), dtype=np.int32)
        base = 0
        for c, t in enumerate(templates):
            if t[0] == "bias":
                cols[:, c] = base
            elif t[0] == "len":
                cols[:, c] = base + length
            elif t[0] == "pair":
                (ka, ra), (kb, rb) = t[1], t[2]
                a = length if ka == "len" else vals[ka][positions[ra]]
                b = vals[kb][positions[rb]]
                cols[:, c] = base + a * self.size(kb) + b
            else:
                cols[:, c] = base + vals[t[0]][positions[t[1]]]
            base += self._block(t)
        return cols

    def _spans(self, n):
        if n not in self._triu:
            self._triu[n] = np.triu_indices(n + 1, k=2)
        return self._triu[n]

    def encode(self, words, tags):
        """:class:`~structsvm.structures.grammar._encoding.EncodedSentences` of raw sentences."""
        from ._encoding import EncodedSentences

        vals, pad_off, lengths = self._padded(words, tags)
        word_off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        # leaves: padded position of word t of sentence s is pad_off[s] + 1 + t
        p = np.repeat(pad_off[:-1] + 1, lengths) + (np.arange(word_off[-1])
                                                    - np.repeat(word_off[:-1], lengths))
        leaf_cols = self._columns(LEAF_TEMPLATES, vals,
                                  {"bias": p, 0: p, -1: p - 1, 1: p + 1}, None)
        I, J, base = [], [], []
        for s, n in enumerate(lengths):
            i, j = self._spans(int(n))
            I.append(i)
            J.append(j)
            base.append(np.full(i.size, pad_off[s]))
        I = np.concatenate(I).astype(np.int64) if I else np.zeros(0, np.int64)
        J = np.concatenate(J).astype(np.int64) if J else np.zeros(0, np.int64)
        b = np.concatenate(base).astype(np.int64) if base else np.zeros(0, np.int64)
        span_cols = self._columns(
            SPAN_TEMPLATES, vals,
            {"bias": I, "first": b + I + 1, "last": b + J, "before": b + I,
             "after": b + J + 1}, length_bucket(J - I))
        span_off = np.concatenate([[0], np.cumsum(lengths * (lengths - 1) // 2)])
        return EncodedSentences(leaf_cols, word_off, span_cols, span_off,
                                [tuple(w) for w in words])
