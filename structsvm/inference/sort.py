"""Ranking decoder: sort documents by score; loss-augmented, label each pair."""
from __future__ import annotations

import numpy as np

from . import _sort_jit
from ._registry import register_decoder

__all__ = ["sort_decode"]


def _orderings(batch):
    return [np.argsort(-batch.query_scores(i), kind="stable") for i in range(len(batch))]


def _labellings(batch):
    from ..outputs import PairLabelling

    s, off, targets = batch.scores, batch.offsets, batch.targets
    lens = np.diff(off)
    graded = np.array([y.grades is not None for y in targets], dtype=bool)
    # explicit-pair queries get equal grades here (no pairs) and are counted below
    grades = np.concatenate([y.grades if y.grades is not None else np.zeros(y.n_docs)
                             for y in targets]) if len(targets) else np.zeros(0)
    truth = np.concatenate([y.coef for y in targets]) if len(targets) else np.zeros(0)
    t = s + np.repeat(batch.margins, lens)
    up = np.zeros(s.size, dtype=np.int64)
    down = np.zeros(s.size, dtype=np.int64)
    _sort_jit.violated_counts_batch(s, t, grades, off, up, down)
    for i in np.flatnonzero(~graded):
        lo, hi = off[i], off[i + 1]
        a, b = targets[i].pairs[:, 0], targets[i].pairs[:, 1]
        v = s[lo + a] < t[lo + b]
        up[lo:hi] = np.bincount(a[v], minlength=hi - lo)
        down[lo:hi] = np.bincount(b[v], minlength=hi - lo)
    coef = truth - (up - down)
    swapped = (np.add.reduceat(up, np.minimum(off[:-1], s.size - 1)) if s.size
               else np.zeros(len(targets), dtype=np.int64))
    swapped[lens == 0] = 0
    return [PairLabelling(coef[off[i]:off[i + 1]], swapped[i]) for i in range(len(targets))]


@register_decoder("sort", structure="ranking")
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
        :class:`~structsvm.outputs.PairLabelling` in which pair (a, b) is
        swapped iff s_a − s_b < Δ_pair, the per-pair maximiser of Δ − w·δΦ.

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
    >>> from structsvm.features.ranking import RankingPotentials
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
