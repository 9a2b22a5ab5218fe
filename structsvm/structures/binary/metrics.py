"""The measures the binary structure trains for, on a data set's labels and scores.

Each takes the true labels (positive where > 0: ±1, 0/1 or booleans) and the
predictions: a labelling (positive where > 0) for F-beta and the error rate, real
scores for the measures of a ranking (precision and recall at k, the
precision-recall break-even point, ROC area). Examples with equal scores are ranked
in random order and the measures of a ranking are their expected values over those
orders (for ROC area: a tied positive-negative pair counts half), so a labelling
passed as scores is scored consistently.

References
----------
T. Joachims. A support vector method for multivariate performance measures.
ICML 2005.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["error_rate", "f_beta_score", "precision_at_k", "recall_at_k", "prbep",
           "roc_auc", "resolve_k"]


def _labels(y_true, what="y_true"):
    y = np.asarray(y_true)
    if y.ndim != 1 and y.size != 1:
        raise ValueError(f"{what} must be 1-D, got shape {y.shape}")
    y = y.reshape(-1)
    if y.dtype.kind not in "biuf":
        raise TypeError(f"{what} must be numeric labels (positive where > 0), got "
                        f"dtype {y.dtype}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{what} holds NaN or infinite values")
    return y > 0


def _scores(y_pred, n, what="y_pred"):
    s = np.asarray(y_pred, dtype=float).reshape(-1)
    if s.size != n:
        raise ValueError(f"{what} has {s.size} entries for {n} examples")
    if not np.all(np.isfinite(s)):
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"Sample {bad}: {what} is NaN or infinite")
    return s


def contingency(y_true, y_pred):
    """(tp, fp, fn, tn) of a labelling (positive where > 0)."""
    y = _labels(y_true)
    p = _scores(y_pred, y.size) > 0
    tp = int(np.count_nonzero(y & p))
    fp = int(np.count_nonzero(~y & p))
    fn = int(np.count_nonzero(y & ~p))
    return tp, fp, fn, y.size - tp - fp - fn


def error_rate(y_true, y_pred):
    """(fp + fn) / n: the fraction of wrong labels.

    Examples
    --------
    >>> error_rate([1, -1, -1, 1], [1, 1, -1, -1])
    0.5
    """
    tp, fp, fn, tn = contingency(y_true, y_pred)
    n = tp + fp + fn + tn
    return (fp + fn) / n if n else 0.0


def f_beta_score(y_true, y_pred, beta=1.0):
    r"""F_β = (1 + β²) tp / ((1 + β²) tp + β² fn + fp) of a labelling.

    1 when there is no positive either way (nothing to find, nothing found), 0 when
    nothing right is found.

    Examples
    --------
    >>> f_beta_score([1, 1, -1, -1], [1, -1, 1, -1])
    0.5
    """
    tp, fp, fn, _ = contingency(y_true, y_pred)
    b2 = float(beta) ** 2
    den = (1.0 + b2) * tp + b2 * fn + fp
    return (1.0 + b2) * tp / den if den else 1.0


def resolve_k(k, n_pos, n, default="half"):
    """The number of top-ranked examples ``k`` stands for in a data set of ``n``
    examples with ``n_pos`` positives.

    Parameters
    ----------
    k : int, float or None
        An int ≥ 1: that many; a float in (0, 1): that fraction of the n examples
        (rounded, at least 1); None: ``default``.
    n_pos, n : int
    default : {"half", "twice"}
        None means half the positives (rounded up) or twice the positives (at most
        n), both at least 1: SVM-perf's defaults for precision and recall at k.

    Raises
    ------
    ValueError
        A k of another type or range, or more than n.
    """
    if k is None:
        kk = -(-n_pos // 2) if default == "half" else min(n, 2 * n_pos)
        kk = max(1, kk)
    elif isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real):
        raise ValueError(f"k must be an int >= 1, a fraction in (0, 1) or None, got "
                         f"{k!r}")
    elif isinstance(k, numbers.Integral):
        kk = int(k)
        if kk < 1:
            raise ValueError(f"k must be an int >= 1, a fraction in (0, 1) or None, "
                             f"got {k!r}")
    elif 0.0 < float(k) < 1.0:
        kk = max(1, int(round(float(k) * n)))
    else:
        raise ValueError(f"k must be an int >= 1, a fraction in (0, 1) or None, got "
                         f"{k!r}")
    if kk > n:
        raise ValueError(f"k={k!r} asks for the top {kk} of {n} examples")
    return kk


def top_k_hits(y, s, k):
    """Expected number of positives among the k highest scores (ties in random
    order). ``y`` boolean, ``s`` float, 1 <= k <= n."""
    n = s.size
    t = np.partition(s, n - k)[n - k]  # the k-th highest score
    above, tied = s > t, s == t
    slots = k - int(np.count_nonzero(above))
    return int(np.count_nonzero(y & above)) + slots * np.count_nonzero(y & tied) \
        / np.count_nonzero(tied)


def precision_at_k(y_true, scores, k=None):
    """Fraction of positives among the k highest-scoring examples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Positive where > 0.
    scores : array-like of shape (n_samples,)
    k : int, float or None, default=None
        An int: that many examples; a float in (0, 1): that fraction of them; None:
        half the positives, rounded up (:func:`resolve_k`).

    Examples
    --------
    >>> precision_at_k([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1], k=2)
    0.5
    """
    y = _labels(y_true)
    s = _scores(scores, y.size, "scores")
    kk = resolve_k(k, int(y.sum()), y.size, "half")
    return float(top_k_hits(y, s, kk) / kk)


def recall_at_k(y_true, scores, k=None):
    """Fraction of the positives among the k highest-scoring examples (1 when there
    is no positive).

    ``k`` as in :func:`precision_at_k`, but None means twice the positives.

    Examples
    --------
    >>> recall_at_k([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1], k=2)
    0.5
    """
    y = _labels(y_true)
    s = _scores(scores, y.size, "scores")
    n_pos = int(y.sum())
    kk = resolve_k(k, n_pos, y.size, "twice")
    return float(top_k_hits(y, s, kk) / n_pos) if n_pos else 1.0


def prbep(y_true, scores):
    """Precision-recall break-even point: precision (= recall) at k = the number of
    positives (1 when there is none).

    Examples
    --------
    >>> prbep([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.5
    """
    y = _labels(y_true)
    s = _scores(scores, y.size, "scores")
    n_pos = int(y.sum())
    return float(top_k_hits(y, s, n_pos) / n_pos) if n_pos else 1.0


def swapped_pairs(y, s):
    """Positive-negative pairs the scores rank the wrong way round (a tie counts
    half); ``y`` boolean, ``s`` float. O(n log n)."""
    n_pos = int(np.count_nonzero(y))
    order = np.argsort(s, kind="stable")
    ss = s[order]
    # average rank (1-based) of every score, ties sharing the mean of their ranks
    start = np.flatnonzero(np.concatenate([[True], ss[1:] != ss[:-1]]))
    ends = np.concatenate([start[1:], [ss.size]])
    mean_rank = (start + ends + 1) / 2.0
    ranks = np.empty(s.size)
    ranks[order] = np.repeat(mean_rank, ends - start)
    correct = ranks[y].sum() - n_pos * (n_pos + 1) / 2.0
    return n_pos * (s.size - n_pos) - correct


def roc_auc(y_true, scores):
    """Area under the ROC curve: the fraction of positive-negative pairs ranked
    right (a tie counts half; 1 when there is no such pair).

    Examples
    --------
    >>> roc_auc([1, -1, 1, -1], [0.9, 0.8, 0.7, 0.1])
    0.75
    """
    y = _labels(y_true)
    s = _scores(scores, y.size, "scores")
    n_pos = int(y.sum())
    pairs = n_pos * (y.size - n_pos)
    return float(1.0 - swapped_pairs(y, s) / pairs) if pairs else 1.0
