"""Sentences and trees as the dependency map takes them: checks with messages that
name the sample and the token (private)."""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ...protocols import as_sequence
from ._arcs import is_tree

__all__ = ["Token", "tokens", "words_and_tags", "check_heads", "split_output",
           "TAG_KEYS"]

#: where a token dict's tag is looked for, after the map's ``tag_key``
TAG_KEYS = ("xpos", "upos", "tag", "ctag", "postag", "cpostag")
_MISSING = (None, "", "_")


class Token(NamedTuple):
    """What the features of one word read: its form and tag, and where the input
    has them its universal (coarse) tag, lemma and morphological features
    (``"Attribute=Value"`` strings)."""

    word: str
    tag: str
    ctag: str | None
    lemma: str | None
    feats: tuple


def _graph_tokens(graph):
    """The (word, tag) of the words of an ``nltk.DependencyGraph`` (nodes 1 .. n)."""
    nodes = graph.nodes
    n = len(nodes) - 1 if 0 in nodes else len(nodes)
    return [(nodes[i].get("word"), nodes[i].get("tag") or nodes[i].get("ctag"))
            for i in range(1, n + 1)]


def _is_graph(x):
    module = sys.modules.get("nltk.parse.dependencygraph")  # loaded if x is one
    return module is not None and isinstance(x, module.DependencyGraph)


def _feats(value, i, t):
    """A token's FEATS as a tuple of ``"Attribute=Value"`` strings: from a dict (as
    the CoNLL-U reader gives it) or a ``"A=B|C=D"`` string."""
    if value in _MISSING:
        return ()
    if isinstance(value, dict):
        try:
            items = tuple(map("=".join, value.items()))  # str names and values
            if all(value):  # no empty name
                return items
        except TypeError:
            pass
        items = [f"{k}={v}" for k, v in value.items()]
    elif isinstance(value, Mapping):
        items = [f"{k}={v}" for k, v in value.items()]
    elif isinstance(value, str):
        items = value.split("|")
    else:
        raise TypeError(f"Sample {i}, token {t + 1}: feats must be a dict or an "
                        f"'A=B|C=D' string, got {type(value).__name__}")
    for item in items:
        if not isinstance(item, str) or "=" not in item[1:]:
            raise ValueError(f"Sample {i}, token {t + 1}: feature {item!r:.40} is not "
                             "'Attribute=Value'")
    return tuple(items)


def _optional_str(tok, key, i, t):
    value = tok.get(key)
    if value in _MISSING:
        return None
    if not isinstance(value, str):
        raise TypeError(f"Sample {i}, token {t + 1}: {key} must be a string, got "
                        f"{type(value).__name__}")
    return value


def _token(tok, tag_key, i, t):
    ctag = lemma = None
    feats = ()
    if isinstance(tok, Mapping):
        word = tok.get("form", tok.get("word"))
        tag = tok.get(tag_key)
        for key in TAG_KEYS:
            if tag not in _MISSING:
                break
            tag = tok.get(key)
        if tag in _MISSING:
            raise ValueError(f"Sample {i}, token {t + 1}: no tag (looked for keys "
                             f"{[tag_key] + [k for k in TAG_KEYS if k != tag_key]})")
        ctag = _optional_str(tok, "upos", i, t)
        lemma = _optional_str(tok, "lemma", i, t)
        feats = _feats(tok.get("feats"), i, t)
    elif isinstance(tok, (tuple, list)) and len(tok) == 2:
        word, tag = tok
    else:
        raise TypeError(f"Sample {i}, token {t + 1}: expected a (word, tag) pair or a "
                        f"dict with 'form' and a tag, got {tok!r:.60}")
    if not isinstance(word, str) or not word:
        raise ValueError(f"Sample {i}, token {t + 1}: the word must be a non-empty "
                         f"string, got {word!r:.60}")
    if not isinstance(tag, str) or not tag:
        raise ValueError(f"Sample {i}, token {t + 1}: the tag must be a non-empty "
                         f"string, got {tag!r:.60}")
    return Token(word, tag, ctag, lemma, feats)


def tokens(X, tag_key="xpos"):
    """Every sentence as a list of :class:`Token`.

    A sentence is a list of ``(word, tag)`` pairs, a list of token dicts (CoNLL-U
    fields: the word under ``"form"`` or ``"word"``, the tag under ``tag_key``, else
    the first of :data:`TAG_KEYS` present; ``"upos"``, ``"lemma"`` and ``"feats"``
    where present), or an ``nltk.DependencyGraph``.

    Raises
    ------
    TypeError, ValueError
        Naming the sample and the token: an empty sentence, a token of another form,
        a missing word or tag, a feature that is not ``Attribute=Value``.
    """
    out = []
    for i, x in enumerate(as_sequence(X, "X")):
        if _is_graph(x):
            x = _graph_tokens(x)
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
            raise TypeError(f"Sample {i}: a sentence is a list of tokens, got "
                            f"{type(x).__name__}")
        if len(x) == 0:
            raise ValueError(f"Sample {i}: empty sentence")
        out.append([_token(tok, tag_key, i, t) for t, tok in enumerate(x)])
    return out


def words_and_tags(X, tag_key="xpos"):
    """Every sentence as a list of (word, tag) pairs (see :func:`tokens`)."""
    return [[(tok.word, tok.tag) for tok in s] for s in tokens(X, tag_key)]


def split_output(y, i):
    """Heads and relations (None when ``y`` holds heads only) of one raw output: a
    list of heads, a list of ``(head, relation)`` pairs, or an
    ``nltk.DependencyGraph``.

    Raises
    ------
    ValueError
        Naming the sample: pairs mixed with heads, a relation that is not a
        non-empty string.
    """
    if _is_graph(y):
        n = len(y.nodes) - 1
        heads = [y.nodes[d]["head"] for d in range(1, n + 1)]
        rels = [y.nodes[d].get("rel") for d in range(1, n + 1)]
        return heads, (rels if all(isinstance(r, str) and r for r in rels) else None)
    if isinstance(y, (str, bytes)) or not isinstance(y, (Sequence, np.ndarray)):
        raise ValueError(f"Sample {i}: heads must be a list of integers (0 = the root) "
                         f"or of (head, relation) pairs, got {y!r:.80}")
    if len(y) and isinstance(y[0], (tuple, list)):
        if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in y):
            raise ValueError(f"Sample {i}: a tree is a list of heads or of (head, "
                             f"relation) pairs, not both, got {y!r:.80}")
        heads = [p[0] for p in y]
        rels = [p[1] for p in y]
        for d, r in enumerate(rels, start=1):
            if not isinstance(r, str) or not r:
                raise ValueError(f"Sample {i}, token {d}: the relation must be a "
                                 f"non-empty string, got {r!r:.40}")
        return heads, rels
    return y, None


def check_heads(Y, lengths):
    """Head lists as int64 arrays, each a tree over its sentence.

    ``Y`` holds head lists, or, per sentence, the heads of :func:`split_output`.

    Raises
    ------
    ValueError
        Naming the sample: a number of heads other than the sentence's words, a
        head that is not an integer in 0 .. n, a word that is its own head, or a
        cycle (a word that does not reach the root).
    """
    Y = as_sequence(Y, "Y")
    if len(Y) != len(lengths):
        raise ValueError(f"{len(lengths)} sentences but {len(Y)} head lists")
    out = []
    for i, (y, n) in enumerate(zip(Y, lengths)):
        if _is_graph(y):
            y = [y.nodes[d]["head"] for d in range(1, n + 1)]
        if isinstance(y, (str, bytes)) or not isinstance(y, (Sequence, np.ndarray)) \
                or not all(isinstance(h, (int, np.integer)) and not isinstance(h, bool)
                           for h in y):
            raise ValueError(f"Sample {i}: heads must be a list of integers (0 = "
                             f"the root), got {y!r:.80}")
        arr = np.asarray(y, dtype=np.int64).reshape(-1)
        if arr.size != n:
            raise ValueError(f"Sample {i}: {arr.size} heads for a sentence of {n} words")
        bad = np.flatnonzero((arr < 0) | (arr > n))
        if bad.size:
            raise ValueError(f"Sample {i}, token {bad[0] + 1}: head {arr[bad[0]]} is not "
                             f"0 (the root) or one of the {n} words")
        if not is_tree(arr):
            raise ValueError(f"Sample {i}: the heads {arr.tolist()!r:.80} do not form a "
                             "tree (a word is its own head, or a cycle does not reach "
                             "the root)")
        out.append(arr)
    return out
