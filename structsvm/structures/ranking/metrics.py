"""Ranking metrics: NDCG@k, (mean) average precision, pairwise accuracy, Kendall's τ.

A ranking is, per query, the document indices best first (what ``predict`` returns);
each function validates its inputs and names the offending query.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ndcg_at_k", "average_precision", "mean_average_precision",
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
