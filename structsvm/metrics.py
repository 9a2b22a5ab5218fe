"""Evaluation metrics for structured outputs (raw, decoded outputs).

Sections: sequences (token/sentence accuracy, chunk F1), rankings (NDCG, MAP,
pairwise accuracy, Kendall's τ), trees (tree distance), alignments (Q, precision).
Each function validates its inputs and names the offending sample.
"""
from __future__ import annotations

import numpy as np

from .losses.alignment import as_pairs, common_pairs

__all__ = []

# ----------------------------------------------------------------------- sequences
__all__ += ["token_accuracy", "sentence_accuracy", "iob_chunks", "chunk_scores",
            "chunk_f1"]


def _check_tag_lists(Y_true, Y_pred):
    Y_true, Y_pred = list(Y_true), list(Y_pred)
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} sentences but Y_pred has {len(Y_pred)}")
    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        if isinstance(a, str) or isinstance(b, str):
            raise TypeError(f"Sentence {i}: expected a list of tags, got a string")
        if len(a) != len(b):
            raise ValueError(f"Sentence {i}: {len(a)} true tags but {len(b)} predicted")
    return Y_true, Y_pred


def token_accuracy(Y_true, Y_pred):
    """Fraction of tokens whose predicted tag equals the true one (over all sentences).

    A true tag the model never saw counts as an error, like any other mismatch.

    Examples
    --------
    >>> token_accuracy([["D", "N"], ["V"]], [["D", "V"], ["V"]])
    0.6666666666666666
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    n = sum(len(y) for y in Y_true)
    if n == 0:
        raise ValueError("token_accuracy needs at least one token")
    return sum(a == b for y, z in zip(Y_true, Y_pred) for a, b in zip(y, z)) / n


def sentence_accuracy(Y_true, Y_pred):
    """Fraction of sentences tagged entirely correctly.

    Examples
    --------
    >>> sentence_accuracy([["D", "N"], ["V"]], [["D", "V"], ["V"]])
    0.5
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    if not Y_true:
        raise ValueError("sentence_accuracy needs at least one sentence")
    return sum(list(a) == list(b) for a, b in zip(Y_true, Y_pred)) / len(Y_true)


def _split_tag(tag):
    if tag == "O" or tag is None:
        return "O", ""
    if not isinstance(tag, str) or len(tag) < 2 or tag[1] != "-" or tag[0] not in "BIES":
        raise ValueError(f"chunk tag {tag!r} is not 'O' or B-/I-/E-/S- followed by a type")
    return tag[0], tag[2:]


def iob_chunks(tags):
    """Chunks ``(type, start, end)`` (end exclusive) of one tag sequence.

    Reads IOB2 (every chunk starts with ``B-``), IOB1 (``B-`` only between adjacent
    chunks of one type) and IOBES with conlleval's rules: a chunk starts at ``B-``/
    ``S-``, at an ``I-``/``E-`` after ``O`` or after a chunk's end, or where the type
    changes; it ends before ``B-``/``S-``/``O``, after ``E-``/``S-``, or where the
    type changes.

    Examples
    --------
    >>> iob_chunks(["B-NP", "I-NP", "B-VP", "I-NP", "O", "I-PP"])
    [('NP', 0, 2), ('VP', 2, 3), ('NP', 3, 4), ('PP', 5, 6)]
    """
    out, start, prev, prev_type = [], None, "O", ""
    for t, tag in enumerate(list(tags) + ["O"]):
        kind, typ = _split_tag(tag)
        ends = (prev in "ES" or (prev in "BI" and kind in "BSO")
                or (prev != "O" and prev_type != typ))
        if ends and start is not None:
            out.append((prev_type, start, t))
            start = None
        begins = (kind in "BS" or (prev in "ESO" and kind in "EI")
                  or (kind != "O" and prev_type != typ))
        if begins and kind != "O":
            start = t
        prev, prev_type = kind, typ
    return out


def chunk_scores(Y_true, Y_pred):
    """Chunk precision, recall and F1 (conlleval-compatible), overall and per type.

    A predicted chunk is correct when a true chunk has the same type, start and end.
    P = correct / predicted chunks, R = correct / true chunks, F1 = 2PR / (P + R)
    (0 when undefined), as printed by the CoNLL shared tasks' ``conlleval``.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1``, ``n_true``, ``n_pred``, ``n_correct`` and
        ``per_type`` (type -> dict with the same keys).

    References
    ----------
    E. F. Tjong Kim Sang, S. Buchholz. Introduction to the CoNLL-2000 shared task:
    chunking. CoNLL 2000.

    Examples
    --------
    >>> s = chunk_scores([["B-NP", "I-NP", "B-VP"]], [["B-NP", "B-NP", "B-VP"]])
    >>> round(s["precision"], 3), round(s["recall"], 3), round(s["f1"], 3)
    (0.333, 0.5, 0.4)
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    counts = {}

    def bump(typ, key):
        counts.setdefault(typ, {"n_true": 0, "n_pred": 0, "n_correct": 0})[key] += 1

    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        try:
            ta, tb = set(iob_chunks(a)), set(iob_chunks(b))
        except ValueError as exc:
            raise ValueError(f"Sentence {i}: {exc}") from None
        for c in ta:
            bump(c[0], "n_true")
        for c in tb:
            bump(c[0], "n_pred")
        for c in ta & tb:
            bump(c[0], "n_correct")

    def prf(d):
        p = d["n_correct"] / d["n_pred"] if d["n_pred"] else 0.0
        r = d["n_correct"] / d["n_true"] if d["n_true"] else 0.0
        return dict(d, precision=p, recall=r, f1=2 * p * r / (p + r) if p + r else 0.0)

    total = {k: sum(d[k] for d in counts.values()) for k in ("n_true", "n_pred",
                                                              "n_correct")}
    out = prf(total)
    out["per_type"] = {t: prf(d) for t, d in sorted(counts.items())}
    return out


def chunk_f1(Y_true, Y_pred):
    """Overall chunk F1 of :func:`chunk_scores`."""
    return chunk_scores(Y_true, Y_pred)["f1"]


# ----------------------------------------------------------------------- rankings
__all__ += ["ndcg_at_k", "average_precision", "mean_average_precision",
            "pairwise_accuracy", "kendall_tau"]


def _check_rankings(relevance, rankings):
    """Pair every query's grades with its ranking (a permutation of its documents)."""
    if len(relevance) != len(rankings):
        raise ValueError(f"relevance has {len(relevance)} queries but rankings has "
                         f"{len(rankings)}")
    out = []
    for i, (rel, order) in enumerate(zip(relevance, rankings)):
        rel = np.asarray(rel, dtype=float).ravel()
        order = np.asarray(order).ravel()
        if order.dtype.kind not in "iu":
            raise TypeError(f"Sample {i}: a ranking must hold document indices (ints), "
                            f"got dtype {order.dtype}")
        if order.size != rel.size or not np.array_equal(np.sort(order), np.arange(rel.size)):
            raise ValueError(f"Sample {i}: the ranking must be a permutation of the query's "
                             f"{rel.size} documents")
        if not np.all(np.isfinite(rel)):
            raise ValueError(f"Sample {i}: relevance contains NaN or infinity")
        out.append((rel, order))
    return out


def _mean_over(values, empty, what):
    vals = [v for v in values if v is not None]
    if not vals:
        raise ValueError(f"no query has a defined {what} (every query lacks relevant "
                         "documents or pairs)")
    return float(np.mean(vals))


def ndcg_at_k(relevance, rankings, k=10, empty="skip"):
    r"""Mean NDCG@k over queries, gain 2^rel − 1 and discount log2(1 + position).

    .. math::

        \mathrm{DCG@k} = \sum_{i=1}^{k} \frac{2^{r_{\pi(i)}} - 1}{\log_2(i + 1)},
        \qquad \mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}.

    Parameters
    ----------
    relevance : list of array-like
        Graded relevance of each query's documents.
    rankings : list of array-like of int
        Per query, document indices best first (what ``predict`` returns).
    k : int or None, default=10
        Cut-off (None: all documents).
    empty : {"skip", "zero", "one"}, default="skip"
        Queries without a relevant document (IDCG = 0): left out of the mean, or
        counted as 0 or 1.

    Returns
    -------
    float

    References
    ----------
    K. Järvelin, J. Kekäläinen. Cumulated gain-based evaluation of IR techniques.
    ACM TOIS 20(4), 2002.

    Examples
    --------
    >>> ndcg_at_k([[0, 1, 2]], [[2, 1, 0]])
    1.0
    >>> round(ndcg_at_k([[0, 1]], [[0, 1]]), 4)
    0.6309
    """
    if empty not in ("skip", "zero", "one"):
        raise ValueError(f"empty must be 'skip', 'zero' or 'one', got {empty!r}")
    if k is not None and (isinstance(k, bool) or int(k) != k or k < 1):
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    vals = []
    for rel, order in _check_rankings(relevance, rankings):
        kk = rel.size if k is None else min(int(k), rel.size)
        disc = 1.0 / np.log2(np.arange(2, kk + 2))
        ideal = float((2.0 ** np.sort(rel)[::-1][:kk] - 1.0) @ disc)
        if ideal <= 0:
            vals.append(None if empty == "skip" else float(empty == "one"))
            continue
        vals.append(float((2.0 ** rel[order[:kk]] - 1.0) @ disc) / ideal)
    return _mean_over(vals, empty, "NDCG")


def average_precision(relevant, order):
    """Average precision of one ranking: mean of precision@i over relevant positions."""
    hits = np.asarray(relevant, dtype=bool)[np.asarray(order)]
    if not hits.any():
        return None
    prec = np.cumsum(hits) / np.arange(1, hits.size + 1)
    return float(prec[hits].mean())


def mean_average_precision(relevance, rankings, threshold=1.0):
    """MAP: mean over queries with a relevant document (rel ≥ ``threshold``) of the
    average precision of their ranking.

    Examples
    --------
    >>> mean_average_precision([[1, 0, 1]], [[0, 1, 2]])   # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    vals = [average_precision(rel >= threshold, order)
            for rel, order in _check_rankings(relevance, rankings)]
    return _mean_over(vals, "skip", "average precision")


def _swaps(rel, order):
    pos = np.empty(order.size)
    pos[order] = np.arange(order.size)
    better = rel[:, None] > rel[None, :]
    n_pairs = int(better.sum())
    correct = int((better & (pos[:, None] < pos[None, :])).sum())
    return correct, n_pairs


def pairwise_accuracy(relevance, rankings, average="micro"):
    """Fraction of pairs with different grades that the rankings order correctly.

    Parameters
    ----------
    average : {"micro", "macro"}, default="micro"
        Pool all pairs (svm_rank's reported error is 1 − micro accuracy), or average
        per query (queries without pairs left out).

    Examples
    --------
    >>> pairwise_accuracy([[2, 1, 0]], [[1, 0, 2]])
    0.6666666666666666
    """
    if average not in ("micro", "macro"):
        raise ValueError(f"average must be 'micro' or 'macro', got {average!r}")
    counts = [_swaps(rel, order) for rel, order in _check_rankings(relevance, rankings)]
    if average == "micro":
        n = sum(p for _, p in counts)
        if n == 0:
            raise ValueError("no query has a pair of documents with different grades")
        return sum(c for c, _ in counts) / n
    return _mean_over([c / p if p else None for c, p in counts], "skip", "pair accuracy")


def kendall_tau(relevance, rankings):
    """Mean Kendall τ-b between each query's grades and its ranking's order.

    Ties in the grades are handled by τ-b; queries whose grades are all equal (τ
    undefined) are left out.

    Examples
    --------
    >>> kendall_tau([[3, 2, 1]], [[0, 1, 2]]), kendall_tau([[3, 2, 1]], [[2, 1, 0]])
    (1.0, -1.0)
    """
    from scipy.stats import kendalltau

    vals = []
    for rel, order in _check_rankings(relevance, rankings):
        if rel.size < 2 or np.all(rel == rel[0]):
            vals.append(None)
            continue
        pos = np.empty(order.size)
        pos[order] = np.arange(order.size)
        vals.append(float(kendalltau(rel, -pos).statistic))
    return _mean_over(vals, "skip", "Kendall tau")


# ----------------------------------------------------------------------- trees
__all__ += ["tree_distance"]


def tree_distance(Y_true, Y_pred, tree=None, sep=None, normalize=False):
    """Mean tree distance between true and predicted classes of a taxonomy.

    The distance of two leaves is the length of the path between them through their
    deepest common ancestor (0 for the same class, 2 for siblings).

    Parameters
    ----------
    Y_true, Y_pred : sequences of labels
        Leaf names, paths (tuples) or ``sep``-joined strings.
    tree : networkx.DiGraph, dict or list of paths, optional
        Needed when labels are leaf names; paths alone determine their distance.
    sep : str, optional
        Separator of string labels.
    normalize : bool, default=False
        Divide each distance by the sum of the two depths (Δ ∈ [0, 1]).

    Returns
    -------
    float

    Examples
    --------
    >>> tree_distance(["comp.sys.mac", "rec.autos"], ["comp.sys.ibm", "rec.autos"], sep=".")
    1.0
    """
    from .features.taxonomy import build_tree
    from .losses.tree import TreeDistanceLoss

    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} labels but Y_pred has {len(Y_pred)}")
    if len(Y_true) == 0:
        raise ValueError("tree_distance of empty label lists is undefined")
    loss = TreeDistanceLoss(normalize=normalize)
    if tree is not None:
        t = build_tree(tree, sep)
        enc_t = [t.encode(y, sep, i) for i, y in enumerate(Y_true)]
        enc_p = [t.encode(y, sep, i) for i, y in enumerate(Y_pred)]
        return float(np.mean([loss(a, b) for a, b in zip(enc_t, enc_p)]))

    def names(y, i):
        if isinstance(y, str) and sep is not None:
            return tuple(y.split(sep))
        if isinstance(y, (tuple, list)):
            return tuple(y)
        raise ValueError(f"Sample {i}: label {y!r} is not a path; pass tree= to measure "
                         "distances between leaf names")

    vals = []
    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        a, b = names(a, i), names(b, i)
        common = 0
        for u, v in zip(a, b):
            if u != v:
                break
            common += 1
        d = len(a) + len(b) - 2 * common
        vals.append(d / (len(a) + len(b)) if normalize else float(d))
    return float(np.mean(vals))


# ----------------------------------------------------------------------- parse trees
__all__ += ["bracket_scores", "BracketScores"]

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

    def walk(t, start, top):
        if not isinstance(t, Tree):
            return start + 1
        end = start
        for c in t:
            end = walk(c, end, False)
        is_pre = len(t) == 1 and not isinstance(t[0], Tree)
        if not is_pre and not (top and not count_root):
            a, b = pos[start], pos[end]
            if b > a:
                label = equal.get(t.label(), t.label())
                out[(label, a, b)] += 1
        return end

    walk(tree, 0, True)
    return out


def bracket_scores(Y_true, Y_pred, *, count_root=False):
    """Labelled bracket precision, recall and F1 of parse trees (evalb style).

    Both trees are cleaned first (empty elements and function tags removed, as
    :func:`structsvm.features.grammar.clean_tree` does). A bracket is a labelled
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

    from .features.grammar import clean_tree

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
        if a is None or b is None or a.leaves() != b.leaves():
            raise ValueError(f"Sample {i}: the gold and predicted trees have different "
                             "words")
        punct = [tag in _PUNCT_TAGS for _, tag in a.pos()]
        ga = _brackets(a, punct, count_root, equal)
        gb = _brackets(b, punct, count_root, equal)
        matched += sum((ga & gb).values())
        gold += sum(ga.values())
        predicted += sum(gb.values())
    return BracketScores(matched, gold, predicted)


# ----------------------------------------------------------------------- alignments
__all__ += ["alignment_scores"]


def alignment_scores(Y_true, Y_pred):
    """Q and precision of predicted pairwise alignments, pooled over all examples.

    An alignment is an integer array of shape (k, 2) of aligned index pairs (i, j).
    Q (Joachims, Galor & Elber 2005) is the fraction of the gold pairs that the
    predictions recover, Σ_n |y_n ∩ ŷ_n| / Σ_n |y_n|; precision the fraction of the
    predicted pairs that are gold, Σ_n |y_n ∩ ŷ_n| / Σ_n |ŷ_n| (each 1.0 when its
    denominator is 0).

    Parameters
    ----------
    Y_true, Y_pred : sequences of array-like of int of shape (k, 2)

    Returns
    -------
    dict
        ``{"Q": float, "precision": float}``.

    Raises
    ------
    ValueError
        Different numbers of alignments, or an alignment that is not of shape (k, 2)
        (the message names the example).

    Examples
    --------
    >>> alignment_scores([[(0, 0), (1, 1), (2, 3)]], [[(0, 0), (2, 3)]])
    {'Q': 0.6666666666666666, 'precision': 1.0}
    """
    Y_true, Y_pred = list(Y_true), list(Y_pred)
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} alignments but Y_pred has "
                         f"{len(Y_pred)}")
    hit = gold = pred = 0
    for n, (a, b) in enumerate(zip(Y_true, Y_pred)):
        try:
            a, b = as_pairs(a), as_pairs(b)
        except ValueError as exc:
            raise ValueError(f"Example {n}: {exc}") from None
        hit += common_pairs(a, b)
        gold += len(a)
        pred += len(b)
    return {"Q": hit / gold if gold else 1.0, "precision": hit / pred if pred else 1.0}
