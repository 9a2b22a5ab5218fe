"""The NLTK sample of the Penn Treebank (WSJ), as tagged sentences.

The files are read directly (``combined/wsj_*.mrg``), so any folder works: an
explicit path, ``$STRUCTSVM_DATA/nltk_data/corpora/treebank``, the corpora folder
(``corpora/treebank``) or NLTK's own search path. Sentences are the top-level
bracketings; the tagged tokens are their pre-terminals ``(TAG word)``, in order,
exactly as ``nltk.corpus.treebank.tagged_sents()`` returns them (trace tokens
tagged ``-NONE-`` included unless ``remove_traces``).
"""
from __future__ import annotations

import re
from pathlib import Path

from ._lines import open_data, quote
from ._paths import fetch_command, find_data

__all__ = ["treebank_tagged_sents", "load_treebank", "TREEBANK_HINT", "MAX_TREE_DEPTH"]

TREEBANK_HINT = ("The NLTK treebank sample (package 'treebank') is not installed. Get it "
                 f"with: {fetch_command('treebank', 'treebank')}.")

_TOKEN = re.compile(r"\(|\)|[^\s()]+")

#: Deepest bracket nesting the treebank readers accept. Penn Treebank trees are
#: less than 40 levels deep; a deeper nesting is a damaged file, refused before
#: memory grows with it.
MAX_TREE_DEPTH = 200


def _scan(text, source):
    """Check the bracketing of one .mrg file and yield, per top-level tree,
    ``(start, end, tagged)``: its span in ``text`` and its ``(word, tag)`` pairs.

    Every word must be the only child of a ``(TAG word)`` pre-terminal; the text is
    tokenised lazily and the nesting bounded by :data:`MAX_TREE_DEPTH`, so memory
    stays in proportion to one tree, whatever the file holds.
    """
    line, seen = 1, 0
    stack = []  # per open bracket: [label, n_children, word, start]
    cur, tree_line = [], 1

    def where(pos):
        nonlocal line, seen
        line += text.count("\n", seen, pos)
        seen = pos
        return f"{source}, line {line}"

    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        if tok == "(":
            if stack:
                top = stack[-1]
                if top[2] is not None:
                    raise ValueError(f"{where(pos)}: a bracket after the word "
                                     f"{quote(top[2])} of ({top[0]} ...); a word must be "
                                     "the only child of a (TAG word) pair")
                top[1] += 1
            if len(stack) >= MAX_TREE_DEPTH:
                raise ValueError(f"{where(pos)}: brackets nested deeper than "
                                 f"MAX_TREE_DEPTH = {MAX_TREE_DEPTH}")
            if not stack:
                where(pos)
                tree_line = line
            stack.append([None, 0, None, pos])
        elif tok == ")":
            if not stack:
                raise ValueError(f"{where(pos)}: unbalanced ')' in the bracketing")
            label, n_children, word, begin = stack.pop()
            if word is not None:
                cur.append((word, label))
            elif n_children == 0:
                raise ValueError(f"{where(pos)}: empty bracketing "
                                 f"{quote('(' + (label or '') + ')')}")
            if not stack:
                yield begin, pos + 1, cur
                cur = []
        else:
            if not stack:
                raise ValueError(f"{where(pos)}: {quote(tok)} is outside the brackets")
            top = stack[-1]
            if top[0] is None and top[1] == 0:
                top[0] = tok  # the label: (NP ...
            elif top[2] is not None:
                raise ValueError(f"{where(pos)}: {quote(tok)} after the word "
                                 f"{quote(top[2])} of ({top[0]} ...); a (TAG word) pair "
                                 "holds one word")
            elif top[1] > 0:
                raise ValueError(f"{where(pos)}: {quote(tok)} is outside a (TAG word) "
                                 f"pair (a word among the constituents of ({top[0]} ...))")
            else:
                top[1], top[2] = 1, tok
    if stack:
        raise ValueError(f"{source}, line {tree_line}: unbalanced brackets at end of file "
                         f"(the tree that starts on line {tree_line} is not closed)")


def _parse_mrg(text, source):
    """Tagged sentences of one .mrg file (list of lists of (word, tag)).

    Raises ``ValueError`` naming ``source`` and the line for unbalanced brackets, for
    words outside a ``(TAG word)`` pair and text outside the brackets, and for
    nesting deeper than :data:`MAX_TREE_DEPTH`.
    """
    return [tagged for _, _, tagged in _scan(text, source) if tagged]


def _read_text(path):
    """The text of one .mrg file, decoded strictly as UTF-8 (bytes that are not name
    their line); only a regular file is read."""
    with open_data(path) as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}, line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 "
                         "text") from None


def _read_mrg(path):
    """Tagged sentences of one .mrg file; every error names the file and the line."""
    return _parse_mrg(_read_text(path), path)


def treebank_tagged_sents(path=None, *, remove_traces=False):
    """All tagged sentences of the treebank sample (3,914 in NLTK's 5% sample).

    Parameters
    ----------
    path : str or path-like, optional
        The ``treebank`` folder (holding ``combined/``). By default
        ``$STRUCTSVM_DATA``, the corpora folder, then NLTK's search path
        (``$NLTK_DATA``) are searched (see :func:`structsvm.corpora.find_data`).
    remove_traces : bool, default=False
        Drop the empty elements (tag ``-NONE-``, e.g. ``*T*-1``), which are not words.

    Returns
    -------
    list of list of (str, str)
        (word, tag) pairs per sentence, in file order.

    Raises
    ------
    structsvm.corpora.DataNotFoundError
        When the corpus is absent; the message says how to get it.
    """
    root = find_data("treebank", path=path, nltk_subdir="corpora/treebank",
                     must_contain=("combined",),
                     hint="The treebank sample is NLTK's package 'treebank' (Penn "
                          "Treebank, LDC 1995; non-commercial use only).")
    files = sorted((root / "combined").glob("wsj_*.mrg"))
    if not files:
        from ._paths import DataNotFoundError

        raise DataNotFoundError(f"{root / 'combined'} holds no wsj_*.mrg files. "
                                + TREEBANK_HINT)
    sents = []
    for f in files:
        sents.extend(_read_mrg(f))
    if remove_traces:
        sents = [s for s in ([(w, t) for w, t in s if t != "-NONE-"] for s in sents) if s]
    return sents


def load_treebank(path=None, *, n_train=3000, remove_traces=False):
    """The POS-tagging split: first ``n_train`` sentences for training, the rest to test.

    With the defaults this is the benchmark split of structsvm's docs: 3,000
    training sentences and 914 test sentences (23,165 test tokens, traces included).

    Parameters
    ----------
    path : str or path-like, optional
        See :func:`treebank_tagged_sents`.
    n_train : int, default=3000
    remove_traces : bool, default=False

    Returns
    -------
    X_train, Y_train, X_test, Y_test : list of list of str
        Token lists and tag lists.

    Examples
    --------
    >>> X_tr, Y_tr, X_te, Y_te = load_treebank()  # doctest: +SKIP
    >>> len(X_tr), len(X_te), sum(map(len, X_te))  # doctest: +SKIP
    (3000, 914, 23165)
    """
    sents = treebank_tagged_sents(path, remove_traces=remove_traces)
    X = [[w for w, _ in s] for s in sents]
    Y = [[t for _, t in s] for s in sents]
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


# --------------------------------------------------------------------------- parse trees
__all__ += ["treebank_parsed_sents", "load_treebank_trees", "TreebankTrees"]


def treebank_parsed_sents(path=None, *, clean=True):
    """All parse trees of the treebank sample (3,914 in NLTK's 5% sample), in file order.

    Parameters
    ----------
    path : str or path-like, optional
        The ``treebank`` folder (see :func:`treebank_tagged_sents`).
    clean : bool, default=True
        Remove empty elements (traces) and the constituents left empty, strip function
        tags (``NP-SBJ-1`` -> ``NP``) and the outer unlabelled bracket
        (:func:`structsvm.structures.grammar.features.clean_tree`).

    Returns
    -------
    list of nltk.Tree

    Raises
    ------
    structsvm.corpora.DataNotFoundError
        When the corpus is absent.
    """
    from nltk import Tree

    from ..structures.grammar.features import clean_tree

    root = find_data("treebank", path=path, nltk_subdir="corpora/treebank",
                     must_contain=("combined",), hint=TREEBANK_HINT)
    files = sorted((root / "combined").glob("wsj_*.mrg"))
    if not files:
        from ._paths import DataNotFoundError

        raise DataNotFoundError(f"{root / 'combined'} holds no wsj_*.mrg files. "
                                + TREEBANK_HINT)
    trees = []
    for f in files:
        text = _read_text(f)
        for begin, end, _ in _scan(text, f):
            t = Tree.fromstring(text[begin:end])
            if t.label() == "" and len(t) == 1 and isinstance(t[0], Tree):
                t = t[0]
            if clean:
                t = clean_tree(t)
                if t is None:
                    continue
            trees.append(t)
    return trees


class TreebankTrees(tuple):
    """``(X_train, Y_train, X_test, Y_test)`` of :func:`load_treebank_trees`.

    ``X`` are lists of ``(word, tag)`` pairs (the gold preterminals), ``Y`` cleaned
    ``nltk.Tree`` objects. Unpack it like a tuple.
    """

    __slots__ = ()

    def __new__(cls, X_train, Y_train, X_test, Y_test):
        return super().__new__(cls, (X_train, Y_train, X_test, Y_test))

    X_train = property(lambda self: self[0], doc="Training sentences: lists of (word, tag).")
    Y_train = property(lambda self: self[1], doc="Training trees (cleaned nltk.Tree).")
    X_test = property(lambda self: self[2], doc="Test sentences: lists of (word, tag).")
    Y_test = property(lambda self: self[3], doc="Test trees (cleaned nltk.Tree).")


def load_treebank_trees(path=None, *, n_train=3000, max_train_len=25, max_test_len=15):
    """The parsing split: the first ``n_train`` trees train, the rest test.

    Trees are cleaned (:func:`treebank_parsed_sents`), then filtered by length
    (words after cleaning): training trees of at most ``max_train_len`` words, test
    trees of at most ``max_test_len`` words. The split is taken *before* filtering,
    so it is the same fixed split as :func:`load_treebank`'s.

    Parameters
    ----------
    path : str or path-like, optional
        See :func:`treebank_tagged_sents`.
    n_train : int, default=3000
    max_train_len, max_test_len : int or None, default=25, 15
        None keeps every length.

    Returns
    -------
    TreebankTrees
        ``(X_train, Y_train, X_test, Y_test)``: ``X`` lists of ``(word, tag)`` pairs
        (the trees' preterminals), ``Y`` cleaned ``nltk.Tree`` objects.

    Examples
    --------
    >>> X_tr, Y_tr, X_te, Y_te = load_treebank_trees()  # doctest: +SKIP
    >>> len(X_tr), len(X_te)  # doctest: +SKIP
    (1525, 240)
    """
    trees = treebank_parsed_sents(path)

    def keep(ts, limit):
        return [t for t in ts if limit is None or len(t.leaves()) <= limit]

    train, test = keep(trees[:n_train], max_train_len), keep(trees[n_train:], max_test_len)
    X = [[(str(w), str(tag)) for w, tag in t.pos()] for t in train]
    Xt = [[(str(w), str(tag)) for w, tag in t.pos()] for t in test]
    return TreebankTrees(X, train, Xt, test)
