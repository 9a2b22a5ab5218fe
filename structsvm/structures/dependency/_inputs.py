"""Sentences and head lists as the dependency map takes them: checks with messages
that name the sample and the token (private)."""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np

from ...protocols import as_sequence
from ._arcs import is_tree

__all__ = ["words_and_tags", "check_heads", "TAG_KEYS"]

#: where a token dict's tag is looked for, after the map's ``tag_key``
TAG_KEYS = ("xpos", "upos", "tag", "ctag", "postag", "cpostag")
_MISSING = (None, "", "_")


def _graph_tokens(graph):
    """The (word, tag) of the words of an ``nltk.DependencyGraph`` (nodes 1 .. n)."""
    nodes = graph.nodes
    n = len(nodes) - 1 if 0 in nodes else len(nodes)
    return [(nodes[i].get("word"), nodes[i].get("tag") or nodes[i].get("ctag"))
            for i in range(1, n + 1)]


def _is_graph(x):
    module = sys.modules.get("nltk.parse.dependencygraph")  # loaded if x is one
    return module is not None and isinstance(x, module.DependencyGraph)


def _token(tok, tag_key, i, t):
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
    return word, tag


def words_and_tags(X, tag_key="xpos"):
    """Every sentence as a list of (word, tag) pairs.

    A sentence is a list of ``(word, tag)`` pairs, a list of token dicts (CoNLL-U
    fields: the word under ``"form"`` or ``"word"``, the tag under ``tag_key``, else
    the first of :data:`TAG_KEYS` present), or an ``nltk.DependencyGraph``.

    Raises
    ------
    TypeError, ValueError
        Naming the sample and the token: an empty sentence, a token of another form,
        a missing word or tag.
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


def check_heads(Y, lengths):
    """Head lists as int64 arrays, each a tree over its sentence.

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
