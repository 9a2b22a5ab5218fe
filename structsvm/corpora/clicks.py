"""Clickthrough: simulated users, and preference pairs read off their clicks.

A user issues query q, sees the top of a ranked list and clicks on some results. A
click on the result at position i while the results above it were skipped says
that, for this user, it should have been ranked above them (the lecture's "click on
item i discards items 1..i-1 implicitly"; Joachims 2002). The pairs
:func:`preferences_from_clicks` extracts are targets for
:class:`structsvm.structures.ranking.features.RankingFeatures`.

The simulator models position bias (users rarely look far down the list) and noisy
users (irrelevant results get clicked, relevant ones skipped), so that click-derived
pairs are biased and noisy as real ones are (Joachims et al. 2005).

References
----------
T. Joachims. Optimizing search engines using clickthrough data. KDD 2002.
T. Joachims, L. Granka, B. Pan, H. Hembrooke, G. Gay. Accurately interpreting
clickthrough data as implicit feedback. SIGIR 2005.
N. Craswell, O. Zoeter, M. Taylor, B. Ramsey. An experimental comparison of click
position-bias models. WSDM 2008.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["ClickLog", "simulate_clicks", "preferences_from_clicks", "click_preferences",
           "make_ranking_problem", "RULES"]

RULES = ("skip_above", "last_click_skip_above", "skip_previous", "no_click_next")


class ClickLog(NamedTuple):
    """One session: the query, the documents shown (best first) and the clicks."""

    query: int
    shown: np.ndarray    # document indices in displayed order
    clicks: np.ndarray   # bool per displayed position


def _click_prob(rel, max_grade, noise):
    frac = (2.0 ** rel - 1.0) / (2.0 ** max_grade - 1.0) if max_grade > 0 else rel * 0.0
    return noise + (1.0 - 2.0 * noise) * frac


def simulate_clicks(rankings, relevance, *, n_sessions=1, model="cascade", top_k=10,
                    noise=0.1, eta=1.0, stop=0.7, max_grade=None, random_state=None):
    r"""Simulate users clicking on ranked result lists.

    Parameters
    ----------
    rankings : list of array-like of int
        Per query, the ranking shown (document indices, best first).
    relevance : list of array-like
        True grades of each query's documents (unknown to the learner).
    n_sessions : int, default=1
        Sessions (users) per query.
    model : {"cascade", "position"}, default="cascade"
        ``"cascade"``: the user reads top-down, clicks a result with probability
        p(rel) and, after a click, stops with probability ``stop``·(click was on a
        relevant result) (the dependent click model). ``"position"``: the result at
        position k (from 0) is examined with probability (1/(k+1))^η independently
        and clicked if examined with probability p(rel).
    top_k : int, default=10
        Results shown.
    noise : float in [0, 0.5), default=0.1
        p(rel) = noise + (1 − 2·noise)(2^rel − 1)/(2^max_grade − 1): even irrelevant
        results get clicked, and relevant ones skipped, with probability ``noise``.
    eta : float, default=1.0
        Strength of position bias (``"position"`` model).
    stop : float in [0, 1], default=0.7
        Probability of leaving after a click on a satisfying result (``"cascade"``).
    max_grade : float, optional
        Highest grade (default: the largest grade in ``relevance``).
    random_state : int, RandomState or None

    Returns
    -------
    list of ClickLog
        ``n_sessions`` logs per query, in query order.

    Examples
    --------
    >>> logs = simulate_clicks([[0, 1, 2]], [[0, 0, 2]], noise=0.0, random_state=0)
    >>> logs[0].clicks.tolist()
    [False, False, True]
    """
    if model not in ("cascade", "position"):
        raise ValueError(f"model must be 'cascade' or 'position', got {model!r}")
    if not 0 <= noise < 0.5:
        raise ValueError(f"noise must be in [0, 0.5), got {noise!r}")
    if not 0 <= stop <= 1:
        raise ValueError(f"stop must be in [0, 1], got {stop!r}")
    if len(rankings) != len(relevance):
        raise ValueError(f"rankings has {len(rankings)} queries but relevance has "
                         f"{len(relevance)}")
    rng = check_random_state(random_state)
    rels = [np.asarray(r, dtype=float).ravel() for r in relevance]
    if max_grade is None:
        max_grade = max((float(r.max()) for r in rels if r.size), default=1.0)
    logs = []
    for q, (order, rel) in enumerate(zip(rankings, rels)):
        order = np.asarray(order, dtype=np.intp).ravel()
        if order.size != rel.size or not np.array_equal(np.sort(order), np.arange(rel.size)):
            raise ValueError(f"Sample {q}: the ranking must be a permutation of the "
                             f"query's {rel.size} documents")
        shown = order[:top_k]
        p = _click_prob(rel[shown], max_grade, noise)
        for _ in range(n_sessions):
            clicks = np.zeros(shown.size, dtype=bool)
            if model == "position":
                seen = rng.random_sample(shown.size) < (1.0 / np.arange(1, shown.size + 1)) ** eta
                clicks = seen & (rng.random_sample(shown.size) < p)
            else:
                for k in range(shown.size):
                    if rng.random_sample() < p[k]:
                        clicks[k] = True
                        if rel[shown[k]] > 0 and rng.random_sample() < stop:
                            break
            logs.append(ClickLog(q, shown.copy(), clicks))
    return logs


def preferences_from_clicks(shown, clicks, rule="skip_above"):
    """Preference pairs (better, worse) implied by one session's clicks.

    Parameters
    ----------
    shown : array-like of int
        Documents in displayed order.
    clicks : array-like of bool
        Click per displayed position.
    rule : str or sequence of str, default="skip_above"
        - ``"skip_above"``: a clicked result beats every skipped result above it
          (Joachims 2002, "click > skip above");
        - ``"last_click_skip_above"``: only the last click does;
        - ``"skip_previous"``: a clicked result beats the skipped result just above;
        - ``"no_click_next"``: a clicked result beats the unclicked result just below.
        A list combines rules (pairs deduplicated).

    Returns
    -------
    ndarray of shape (n_pairs, 2)
        Document indices (better, worse).

    Examples
    --------
    >>> preferences_from_clicks([5, 3, 8, 1], [False, True, False, True]).tolist()
    [[3, 5], [1, 5], [1, 8]]
    """
    rules = [rule] if isinstance(rule, str) else list(rule)
    for r in rules:
        if r not in RULES:
            raise ValueError(f"unknown rule {r!r}; choose from {RULES}")
    shown = np.asarray(shown, dtype=np.intp).ravel()
    clicks = np.asarray(clicks, dtype=bool).ravel()
    if shown.size != clicks.size:
        raise ValueError(f"shown has {shown.size} documents but clicks has {clicks.size}")
    clicked = np.flatnonzero(clicks)
    pairs = []
    for r in rules:
        if r in ("skip_above", "last_click_skip_above"):
            use = clicked if r == "skip_above" else clicked[-1:]
            for i in use:
                pairs += [(shown[i], shown[j]) for j in range(i) if not clicks[j]]
        elif r == "skip_previous":
            pairs += [(shown[i], shown[i - 1]) for i in clicked if i > 0 and not clicks[i - 1]]
        else:
            pairs += [(shown[i], shown[i + 1]) for i in clicked
                      if i + 1 < shown.size and not clicks[i + 1]]
    if len(rules) > 1:
        pairs = list(dict.fromkeys(pairs))
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


def click_preferences(logs, n_queries, rule="skip_above"):
    """Pool the pairs of every session, per query (pairs seen k times count k times).

    Returns
    -------
    list of ndarray of shape (n_pairs_q, 2)
        One array per query (empty for queries without clicks), ready as ``Y`` for
        :class:`~structsvm.structures.ranking.features.RankingFeatures`.
    """
    per_query = [[] for _ in range(n_queries)]
    for s, log in enumerate(logs):
        if not 0 <= log.query < n_queries:
            raise ValueError(f"session {s}: query {log.query} outside 0..{n_queries - 1}")
        per_query[log.query].append(preferences_from_clicks(log.shown, log.clicks, rule))
    return [np.concatenate(p) if p else np.zeros((0, 2), dtype=np.intp) for p in per_query]


def make_ranking_problem(n_queries=50, n_docs=20, n_features=10, *, n_grades=3,
                         noise=0.5, random_state=None):
    """Synthetic queries whose grades come from a hidden linear scorer.

    Document features are standard normal; grade = quantile bin of w*·φ + noise
    (``n_grades`` levels, the top level rarest).

    Returns
    -------
    X : list of ndarray of shape (n_docs, n_features)
    Y : list of ndarray of shape (n_docs,)
        Grades 0 .. n_grades − 1.
    w_true : ndarray of shape (n_features,)
    """
    rng = check_random_state(random_state)
    w_true = rng.standard_normal(n_features)
    w_true /= np.linalg.norm(w_true)
    cuts = np.quantile(rng.standard_normal(100000) * np.hypot(1.0, noise),
                       np.linspace(0.55, 0.95, n_grades)[:-1] if n_grades > 1 else [])
    X, Y = [], []
    for _ in range(n_queries):
        x = rng.standard_normal((n_docs, n_features))
        latent = x @ w_true + noise * rng.standard_normal(n_docs)
        X.append(x)
        Y.append(np.searchsorted(cuts, latent).astype(float))
    return X, Y, w_true
