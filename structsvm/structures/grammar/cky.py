"""CKY decoding of binarised grammars (batched, numba), loss-augmented by the batch,
and its k best trees."""
from __future__ import annotations

import numpy as np

from .outputs import EncodedTree
from ..._compiled import loops
from ...limits import check_total
from ...protocols import Decoder

# the loops, imported (with numba) when a decode first runs
_cky_jit = loops("structsvm.structures.grammar._cky_jit")
_kbest_jit = loops("structsvm.structures.grammar._kbest_jit")

__all__ = ["cky", "cky_exact", "kbest_cky", "DEFAULT_BEAM", "CKY", "CKY_EXACT"]

#: symbols each chart cell keeps as children of larger spans when pruning
DEFAULT_BEAM = 12


def _check(batch):
    if getattr(type(batch), "structure", None) != "grammar":
        raise TypeError(f"cky decodes parse potentials, got {type(batch).__name__}")
    g = batch.grammar
    S = int(g.n_symbols)
    leaf = np.ascontiguousarray(batch.leaf_scores, dtype=np.float64)
    span = np.ascontiguousarray(batch.span_scores, dtype=np.float64)
    word_off = np.ascontiguousarray(batch.word_off, dtype=np.int64)
    span_off = np.ascontiguousarray(batch.span_off, dtype=np.int64)
    leaf_sym = np.ascontiguousarray(g.leaf_sym, dtype=np.int64)
    phrase_sym = np.ascontiguousarray(g.phrase_sym, dtype=np.int64)
    if leaf.ndim != 2 or leaf.shape != (word_off[-1], leaf_sym.size):
        raise ValueError(f"leaf_scores must have shape ({word_off[-1]}, {leaf_sym.size}), "
                         f"got {leaf.shape}")
    if span.ndim != 2 or span.shape != (span_off[-1], phrase_sym.size):
        raise ValueError(f"span_scores must have shape ({span_off[-1]}, "
                         f"{phrase_sym.size}), got {span.shape}")
    n = np.diff(word_off)
    if word_off[0] != 0 or np.any(n < 0) or span_off[0] != 0 or \
            not np.array_equal(np.diff(span_off), n * (n - 1) // 2):
        raise ValueError("word_off and span_off must rise from 0, with n(n - 1)/2 spans "
                         "for a sentence of n words")
    if np.any(n == 0):
        raise ValueError(f"Sample {int(np.flatnonzero(n == 0)[0])}: empty sentence")
    rule_score = np.ascontiguousarray(batch.rule_scores, dtype=np.float64)
    root = np.ascontiguousarray(batch.root_scores, dtype=np.float64)
    if rule_score.shape != (g.n_rules,) or root.shape != (S,):
        raise ValueError(f"rule_scores {rule_score.shape} and root_scores {root.shape} do "
                         f"not fit {g.n_rules} rules and {S} symbols")
    for name, arr in (("leaf_scores", leaf), ("span_scores", span),
                      ("rule_scores", rule_score), ("root_scores", root)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contain NaN or infinite values")
    rules = _check_grammar(g, S, leaf_sym, phrase_sym)
    root = np.where(np.asarray(g.root_ok, dtype=bool).reshape(S), root, -np.inf)
    check_chart(n, S, lambda s: f"Sentence {s} of the batch")
    return (leaf, word_off, span, span_off, leaf_sym, phrase_sym, root, *rules[:3],
            rule_score, rules[3])


def _check_grammar(g, S, leaf_sym, phrase_sym):
    """The rule arrays the loop indexes with, each checked against the symbols (the
    loop reads and writes chart cells by these numbers unchecked)."""
    parent, left, right = (np.ascontiguousarray(a, dtype=np.int64).reshape(-1) for a in
                           (g.rule_parent, g.rule_left, g.rule_right))
    left_ptr = np.ascontiguousarray(g.left_ptr, dtype=np.int64).reshape(-1)
    R = parent.size
    for name, arr in (("leaf_sym", leaf_sym), ("phrase_sym", phrase_sym),
                      ("rule_parent", parent), ("rule_left", left),
                      ("rule_right", right)):
        if arr.size and (arr.min() < 0 or arr.max() >= S):
            raise ValueError(f"grammar.{name} holds a symbol outside [0, {S})")
    if left.size != R or right.size != R or left_ptr.size != S + 1:
        raise ValueError(f"grammar: rule_parent, rule_left and rule_right must have one "
                         f"entry per rule and left_ptr {S + 1} entries")
    if R and not np.array_equal(left_ptr, np.searchsorted(left, np.arange(S + 1))):
        raise ValueError("grammar.left_ptr does not index the rules by left child "
                         "(rules must be sorted by left child)")
    if not R and np.any(left_ptr != 0):
        raise ValueError("grammar.left_ptr must be 0 without rules")
    return parent, left, right, left_ptr


#: bytes per chart cell and symbol: the score (float64), its split and rule (int32)
#: and the active list (int32)
_CELL_BYTES = 8 + 4 + 4 + 4


def check_chart(lengths, S, source=None):
    """Pass the chart of the longest sentence through the memory budget: CKY keeps
    (n + 1)² cells of S symbols (score, split, rule, active list), plus the S² rule
    table by child pair. The message names ``source(s)`` for sentence s (default
    "Sample s")."""
    if not len(lengths):
        return
    s = int(np.argmax(lengths))
    n = int(lengths[s])
    size = (n + 1) ** 2 * S * _CELL_BYTES + (S * S + 1) * 8
    check_total(size, f"the CKY chart of its {n} words ({n + 1}² cells x {S} symbols)",
                f"Sample {s}" if source is None else source(s), verb="needs")


def _decode(batch, exclude, exact, beam):
    if exclude is not None:
        raise ValueError("cky cannot exclude a tree (no second-best search); use "
                         "loss-augmented decoding (the default for every learner)")
    if not exact and (isinstance(beam, bool) or not isinstance(beam, (int, np.integer))
                      or beam < 1):
        raise ValueError(f"beam must be an int >= 1, got {beam!r}")
    (leaf, word_off, span, span_off, leaf_sym, phrase_sym, root, parent, left, right,
     rule_score, left_ptr) = _check(batch)
    n_sent = len(word_off) - 1
    node_off = 2 * word_off - np.arange(n_sent + 1)
    out = np.empty((max(int(node_off[-1]), 0), 5), dtype=np.int64)
    best = np.empty(n_sent)
    failed = _cky_jit.cky_batch(leaf, word_off, span, span_off, leaf_sym, phrase_sym, root,
                                parent, left, right, rule_score, left_ptr,
                                0 if exact else int(beam), out, node_off, best)
    if failed.any():
        s = int(np.flatnonzero(failed)[0])
        raise ValueError(f"Sample {s}: the grammar has no parse of this "
                         f"{int(word_off[s + 1] - word_off[s])}-word sentence")
    words = batch.words
    trees = [EncodedTree(out[node_off[s]:node_off[s + 1]], words[s]) for s in range(n_sent)]
    cands = batch.candidates
    if cands is not None and not exact:  # exact search finds nothing worse
        better = np.asarray(batch.score(cands)) > np.asarray(batch.score(trees))
        for s in np.flatnonzero(better):
            c = cands[s]
            trees[s] = EncodedTree(c.nodes if isinstance(c, EncodedTree) else c, words[s])
    return trees


def cky(batch, exclude=None, *, exact=False, beam=DEFAULT_BEAM):
    """Highest-scoring binarised parse tree of every sentence of a batch (CKY).

    Dynamic programming over spans (Cocke, Kasami, Younger): with
    π(i, i+1, A) = ℓ(i, A) for the symbols A that sit on words and

    .. math::

        \\pi(i, j, A) = \\sigma(i, j, A) + \\max_{i<k<j,\\; A \\to B\\,C}
            \\rho(A \\to B\\,C) + \\pi(i, k, B) + \\pi(k, j, C),

    the best tree has root argmax_A π(0, n, A) + τ(A) (intermediate symbols may not
    be roots) and is recovered by back-pointers: O(n³ |R|) per sentence for |R|
    binary rules. All sentences of the batch are decoded by one compiled call.

    Loss-augmented decoding needs nothing special: the batch's ``augment`` adds the
    labelled-span loss to the leaf and span scores.

    Parameters
    ----------
    batch : GrammarPotentials
        Leaf, span, rule and root scores (see
        :class:`structsvm.structures.grammar._encoding.GrammarPotentials`).
    exclude : None
        Not supported (raises).
    exact : bool, default=False
        True: the exhaustive O(n³ |R|) search. False: beam pruning, where every cell
        of length < n keeps only its ``beam`` best symbols as children of larger
        spans (the root cell is never pruned; a sentence that pruning leaves without
        a parse is decoded again exactly). A batch's ``candidates`` (the true
        trees of a loss-augmented batch) are returned instead of the found trees
        when they score higher, so pruning never reports a negative violation.
    beam : int, default=12
        Symbols kept per cell when pruning.

    Returns
    -------
    list of EncodedTree
        One tree per sentence: 2n − 1 rows ``(i, j, k, symbol, rule)`` in pre-order.
        Ties go to the first maximum found (smaller split, rule order).

    Raises
    ------
    ValueError
        On malformed potentials, an empty sentence, or a sentence the grammar cannot
        parse (the message names the sample).

    References
    ----------
    J. Cocke, J. T. Schwartz. Programming languages and their compilers. 1970.
    T. Kasami. An efficient recognition and syntax analysis algorithm for
    context-free languages. 1965. D. H. Younger. Recognition and parsing of
    context-free languages in time n³. Information and Control 10(2), 1967.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.grammar.features import Grammar, GrammarPotentials
    >>> g = Grammar(3, leaf_sym=[0, 1], phrase_sym=[2], rules=[[2, 0, 1], [2, 1, 0]],
    ...             root_ok=[True, True, True])
    >>> p = GrammarPotentials(np.array([[2., 0.], [0., 1.]]), [0, 2], np.zeros((1, 1)),
    ...                       [0, 1], np.array([0.5, 0.]), np.zeros(3), g)
    >>> cky(p)[0].nodes.tolist()   # S(0,2) -> A(0,1) B(1,2) by rule 0
    [[0, 2, 1, 2, 0], [0, 1, -1, 0, -1], [1, 2, -1, 1, -1]]
    """
    return _decode(batch, exclude, exact, beam)


def cky_exact(batch, exclude=None):
    """Exact CKY without pruning: ``cky(batch, exact=True)`` (see :func:`cky`).

    Parameters
    ----------
    batch : GrammarPotentials
    exclude : None

    Returns
    -------
    list of EncodedTree

    Examples
    --------
    >>> cky_exact  # doctest: +ELLIPSIS
    <function cky_exact at ...>
    """
    return _decode(batch, exclude, True, DEFAULT_BEAM)


def kbest_cky(batch, k):
    """The ``k`` highest-scoring binarised parse trees of every sentence, best first.

    Huang & Chiang's (2005) k-best parsing on CKY's hypergraph (their Algorithm 2):
    every item, a span [i, j) with a symbol A, keeps its k best derivations; a phrase
    item's come from its hyperedges, a rule A → B C and a split m, each combining a
    derivation of (i, m, B) and one of (m, j, C), merged best first from a heap
    seeded with every hyperedge's best pair, where popping the ranks (j₁, j₂) adds
    (j₁ + 1, j₂) and, when j₁ = 0, (j₁, j₂ + 1). The sentence's k best trees are the
    best k of its root items' lists with their root scores. O(n³ |R| + n² |S| k log k)
    per sentence, exact (no pruning). A binary tree has one derivation, so the trees
    are distinct.

    Parameters
    ----------
    batch : GrammarPotentials
    k : int
        Trees per sentence (>= 1).

    Returns
    -------
    list of (list of EncodedTree, ndarray of float)
        Every sentence's trees, best first, and their scores; fewer than k where the
        grammar has fewer parses (none: an empty list). Trees of equal score come in
        the search's order.

    Raises
    ------
    ValueError
        On malformed potentials or k < 1.

    References
    ----------
    L. Huang, D. Chiang. Better k-best parsing. IWPT 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.grammar.features import Grammar, GrammarPotentials
    >>> g = Grammar(3, leaf_sym=[0, 1], phrase_sym=[2], rules=[[2, 0, 1], [2, 1, 0]],
    ...             root_ok=[True, True, True])
    >>> p = GrammarPotentials(np.array([[2., 0.], [0., 1.]]), [0, 2], np.zeros((1, 1)),
    ...                       [0, 1], np.array([0.5, 0.]), np.zeros(3), g)
    >>> trees, scores = kbest_cky(p, 3)[0]
    >>> scores.tolist(), trees[1].nodes.tolist()   # the grammar has two parses
    ([3.5, 0.0], [[0, 2, 1, 2, 1], [0, 1, -1, 1, -1], [1, 2, -1, 0, -1]])
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    k = int(k)
    (leaf, word_off, span, span_off, leaf_sym, phrase_sym, root, parent, left, right,
     rule_score, _) = _check(batch)
    n = np.diff(word_off)
    if n.size:
        i = int(np.argmax(n))
        m = int(n[i]) + 1
        check_total(40 * m * m * int(root.size) * k, f"the k-best CKY lists of its "
                    f"{m - 1} words", f"Sample {i}", verb="need")
    n_sent = len(word_off) - 1
    node_off = 2 * word_off - np.arange(n_sent + 1)
    out = np.zeros((max(int(node_off[-1]), 0), k, 5), dtype=np.int64)
    scores = np.empty((n_sent, k))
    counts = np.zeros(n_sent, dtype=np.int64)
    _kbest_jit.kbest_batch(leaf, word_off, span, span_off, leaf_sym, phrase_sym, root,
                           parent, left, right, rule_score, k, out, node_off, scores,
                           counts)
    words = batch.words
    result = []
    for s in range(n_sent):
        c = int(counts[s])
        rows = out[node_off[s]:node_off[s + 1]]
        result.append(([EncodedTree(rows[:, j].copy(), words[s]) for j in range(c)],
                       scores[s, :c].copy()))
    return result


CKY = Decoder(name="cky", structure="grammar", func=cky, nbest=kbest_cky)
CKY_EXACT = Decoder(name="cky_exact", structure="grammar", func=cky_exact,
                    nbest=kbest_cky)
