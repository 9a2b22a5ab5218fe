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

__all__ = ["clean_tree", "clean_label", "binarize", "unbinarize", "tree_words", "tree_pos",
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
                             f"({len(tree_words(c))} words, traces removed) differ from "
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


def _clean(root):
    """The cleaned copy of ``root`` (see :func:`clean_tree`), built bottom-up with an
    explicit stack: no recursion, whatever the tree's depth."""
    Tree = _tree()
    if not isinstance(root, Tree):
        return root
    done = {}          # id(node) -> its cleaned copy (None: nothing left)
    on_path = set()    # nodes whose children are being cleaned (a cycle revisits one)
    stack = [(root, False)]
    while stack:
        t, ready = stack.pop()
        key = id(t)
        if not ready:
            if key in done:  # a subtree the tree holds twice
                continue
            if key in on_path:
                raise ValueError("the tree contains itself (a cycle of nodes)")
            if str(t.label()) == "-NONE-":
                done[key] = None
                continue
            on_path.add(key)
            stack.append((t, True))
            stack.extend((k, False) for k in reversed(t) if isinstance(k, Tree))
            continue
        on_path.discard(key)
        kids = [done[id(k)] if isinstance(k, Tree) else k for k in t]
        kids = [c for c in kids if c is not None]
        if not kids:
            done[key] = None
            continue
        label = clean_label(t.label())
        if len(kids) == 1 and isinstance(kids[0], Tree) and kids[0].label() == label \
                and not _is_preterminal(kids[0]):
            done[key] = kids[0]
        else:
            done[key] = Tree(label, kids)
    return done[id(root)]


def _is_preterminal(t):
    return isinstance(t, _tree()) and len(t) == 1 and not isinstance(t[0], _tree())


def tree_words(tree):
    """The words (leaves) of a tree, in order (no recursion, whatever its depth)."""
    Tree = _tree()
    out, stack = [], [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, Tree):
            stack.extend(reversed(t))
        else:
            out.append(str(t))
    return out


def tree_pos(tree):
    """The ``(word, tag)`` pairs of a tree's preterminals, in order (no recursion)."""
    Tree = _tree()
    out, stack = [], [tree]
    while stack:
        t = stack.pop()
        if len(t) == 1 and not isinstance(t[0], Tree):
            out.append((str(t[0]), t.label()))
        else:
            stack.extend(c for c in reversed(t) if isinstance(c, Tree))
    return out


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

    Raises
    ------
    ValueError
        When a node mixes words and constituents.

    Notes
    -----
    The tree is walked with an explicit stack, so neither its depth nor a node's
    number of children (right factoring nests them) meets Python's recursion limit.
    """
    Tree = _tree()
    sizes = _word_counts(tree)
    out = []
    # items: ("node", tree, start) or ("rest", kids, offsets, first, symbol, base, ctx)
    stack = [("node", tree, 0)]
    while stack:
        item = stack.pop()
        if item[0] == "node":
            _, t, start = item
            labels, bottom = _chain(t)
            symbol = JOIN.join(labels)
            if len(bottom) == 1:  # a preterminal: (TAG word)
                out.append((start, start + 1, -1, symbol))
                continue
            if any(not isinstance(c, Tree) for c in bottom):
                raise ValueError(f"node {bottom.label()!r} mixes words and constituents")
            kids = list(bottom)
            offsets = [start]
            for c in kids:
                offsets.append(offsets[-1] + sizes[id(c)])
            item = ("rest", kids, offsets, 0, symbol, labels[-1], [])
        # right factoring of kids[first:]: X -> kids[first] X|<...>
        _, kids, offsets, first, symbol, base, context = item
        start, split = offsets[first], offsets[first + 1]
        out.append((start, offsets[-1], split, symbol))
        if len(kids) - first == 2:
            stack.append(("node", kids[first + 1], split))
        else:
            ctx = (context + [str(kids[first].label())])[-markov:] if markov > 0 else []
            inter = f"{base}{FACTOR}<{','.join(ctx)}>"
            stack.append(("rest", kids, offsets, first + 1, inter, base, ctx))
        stack.append(("node", kids[first], start))
    return out


def _chain(t):
    labels = [str(t.label())]
    while len(t) == 1 and isinstance(t[0], _tree()):
        t = t[0]
        labels.append(str(t.label()))
    return labels, t


def _word_counts(tree):
    """``{id(node): number of words below it}`` for every subtree (post-order, with
    an explicit stack)."""
    Tree = _tree()
    counts = {}
    stack = [(tree, False)]
    while stack:
        t, ready = stack.pop()
        if ready:
            counts[id(t)] = sum(counts[id(c)] if isinstance(c, Tree) else 1 for c in t)
        elif id(t) not in counts:
            stack.append((t, True))
            stack.extend((c, False) for c in t if isinstance(c, Tree))
    return counts


def unbinarize(nodes, words):
    """The ``nltk.Tree`` of encoded nodes (pre-order ``(i, j, k, symbol)``) over ``words``.

    Intermediate symbols are dissolved into their parent and collapsed unary chains
    expanded again. The nodes are read in one pass with an explicit stack (no
    recursion, whatever the tree's depth).
    """
    pending = []  # binary nodes still waiting for children: [symbol, parts]
    result = None
    for i, _, k, symbol in nodes:
        if k >= 0:
            pending.append([symbol, []])
            continue
        made = [_wrap(symbol, [words[i]])]
        while pending:  # hand the finished subtree up as far as it completes nodes
            frame = pending[-1]
            frame[1].append(made)
            if len(frame[1]) < 2:
                break
            pending.pop()
            children = frame[1][0] + frame[1][1]
            made = children if is_intermediate(frame[0]) else [_wrap(frame[0], children)]
        else:
            result = made
            break
    if result is None:
        raise ValueError("the encoded tree ends before its nodes are complete")
    if len(result) != 1:
        raise ValueError("the root of an encoded tree cannot be an intermediate symbol")
    return result[0]


def _wrap(symbol, children):
    labels = symbol.split(JOIN)
    node = _tree()(labels[-1], children)
    for lab in reversed(labels[:-1]):
        node = _tree()(lab, [node])
    return node
