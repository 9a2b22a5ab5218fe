"""Parse-tree metric: labelled bracket precision, recall and F1 (evalb style)."""
from __future__ import annotations

__all__ = ["bracket_scores", "BracketScores"]

_PUNCT_TAGS = frozenset({",", ":", "``", "''", "."})


class BracketScores(tuple):
    """``(precision, recall, f1)`` of :func:`bracket_scores`, plus the counts.

    Attributes ``precision``, ``recall``, ``f1``, ``matched``, ``gold``,
    ``predicted``; unpacks as the first three.
    """

    def __new__(cls, matched, gold, predicted):
        p = matched / predicted if predicted else 0.0
        r = matched / gold if gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        obj = super().__new__(cls, (p, r, f))
        obj.matched, obj.gold, obj.predicted = int(matched), int(gold), int(predicted)
        return obj

    precision = property(lambda self: self[0], doc="matched / predicted brackets.")
    recall = property(lambda self: self[1], doc="matched / gold brackets.")
    f1 = property(lambda self: self[2], doc="Harmonic mean of precision and recall.")

    def __repr__(self):
        return (f"BracketScores(precision={self[0]:.4f}, recall={self[1]:.4f}, "
                f"f1={self[2]:.4f})")


def _brackets(tree, punct, count_root, equal):
    """Multiset of (label, start, end) over non-punctuation word positions."""
    from collections import Counter

    from nltk import Tree

    pos = [0]
    for p in punct:
        pos.append(pos[-1] + (0 if p else 1))
    out = Counter()
    # depth first with an explicit stack of [node, start, next child, is the root]
    # (no recursion, whatever the tree's depth); `end` is where the last node ended
    stack, end = [[tree, 0, 0, True]], 0
    while stack:
        frame = stack[-1]
        t, start, k, top = frame
        if k < len(t):
            frame[2] += 1
            child, child_start = t[k], (start if k == 0 else end)
            if isinstance(child, Tree):
                stack.append([child, child_start, 0, False])
            else:
                end = child_start + 1
            continue
        stack.pop()
        if not len(t):
            end = start
        is_pre = len(t) == 1 and not isinstance(t[0], Tree)
        if not is_pre and not (top and not count_root):
            a, b = pos[start], pos[end]
            if b > a:
                label = equal.get(t.label(), t.label())
                out[(label, a, b)] += 1
    return out


def bracket_scores(Y_true, Y_pred, *, count_root=False):
    """Labelled bracket precision, recall and F1 of parse trees (evalb style).

    Both trees are cleaned first (empty elements and function tags removed, as
    :func:`structsvm.structures.grammar.features.clean_tree` does). A bracket is a labelled
    span (label, start, end) of a constituent; the scores are micro-averaged over
    the corpus: P = matched / predicted, R = matched / gold, F1 = 2PR / (P + R),
    with brackets matched as multisets.

    Ignored, as Collins' evalb parameter file does: **punctuation** (words whose
    gold preterminal is one of ``, : `` '' .``; spans are counted over the
    remaining words, and a bracket covering only punctuation is dropped);
    **preterminals** (the part-of-speech nodes: tagging is not bracketing); and,
    unless ``count_root``, **the root bracket** (the outermost constituent, which
    always spans the whole sentence; evalb counts it after dropping its ``TOP``
    wrapper, so ``count_root=True`` gives evalb's figure). ``ADVP`` and ``PRT``
    count as the same label (evalb's ``EQ_LABEL``).

    Parameters
    ----------
    Y_true, Y_pred : sequences of nltk.Tree
        Gold and predicted trees over the same words.
    count_root : bool, default=False
        Count the root bracket too.

    Returns
    -------
    BracketScores
        ``(precision, recall, f1)`` with the counts as attributes ``matched``,
        ``gold`` and ``predicted``.

    Raises
    ------
    ValueError
        When the lists differ in length or two trees of a pair have different words
        (the message names the sample).

    References
    ----------
    S. Sekine, M. Collins. EVALB bracket scoring program, 1997.

    Examples
    --------
    >>> from nltk import Tree
    >>> gold = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .))")
    >>> pred = Tree.fromstring("(S (NP (DT the)) (VP (NN dog) (VBZ barks)) (. .))")
    >>> s = bracket_scores([gold], [pred])     # NP(0,2), VP(2,3) vs NP(0,1), VP(1,3)
    >>> s.f1, bracket_scores([gold], [gold]).f1
    (0.0, 1.0)
    """
    from nltk import Tree

    from ._trees import clean_tree, tree_pos, tree_words

    Y_true, Y_pred = list(Y_true), list(Y_pred)
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} trees but Y_pred has {len(Y_pred)}")
    equal = {"PRT": "ADVP"}
    matched = gold = predicted = 0
    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        if not isinstance(a, Tree) or not isinstance(b, Tree):
            raise TypeError(f"Sample {i}: expected nltk.Tree objects, got "
                            f"{type(a).__name__} and {type(b).__name__}")
        a, b = clean_tree(a), clean_tree(b)
        if a is None or b is None or tree_words(a) != tree_words(b):
            raise ValueError(f"Sample {i}: the gold and predicted trees have different "
                             "words")
        punct = [tag in _PUNCT_TAGS for _, tag in tree_pos(a)]
        ga = _brackets(a, punct, count_root, equal)
        gb = _brackets(b, punct, count_root, equal)
        matched += sum((ga & gb).values())
        gold += sum(ga.values())
        predicted += sum(gb.values())
    return BracketScores(matched, gold, predicted)
