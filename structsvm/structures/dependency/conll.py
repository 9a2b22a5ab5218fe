"""Dependency treebanks in files: CoNLL-U and CoNLL-X, and NLTK's ``DependencyGraph``.

Every reader gives a :class:`DependencyData`: the sentences as lists of token dicts
(the fields of the file's columns other than ID, HEAD and the relation: ``form``,
``lemma``, ``upos``, ``xpos``, ``feats``, ``misc`` for CoNLL-U; ``form``,
``lemma``, ``cpostag``, ``postag``, ``feats`` for CoNLL-X), the heads (0 = root,
otherwise the 1-based position of the head word) and the relations. These sentences
are what :class:`~structsvm.structures.dependency.DependencyFeatures` takes as X
and the heads (or (head, relation) pairs) its Y.

CoNLL-U's multiword-token lines (``1-2``) and empty nodes (``1.1``) are no words of
the basic tree (Universal Dependencies' rule): the reader leaves them out of the
sentences and keeps them, with the comment lines and every word's DEPS column, in
the sentence's :class:`SentenceLayout`; the writer puts them back where they were,
so a file read and written with the same trees comes back byte for byte.
"""
from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ...protocols import as_sequence

__all__ = ["DependencyData", "SentenceLayout", "read_conllu", "read_conllx",
           "write_conllu", "write_conllx", "from_dependency_graphs",
           "to_dependency_graphs", "CONLLU_FIELDS", "CONLLX_FIELDS"]

CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel",
                 "deps", "misc")
CONLLX_FIELDS = ("id", "form", "lemma", "cpostag", "postag", "feats", "head", "deprel",
                 "phead", "pdeprel")
_TREE_FIELDS = {"id", "head", "deprel", "deps", "phead", "pdeprel"}
_RELATION = "deprel"
_WORD_ID = re.compile(r"[1-9][0-9]{0,8}")
_RANGE_ID = re.compile(r"([1-9][0-9]{0,8})-([1-9][0-9]{0,8})")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]{0,8})\.([1-9][0-9]{0,8})")
_HEAD = re.compile(r"0|[1-9][0-9]{0,8}")
#: an empty column, or a column with white space at one of its ends
_BAD_COLUMN = re.compile(r"(?:^|\t)(?:\t|$|\s)|\s(?:\t|$)")
#: FEATS and MISC that need no closer look: Name=Value items (MISC: or Name)
_FEATS = re.compile(r"[^=|]+=[^|]+(?:\|[^=|]+=[^|]+)*")
_MISC = re.compile(r"[^=|]+(?:=[^|]+)?(?:\|[^=|]+(?:=[^|]+)?)*")


class SentenceLayout(NamedTuple):
    """What a CoNLL-U sentence holds besides its words' columns, as read.

    Attributes
    ----------
    lines : tuple of (int, str)
        Comment, multiword-token and empty-node lines, each with the number of words
        before it, in file order.
    deps : tuple of str
        Every word's DEPS column (the enhanced graph), as written in the file.
    """

    lines: tuple
    deps: tuple


class DependencyData(NamedTuple):
    """Sentences, their heads and relations (one per word), and for CoNLL-U the
    layout of every sentence (:class:`SentenceLayout`; None otherwise)."""

    sentences: list
    heads: list
    relations: list
    layouts: list | None = None


def _name(source):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(source.name) if isinstance(source, io.TextIOWrapper) else "<stream>"


# ------------------------------------------------------------------ CoNLL-U reading
def _dict_field(text, where, column, values):
    """``A=B|C=D`` as a dict (a MISC item without ``=`` maps to None)."""
    if (_FEATS if values else _MISC).fullmatch(text):
        items = text.split("|")
        out = dict(item.split("=", 1) if "=" in item else (item, None)
                   for item in items)
        if len(out) == len(items):
            return out
    out = {}
    for item in text.split("|"):
        key, eq, value = item.partition("=")
        if not key or (eq and not value) or (not eq and values):
            raise ValueError(f"{where}: {column} item {item!r:.40} is not "
                             f"'Name=Value'")
        if key in out:
            raise ValueError(f"{where}: {column} has {key!r:.40} twice")
        out[key] = value if eq else None
    return out


def _lines(source, name):
    """(line number, text without its newline) of a text source, strict UTF-8."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            for k, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{name}, line {k}: not UTF-8 text (byte "
                                     f"0x{raw[exc.start]:02x} at column "
                                     f"{exc.start + 1})") from None
                yield k, text.rstrip("\n").removesuffix("\r")
        return
    try:
        for k, text in enumerate(source, start=1):
            yield k, text.rstrip("\n").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def _conllu_sentence(block, name, k, data):
    """Add one sentence (a list of (line number, text)) to ``data``."""
    extra, words, deps = [], [], []
    heads, relations, word_lines, ranges = [], [], [], []
    for line_no, text in block:
        if text.startswith("#"):
            extra.append((len(words), text))
            continue
        where = f"{name}, line {line_no}: sentence {k}"
        cols = text.split("\t")
        if len(cols) != 10:
            raise ValueError(f"{where}: {len(cols)} columns, CoNLL-U has 10 "
                             f"(tab-separated): {text!r:.60}")
        if _BAD_COLUMN.search(text):
            raise ValueError(f"{where}: an empty column or a column with spaces at "
                             f"its ends: {text!r:.60}")
        ident = cols[0]
        m = _RANGE_ID.fullmatch(ident)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a != len(words) + 1 or b <= a:
                raise ValueError(f"{where}: multiword token {ident} does not start at "
                                 f"the next word ({len(words) + 1}) or is no range")
            extra.append((len(words), text))
            ranges.append((line_no, ident, b))
            continue
        m = _EMPTY_ID.fullmatch(ident)
        if m:
            if int(m.group(1)) != len(words):
                raise ValueError(f"{where}: empty node {ident} does not follow word "
                                 f"{m.group(1)}")
            extra.append((len(words), text))
            continue
        if not _WORD_ID.fullmatch(ident) or int(ident) != len(words) + 1:
            raise ValueError(f"{where}: word id {ident!r:.20} is not {len(words) + 1} "
                             "(word ids run 1, 2, ...)")
        _, form, lemma, upos, xpos, feats, head, _, _, misc = cols
        word = {"form": form, "lemma": lemma,
                "upos": None if upos == "_" else upos,
                "xpos": None if xpos == "_" else xpos,
                "feats": None if feats == "_" else
                _dict_field(feats, f"{where}, word {ident}", "FEATS", True),
                "misc": None if misc == "_" else
                _dict_field(misc, f"{where}, word {ident}", "MISC", False)}
        if not _HEAD.fullmatch(head):
            raise ValueError(f"{where}, word {ident}: head {head!r:.20} is not 0 (the "
                             "root) or the position of another of its words")
        words.append(word)
        word_lines.append(line_no)
        heads.append(int(head))
        relations.append(None if cols[7] == "_" else cols[7])
        deps.append(cols[8])
    n = len(words)
    if not n:
        raise ValueError(f"{name}, line {block[0][0]}: sentence {k} has no words")
    for d, (h, line_no) in enumerate(zip(heads, word_lines), start=1):
        if h > n or h == d:
            raise ValueError(f"{name}, line {line_no}: sentence {k}, word {d}: head {h} "
                             f"is not 0 (the root) or the position of another of its "
                             f"{n} words")
    for line_no, ident, last in ranges:
        if last > n:
            raise ValueError(f"{name}, line {line_no}: sentence {k}: multiword token "
                             f"{ident} goes past its {n} words")
    data.sentences.append(words)
    data.heads.append(heads)
    data.relations.append(relations)
    data.layouts.append(SentenceLayout(tuple(extra), tuple(deps)))


def read_conllu(source):
    """Sentences, heads and relations of a CoNLL-U file, with every sentence's
    comments, multiword tokens, empty nodes and DEPS.

    Parameters
    ----------
    source : str, path-like or text file object

    Returns
    -------
    DependencyData
        ``sentences`` (token dicts with ``form``, ``lemma``, ``upos``, ``xpos``,
        ``feats``, ``misc``; ``None`` where the file has ``_`` but for FORM and
        LEMMA; FEATS and MISC as dicts), ``heads``, ``relations`` (DEPREL) and
        ``layouts`` (:class:`SentenceLayout`: what :func:`write_conllu` needs to
        write the file back as it was).

    Raises
    ------
    ValueError
        Naming the file, the line and the sentence (and the word): a line without
        10 tab-separated columns, word ids that do not run 1, 2, ..., a multiword
        token or an empty node out of place, a head that is not 0 or another word
        of the sentence, FEATS or MISC that are not ``Name=Value`` lists, text that
        is not UTF-8.

    Examples
    --------
    >>> import io
    >>> text = ("# text = John sleeps\\n"
    ...         "1\\tJohn\\tjohn\\tPROPN\\tNNP\\tNumber=Sing\\t2\\tnsubj\\t_\\t_\\n"
    ...         "2\\tsleeps\\tsleep\\tVERB\\tVBZ\\t_\\t0\\troot\\t_\\t_\\n\\n")
    >>> data = read_conllu(io.StringIO(text))
    >>> data.heads, data.relations, data.sentences[0][0]["feats"]
    ([[2, 0]], [['nsubj', 'root']], {'Number': 'Sing'})
    >>> data.layouts[0].lines
    ((0, '# text = John sleeps'),)
    """
    name = _name(source)
    data = DependencyData([], [], [], [])
    block = []
    for line_no, text in _lines(source, name):
        if text.strip():
            block.append((line_no, text))
        elif block:
            _conllu_sentence(block, name, len(data.heads), data)
            block = []
        elif text:
            raise ValueError(f"{name}, line {line_no}: a line of spaces")
    if block:
        _conllu_sentence(block, name, len(data.heads), data)
    return data


# ------------------------------------------------------------------ CoNLL-X reading
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


def read_conllx(source):
    """Sentences, heads and relations of a CoNLL-X file (the 10 columns of the
    CoNLL 2006 shared task: ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD
    PDEPREL), read with the ``conllu`` package's parser.

    Parameters
    ----------
    source : str, path-like or text file object

    Returns
    -------
    DependencyData
        Token dicts with ``form``, ``lemma``, ``cpostag``, ``postag``, ``feats``
        (``layouts`` is None).

    Raises
    ------
    ValueError
        Naming the file and the sentence (and the word): a line the parser refuses,
        word ids that do not run 1, 2, ..., a head that is not 0 or another word of
        the sentence, text that is not UTF-8.

    Examples
    --------
    >>> import io
    >>> text = "1\\tJohn\\t_\\tN\\tNNP\\t_\\t2\\tSUB\\t_\\t_\\n2\\tsleeps\\t_\\tV\\tVBZ\\t_\\t0\\tROOT\\t_\\t_\\n"
    >>> read_conllx(io.StringIO(text)).sentences[0][1]["postag"]
    'VBZ'
    """
    return _read(source, CONLLX_FIELDS)


# ------------------------------------------------------------------ writing
def _token_dict(tok, fields, tag_field, i, t):
    if isinstance(tok, Mapping):
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


def _text(value, where, column, empty="_"):
    """One column's text: ``empty`` for None; a string that the readers split
    back into the same column (no tab or line break, no spaces at its ends, not
    empty)."""
    if value is None:
        return empty
    if not isinstance(value, str):
        raise TypeError(f"{where}: {column} must be a string or None, got "
                        f"{type(value).__name__}")
    if not value or value != value.strip() or "\t" in value \
            or any(c in value for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        raise ValueError(f"{where}: {column} {value!r:.40} is empty, has spaces at its "
                         "ends or a tab or line break (the file would not read back)")
    return value


def _pairs_text(value, where, column):
    """FEATS or MISC: a dict as ``Name=Value|...`` (a None value: the name alone),
    or a string as it is."""
    if not isinstance(value, Mapping):
        return _text(value, where, column)
    if not value:
        return "_"
    items = []
    for key, v in value.items():
        key = _text(key, where, f"{column} name")
        if "|" in key or "=" in key:
            raise ValueError(f"{where}: {column} name {key!r:.40} has '|' or '='")
        if v is None:
            items.append(key)
            continue
        v = _text(v, where, f"{column} value")
        if "|" in v:
            raise ValueError(f"{where}: {column} value {v!r:.40} has '|'")
        items.append(f"{key}={v}")
    return "|".join(items)


def _check_layout(layout, n, where):
    if not isinstance(layout, SentenceLayout):
        raise TypeError(f"{where}: a layout is a SentenceLayout (as read_conllu gives "
                        f"it), got {type(layout).__name__}")
    if len(layout.deps) != n:
        raise ValueError(f"{where}: the layout has DEPS of {len(layout.deps)} words, "
                         f"the sentence {n}")
    last = 0
    for item in layout.lines:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str)
                and isinstance(item[0], (int, np.integer)) and last <= item[0] <= n):
            raise ValueError(f"{where}: layout line {item!r:.60} is not (words before, "
                             f"text) in order, with 0 <= words before <= {n}")
        last = item[0]


def _write(dest, sentences, heads, relations, fields, tag_field, layouts=None):
    sentences, heads = as_sequence(sentences, "sentences"), as_sequence(heads, "heads")
    if len(sentences) != len(heads):
        raise ValueError(f"{len(sentences)} sentences but {len(heads)} head lists")
    if relations is not None and len(relations) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(relations)} relation "
                         "lists")
    if layouts is not None and len(layouts) != len(sentences):
        raise ValueError(f"{len(sentences)} sentences but {len(layouts)} layouts")
    conllu = fields is CONLLU_FIELDS
    out = []
    for i, (sent, h) in enumerate(zip(sentences, heads)):
        rel = None if relations is None else list(relations[i])
        if len(h) and isinstance(h[0], (tuple, list)):  # (head, relation) pairs
            if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in h):
                raise ValueError(f"Sample {i}: heads must be integers or (head, "
                                 f"relation) pairs, got {h!r:.60}")
            if rel is None:
                rel = [p[1] for p in h]
            h = [p[0] for p in h]
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                   for v in h):
            raise ValueError(f"Sample {i}: heads must be integers or (head, relation) "
                             f"pairs, got {h!r:.60}")
        h = [int(v) for v in h]
        rel = [None] * len(h) if rel is None else rel
        if len(h) != len(sent) or len(rel) != len(sent):
            raise ValueError(f"Sample {i}: {len(sent)} words, {len(h)} heads, "
                             f"{len(rel)} relations")
        n = len(sent)
        bad = [d for d, v in enumerate(h, start=1) if not 0 <= v <= n or v == d]
        if bad:
            raise ValueError(f"Sample {i}, word {bad[0]}: head {h[bad[0] - 1]} is not 0 "
                             f"(the root) or the position of another of its {n} words")
        layout = None if layouts is None else layouts[i]
        if layout is not None:
            _check_layout(layout, n, f"Sample {i}")
        extra = list(layout.lines) if layout is not None else []
        lines, q = [], 0
        for t, tok in enumerate(sent):
            while q < len(extra) and extra[q][0] == t:
                lines.append(extra[q][1])
                q += 1
            where = f"Sample {i}, word {t + 1}"
            d = _token_dict(tok, fields, tag_field, i, t)
            cols = [str(t + 1)]
            for f in fields[1:]:
                if f == "head":
                    cols.append(str(h[t]))
                elif f == "deprel":
                    cols.append(_text(rel[t], where, "relation"))
                elif f == "deps":
                    cols.append("_" if layout is None
                                else _text(layout.deps[t], where, "DEPS"))
                elif f in ("phead", "pdeprel"):
                    cols.append("_")
                elif f in ("feats", "misc"):
                    cols.append(_pairs_text(d.get(f), where, f.upper()))
                else:
                    cols.append(_text(d.get(f), where, f.upper()))
            lines.append("\t".join(cols))
        lines.extend(text for _, text in extra[q:])
        if conllu:  # what the reader would refuse is never written
            try:
                _conllu_sentence(list(enumerate(lines, start=1)), "<written>", i,
                                 DependencyData([], [], [], []))
            except ValueError as exc:
                raise ValueError(f"Sample {i}: would not read back as written: "
                                 f"{exc}") from None
        out.append("\n".join(lines) + "\n\n")
    text = "".join(out)
    if isinstance(dest, (str, os.PathLike)):
        with open(dest, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    else:
        dest.write(text)


def write_conllu(dest, sentences, heads, relations=None, layouts=None):
    """Write sentences and their trees as CoNLL-U.

    Parameters
    ----------
    dest : str, path-like or text file object
    sentences : list of list of token dicts or (word, tag) pairs
        A pair's tag goes to XPOS.
    heads : list of list of int, or of (head, relation) pairs
        The trees (a labelled parser's ``predict`` gives pairs).
    relations : list of list of str, optional
        DEPREL (from the pairs, or ``_``, when not given).
    layouts : list of SentenceLayout, optional
        What :func:`read_conllu` kept of every sentence: its comments, multiword
        tokens and empty nodes are written where they were, and its DEPS columns.

    Raises
    ------
    ValueError
        Naming the sample and the word: lists of other lengths, a head outside the
        sentence, a column that is empty, has a tab or line break or spaces at its
        ends (the file would not read back), a layout that does not fit.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> write_conllu(out, [[("John", "NNP"), ("sleeps", "VBZ")]],
    ...              [[(2, "nsubj"), (0, "root")]])
    >>> for line in out.getvalue().splitlines():
    ...     print(line.split("\\t"))
    ['1', 'John', '_', '_', 'NNP', '_', '2', 'nsubj', '_', '_']
    ['2', 'sleeps', '_', '_', 'VBZ', '_', '0', 'root', '_', '_']
    ['']
    """
    _write(dest, sentences, heads, relations, CONLLU_FIELDS, "xpos", layouts)


def write_conllx(dest, sentences, heads, relations=None):
    """Write sentences and their trees as CoNLL-X (a pair's tag goes to POSTAG).

    Parameters
    ----------
    dest : str, path-like or text file object
    sentences : list of list of token dicts or (word, tag) pairs
    heads : list of list of int, or of (head, relation) pairs
    relations : list of list of str, optional

    Raises
    ------
    ValueError
        As :func:`write_conllu`.

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
