"""Training targets from a click log: Propensity SVM-Rank and the naive click SVM-Rank.

A click on document d of query q says, under the position-based model, "d was
examined and relevant". Joachims, Swaminathan & Schnabel (2017) turn every click j
into the constraints "d_j above every other document of its query", weighted by
the inverse of the propensity p_{k_j} that the position k_j it was shown at was
examined:

    ½‖w‖² + C Σ_j (1/p_{k_j}) Σ_{y ≠ d_j} max(0, 1 − w·(φ(q_j, d_j) − φ(q_j, y))).

Σ_j (1/p_{k_j}) rank(d_j) is an unbiased estimate of the summed rank of the
relevant documents (relevance being a click once examined), and the hinge sum an
upper bound of it, so the weighted objective learns what a learner given the
relevance itself would learn; the unweighted one (the naive click SVM-Rank) learns
the logging ranker's position bias along with it.
"""
from __future__ import annotations

import numpy as np

from ...corpora.clicks import as_click_logs
from .outputs import Preferences

__all__ = ["propensity_preferences", "click_weights", "click_totals",
           "preferences_from_totals"]


def click_weights(logs, propensities=None, *, clip=None):
    """The weight 1/p of every displayed entry of ``logs`` (for clicked entries
    the IPS weight; 1 each when ``propensities`` is None).

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
    propensities : None, "logged", PropensityCurve or array-like, default=None
        None: every weight 1. ``"logged"``: the log's own propensities. A
        :class:`~structsvm.structures.ranking.PropensityCurve`: its
        :meth:`~structsvm.structures.ranking.PropensityCurve.at` the entries'
        positions. An array: ``propensities[k - 1]`` is p_k (every displayed
        position must be covered).
    clip : float, optional
        Largest weight (a weight above becomes ``clip``; Strehl et al. 2010): less
        variance, some bias.

    Returns
    -------
    ndarray of shape (n_entries,)

    Raises
    ------
    ValueError
        When the log has no propensities (``"logged"``), an array does not cover a
        displayed position, a propensity is not in (0, 1], or ``clip < 1``.
    """
    logs = as_click_logs(logs)
    return _weights(logs, logs.positions, None, propensities, clip)


def _weights(logs, pos, entries, propensities, clip):
    """Weights of the entries ``entries`` (all: None) at positions ``pos``."""
    from .propensity import PropensityCurve

    if clip is not None and not (np.isfinite(clip) and clip >= 1):
        raise ValueError(f"clip must be a number >= 1 (the largest weight), got {clip!r}")
    if propensities is None:
        return np.ones(pos.size)
    if isinstance(propensities, str):
        if propensities != "logged":
            raise ValueError(f"propensities must be None, 'logged', a PropensityCurve or "
                             f"an array, got {propensities!r}")
        if logs.propensities is None:
            raise ValueError("propensities='logged', but the log has no propensities")
        p = logs.propensities if entries is None else logs.propensities[entries]
    elif isinstance(propensities, PropensityCurve):
        p = propensities.at(pos)
    else:
        curve = np.asarray(propensities, dtype=float).ravel()
        if pos.size and pos.max() > curve.size:
            first = np.argmax(pos > curve.size)
            e = first if entries is None else np.flatnonzero(entries)[first]
            s = int(logs.session_of[e])
            raise ValueError(f"session {s}: position {int(pos[first])} is beyond the "
                             f"{curve.size} propensities given (pass a PropensityCurve, "
                             "which extends itself, or a longer array)")
        p = curve[pos - 1]
    bad = ~(np.isfinite(p) & (p > 0) & (p <= 1))
    if bad.any():
        raise ValueError(f"the propensity of position {int(pos[np.argmax(bad)])} is "
                         f"{float(p[np.argmax(bad)])!r}, not in (0, 1]")
    w = 1.0 / p
    return w if clip is None else np.minimum(w, float(clip))


def click_totals(logs, n_docs, *, propensities=None, clip=None):
    """Per query, the summed weight of the clicks on each of its documents.

    The sufficient statistic of (Propensity) SVM-Rank: a click on document d at
    position k adds min(1/p_k, clip) to d's total (1 without propensities). Totals
    of logs read or simulated in parts add up, so a log too large to hold at once
    is summed part by part and turned into targets once, by
    :func:`preferences_from_totals`.

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
    n_docs : sequence of int
        The number of documents of each query.
    propensities, clip
        See :func:`click_weights`.

    Returns
    -------
    list of ndarray
        One array of shape (n_docs[q],) per query.

    Raises
    ------
    ValueError
        When a session's query or a document is outside ``n_docs``, or as
        :func:`click_weights` raises.
    """
    logs = as_click_logs(logs)
    n_docs = np.asarray(n_docs, dtype=np.int64).ravel()
    if np.any(n_docs < 0):
        raise ValueError("n_docs must hold numbers of documents (>= 0)")
    if len(logs) and logs.query.max() >= n_docs.size:
        s = int(np.argmax(logs.query >= n_docs.size))
        raise ValueError(f"session {s}: query {int(logs.query[s])} is outside the "
                         f"{n_docs.size} queries of n_docs")
    eq = logs.entry_query
    if logs.shown.size and np.any(logs.shown >= n_docs[eq]):
        e = int(np.argmax(logs.shown >= n_docs[eq]))
        raise ValueError(f"session {int(logs.session_of[e])}: document "
                         f"{int(logs.shown[e])} is outside the {int(n_docs[eq[e]])} "
                         f"documents of query {int(eq[e])}")
    c = logs.clicks
    w = _weights(logs, logs.positions[c], c, propensities, clip)
    start = np.concatenate([[0], np.cumsum(n_docs)])
    total = np.bincount(start[eq[c]] + logs.shown[c], weights=w,
                        minlength=int(start[-1]))
    return [total[start[q]:start[q + 1]] for q in range(n_docs.size)]


def preferences_from_totals(totals, *, scale=1.0):
    """Targets "each clicked document above every other document of its query".

    Parameters
    ----------
    totals : list of array-like
        Per query, the summed click weight of each document
        (:func:`click_totals`); documents with 0 give no pairs.
    scale : float, default=1.0
        Factor of every weight (e.g. 1 / the mean number of sessions per query).

    Returns
    -------
    list of Preferences
        Query q gets the pairs (d, y) for every d with a positive total and every
        y ≠ d, weighing ``scale * totals[q][d]``.

    Examples
    --------
    >>> y = preferences_from_totals([[0.0, 3.0, 0.0]])[0]
    >>> y.pairs.tolist(), y.weights_of_pairs().tolist()
    ([[1, 2], [1, 0]], [3.0, 3.0])
    """
    scale = float(scale)
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    out = []
    for q, tq in enumerate(totals):
        tq = np.asarray(tq, dtype=float).ravel()
        if not np.all(np.isfinite(tq)) or np.any(tq < 0):
            raise ValueError(f"Sample {q}: click totals must be finite and >= 0")
        n = tq.size
        better = np.flatnonzero(tq > 0)
        # every clicked document above each of the other n − 1
        a = np.repeat(better, n - 1)
        b = (a + np.tile(np.arange(1, n), better.size)) % n if n else a
        out.append(Preferences(n, pairs=np.stack([a, b], axis=1), weights=scale * tq[a]))
    return out


def propensity_preferences(logs, n_docs, *, propensities=None, clip=None, normalize=True):
    r"""Targets of Propensity SVM-Rank (or, without propensities, of the naive click
    SVM-Rank) from a click log, one weighted :class:`Preferences` per query.

    Every click on document d of query q, shown at position k, gives the pairs
    d ≻ y for every other document y of q, each weighing ω = min(1/p_k, clip)
    (1 without propensities), divided by the mean number of sessions per query when
    ``normalize``; the pairs of the clicks on one document are merged (their
    weights add: :func:`click_totals`, :func:`preferences_from_totals`). With
    ``RankingFeatures`` every learner then minimises

    .. math::

        \tfrac12\|w\|^2 + C \sum_j \omega_j \sum_{y \ne d_j}
        \max\bigl(0,\, 1 - w\cdot(\varphi(q_j, d_j) - \varphi(q_j, y))\bigr).

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
        Query indices and documents are indices into the training queries.
    n_docs : sequence of int
        The number of documents of each query (``[len(x) for x in X]``); a query
        without clicks gets no pairs.
    propensities : None, "logged", PropensityCurve or array-like, default=None
        The examination propensity of each position (see :func:`click_weights`).
        None: the naive click SVM-Rank, every click weighing 1.
    clip : float, optional
        Largest inverse propensity (see :func:`click_weights`).
    normalize : bool, default=True
        Divide the weights by the mean number of sessions per query, so that a
        query's summed weight estimates the summed click probability of its
        documents whatever the size of the log, and one C serves logs of every
        size (and the full-information ranking SVM on grades).

    Returns
    -------
    list of Preferences
        One per query of ``n_docs``, for
        :class:`~structsvm.structures.ranking.RankingFeatures` (``structsvm.fit(X,
        targets, feature_map=RankingFeatures())``).

    Raises
    ------
    ValueError
        When a session's query or a document is outside ``n_docs``, or as
        :func:`click_weights` raises.

    References
    ----------
    T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
    feedback. WSDM 2017 (Propensity SVM-Rank, Sec. 4).
    A. Strehl, J. Langford, L. Li, S. Kakade. Learning from logged implicit
    exploration data. NIPS 2010 (clipping).

    Examples
    --------
    >>> from structsvm.corpora.clicks import ClickLog
    >>> logs = [ClickLog(0, [2, 0, 1], [False, True, False], [1.0, 0.5, 1 / 3])]
    >>> y = propensity_preferences(logs, [3], propensities="logged")[0]
    >>> y.pairs.tolist(), y.weights_of_pairs().tolist()   # 0 above 1 and 2, 1/p = 2
    ([[0, 1], [0, 2]], [2.0, 2.0])
    """
    logs = as_click_logs(logs)
    totals = click_totals(logs, n_docs, propensities=propensities, clip=clip)
    scale = len(totals) / len(logs) if normalize and len(logs) else 1.0
    return preferences_from_totals(totals, scale=scale)
