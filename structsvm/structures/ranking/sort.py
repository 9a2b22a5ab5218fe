"""Ranking decoder: sort documents by score; loss-augmented, label each pair."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["sort_decode", "violated_pair_counts", "kbest_orderings", "SORT"]


def violated_pair_counts(scores, thresholds, grades, offsets):
    """Per-document counts of the violated preference pairs of graded queries.

    Query q owns documents ``offsets[q]:offsets[q + 1]``. In it, a pair (a, b) with
    ``grades[a] > grades[b]`` is violated when ``scores[a] < thresholds[b]``; with
    ``thresholds = scores + m`` these are the pairs scored less than m apart.

    Parameters
    ----------
    scores : array-like of float, shape (n_documents,)
    thresholds : array-like of float, shape (n_documents,)
    grades : array-like of float, shape (n_documents,)
    offsets : array-like of int, shape (n_queries + 1,)
        Increasing, from 0 to ``n_documents``.

    Returns
    -------
    up : ndarray of int64, shape (n_documents,)
        ``up[a]``: violated pairs in which a is the better document.
    down : ndarray of int64, shape (n_documents,)
        ``down[b]``: violated pairs in which b is the worse document.

    Raises
    ------
    ValueError
        When the arrays have different lengths or ``offsets`` does not cover them.

    Notes
    -----
    Sorting and a Fenwick tree over grade ranks, O(n log n) per query of n
    documents (Joachims 2006).

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([0., 1., 2.])
    >>> up, down = violated_pair_counts(s, s + 0.5, [2, 1, 0], [0, 3])
    >>> up.tolist(), down.tolist()
    ([2, 1, 0], [0, 1, 2])
    """
    s = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    t = np.ascontiguousarray(thresholds, dtype=np.float64).ravel()
    r = np.ascontiguousarray(grades, dtype=np.float64).ravel()
    off = np.ascontiguousarray(offsets, dtype=np.int64).ravel()
    if not (s.size == t.size == r.size):
        raise ValueError(f"scores, thresholds and grades differ in length "
                         f"({s.size}, {t.size}, {r.size})")
    if off.size == 0 or off[0] != 0 or off[-1] != s.size or np.any(np.diff(off) < 0):
        raise ValueError(f"offsets must increase from 0 to {s.size}")
    from . import _sort_jit  # numba only when counted: the losses import this module

    up = np.zeros(s.size, dtype=np.int64)
    down = np.zeros(s.size, dtype=np.int64)
    _sort_jit.violated_counts_batch(s, t, r, off, up, down)
    return up, down


def _orderings(batch):
    return [np.argsort(-batch.query_scores(i), kind="stable") for i in range(len(batch))]


def _labellings(batch):
    from .outputs import PairLabelling

    s, off, targets = batch.scores, batch.offsets, batch.targets
    lens = np.diff(off)
    graded = np.array([y.grades is not None for y in targets], dtype=bool)
    # explicit-pair queries get equal grades here (no pairs) and are counted below
    grades = np.concatenate([y.grades if y.grades is not None else np.zeros(y.n_docs)
                             for y in targets]) if len(targets) else np.zeros(0)
    truth = np.concatenate([y.coef for y in targets]) if len(targets) else np.zeros(0)
    t = s + np.repeat(batch.margins, lens)
    counts = violated_pair_counts(s, t, grades, off)
    # a graded query's pairs all weigh its one weight
    qw = np.repeat(np.array([y.weight for y in targets], dtype=float), lens)
    up, down = counts[0] * qw, counts[1] * qw
    for i in np.flatnonzero(~graded):
        lo, hi = off[i], off[i + 1]
        a, b = targets[i].pairs[:, 0], targets[i].pairs[:, 1]
        om = targets[i].weights_of_pairs()
        v = s[lo + a] < t[lo + b]
        up[lo:hi] = np.bincount(a[v], weights=om[v], minlength=hi - lo)
        down[lo:hi] = np.bincount(b[v], weights=om[v], minlength=hi - lo)
    coef = truth - (up - down)
    swapped = (np.add.reduceat(up, np.minimum(off[:-1], s.size - 1)) if s.size
               else np.zeros(len(targets)))
    swapped[lens == 0] = 0
    return [PairLabelling(coef[off[i]:off[i + 1]], swapped[i]) for i in range(len(targets))]


def sort_decode(batch, exclude=None):
    """Rank each query's documents by score; loss-augmented: most violated labelling.

    Parameters
    ----------
    batch : RankingPotentials
        Plain (from ``batch_potentials``) or loss-augmented (``augment``).
    exclude : ignored for plain batches
        Not supported: the second-best ordering is not what ranking learners need.

    Returns
    -------
    list
        Plain batch: per query an int array of document indices, best first (ties
        keep document order). Augmented batch: per query a
        :class:`~structsvm.structures.ranking.outputs.PairLabelling` in which pair (a, b) is
        swapped iff s_a − s_b < Δ_pair, the per-pair maximiser of Δ − w·δΦ (a
        pair's weight ω > 0 scales both terms alike).

    Notes
    -----
    The counts of swapped pairs per document come from sorting and a Fenwick tree
    over grade ranks, O(n log n) per query for graded targets (Joachims 2006); for
    explicit pairs, O(|P|).

    References
    ----------
    T. Joachims. Training linear SVMs in linear time. KDD 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.ranking.features import RankingPotentials
    >>> sort_decode(RankingPotentials(np.array([0.1, 2.0, -1.0]), [0, 3]))[0].tolist()
    [1, 0, 2]
    """
    if exclude is not None:
        raise ValueError("the sort decoder does not support exclude= (argmax over "
                         "y != y_i); use a loss-augmented batch")
    if not np.all(np.isfinite(batch.scores)):
        bad = int(np.searchsorted(batch.offsets, np.flatnonzero(~np.isfinite(batch.scores))[0],
                                  side="right") - 1)
        raise ValueError(f"Sample {bad}: document scores contain NaN or infinite values")
    if batch.targets is None:
        return _orderings(batch)
    return _labellings(batch)


def kbest_orderings(batch, k):
    """The ``k`` highest-scoring orderings of every query's documents, best first.

    An ordering π (best first) of n documents with scores s scores
    Σ_p (n − 1 − 2p) s_π(p) = Σ over ordered pairs (a above b) of s_a − s_b: sorting
    by score is best, and an ordering loses 2 (s_a − s_b) for every pair it puts
    in the wrong order. Lawler's (1972) partition finds the next best: the
    orderings that share the first j documents of a found one and differ at
    position j (with what earlier branches excluded there) have as their best the
    highest-scoring document allowed at j followed by the rest sorted, so a heap of
    these subproblems yields the orderings best first, O(k n² log k) per query
    instead of n! orderings.

    Parameters
    ----------
    batch : RankingPotentials
        Plain (not loss-augmented) document scores.
    k : int
        Orderings per query (>= 1); fewer when a query has fewer than k orderings.

    Returns
    -------
    list of (list of ndarray of int, ndarray of float)
        Every query's orderings (document indices, best first) and their scores
        w·Φ(q, π). Orderings of equal score (documents of equal score swapped) come
        in the search's order, the first as :func:`sort_decode` gives it.

    References
    ----------
    E. L. Lawler. A procedure for computing the K best solutions to discrete
    optimization problems and its application to the shortest path problem.
    Management Science 18(7), 1972.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.ranking.features import RankingPotentials
    >>> [(p.tolist(), float(s)) for p, s in zip(*kbest_orderings(
    ...     RankingPotentials(np.array([0.1, 2.0, -1.0]), [0, 3]), 3)[0])]
    [([1, 0, 2], 6.0), ([1, 2, 0], 3.8), ([0, 1, 2], 2.2)]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if batch.targets is not None:
        raise ValueError("kbest_orderings takes plain document scores, not a "
                         "loss-augmented batch")
    if not np.all(np.isfinite(batch.scores)):
        bad = int(np.searchsorted(batch.offsets,
                                  np.flatnonzero(~np.isfinite(batch.scores))[0],
                                  side="right") - 1)
        raise ValueError(f"Sample {bad}: document scores contain NaN or infinite values")
    return [_kbest_one(batch.query_scores(i), int(k)) for i in range(len(batch))]


def _kbest_one(s, k):
    import heapq

    from .outputs import order_coef

    n = s.size
    ranked = np.argsort(-s, kind="stable")          # documents by score, ties by index

    def best(prefix, banned):
        """The best ordering that starts with ``prefix`` and does not put a document
        of ``banned`` next (None: none allowed)."""
        used = set(prefix) | banned
        nxt = next((int(d) for d in ranked if d not in used), None)
        if nxt is None:
            return None
        taken = set(prefix) | {nxt}
        return np.array(list(prefix) + [nxt] + [int(d) for d in ranked
                                                if d not in taken], dtype=np.intp)

    def score(order):
        return float(order_coef(order) @ s)

    first = best((), set())
    if first is None:                                # no documents: the empty ordering
        return [np.zeros(0, dtype=np.intp)], np.zeros(1)
    heap = [(-score(first), 0, first, 0, frozenset())]
    count = 1
    out, scores = [], []
    while heap and len(out) < k:
        neg, _, order, fixed, banned = heapq.heappop(heap)
        out.append(order)
        scores.append(-neg)
        for j in range(fixed, n - 1):               # differ first at position j
            ban = (set(banned) if j == fixed else set()) | {int(order[j])}
            child = best(tuple(int(d) for d in order[:j]), ban)
            if child is not None:
                heapq.heappush(heap, (-score(child), count, child, j, frozenset(ban)))
                count += 1
    return out, np.array(scores)


SORT = Decoder(name="sort", structure="ranking", func=sort_decode, nbest=kbest_orderings)
