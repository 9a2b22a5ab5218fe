r"""Counterfactual evaluation: how a new ranker would do, estimated from logged clicks.

A logged session showed the logging ranker's list; a new ranker S would have put
each document d of the query at rank r_S(d). Under the position-based model a
click on d, shown at position k, happens with probability p_k ρ_d (ρ_d: the
probability of a click once examined), so weighting it by 1/p_k gives an unbiased
estimate of ρ_d, and

.. math::

    \hat V(S) = \frac{1}{n} \sum_{s=1}^{n} \sum_{d\,\text{clicked in}\, s}
    \frac{\lambda(r_S(d))}{p_{k_s(d)}}, \qquad
    \mathbb{E}\,\hat V(S) = \frac{1}{n} \sum_{s=1}^{n} \sum_{d} \rho_d\,\lambda(r_S(d)),

the inverse-propensity-scoring (IPS) estimate of the per-session click metric
λ: the rank itself (Joachims et al.'s average rank of the relevant results, lower
is better) or the DCG gain 1/log2(1 + r) (higher is better), optionally cut at k.
Sessions are independent, so the standard error is that of a mean, and the
interval V̂ ± z SE is asymptotically exact. With propensities estimated by a
separate experiment (a :class:`~structsvm.structures.ranking.PropensityCurve`),
the variance of V̂ over the curve's bootstrap replicates is added: the interval
then accounts for both sources of error. The estimate is unbiased when every
document that can be clicked was shown at a position with p > 0 in every session
(logs of the whole list), and the propensities are right: with propensities
relative to position 1 it estimates p_1 times the value.

References
----------
T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
feedback. WSDM 2017, Sec. 3.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import norm

from ...corpora.clicks import as_click_logs
from .clicks import _weights
from .propensity import PropensityCurve

__all__ = ["CounterfactualEstimate", "ips_estimate", "expected_click_metric", "METRICS"]

#: The per-click metrics: λ(r) of a clicked document at rank r under the new ranker.
METRICS = ("rank", "dcg")


class CounterfactualEstimate(NamedTuple):
    """An IPS estimate with its standard error and confidence interval."""

    value: float
    stderr: float
    lower: float
    upper: float
    level: float
    n_sessions: int


def _gain(ranks, metric, k):
    ranks = np.asarray(ranks, dtype=float)
    if metric == "rank":
        if k is not None:
            raise ValueError("k (a cut-off) applies to metric='dcg' only")
        return ranks
    g = 1.0 / np.log2(1.0 + ranks)
    return g if k is None else np.where(ranks <= k, g, 0.0)


def _check_metric(metric, k):
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if k is not None and int(k) < 1:
        raise ValueError(f"k must be >= 1 or None, got {k!r}")


def _ranks_of(rankings):
    """Per query, the 1-based rank of every document under ``rankings``."""
    out = []
    for q, order in enumerate(rankings):
        order = np.asarray(order).ravel()
        if order.dtype.kind not in "iu" or not np.array_equal(np.sort(order),
                                                              np.arange(order.size)):
            raise ValueError(f"Sample {q}: a ranking must be a permutation of the "
                             "query's document indices (best first)")
        r = np.empty(order.size, dtype=np.int64)
        r[order] = np.arange(1, order.size + 1)
        out.append(r)
    return out


def ips_estimate(logs, rankings, *, metric="dcg", k=None, propensities="logged",
                 clip=None, level=0.95):
    r"""The IPS estimate of a new ranker's mean per-session click metric, from logs.

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
        Sessions logged under another ranker (or rankers); query and document
        indices refer to ``rankings``.
    rankings : list of array-like of int
        Per query, the new ranker's ordering of its documents, best first (what
        ``predict`` returns).
    metric : {"dcg", "rank"}, default="dcg"
        λ(r) of a clicked document at rank r: 1/log2(1 + r), or r.
    k : int, optional
        DCG cut-off: documents ranked below k gain 0.
    propensities : "logged", PropensityCurve or array-like, default="logged"
        Examination propensities of the logged positions (see
        :func:`~structsvm.structures.ranking.click_weights`). A curve with bootstrap
        replicates widens the interval by their spread.
    clip : float, optional
        Largest inverse propensity (biased, less variance).
    level : float, default=0.95
        Confidence level of the normal interval.

    Returns
    -------
    CounterfactualEstimate
        ``value`` = V̂, ``stderr`` = the sample standard deviation of the sessions'
        terms over √n (and the replicates' spread, in quadrature),
        ``lower``/``upper`` = V̂ ∓ z_{(1+level)/2} stderr.

    Raises
    ------
    ValueError
        When the log is empty, a session's query or document is outside
        ``rankings``, or as ``click_weights`` raises.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.corpora.clicks import simulate_click_logs
    >>> rel = [np.array([0, 2, 0, 1])]
    >>> logs = simulate_click_logs([np.arange(4)], rel, n_sessions=20000, random_state=0)
    >>> est = ips_estimate(logs, [np.array([1, 3, 0, 2])], metric="rank")
    >>> round(est.value, 1)   # truth: 0.1·3 + 0.9·1 + 0.1·4 + 0.367·2 = 2.33
    2.3
    """
    logs = as_click_logs(logs)
    _check_metric(metric, k)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if len(logs) == 0:
        raise ValueError("the log has no sessions")
    ranks = _ranks_of(rankings)
    if logs.query.max() >= len(ranks):
        s = int(np.argmax(logs.query >= len(ranks)))
        raise ValueError(f"session {s}: query {int(logs.query[s])} is outside the "
                         f"{len(ranks)} rankings")
    lens = np.array([r.size for r in ranks], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)])
    eq = logs.entry_query
    if np.any(logs.shown >= lens[eq]):
        e = int(np.argmax(logs.shown >= lens[eq]))
        raise ValueError(f"session {int(logs.session_of[e])}: document "
                         f"{int(logs.shown[e])} is outside the {int(lens[eq[e]])} "
                         f"documents ranked for query {int(eq[e])}")
    c = logs.clicks
    pos = logs.positions[c]
    w = _weights(logs, pos, c, propensities, clip)
    r_new = np.concatenate(ranks)[start[eq[c]] + logs.shown[c]]
    gain = _gain(r_new, metric, k)
    terms = np.bincount(logs.session_of[c], weights=w * gain, minlength=len(logs))
    n = len(logs)
    value = float(terms.mean())
    se = float(terms.std(ddof=1) / np.sqrt(n)) if n > 1 else float("inf")
    if isinstance(propensities, PropensityCurve):
        # V̂ under each bootstrap replicate of the propensities: Σ_k G_k / p_k / n,
        # G_k the summed gain of the clicks at position k
        G = np.bincount(pos, weights=gain)
        k_all = np.arange(G.size)[1:]
        vals = []
        for rep in propensities.replicate_curves():
            wk = 1.0 / rep.at(k_all)
            if clip is not None:
                wk = np.minimum(wk, float(clip))
            vals.append(float(G[1:] @ wk) / n)
        if len(vals) > 1:
            se = float(np.hypot(se, np.std(vals, ddof=1)))
    z = float(norm.ppf(0.5 + level / 2.0))
    return CounterfactualEstimate(value, se, value - z * se, value + z * se, float(level), n)


def expected_click_metric(rankings, click_relevance, *, metric="dcg", k=None,
                          query_weights=None):
    """The value an IPS estimate estimates, from known click probabilities.

    Σ_d ρ_d λ(r_S(d)) per query, averaged over queries with ``query_weights``
    (e.g. the numbers of logged sessions of each query): the true value of a
    simulation, in which ρ is known
    (:func:`structsvm.corpora.clicks.click_probabilities`).

    Parameters
    ----------
    rankings : list of array-like of int
        Per query, the ranker's ordering, best first.
    click_relevance : list of array-like
        Per query, ρ_d: the probability of a click on each document once examined.
    metric : {"dcg", "rank"}, default="dcg"
    k : int, optional
        DCG cut-off.
    query_weights : array-like, optional
        Weight of each query (default: equal).

    Returns
    -------
    float

    Examples
    --------
    >>> expected_click_metric([[1, 0]], [[0.5, 1.0]], metric="rank")   # 1·1 + 0.5·2
    2.0
    """
    _check_metric(metric, k)
    ranks = _ranks_of(rankings)
    if len(click_relevance) != len(ranks):
        raise ValueError(f"{len(ranks)} rankings but {len(click_relevance)} queries of "
                         "click probabilities")
    per_query = np.empty(len(ranks))
    for q, (r, rho) in enumerate(zip(ranks, click_relevance)):
        rho = np.asarray(rho, dtype=float).ravel()
        if rho.size != r.size:
            raise ValueError(f"Sample {q}: {rho.size} click probabilities for "
                             f"{r.size} documents")
        per_query[q] = float(rho @ _gain(r, metric, k))
    wq = np.ones(len(ranks)) if query_weights is None else \
        np.asarray(query_weights, dtype=float).ravel()
    if wq.size != len(ranks) or np.any(wq < 0) or wq.sum() <= 0:
        raise ValueError("query_weights must hold one non-negative weight per query, "
                         "not all 0")
    return float(wq @ per_query / wq.sum())
