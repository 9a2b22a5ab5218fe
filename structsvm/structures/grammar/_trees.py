"""Phrase-structure trees for the grammar map: cleaning, binarising, un-binarising.

A cleaned tree (:func:`clean_tree`) has no empty elements, no function tags and
no same-label unary nodes. :func:`binarize` turns it into the *encoded* tree the
CKY decoder works with: a list of anchored nodes ``(i, j, k, symbol)`` in
pre-order, where ``[i, j)`` is the node's word span, ``k`` its split point (−1 for
a word) and ``symbol`` a string:

- unary chains are collapsed into one symbol joined by ``+`` (``S+VP``; above a
  word the chain ends in its part-of-speech tag, ``NP+PRP``);
- a node with m > 2 children is right-factored: ``X -> c1 X|<...>`` with the
  intermediate symbol ``X|<...>`` remembering the labels of the last ``markov``
  children generated (horizontal Markovisation; ``X|<>`` for ``markov=0``).

:func:`unbinarize` inverts this, giving an ordinary ``nltk.Tree`` over the words.
"""
from __future__ import annotations

import functools

from ...protocols import as_sequence

__all__ = ["clean_tree", "clean_label", "binarize", "unbinarize", "tree_words",
           "is_intermediate", "check_trees", "JOIN", "FACTOR"]

JOIN = "+"
FACTOR = "|"


@functools.cache
def _tree():
    """``nltk.Tree``, imported on first use: ``import structsvm`` does not load NLTK
    (about 0.6 s), which only the tree and parsing code needs."""
    from nltk import Tree

    return Tree


def clean_label(label):
    """Strip function tags and indices (``NP-SBJ-1`` -> ``NP``, ``PP=2`` -> ``PP``).

    Labels that start with ``-`` (``-LRB-``, ``-NONE-``) are kept; alternatives
    (``ADVP|PRT``) keep their first member; ``+`` (used to join unary chains)
    becomes ``&``.
    """
    label = str(label)
    if not label.startswith("-"):
        for sep in "-=":
            cut = label.find(sep)
            if cut > 0:
                label = label[:cut]
    label = label.split(FACTOR)[0] or label
    return label.replace(JOIN, "&")


def check_trees(Y, words=None):
    """Cleaned copies of the trees ``Y`` (each over ``words[i]`` when given).

    Raises a TypeError or ValueError naming the sample for a tree that is not an
    ``nltk.Tree``, has no words, has other leaves than its sentence, or has a node
    that mixes words and constituents.
    """
    Tree = _tree()
    Y = as_sequence(Y, "Y")
    if words is not None and len(Y) != len(words):
        raise ValueError(f"X has {len(words)} sentences but Y has {len(Y)} trees")
    out = []
    for i, t in enumerate(Y):
        if not isinstance(t, Tree):
            raise TypeError(f"Sample {i}: expected an nltk.Tree, got "
                            f"{type(t).__name__}")
        c = clean_tree(t)
        if c is None:
            raise ValueError(f"Sample {i}: the tree has no words (only empty "
                             "elements)")
        if words is not None and tuple(tree_words(c)) != words[i]:
            raise ValueError(f"Sample {i}: the tree's leaves {tree_words(c)[:8]!r}... "
                             f"({len(c.leaves())} words, traces removed) differ from "
                             f"the sentence's words {list(words[i][:8])!r}... "
                             f"({len(words[i])} words)")
        if isinstance(c, Tree) and any(not isinstance(s, Tree) for s in c) \
                and len(c) > 1:
            raise ValueError(f"Sample {i}: node {c.label()!r} mixes words and "
                             "constituents")
        out.append(c)
    return out


def clean_tree(tree):
    """A cleaned copy of ``tree`` (None when nothing is left).

    Removes empty elements (``-NONE-`` preterminals) and the constituents left
    empty by that, strips function tags (:func:`clean_label`), drops an unlabelled
    or ``ROOT``/``TOP`` wrapper with one child, and merges a node into its only
    child when both have the same label (``(NP (NP ...))`` -> ``(NP ...)``).

    Parameters
    ----------
    tree : nltk.Tree
        A treebank tree, e.g. one of ``nltk.corpus.treebank.parsed_sents()``.

    Returns
    -------
    nltk.Tree or None
        A new tree (``tree`` is not modified); None when only empty elements remain.

    Raises
    ------
    TypeError
        When ``tree`` is not an ``nltk.Tree``.

    Examples
    --------
    >>> from nltk import Tree
    >>> from structsvm.structures.grammar.features import clean_tree
    >>> print(clean_tree(Tree.fromstring(
    ...     "(ROOT (S (NP-SBJ (-NONE- *)) (VP (VB go))))")))
    (S (VP (VB go)))
    """
    if not isinstance(tree, _tree()):
        raise TypeError(f"expected an nltk.Tree, got {type(tree).__name__}")
    while tree.label() in ("", "ROOT", "TOP") and len(tree) == 1 and \
            isinstance(tree[0], _tree()):
        tree = tree[0]
    return _clean(tree)


def _clean(t):
    if not isinstance(t, _tree()):
        return t
    label = str(t.label())
    if label == "-NONE-":
        return None
    kids = [c for c in (_clean(k) for k in t) if c is not None]
    if not kids:
        return None
    label = clean_label(label)
    if len(kids) == 1 and isinstance(kids[0], _tree()) and kids[0].label() == label \
            and not _is_preterminal(kids[0]):
        return kids[0]
    return _tree()(label, kids)


def _is_preterminal(t):
    return isinstance(t, _tree()) and len(t) == 1 and not isinstance(t[0], _tree())


def tree_words(tree):
    """The words (leaves) of a tree, in order."""
    return [str(w) for w in tree.leaves()]


def is_intermediate(symbol):
    """True for the symbols binarisation introduces (``X|<...>``)."""
    return FACTOR in symbol


def binarize(tree, markov=0):
    """Encoded nodes ``(i, j, k, symbol)`` of a cleaned tree, in pre-order.

    Parameters
    ----------
    tree : nltk.Tree
        A cleaned tree (see :func:`clean_tree`) whose leaves are words.
    markov : int, default=0
        Horizontal Markov order of the intermediate symbols.

    Returns
    -------
    list of tuple (int, int, int, str)
        2n − 1 nodes for n words; a word's node has k = −1.
    """
    out = []
    _bin(tree, 0, out, markov)
    return out


def _chain(t):
    labels = [str(t.label())]
    while len(t) == 1 and isinstance(t[0], _tree()):
        t = t[0]
        labels.append(str(t.label()))
    return labels, t


def _n_words(t):
    return 1 if not isinstance(t, _tree()) else sum(_n_words(c) for c in t)


def _bin(t, start, out, markov):
    labels, bottom = _chain(t)
    symbol = JOIN.join(labels)
    if len(bottom) == 1:  # a preterminal: (TAG word)
        out.append((start, start + 1, -1, symbol))
        return start + 1
    if any(not isinstance(c, _tree()) for c in bottom):
        raise ValueError(f"node {bottom.label()!r} mixes words and constituents")
    return _factor(list(bottom), symbol, labels[-1], start, out, markov, [])


def _factor(kids, symbol, base, start, out, markov, context):
    sizes = [_n_words(c) for c in kids]
    end = start + sum(sizes)
    split = start + sizes[0]
    out.append((start, end, split, symbol))
    _bin(kids[0], start, out, markov)
    if len(kids) == 2:
        _bin(kids[1], split, out, markov)
    else:
        ctx = (context + [str(kids[0].label())])[-markov:] if markov > 0 else []
        inter = f"{base}{FACTOR}<{','.join(ctx)}>"
        _factor(kids[1:], inter, base, split, out, markov, ctx)
    return end


def unbinarize(nodes, words):
    """The ``nltk.Tree`` of encoded nodes (pre-order ``(i, j, k, symbol)``) over ``words``.

    Intermediate symbols are dissolved into their parent and collapsed unary chains
    expanded again.
    """
    it = iter(nodes)
    kids = _unbin(it, words)
    if len(kids) != 1:
        raise ValueError("the root of an encoded tree cannot be an intermediate symbol")
    return kids[0]


def _wrap(symbol, children):
    labels = symbol.split(JOIN)
    node = _tree()(labels[-1], children)
    for lab in reversed(labels[:-1]):
        node = _tree()(lab, [node])
    return node


def _unbin(it, words):
    i, j, k, symbol = next(it)
    if k < 0:
        return [_wrap(symbol, [words[i]])]
    children = _unbin(it, words) + _unbin(it, words)
    if is_intermediate(symbol):
        return children
    return [_wrap(symbol, children)]
