"""Max-marginals and the k best projective trees over Eisner's spans (batched,
numba): inside-outside in the (max, +) semiring, and Huang & Chiang's k-best
parsing on Eisner's hypergraph."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops
from ...limits import check_total
from ._arcs import ArcPotentials

__all__ = ["eisner_max_marginals", "kbest_eisner"]

# max_marginals_batch, kbest_batch, top_relations (numba, compiled on first use)
_loops = loops("structsvm.structures.dependency._spans_jit")


def _check(batch, name, per_cell):
    if not isinstance(batch, ArcPotentials):
        raise TypeError(f"{name} takes first-order dependency potentials "
                        f"(ArcPotentials), got {type(batch).__name__}")
    n = np.asarray(batch.lengths(), dtype=np.int64)
    if np.any(n < 1):
        raise ValueError(f"Sample {int(np.flatnonzero(n < 1)[0])}: empty sentence")
    bad = np.isnan(batch.scores) | (batch.scores == np.inf)
    if bad.any():
        i = int(np.searchsorted(batch.score_off, np.flatnonzero(bad)[0],
                                side="right") - 1)
        raise ValueError(f"Sample {i}: arc scores contain NaN or +inf")
    if n.size:
        i = int(np.argmax(n))
        m = int(n[i]) + 1
        check_total(per_cell * m * m, f"the span tables of its {m - 1} words",
                    f"Sample {i} of the batch", verb="need")
    return n


def eisner_max_marginals(batch, *, single_root=False):
    """Max-marginals of a batch of arc scores over projective trees: for every word d
    and every head h (and relation), the best score of a projective tree in which
    d hangs on h, and the best tree's score.

    Inside scores α of Eisner's spans (:func:`~structsvm.structures.dependency.eisner`)
    and outside scores β — the best rest of a tree around a span, from the whole
    sentence down the same recursions — in the (max, +) semiring give, for the
    incomplete span I between h and d that the arc h → d closes,

    .. math::

        \\mu(h \\to d) = \\alpha(I) + \\beta(I),

    the best tree with that arc (each projective tree has one derivation, so the
    arc's trees are the derivations through I), all in O(n³) per sentence. With
    relations, a code ``l * (n + 1) + h`` (:func:`encode_tree`) scores
    μ(h → d) − s(h → d) + s(h → d, l), s(h → d) the arc's best relation's score.

    Parameters
    ----------
    batch : ArcPotentials
        Arc scores (−inf: a forbidden arc or relation).
    single_root : bool, default=False
        Only trees whose root takes exactly one dependent.

    Returns
    -------
    tables : list of ndarray of shape (n_i, (n_i + 1) L)
        ``tables[i][d - 1, c]``: the best score of a tree with code c at word d
        (−inf: none, and for h = d).
    best : ndarray of shape (n_sentences,)
        The best tree's score (−inf: no tree of finite score).

    References
    ----------
    J. Eisner. Three new probabilistic models for dependency parsing: an
    exploration. COLING 1996.
    J. Goodman. Semiring parsing. Computational Linguistics 25(4), 1999.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((3, 3)); S[0, 1] = 2.0; S[1, 2] = 1.0; S[0, 2] = 0.5
    >>> tables, best = eisner_max_marginals(ArcPotentials(S.ravel(), [2]))
    >>> tables[0].tolist(), best.tolist()      # rows: words 1, 2; columns: heads 0-2
    ([[3.0, -inf, 0.5], [2.5, 3.0, -inf]], [3.0])
    """
    n = _check(batch, "eisner_max_marginals", 64)
    S, rels = batch.best_relations()
    S = np.ascontiguousarray(S, dtype=np.float64)
    arc_off = np.ascontiguousarray(batch.arc_off, dtype=np.int64)
    mm = np.empty(S.size)
    best = np.empty(n.size)
    _loops.max_marginals_batch(S, arc_off, np.ascontiguousarray(batch.head_off),
                               bool(single_root), mm, best)
    L = batch.n_labels
    tables = []
    for i, ni in enumerate(n):
        m = int(ni) + 1
        lo = int(arc_off[i])
        arcs = mm[lo:lo + m * m].reshape(m, m)          # [head, dependent]
        if L == 1:
            tables.append(np.ascontiguousarray(arcs[:, 1:].T))
            continue
        full = batch.matrix(i)                          # (m, m, L): [h, d, l]
        with np.errstate(invalid="ignore"):
            codes = arcs[:, :, None] - S[lo:lo + m * m].reshape(m, m)[:, :, None] + full
        codes = np.where(np.isfinite(arcs)[:, :, None], codes, -np.inf)
        # code l * m + h of word d: table[d - 1, l * m + h]
        tables.append(np.ascontiguousarray(codes[:, 1:, :].transpose(1, 2, 0)
                                           .reshape(m - 1, L * m)))
    return tables, best


def kbest_eisner(batch, k, *, single_root=False):
    """The ``k`` highest-scoring projective trees of every sentence, best first.

    Huang & Chiang's (2005) k-best parsing on the hypergraph of Eisner's spans: every
    span keeps its k best derivations, each a split and the ranks of its two
    sub-spans' derivations (and of the arc's relation, for a span an arc closes),
    merged best first from the frontier of rank pairs (Algorithm 2: a heap seeded
    with every split's best pair; popping (j₁, j₂) adds (j₁ + 1, j₂) and, when
    j₁ = 0, (j₁, j₂ + 1)); O(n³ + n² k log k) per sentence. Eisner's derivations are
    unambiguous, so the k best derivations are the k best trees, labelled trees
    included (a tree and a relation per arc).

    Parameters
    ----------
    batch : ArcPotentials
        Arc scores (−inf: a forbidden arc or relation).
    k : int
        Trees per sentence (>= 1).
    single_root : bool, default=False
        Only trees whose root takes exactly one dependent.

    Returns
    -------
    list of (list of ndarray of int, ndarray of float)
        Every sentence's encoded trees (:func:`encode_tree`), best first, and their
        scores; fewer than k where fewer trees have a finite score. Trees of equal
        score come in the search's order.

    References
    ----------
    L. Huang, D. Chiang. Better k-best parsing. IWPT 2005.
    J. Eisner. Three new probabilistic models for dependency parsing: an
    exploration. COLING 1996.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((3, 3)); S[0, 1] = 2.0; S[1, 2] = 1.0; S[0, 2] = 0.5
    >>> [(y.tolist(), float(s)) for y, s in zip(*kbest_eisner(ArcPotentials(S.ravel(),
    ...                                                                    [2]), 3)[0])]
    [([0, 1], 3.0), ([0, 0], 2.5), ([2, 0], 0.5)]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    k = int(k)
    n = _check(batch, "kbest_eisner", 40 * k)
    n_arcs = int(batch.arc_off[-1])
    top_sc = np.full((n_arcs, k), -np.inf)
    top_id = np.zeros((n_arcs, k), dtype=np.int64)
    top_n = np.zeros(n_arcs, dtype=np.int64)
    _loops.top_relations(np.ascontiguousarray(batch.scores, dtype=np.float64),
                         np.ascontiguousarray(batch.relations, dtype=np.int64),
                         np.ascontiguousarray(batch.slot_off, dtype=np.int64), k,
                         top_sc, top_id, top_n)
    head_off = np.ascontiguousarray(batch.head_off, dtype=np.int64)
    heads = np.zeros((int(head_off[-1]), k), dtype=np.int64)
    rels = np.zeros((int(head_off[-1]), k), dtype=np.int64)
    scores = np.empty((n.size, k))
    counts = np.zeros(n.size, dtype=np.int64)
    _loops.kbest_batch(np.ascontiguousarray(batch.arc_off, dtype=np.int64), head_off,
                       top_sc, top_id, top_n, bool(single_root), k, heads, rels, scores,
                       counts)
    L = batch.n_labels
    out = []
    for i in range(n.size):
        lo, hi, c = int(head_off[i]), int(head_off[i + 1]), int(counts[i])
        m = hi - lo + 1
        codes = heads[lo:hi, :c] + (rels[lo:hi, :c] * m if L > 1 else 0)
        out.append(([codes[:, j].copy() for j in range(c)], scores[i, :c].copy()))
    return out
