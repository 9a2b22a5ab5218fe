"""Dependency treebanks in files: CoNLL-X and CoNLL-U (read and written with the
``conllu`` package), and NLTK's ``DependencyGraph``.

Every reader gives a :class:`DependencyData`: the sentences as lists of token dicts
(the fields of the file's columns other than ID, HEAD and the relation: ``form``,
``lemma``, ``upos``, ``xpos``, ``feats``, ``misc`` for CoNLL-U; ``form``,
``lemma``, ``cpostag``, ``postag``, ``feats`` for CoNLL-X), the heads (0 = root,
otherwise the 1-based position of the head word) and the relations. These sentences
are what :class:`~structsvm.structures.dependency.DependencyFeatures` takes as X
and the heads its Y. CoNLL-U's multiword-token lines (``1-2``) and empty nodes
(``1.1``) are no words of the tree and are left out.
"""
from __future__ import annotations

import io
import os
from typing import NamedTuple

import numpy as np

from ...protocols import as_sequence

__all__ = ["DependencyData", "read_conllu", "read_conllx", "write_conllu",
           "write_conllx", "from_dependency_graphs", "to_dependency_graphs",
           "CONLLU_FIELDS", "CONLLX_FIELDS"]

CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel",
                 "deps", "misc")
CONLLX_FIELDS = ("id", "form", "lemma", "cpostag", "postag", "feats", "head", "deprel",
                 "phead", "pdeprel")
_TREE_FIELDS = {"id", "head", "deprel", "deps", "phead", "pdeprel"}
_RELATION = "deprel"


class DependencyData(NamedTuple):
    """Sentences, their heads and relations (one per word)."""

    sentences: list
    heads: list
    relations: list


def _name(source):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(source.name) if isinstance(source, io.TextIOWrapper) else "<stream>"


def _read(source, fields):
    import conllu  # imported when a file is read
    from conllu.exceptions import ParseException

    name = _name(source)
    own = isinstance(source, (str, os.PathLike))
    fh = open(source, encoding="utf-8") if own else source
    sentences, heads, relations = [], [], []
    k = 0
    try:
        tokenlists = conllu.parse_incr(fh, fields=fields)
        while True:
            try:
                tokens = next(tokenlists)
            except StopIteration:
                break
            except ParseException as exc:
                raise ValueError(f"{name}: sentence {k}: {exc}") from None
            words = [t for t in tokens if isinstance(t["id"], int)]
            if not words:
                raise ValueError(f"{name}: sentence {k} has no words")
            if [t["id"] for t in words] != list(range(1, len(words) + 1)):
                raise ValueError(f"{name}: sentence {k}: word ids "
                                 f"{[t['id'] for t in words][:12]} are not 1, 2, ...")
            h = []
            for t in words:
                head = t.get("head")
                if not isinstance(head, int) or not 0 <= head <= len(words) \
                        or head == t["id"]:
                    raise ValueError(f"{name}: sentence {k}, word {t['id']}: head "
                                     f"{head!r} is not 0 (the root) or the position of "
                                     f"another of its {len(words)} words")
                h.append(head)
            sentences.append([{f: t.get(f) for f in fields if f not in _TREE_FIELDS}
                              for t in words])
            heads.append(h)
            relations.append([t.get(_RELATION) for t in words])
            k += 1
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    finally:
        if own:
            fh.close()
    return DependencyData(sentences, heads, relations)


def read_conllu(source):
    """Sentences, heads and relations of a CoNLL-U file.

    Parameters
    ----------
    source : str, path-like or text file object

    Returns
    -------
    DependencyData
        ``sentences`` (token dicts with ``form``, ``lemma``, ``upos``, ``xpos``,
        ``feats``, ``misc``; ``None`` where the file has ``_``), ``heads`` and
        ``relations`` (DEPREL).

    Raises
    ------
    ValueError
        Naming the file and the sentence (and the word): a line the ``conllu``
        parser refuses, word ids that do not run 1, 2, ..., a head that is not 0
        or another word of the sentence, text that is not UTF-8.

    Examples
    --------
    >>> import io
    >>> text = ("1\\tJohn\\tjohn\\tPROPN\\tNNP\\t_\\t2\\tnsubj\\t_\\t_\\n"
    ...         "2\\tsleeps\\tsleep\\tVERB\\tVBZ\\t_\\t0\\troot\\t_\\t_\\n\\n")
    >>> data = read_conllu(io.StringIO(text))
    >>> data.heads, data.relations, data.sentences[0][0]["xpos"]
    ([[2, 0]], [['nsubj', 'root']], 'NNP')
    """
    return _read(source, CONLLU_FIELDS)


def read_conllx(source):
    """Sentences, heads and relations of a CoNLL-X file (the 10 columns of the
    CoNLL 2006 shared task: ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD
    PDEPREL).

    Parameters
    ----------
    source : str, path-like or text file object

    Returns
    -------
    DependencyData
        Token dicts with ``form``, ``lemma``, ``cpostag``, ``postag``, ``feats``.

    Raises
    ------
    ValueError
        As :func:`read_conllu`.

    Examples
    --------
    >>> import io
    >>> text = "1\\tJohn\\t_\\tN\\tNNP\\t_\\t2\\tSUB\\t_\\t_\\n2\\tsleeps\\t_\\tV\\tVBZ\\t_\\t0\\tROOT\\t_\\t_\\n"
    >>> read_conllx(io.StringIO(text)).sentences[0][1]["postag"]
    'VBZ'
    """
    return _read(source, CONLLX_FIELDS)


def _token_dict(tok, fields, tag_field, i, t):
    if isinstance(tok, dict):
        out = {f: tok.get(f) for f in fields if f not in _TREE_FIELDS}
        if out.get("form") is None:
            out["form"] = tok.get("word")
        return out
    if isinstance(tok, (tuple, list)) and len(tok) == 2:
        out = {f: None for f in fields if f not in _TREE_FIELDS}
        out["form"], out[tag_field] = tok
        return out
    raise TypeError(f"Sample {i}, token {t + 1}: expected a (word, tag) pair or a "
                    f"token dict, got {tok!r:.60}")


def _write(dest, sentences, heads, relations, fields, tag_field):
    from conllu import TokenList  # imported when a file is written

    sentences, heads = as_sequence(sentences, "sentences"), as_sequence(heads, "heads")
    if len(sentences) != len(heads):
        raise ValueError(f"{len(sentences)} sentences but {len(heads)} head lists")
    if relations is not None and len(relations) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(relations)} relation "
                         "lists")
    parts = []
    for i, (sent, h) in enumerate(zip(sentences, heads)):
        h = [int(v) for v in np.asarray(h).ravel()]
        rel = [None] * len(h) if relations is None else list(relations[i])
        if len(h) != len(sent) or len(rel) != len(sent):
            raise ValueError(f"Sample {i}: {len(sent)} words, {len(h)} heads, "
                             f"{len(rel)} relations")
        tokens = []
        for t, tok in enumerate(sent):
            d = _token_dict(tok, fields, tag_field, i, t)
            d.update(id=t + 1, head=h[t], deprel=rel[t])
            tokens.append({f: d.get(f) for f in fields})
        parts.append(TokenList(tokens).serialize())
    text = "".join(parts)
    if isinstance(dest, (str, os.PathLike)):
        with open(dest, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        dest.write(text)


def write_conllu(dest, sentences, heads, relations=None):
    """Write sentences and their trees as CoNLL-U.

    Parameters
    ----------
    dest : str, path-like or text file object
    sentences : list of list of token dicts or (word, tag) pairs
        A pair's tag goes to XPOS.
    heads : list of list of int
    relations : list of list of str, optional
        DEPREL (``_`` when not given).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_conllu(out, [[("John", "NNP"), ("sleeps", "VBZ")]], [[2, 0]])
    >>> for line in out.getvalue().splitlines():
    ...     print(line.split("\\t"))
    ['1', 'John', '_', '_', 'NNP', '_', '2', '_', '_', '_']
    ['2', 'sleeps', '_', '_', 'VBZ', '_', '0', '_', '_', '_']
    ['']
    """
    _write(dest, sentences, heads, relations, CONLLU_FIELDS, "xpos")


def write_conllx(dest, sentences, heads, relations=None):
    """Write sentences and their trees as CoNLL-X (a pair's tag goes to POSTAG).

    Parameters
    ----------
    dest : str, path-like or text file object
    sentences : list of list of token dicts or (word, tag) pairs
    heads : list of list of int
    relations : list of list of str, optional

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_conllx(out, [[("John", "NNP"), ("sleeps", "VBZ")]], [[2, 0]], [["SUB", "ROOT"]])
    >>> read_conllx(io.StringIO(out.getvalue())).relations
    [['SUB', 'ROOT']]
    """
    _write(dest, sentences, heads, relations, CONLLX_FIELDS, "postag")


def from_dependency_graphs(graphs):
    """Sentences, heads and relations of ``nltk.DependencyGraph`` objects.

    Parameters
    ----------
    graphs : iterable of nltk.DependencyGraph

    Returns
    -------
    DependencyData
        Token dicts with ``form``, ``lemma``, ``upos`` (the graph's ``ctag``),
        ``xpos`` (its ``tag``) and ``feats``.

    Raises
    ------
    ValueError
        A graph whose nodes are not 0 .. n, or whose node has no head.

    Examples
    --------
    >>> from nltk import DependencyGraph
    >>> g = DependencyGraph("John NNP 2 SUB\\nsleeps VBZ 0 ROOT\\n")
    >>> from_dependency_graphs([g]).heads
    [[2, 0]]
    """
    sentences, heads, relations = [], [], []
    for i, g in enumerate(graphs):
        n = len(g.nodes) - 1
        if sorted(g.nodes) != list(range(n + 1)):
            raise ValueError(f"Sample {i}: the graph's nodes are not 0 .. {n}")
        nodes = [g.nodes[k] for k in range(1, n + 1)]
        for k, node in enumerate(nodes, start=1):
            if not isinstance(node.get("head"), int):
                raise ValueError(f"Sample {i}, word {k}: no head")
        sentences.append([{"form": node.get("word"), "lemma": node.get("lemma"),
                           "upos": node.get("ctag"), "xpos": node.get("tag"),
                           "feats": node.get("feats") or None} for node in nodes])
        heads.append([node["head"] for node in nodes])
        relations.append([node.get("rel") for node in nodes])
    return DependencyData(sentences, heads, relations)


def to_dependency_graphs(sentences, heads, relations=None):
    """``nltk.DependencyGraph`` objects of sentences and their trees.

    Parameters
    ----------
    sentences : list of list of token dicts or (word, tag) pairs
    heads : list of list of int
    relations : list of list of str, optional
        By default the words attached to the root have the relation ``ROOT`` (how
        nltk finds the root word) and the others none.

    Returns
    -------
    list of nltk.DependencyGraph

    Examples
    --------
    >>> g = to_dependency_graphs([[("John", "NNP"), ("sleeps", "VBZ")]], [[2, 0]])[0]
    >>> g.nodes[1]["head"], g.nodes[2]["tag"]
    (2, 'VBZ')
    """
    from nltk import DependencyGraph

    if relations is None:  # nltk finds the root word by its relation
        relations = [["ROOT" if int(h) == 0 else None for h in np.asarray(hs).ravel()]
                     for hs in heads]
    buf = io.StringIO()
    write_conllx(buf, sentences, heads, relations)
    return [DependencyGraph(block, top_relation_label="ROOT")
            for block in buf.getvalue().split("\n\n") if block.strip()]
