"""Clickthrough: click logs, simulated users, and preference pairs read off clicks.

A user issues query q, sees a ranked list and clicks on some results. A click on
the result at position i while the results above it were skipped says that, for
this user, it should have been ranked above them (the lecture's "click on item i
discards items 1..i-1 implicitly"; Joachims 2002). The pairs
:func:`preferences_from_clicks` extracts are targets for
:class:`structsvm.structures.ranking.features.RankingFeatures`.

Clicks are biased by position: a result shown lower is examined less often. In the
position-based model a result at position k is examined with probability p_k,
independently of its relevance, and clicked if examined with a probability that
grows with its relevance (Craswell et al. 2008). Logs that record the examination
propensities, or hold randomised swaps from which they can be estimated, are what
the propensity-weighted ranking SVM and counterfactual evaluation need (Joachims,
Swaminathan & Schnabel 2017; :mod:`structsvm.structures.ranking`).

- :class:`ClickLog`: one session; :class:`ClickLogs`: many, stored column-wise;
- :func:`simulate_click_logs` / :func:`simulate_clicks`: simulated users (cascade or
  position-based, noisy, optionally under randomised top-1/position-k swaps);
- :func:`read_click_log` / :func:`write_click_log`: the JSON Lines click-log format;
- :func:`preferences_from_clicks`, :func:`click_preferences`: pairs read off clicks.

References
----------
T. Joachims. Optimizing search engines using clickthrough data. KDD 2002.
T. Joachims, L. Granka, B. Pan, H. Hembrooke, G. Gay. Accurately interpreting
clickthrough data as implicit feedback. SIGIR 2005.
N. Craswell, O. Zoeter, M. Taylor, B. Ramsey. An experimental comparison of click
position-bias models. WSDM 2008.
T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
feedback. WSDM 2017.
"""
from __future__ import annotations

import json
import math
import os
from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state

from ..limits import check_array_size
from ._lines import open_data, quote, read_lines, source_name

__all__ = ["ClickLog", "ClickLogs", "as_click_logs", "simulate_click_logs",
           "simulate_clicks", "click_probabilities", "examination_probabilities",
           "read_click_log", "write_click_log", "preferences_from_clicks",
           "click_preferences", "make_ranking_problem", "RULES"]

RULES = ("skip_above", "last_click_skip_above", "skip_previous", "no_click_next")


class ClickLog(NamedTuple):
    """One session: the query, the documents shown (best first) and the clicks.

    ``propensities``, when the log has them, holds the probability that the user
    examined each displayed position (as the logging system knows or estimated it).
    """

    query: int
    shown: np.ndarray    # document indices in displayed order
    clicks: np.ndarray   # bool per displayed position
    propensities: np.ndarray | None = None   # examination probability per position


class ClickLogs:
    """Many sessions of a click log, stored column-wise.

    Session s showed the documents ``shown[offsets[s]:offsets[s + 1]]`` (indices
    into its query's documents, in displayed order) for query ``query[s]``; the same
    slice of ``clicks`` says which were clicked and, when present, of
    ``propensities`` how likely each position was to be examined. Iterating yields
    :class:`ClickLog` sessions; every function that takes a list of sessions takes
    a ClickLogs as well, and the estimators of :mod:`structsvm.structures.ranking`
    work on its columns directly.

    Parameters
    ----------
    query : array-like of int, shape (n_sessions,)
        Query index of each session (0-based).
    offsets : array-like of int, shape (n_sessions + 1,)
        Increasing from 0 to the number of displayed entries.
    shown : array-like of int, shape (n_entries,)
        Document index (within the query) of every displayed entry.
    clicks : array-like of bool, shape (n_entries,)
    propensities : array-like of float, shape (n_entries,), optional
        Examination probability of each entry's position, in (0, 1].
    query_ids : array-like, optional
        The label of each query index (a log read from a file).
    document_ids : list of array-like, optional
        Per query, the label of each document index (a log read from a file).
    X : list of ndarray, optional
        Per query, the features of its documents (rows by document index), when the
        log carried them.

    Raises
    ------
    ValueError
        When the columns disagree in length, offsets do not increase from 0, an
        index is negative, a session shows a document twice, or a propensity is
        outside (0, 1].

    Examples
    --------
    >>> logs = ClickLogs.from_sessions([ClickLog(0, [2, 0, 1], [False, True, False]),
    ...                                 ClickLog(1, [1, 0], [True, False])])
    >>> len(logs), logs.positions.tolist(), logs[1].shown.tolist()
    (2, [1, 2, 3, 1, 2], [1, 0])
    """

    def __init__(self, query, offsets, shown, clicks, propensities=None, *,
                 query_ids=None, document_ids=None, X=None):
        self._set(query, offsets, shown, clicks, propensities, query_ids, document_ids, X)
        self._check()

    @classmethod
    def _valid(cls, query, offsets, shown, clicks, propensities=None):
        """A ClickLogs of columns built valid (the simulator's): not checked again."""
        logs = cls.__new__(cls)
        logs._set(query, offsets, shown, clicks, propensities, None, None, None)
        return logs

    def _set(self, query, offsets, shown, clicks, propensities, query_ids, document_ids,
             X):
        self.query = _indices(query, "query")
        self.offsets = _indices(offsets, "offsets")
        self.shown = _indices(shown, "shown")
        clicks = np.asarray(clicks)
        if clicks.dtype != bool and clicks.size and not np.isin(clicks, (0, 1)).all():
            raise ValueError("clicks must be booleans (or 0/1)")
        self.clicks = clicks.astype(bool).ravel()
        self.propensities = (None if propensities is None
                             else np.asarray(propensities, dtype=float).ravel())
        self.query_ids = query_ids
        self.document_ids = document_ids
        self.X = X

    def _check(self):
        n, m = self.query.size, self.shown.size
        off = self.offsets
        if off.size != n + 1 or off[0] != 0 or off[-1] != m or np.any(np.diff(off) < 0):
            raise ValueError(f"offsets must increase from 0 to the {m} displayed entries "
                             f"and have {n + 1} entries (one more than the sessions)")
        if self.clicks.size != m:
            raise ValueError(f"clicks has {self.clicks.size} entries, shown has {m}")
        if n and self.query.min() < 0:
            raise ValueError(f"session {int(np.argmax(self.query < 0))}: negative query "
                             "index")
        if m and self.shown.min() < 0:
            raise ValueError(f"session {int(self.session_of[np.argmax(self.shown < 0)])}: "
                             "negative document index")
        if self.propensities is not None:
            pr = self.propensities
            if pr.size != m:
                raise ValueError(f"propensities has {pr.size} entries, shown has {m}")
            bad = ~(np.isfinite(pr) & (pr > 0) & (pr <= 1))
            if bad.any():
                raise ValueError(f"session {int(self.session_of[np.argmax(bad)])}: "
                                 "propensities must be in (0, 1]")
        if m > 1:  # a document shown twice in one session
            ses = self.session_of
            order = np.lexsort((self.shown, ses))
            s_o, d_o = ses[order], self.shown[order]
            dup = (s_o[1:] == s_o[:-1]) & (d_o[1:] == d_o[:-1])
            if dup.any():
                j = int(np.argmax(dup))
                raise ValueError(f"session {int(s_o[j])}: document {int(d_o[j])} is "
                                 "shown twice")

    # ------------------------------------------------------------------ views
    def __len__(self):
        return int(self.query.size)

    def __getitem__(self, s):
        if not -len(self) <= s < len(self):
            raise IndexError(f"session {s} out of range for {len(self)} sessions")
        s = int(s) % len(self)
        lo, hi = self.offsets[s], self.offsets[s + 1]
        prop = None if self.propensities is None else self.propensities[lo:hi].copy()
        return ClickLog(int(self.query[s]), self.shown[lo:hi].copy(),
                        self.clicks[lo:hi].copy(), prop)

    def __iter__(self):
        return (self[s] for s in range(len(self)))

    def __repr__(self):
        return (f"ClickLogs({len(self)} sessions, {int(self.clicks.sum())} clicks, "
                f"{self.n_queries} queries)")

    @property
    def n_queries(self):
        """1 + the largest query index (the number of query labels of a read log)."""
        if self.query_ids is not None:
            return len(self.query_ids)
        return int(self.query.max()) + 1 if len(self) else 0

    @property
    def session_of(self):
        """The session of every displayed entry, shape (n_entries,)."""
        return np.repeat(np.arange(len(self)), np.diff(self.offsets))

    @property
    def positions(self):
        """The 1-based position of every displayed entry, shape (n_entries,)."""
        return np.arange(self.shown.size) - np.repeat(self.offsets[:-1],
                                                      np.diff(self.offsets)) + 1

    @property
    def entry_query(self):
        """The query of every displayed entry, shape (n_entries,)."""
        return np.repeat(self.query, np.diff(self.offsets))

    # ------------------------------------------------------------------ building
    @classmethod
    def from_sessions(cls, sessions):
        """A ClickLogs of a sequence of :class:`ClickLog` (all with propensities, or
        none)."""
        sessions = list(sessions)
        for s, log in enumerate(sessions):
            if not isinstance(log, ClickLog):
                raise TypeError(f"session {s}: expected a ClickLog, got "
                                f"{type(log).__name__}")
        shown = [np.asarray(log.shown, dtype=np.int64).ravel() for log in sessions]
        clicks = [np.asarray(log.clicks, dtype=bool).ravel() for log in sessions]
        for s, (a, b) in enumerate(zip(shown, clicks)):
            if a.size != b.size:
                raise ValueError(f"session {s}: shown has {a.size} documents but clicks "
                                 f"has {b.size}")
        has = [log.propensities is not None for log in sessions]
        if any(has) and not all(has):
            raise ValueError(f"session {has.index(not has[0])}: propensities are given "
                             "for some sessions only")
        lens = [a.size for a in shown]
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts
               else np.zeros(0, dtype=dt))
        prop = None
        if sessions and all(has):
            prop = [np.asarray(log.propensities, dtype=float).ravel() for log in sessions]
            for s, (a, b) in enumerate(zip(prop, shown)):
                if a.size != b.size:
                    raise ValueError(f"session {s}: {a.size} propensities for {b.size} "
                                     "displayed documents")
            prop = cat(prop, float)
        return cls([log.query for log in sessions], np.concatenate([[0], np.cumsum(lens)]),
                   cat(shown, np.int64), cat(clicks, bool), prop)

    @classmethod
    def concatenate(cls, parts):
        """The sessions of several ClickLogs, in order (propensities kept only when
        every part has them; labels and features only when every part shares the
        same ones)."""
        parts = [as_click_logs(p) for p in parts]
        if not parts:
            return cls([], [0], [], [])
        sizes = [p.shown.size for p in parts]
        starts = np.concatenate([[0], np.cumsum(sizes)])
        offsets = np.concatenate([[0]] + [p.offsets[1:] + starts[k]
                                          for k, p in enumerate(parts)])
        prop = (np.concatenate([p.propensities for p in parts])
                if all(p.propensities is not None for p in parts) else None)
        same = {k: getattr(parts[0], k) for k in ("query_ids", "document_ids", "X")
                if all(getattr(p, k) is getattr(parts[0], k) for p in parts)}
        return cls(np.concatenate([p.query for p in parts]), offsets,
                   np.concatenate([p.shown for p in parts]),
                   np.concatenate([p.clicks for p in parts]), prop, **same)

    def select(self, sessions):
        """The sessions ``sessions`` (indices or a boolean mask), as a ClickLogs."""
        idx = np.arange(len(self))[np.asarray(sessions)]
        lens = np.diff(self.offsets)[idx]
        starts = self.offsets[idx]
        entries = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) \
            + np.arange(int(lens.sum()))
        prop = None if self.propensities is None else self.propensities[entries]
        return ClickLogs(self.query[idx], np.concatenate([[0], np.cumsum(lens)]),
                         self.shown[entries], self.clicks[entries], prop,
                         query_ids=self.query_ids, document_ids=self.document_ids,
                         X=self.X)


def _indices(values, name):
    """``values`` as int64, refusing what is not a whole number."""
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{name} must hold integers (indices)")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers (indices), got dtype {arr.dtype}")
    return arr.astype(np.int64).ravel()


def as_click_logs(logs):
    """``logs`` as a :class:`ClickLogs` (a ClickLogs itself, or a sequence of
    :class:`ClickLog`)."""
    if isinstance(logs, ClickLogs):
        return logs
    return ClickLogs.from_sessions(logs)


# ---------------------------------------------------------------------- simulation
def click_probabilities(relevance, *, noise=0.1, max_grade=None):
    """Probability that a user clicks a result once examined, per document.

    p(rel) = noise + (1 − 2·noise)(2^rel − 1)/(2^max_grade − 1): an irrelevant result
    is clicked with probability ``noise``, one of the highest grade skipped with
    probability ``noise``. This is the "relevance" a click-based estimate is
    unbiased for.

    Parameters
    ----------
    relevance : list of array-like
        Grades of each query's documents.
    noise : float in [0, 0.5), default=0.1
    max_grade : float, optional
        Highest grade (default: the largest grade in ``relevance``).

    Returns
    -------
    list of ndarray
        Per query, the click probability of each document.

    Examples
    --------
    >>> [p.round(3).tolist() for p in click_probabilities([[0, 1, 2]], noise=0.1)]
    [[0.1, 0.367, 0.9]]
    """
    if not 0 <= noise < 0.5:
        raise ValueError(f"noise must be in [0, 0.5), got {noise!r}")
    rels = [np.asarray(r, dtype=float).ravel() for r in relevance]
    for q, r in enumerate(rels):
        if not np.all(np.isfinite(r)):
            raise ValueError(f"Sample {q}: relevance contains NaN or infinity")
    if max_grade is None:
        max_grade = max((float(r.max()) for r in rels if r.size), default=1.0)
    return [_click_prob(r, max_grade, noise) for r in rels]


def _click_prob(rel, max_grade, noise):
    frac = (2.0 ** rel - 1.0) / (2.0 ** max_grade - 1.0) if max_grade > 0 else rel * 0.0
    return np.clip(noise + (1.0 - 2.0 * noise) * frac, 0.0, 1.0)


def examination_probabilities(n_positions, eta=1.0):
    """p_k = (1/k)^η for positions k = 1..n_positions: the position-based model's
    examination probabilities (Joachims, Swaminathan & Schnabel 2017, Sec. 6).

    Examples
    --------
    >>> examination_probabilities(4, eta=2.0).tolist()
    [1.0, 0.25, 0.1111111111111111, 0.0625]
    """
    if not (np.isfinite(eta) and eta >= 0):
        raise ValueError(f"eta must be a finite number >= 0, got {eta!r}")
    return (1.0 / np.arange(1, int(n_positions) + 1)) ** float(eta)


def simulate_click_logs(rankings, relevance, *, n_sessions=1, model="position", top_k=None,
                        noise=0.1, eta=1.0, stop=0.7, max_grade=None, swap=None,
                        random_state=None):
    r"""Simulate users clicking on ranked result lists, column-wise (fast for many
    sessions).

    Parameters
    ----------
    rankings : list of array-like of int
        Per query, the ranking of the logging ranker (document indices, best first).
    relevance : list of array-like
        True grades of each query's documents (unknown to the learner).
    n_sessions : int or array-like of int, default=1
        Sessions (users) per query: one number for every query, or one per query.
    model : {"position", "cascade"}, default="position"
        ``"position"``: the result at position k (from 1) is examined with
        probability (1/k)^η, independently, and clicked if examined with probability
        p(rel) (:func:`click_probabilities`); the log records the examination
        probabilities as its propensities. ``"cascade"``: the user reads top-down,
        clicks a result with probability p(rel) and, after a click on a relevant
        result, leaves with probability ``stop`` (the dependent click model); no
        propensities are recorded.
    top_k : int, optional
        Results shown (default: the whole ranking).
    noise : float in [0, 0.5), default=0.1
        Irrelevant results are clicked, and results of the highest grade skipped,
        with probability ``noise`` once examined.
    eta : float, default=1.0
        Strength of position bias (``"position"`` model).
    stop : float in [0, 1], default=0.7
        Probability of leaving after a click on a satisfying result (``"cascade"``).
    max_grade : float, optional
        Highest grade (default: the largest grade in ``relevance``).
    swap : int, optional
        Randomised swap interventions: every session draws k uniformly from
        1..min(swap, results shown) and shows the ranking with the results at
        positions 1 and k exchanged (k = 1: unchanged), as logged. These are the
        interventions :func:`structsvm.structures.ranking.propensities_from_swaps`
        estimates the position bias from.
    random_state : int, RandomState or None

    Returns
    -------
    ClickLogs
        The sessions of each query in turn, in query order.

    Raises
    ------
    ValueError
        When a ranking is not a permutation of its query's documents, or a parameter
        is outside its range.

    Notes
    -----
    Under the position-based model, P(click on d at k) = p_k · p(rel_d): a click says
    "examined and relevant", and 1/p_k-weighted clicks estimate p(rel) without bias
    (Joachims, Swaminathan & Schnabel 2017).

    Examples
    --------
    >>> logs = simulate_click_logs([[0, 1, 2]], [[2, 0, 0]], n_sessions=3, noise=0.0,
    ...                            random_state=0)
    >>> logs.clicks.reshape(3, 3)[:, 0].tolist(), logs.propensities[:3].tolist()
    ([True, True, True], [1.0, 0.5, 0.3333333333333333])
    """
    if model not in ("cascade", "position"):
        raise ValueError(f"model must be 'cascade' or 'position', got {model!r}")
    if not 0 <= stop <= 1:
        raise ValueError(f"stop must be in [0, 1], got {stop!r}")
    if top_k is not None and int(top_k) < 1:
        raise ValueError(f"top_k must be >= 1 or None, got {top_k!r}")
    if swap is not None and int(swap) < 1:
        raise ValueError(f"swap must be >= 1 or None, got {swap!r}")
    if len(rankings) != len(relevance):
        raise ValueError(f"rankings has {len(rankings)} queries but relevance has "
                         f"{len(relevance)}")
    probs = click_probabilities(relevance, noise=noise, max_grade=max_grade)
    exam = examination_probabilities(1, eta)  # checks eta
    counts = np.broadcast_to(np.asarray(n_sessions, dtype=np.int64), (len(probs),))
    if np.any(counts < 0):
        raise ValueError("n_sessions must be >= 0")
    rng = check_random_state(random_state)
    query, lens, shown, clicks = [], [], [], []
    for q, (order, p) in enumerate(zip(rankings, probs)):
        order = np.asarray(order, dtype=np.intp).ravel()
        if order.size != p.size or not np.array_equal(np.sort(order), np.arange(p.size)):
            raise ValueError(f"Sample {q}: the ranking must be a permutation of the "
                             f"query's {p.size} documents")
        S = int(counts[q])
        L = order.size if top_k is None else min(int(top_k), order.size)
        if S == 0 or L == 0:
            continue
        lists = np.broadcast_to(order[:L], (S, L)).copy()
        if swap is not None and L > 1:
            k = rng.randint(0, min(int(swap), L), size=S)   # 0-based position swapped
            rows = np.arange(S)
            lists[rows, 0], lists[rows, k] = lists[rows, k], order[0]
        pr = p[lists]
        if model == "position":
            exam = examination_probabilities(L, eta)
            c = (rng.random_sample((S, L)) < exam) & (rng.random_sample((S, L)) < pr)
        else:
            c = np.zeros((S, L), dtype=bool)
            active = np.ones(S, dtype=bool)
            satisfying = np.asarray(relevance[q], dtype=float).ravel()[lists] > 0
            for j in range(L):
                c[:, j] = active & (rng.random_sample(S) < pr[:, j])
                active &= ~(c[:, j] & satisfying[:, j] & (rng.random_sample(S) < stop))
        query.append(np.full(S, q))
        lens.append(np.full(S, L))
        shown.append(lists.ravel())
        clicks.append(c.ravel())
    if not query:
        return ClickLogs([], [0], [], [], [] if model == "position" else None)
    lens = np.concatenate(lens)
    offsets = np.concatenate([[0], np.cumsum(lens)])
    prop = None
    if model == "position":
        pos = np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], lens)
        prop = (1.0 / (pos + 1.0)) ** float(eta)
    # permutations of checked rankings, cut and swapped: valid by construction
    return ClickLogs._valid(np.concatenate(query), offsets, np.concatenate(shown),
                            np.concatenate(clicks), prop)


def simulate_clicks(rankings, relevance, *, n_sessions=1, model="cascade", top_k=10,
                    noise=0.1, eta=1.0, stop=0.7, max_grade=None, swap=None,
                    random_state=None):
    r"""Simulate users clicking on ranked result lists: a list of sessions.

    The same simulation as :func:`simulate_click_logs` (see there for the
    parameters), with the defaults of a results page (the cascade model, the top
    10) and one :class:`ClickLog` per session.

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
    return list(simulate_click_logs(rankings, relevance, n_sessions=n_sessions, model=model,
                                    top_k=top_k, noise=noise, eta=eta, stop=stop,
                                    max_grade=max_grade, swap=swap,
                                    random_state=random_state))


# ---------------------------------------------------------------------- files
def write_click_log(path, logs, *, query_ids=None, document_ids=None):
    """Write sessions in the JSON Lines click-log format (one session per line).

    Each line is an object ``{"query": Q, "shown": [D, ...], "clicks": [k, ...]}``
    with the query's label, the labels of the documents shown (best first), the
    1-based positions clicked and, when the log has them, ``"propensities"``: the
    examination probability of every displayed position. See
    :func:`read_click_log`.

    Parameters
    ----------
    path : str or path-like
    logs : ClickLogs or sequence of ClickLog
    query_ids : sequence, optional
        Label of each query index (default: the log's own labels, else the index).
    document_ids : list of sequences, optional
        Per query, the label of each document index (default: the log's own, else
        the index).
    """
    logs = as_click_logs(logs)
    qids = logs.query_ids if query_ids is None else query_ids
    dids = logs.document_ids if document_ids is None else document_ids
    pos = logs.positions
    with open(path, "w", encoding="utf-8") as fh:
        for s in range(len(logs)):
            lo, hi = logs.offsets[s], logs.offsets[s + 1]
            q = int(logs.query[s])
            docs = logs.shown[lo:hi]
            rec = {"query": _label(qids[q]) if qids is not None else q,
                   "shown": ([_label(dids[q][d]) for d in docs] if dids is not None
                             else docs.tolist()),
                   "clicks": pos[lo:hi][logs.clicks[lo:hi]].tolist()}
            if logs.propensities is not None:
                rec["propensities"] = logs.propensities[lo:hi].tolist()
            fh.write(json.dumps(rec, allow_nan=False) + "\n")


def _label(v):
    return v.item() if isinstance(v, np.generic) else v


def _reject_constant(name):
    raise ValueError(f"{name} is not a finite number")


def read_click_log(path, *, query_ids=None, document_ids=None):
    """Read a click log in the JSON Lines format (one session per line).

    Each non-blank line is a JSON object:

    - ``"query"``: the query's label (a string or an integer);
    - ``"shown"``: the labels of the documents shown, best first (strings or
      integers, no document twice);
    - ``"clicks"``: the 1-based positions clicked (a list, possibly empty);
    - ``"propensities"`` (optional, on every line or none): the examination
      probability of every displayed position, in (0, 1];
    - ``"features"`` (optional): the features of every document shown, a list of
      lists of numbers of one length throughout the file.

    Labels become indices: a query's index is its place in ``query_ids`` (default:
    order of first appearance), a document's its place in its query's
    ``document_ids`` (default: order of first appearance within the query). Labels
    are compared as text, so ``7`` and ``"7"`` are the same label.

    Parameters
    ----------
    path : str or path-like
    query_ids : sequence, optional
        The labels of the queries, in index order (e.g. the ``qids`` of the
        :class:`~structsvm.corpora.RankingData` whose documents the log shows).
    document_ids : list of sequences, optional
        Per query index, the labels of its documents in index order (needs
        ``query_ids``).

    Returns
    -------
    ClickLogs
        With ``query_ids`` and ``document_ids`` (the labels of every index) and
        ``X`` (per query, the features of its documents by index) when the file
        has features.

    Raises
    ------
    ValueError
        Naming the file and the line: text that is not a JSON object, missing or
        malformed fields, a query or document label not among the given ones, a
        position outside the list, a document shown twice, propensities on some
        lines only, features that differ in length or disagree for one document.
    structsvm.limits.MemoryLimitError
        When the features would exceed the memory budget.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "clicks.jsonl")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('{"query": "q1", "shown": ["d3", "d7"], "clicks": [2]}\\n')
    >>> logs = read_click_log(path)
    >>> logs.shown.tolist(), logs.clicks.tolist(), logs.document_ids[0]
    ([0, 1], [False, True], ['d3', 'd7'])
    """
    name = source_name(path)
    if document_ids is not None and query_ids is None:
        raise ValueError("document_ids needs query_ids (the query of each list)")
    fixed_q = query_ids is not None
    qlabels = [str(_label(v)) for v in query_ids] if fixed_q else []
    qindex = {lab: i for i, lab in enumerate(qlabels)}
    if fixed_q and len(qindex) != len(qlabels):
        raise ValueError("query_ids has a label twice")
    fixed_d = document_ids is not None
    if fixed_d and len(document_ids) != len(qlabels):
        raise ValueError(f"document_ids has {len(document_ids)} lists for "
                         f"{len(qlabels)} queries")
    dlabels = [[str(_label(v)) for v in ids] for ids in document_ids] if fixed_d else \
        [[] for _ in qlabels]
    dindex = [{lab: i for i, lab in enumerate(ids)} for ids in dlabels]
    for q, (ids, index) in enumerate(zip(dlabels, dindex)):
        if len(index) != len(ids):
            raise ValueError(f"document_ids[{q}] has a label twice")
    query, lens, shown, clicked, props, feats = [], [], [], [], [], {}
    width, has_prop, n_floats = None, None, 0
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        where = f"{name}, line {lineno}"
        try:
            rec = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            msg = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
            raise ValueError(f"{where}: not a JSON object ({msg})") from None
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        for key in ("query", "shown", "clicks"):
            if key not in rec:
                raise ValueError(f"{where}: no {key!r} field")
        unknown = set(rec) - {"query", "shown", "clicks", "propensities", "features"}
        if unknown:
            raise ValueError(f"{where}: unknown field {quote(sorted(unknown)[0])}")
        qlab = _label_text(rec["query"], "query", where)
        if qlab not in qindex:
            if fixed_q:
                raise ValueError(f"{where}: query {quote(qlab)} is not among query_ids")
            qindex[qlab] = len(qlabels)
            qlabels.append(qlab)
            dlabels.append([])
            dindex.append({})
        q = qindex[qlab]
        docs = rec["shown"]
        if not isinstance(docs, list):
            raise ValueError(f"{where}: 'shown' must be a list of document labels")
        idx = []
        for d in docs:
            dlab = _label_text(d, "document", where)
            if dlab not in dindex[q]:
                if fixed_d:
                    raise ValueError(f"{where}: document {quote(dlab)} is not among the "
                                     f"documents of query {quote(qlab)}")
                dindex[q][dlab] = len(dlabels[q])
                dlabels[q].append(dlab)
            idx.append(dindex[q][dlab])
        if len(set(idx)) != len(idx):
            raise ValueError(f"{where}: a document is shown twice")
        pos = rec["clicks"]
        if not isinstance(pos, list) or not all(type(k) is int for k in pos):
            raise ValueError(f"{where}: 'clicks' must be a list of 1-based positions "
                             "(integers)")
        c = np.zeros(len(idx), dtype=bool)
        for k in pos:
            if not 1 <= k <= len(idx):
                raise ValueError(f"{where}: clicked position {k} is outside 1..{len(idx)}")
            c[k - 1] = True
        line_prop = "propensities" in rec
        if has_prop is None:
            has_prop = line_prop
        elif has_prop != line_prop:
            raise ValueError(f"{where}: propensities are given on some lines only")
        if line_prop:
            pr = _numbers(rec["propensities"], "propensities", where)
            if len(pr) != len(idx):
                raise ValueError(f"{where}: {len(pr)} propensities for {len(idx)} "
                                 "displayed documents")
            if any(not 0 < v <= 1 for v in pr):
                raise ValueError(f"{where}: propensities must be in (0, 1]")
            props.append(pr)
        if "features" in rec:
            rows = rec["features"]
            if not isinstance(rows, list) or len(rows) != len(idx):
                raise ValueError(f"{where}: 'features' must be a list with one row per "
                                 "displayed document")
            for d, row in zip(idx, rows):
                row = _numbers(row, "a row of features", where)
                if width is None:
                    width = len(row)
                elif len(row) != width:
                    raise ValueError(f"{where}: a row of {len(row)} features, earlier "
                                     f"rows have {width}")
                old = feats.get((q, d))
                if old is None:
                    n_floats += width
                    check_array_size((n_floats,), 8, "the features of the documents "
                                     "shown", source=name)
                    feats[(q, d)] = row
                elif old != row:
                    raise ValueError(f"{where}: document {quote(dlabels[q][d])} of query "
                                     f"{quote(qlab)} has other features than before")
        query.append(q)
        lens.append(len(idx))
        shown += idx
        clicked.append(c)
    X = None
    if feats:
        X = []
        for q, ids in enumerate(dlabels):
            x = np.zeros((len(ids), width))
            for d in range(len(ids)):
                if (q, d) not in feats:
                    raise ValueError(f"{name}: document {quote(ids[d])} of query "
                                     f"{quote(qlabels[q])} has no features")
                x[d] = feats[(q, d)]
            X.append(x)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return ClickLogs(query, offsets, shown,
                     np.concatenate(clicked) if clicked else np.zeros(0, dtype=bool),
                     np.concatenate(props) if has_prop and props else None,
                     query_ids=qlabels, document_ids=dlabels, X=X)


def _label_text(v, what, where):
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError(f"{where}: a {what} label must be a string or an integer, got "
                         f"{quote(json.dumps(v))}")
    return str(v)


def _numbers(values, what, where):
    if not isinstance(values, list) or not all(
            type(v) in (int, float) and math.isfinite(v) for v in values):
        raise ValueError(f"{where}: {what} must be a list of finite numbers")
    return [float(v) for v in values]


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
