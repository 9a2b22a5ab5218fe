"""The k best parse trees of a batch (k-best CKY, batched, numba)."""
from __future__ import annotations

import numpy as np

from .cky import _check
from .outputs import EncodedTree
from ..._compiled import loops
from ...limits import check_total

__all__ = ["kbest_cky"]

# kbest_batch (numba, compiled on first use)
_loops = loops("structsvm.structures.grammar._kbest_jit")


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
    _loops.kbest_batch(leaf, word_off, span, span_off, leaf_sym, phrase_sym, root,
                       parent, left, right, rule_score, k, out, node_off, scores, counts)
    words = batch.words
    result = []
    for s in range(n_sent):
        c = int(counts[s])
        rows = out[node_off[s]:node_off[s + 1]]
        result.append(([EncodedTree(rows[:, j].copy(), words[s]) for j in range(c)],
                       scores[s, :c].copy()))
    return result
