r"""Position bias from click logs: examination propensities with confidence intervals.

Under the position-based model a document d of query q shown at position k is
clicked with probability p_k r_qd (examined, then found relevant). When the same
(q, d) is shown at two positions k and k' in different sessions, for reasons that
do not depend on the user (a randomised swap, or two logging rankers that order it
differently), its click rates at the two estimate p_k r_qd and p_k' r_qd: their
ratio is p_k / p_k', whatever r_qd. Summed over every (q, d) shown at both
positions, with the harmonic mean u of its numbers of impressions there as its
weight (equal weights at k and k', so the relevances cancel),

.. math::

    X_k^{(k,k')} = \sum_{(q,d)} u_{qd}\, \frac{c_{qdk}}{n_{qdk}}, \qquad
    \mathbb{E}\, X_k^{(k,k')} = p_k \sum_{(q,d)} u_{qd}\, r_{qd},

with c clicks and n impressions (Agarwal et al. 2019, "intervention harvesting").
:func:`propensities_from_swaps` compares every position with the top one:
p̂_k / p̂_1 = X_k^{(1,k)} / X_1^{(1,k)} — on the logs of randomised top-1/position-k
swaps (Joachims, Swaminathan & Schnabel 2017, Sec. 5; Wang et al. 2018) the pair
(1, k) holds the result ranked first (shown at k in swap-k sessions, at 1 in the
others) and the one ranked k-th (at 1 in swap-k sessions, at k in the others).
:func:`propensities_from_rankers` uses every pair of positions some document was
shown at, as several logging rankers produce them, and fits all ratios at once by
maximum likelihood: conditionally on X_k + X_k', X_k is binomial with success
probability p_k / (p_k + p_k') (a Bradley-Terry model between positions), solved
by Newton's method on log p.

Confidence intervals come from the bootstrap over queries (whole queries
resampled with their sessions: clicks of one query are not independent of each
other), percentile method. Propensities are relative to position 1 (p_1 = 1);
IPS estimates and Propensity SVM-Rank need no more than that.

References
----------
T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
feedback. WSDM 2017.
X. Wang, N. Golbandi, M. Bendersky, D. Metzler, M. Najork. Position bias estimation
for unbiased learning to rank in personal search. WSDM 2018.
A. Agarwal, I. Zaitsev, X. Wang, C. Li, M. Najork, T. Joachims. Estimating position
bias without intrusive interventions. WSDM 2019.
D. R. Hunter. MM algorithms for generalized Bradley-Terry models. Annals of
Statistics 32(1), 2004.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ...corpora.clicks import as_click_logs

__all__ = ["PropensityCurve", "propensities_from_swaps", "propensities_from_rankers",
           "harvest_position_pairs"]


class PropensityCurve:
    """Estimated examination propensities of positions 1..K, relative to position 1.

    Attributes
    ----------
    positions : ndarray of int, shape (K,)
        1..K.
    propensity : ndarray of shape (K,)
        p̂_k / p̂_1 (1 at position 1).
    lower, upper : ndarray of shape (K,)
        Bootstrap percentile confidence interval of each (``level``).
    level : float
        Confidence level of the intervals.
    method : str
        ``"swaps"`` or ``"rankers"``.
    n_sessions : int
        Sessions of the log.
    decay : float
        η̂ of the power law p_k ∝ k^−η̂ fitted to the estimates (weighted least
        squares of log p̂_k on log k through p_1 = 1, each position weighted by the
        inverse bootstrap variance of its log p̂_k); :meth:`at` continues the curve
        beyond K with it.
    replicates : ndarray of shape (n_boot, K) or None
        The bootstrap replicates of the estimate (NaN where a replicate has none):
        :func:`~structsvm.structures.ranking.ips_estimate` adds their spread to the
        variance of an estimate made with these propensities.
    """

    def __init__(self, propensity, lower, upper, *, level, method, n_sessions,
                 log_variance=None, replicates=None):
        self.propensity = np.asarray(propensity, dtype=float)
        self.positions = np.arange(1, self.propensity.size + 1)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)
        self.level = float(level)
        self.method = method
        self.n_sessions = int(n_sessions)
        self.log_variance = None if log_variance is None else \
            np.asarray(log_variance, dtype=float)
        self.decay = _fit_decay(self.propensity, self.log_variance)
        self.replicates = None if replicates is None else \
            np.asarray(replicates, dtype=float)

    def __len__(self):
        return self.propensity.size

    def __repr__(self):
        vals = ", ".join(f"{v:.3g}" for v in self.propensity[:5])
        more = ", ..." if len(self) > 5 else ""
        return (f"PropensityCurve([{vals}{more}], K={len(self)}, method={self.method!r}, "
                f"decay={self.decay:.3g})")

    def replicate_curves(self):
        """The bootstrap replicates that have an estimate at every position, each as
        a PropensityCurve (without replicates of its own)."""
        if self.replicates is None:
            return []
        ok = np.all(np.isfinite(self.replicates) & (self.replicates > 0), axis=1)
        return [PropensityCurve(r, r, r, level=self.level, method=self.method,
                                n_sessions=self.n_sessions, log_variance=self.log_variance)
                for r in self.replicates[ok]]

    def at(self, positions, beyond="power"):
        """The propensity of any 1-based positions.

        Parameters
        ----------
        positions : array-like of int
        beyond : {"power", "last", "error"}, default="power"
            Positions after K: the power law fitted to the estimates, continued from
            p̂_K (p̂_K (K/k)^decay); p̂_K itself; or an error.

        Returns
        -------
        ndarray of float
        """
        pos = np.asarray(positions, dtype=np.int64)
        if pos.size and pos.min() < 1:
            raise ValueError(f"positions start at 1, got {int(pos.min())}")
        K = len(self)
        inside = np.minimum(pos, K) - 1
        out = self.propensity[inside]
        far = pos > K
        if far.any():
            if beyond == "power":
                out = np.where(far, self.propensity[-1] * (K / np.maximum(pos, 1))
                               ** self.decay, out)
            elif beyond == "error":
                raise ValueError(f"position {int(pos.max())} is beyond the {K} "
                                 "estimated ones")
            elif beyond != "last":
                raise ValueError(f"beyond must be 'power', 'last' or 'error', got "
                                 f"{beyond!r}")
        return out

    def plot(self, ax=None, *, truth=None, label=None):
        """Draw the curve with its confidence band (and ``truth``, if given).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            A new figure when None.
        truth : array-like, optional
            True propensities of positions 1..K (e.g. of a simulation), drawn dashed.
        label : str, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError("plotting needs matplotlib: pip install "
                              "'structsvm[plot]'") from exc
        if ax is None:
            _, ax = plt.subplots()
        k = self.positions
        line, = ax.plot(k, self.propensity, marker="o",
                        label=label or f"estimated ({self.method})")
        ax.fill_between(k, self.lower, self.upper, color=line.get_color(), alpha=0.25,
                        label=f"{100 * self.level:g}% interval")
        if truth is not None:
            ax.plot(k, np.asarray(truth, dtype=float)[:k.size], "k--", label="true")
        ax.set_xlabel("position k")
        ax.set_ylabel("propensity p_k / p_1")
        ax.set_xticks(k)
        ax.legend()
        return ax


def _fit_decay(p, log_variance):
    """η̂: weighted least squares of log p_k = −η log k over k ≥ 2 (p_1 = 1)."""
    k = np.arange(1, p.size + 1)
    ok = (k >= 2) & np.isfinite(p) & (p > 0)
    if not ok.any():
        return 0.0
    v = np.ones(p.size) if log_variance is None else np.asarray(log_variance, dtype=float)
    wt = np.where(ok & np.isfinite(v) & (v > 0), 1.0 / np.where(v > 0, v, 1.0), 0.0)
    if not (wt > 0).any():
        wt = ok.astype(float)
    lk = np.log(k)
    lp = np.log(np.where(ok, p, 1.0))
    return float(-np.sum(wt * lk * lp) / np.sum(wt * lk * lk))


# ---------------------------------------------------------------------- harvesting
def harvest_position_pairs(logs, n_positions=10):
    """Per query, the weighted click sums of every pair of positions (see module).

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
    n_positions : int, default=10
        K: positions 1..K are compared (entries further down are left out).

    Returns
    -------
    ndarray of shape (n_queries, K, K)
        ``H[q, k, l]`` = X_k^{(k,l)} of query q (0-based k, l): the position-k side
        of the pair (k, l), Σ over the (q, d) shown at both positions of
        u_qd c_qdk / n_qdk with u_qd the harmonic mean of n_qdk and n_qdl.
    """
    logs = as_click_logs(logs)
    K = int(n_positions)
    if K < 2:
        raise ValueError(f"n_positions must be >= 2, got {n_positions!r}")
    pos = logs.positions
    keep = pos <= K
    q = logs.entry_query[keep]
    d = logs.shown[keep]
    k = pos[keep] - 1
    c = logs.clicks[keep].astype(float)
    n_q = int(logs.query.max()) + 1 if len(logs) else 0
    if q.size == 0:
        return np.zeros((n_q, K, K))
    # one group per (query, document)
    key = q * (int(d.max()) + 1) + d
    groups, g = np.unique(key, return_inverse=True)
    gq = (groups // (int(d.max()) + 1)).astype(np.int64)
    G = groups.size
    N = np.zeros((G, K))
    Cl = np.zeros((G, K))
    np.add.at(N, (g, k), 1.0)
    np.add.at(Cl, (g, k), c)
    ctr = np.divide(Cl, N, out=np.zeros_like(Cl), where=N > 0)
    member = sp.csr_matrix((np.ones(G), (gq, np.arange(G))), shape=(n_q, G))
    H = np.zeros((n_q, K, K))
    for a in range(K):
        both = (N[:, [a]] > 0) & (N > 0)
        u = np.divide(2.0 * N[:, [a]] * N, N[:, [a]] + N, out=np.zeros_like(N),
                      where=both)
        u[:, a] = 0.0
        H[:, a, :] = member @ (u * ctr[:, [a]])
    return H


def _ratio_to_top(X):
    """p_k / p_1 = X[k, 0] / X[0, k] (inf when X[0, k] = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = X[..., 1:, 0] / X[..., 0, 1:]
    ones = np.ones(p.shape[:-1] + (1,))
    return np.concatenate([ones, np.where(np.isnan(p), np.inf, p)], axis=-1)


def _bradley_terry(X, theta0=None, max_iter=100, tol=1e-12):
    """Maximum-likelihood p (p_1 = 1) of the pairwise model X_k ~ Bin(X_k + X_l,
    p_k / (p_k + p_l)), by Newton's method on θ = log p with θ_1 = 0 (the
    log-likelihood is concave in θ). Returns None when the MLE does not exist (a
    position without clicks, or positions not connected through pairs)."""
    K = X.shape[0]
    Nkl = X + X.T
    W = X.sum(axis=1)
    if np.any(W[1:] <= 0) or np.any(Nkl.sum(axis=1) <= 0):
        return None
    # connected through pairs (else the relative scale of the parts is not identified)
    reach = np.zeros(K, dtype=bool)
    reach[0] = True
    for _ in range(K):
        reach = reach | (Nkl[reach].sum(axis=0) > 0)
    if not reach.all():
        return None
    theta = np.zeros(K) if theta0 is None else np.array(theta0, dtype=float)

    def loglik(t):
        diff = t[:, None] - t[None, :]
        return float(np.sum(X * -np.logaddexp(0.0, -diff)))

    f = loglik(theta)
    for _ in range(max_iter):
        diff = theta[:, None] - theta[None, :]
        s = 1.0 / (1.0 + np.exp(-diff))                 # p_k / (p_k + p_l)
        grad = W - np.sum(Nkl * s, axis=1)
        hw = Nkl * s * (1.0 - s)
        H = np.diag(hw.sum(axis=1)) - hw               # −Hessian (a graph Laplacian)
        step = np.zeros(K)
        step[1:] = np.linalg.solve(H[1:, 1:], grad[1:])
        t = 1.0
        while True:                                    # step halving: ascent
            new = theta + t * step
            fn = loglik(new)
            if fn >= f - 1e-12 * abs(f) or t < 1e-8:
                break
            t *= 0.5
        done = np.max(np.abs(new - theta)) < tol ** 0.5 or abs(fn - f) <= tol * abs(f)
        theta, f = new, fn
        if done:
            break
    return np.exp(theta - theta[0])


def _estimate(logs, n_positions, method, level, n_boot, random_state):
    logs = as_click_logs(logs)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot!r}")
    K = int(n_positions)
    H = harvest_position_pairs(logs, K)
    X = H.sum(axis=0)
    if not (X + X.T).any():
        raise ValueError(f"no document was shown at two of positions 1..{K} in the "
                         f"{len(logs)} sessions (or clicked there): the log holds no "
                         "intervention to estimate from (swaps, or several rankers, are "
                         "needed)")
    if method == "swaps":
        point = _ratio_to_top(X)
        empty = np.flatnonzero(~np.isfinite(point) | (point <= 0))
    else:
        point = _bradley_terry(X)
        empty = np.flatnonzero(X.sum(axis=1) <= 0) if point is None else []
        if point is None and not len(empty):
            raise ValueError("the positions are not connected: no document was shown at "
                             "positions of both parts (several logging rankers, or "
                             "swaps, are needed)")
    if len(empty):
        k = int(empty[0]) + 1
        raise ValueError(f"position {k}: no click on a document also shown at "
                         f"{'position 1' if method == 'swaps' else 'another position'} "
                         f"among the {len(logs)} sessions; more sessions (or "
                         "interventions) are needed")
    rng = check_random_state(random_state)
    n_q = H.shape[0]
    reps = np.empty((int(n_boot), K))
    counts = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=int(n_boot))
    Xb = np.einsum("bq,qkl->bkl", counts.astype(float), H)
    if method == "swaps":
        reps[:] = _ratio_to_top(Xb)
    else:
        theta0 = np.log(point)
        for b in range(int(n_boot)):
            est = _bradley_terry(Xb[b], theta0)
            reps[b] = np.nan if est is None else est
    a = (1.0 - level) / 2.0
    finite = np.where(np.isnan(reps), np.inf, reps)   # a failed replicate: unbounded
    lower = np.quantile(finite, a, axis=0, method="inverted_cdf")
    upper = np.quantile(finite, 1.0 - a, axis=0, method="inverted_cdf")
    with np.errstate(divide="ignore", invalid="ignore"):
        logs_r = np.log(reps)
    ok = np.isfinite(logs_r)
    log_var = np.array([np.var(logs_r[ok[:, j], j]) if ok[:, j].sum() > 1 else np.nan
                        for j in range(K)])
    return PropensityCurve(point, lower, upper, level=level, method=method,
                           n_sessions=len(logs), log_variance=log_var, replicates=reps)


def propensities_from_swaps(logs, n_positions=10, *, level=0.95, n_boot=500,
                            random_state=None):
    """Examination propensities from randomised top-1/position-k swaps.

    The logs of an experiment in which each session shows the production ranking
    with the results at positions 1 and k exchanged, k drawn uniformly from 1..K
    (k = 1: unchanged; :func:`structsvm.corpora.clicks.simulate_click_logs` with
    ``swap=K`` simulates one). Each position k is compared with the top:
    p̂_k / p̂_1 = X_k^{(1,k)} / X_1^{(1,k)} (see the module), which holds the
    clicks on the result ranked first when it is moved to k against its clicks at
    1, and those on the result ranked k-th when it is moved to 1 against its clicks
    at k.

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
    n_positions : int, default=10
        K: positions 1..K.
    level : float, default=0.95
        Confidence level of the intervals.
    n_boot : int, default=500
        Bootstrap replicates (queries resampled with replacement).
    random_state : int, RandomState or None
        Of the bootstrap.

    Returns
    -------
    PropensityCurve

    Raises
    ------
    ValueError
        When some position was never clicked on a document also shown at position
        1 (more sessions are needed).

    References
    ----------
    T. Joachims, A. Swaminathan, T. Schnabel. Unbiased learning-to-rank with biased
    feedback. WSDM 2017, Sec. 5.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.corpora.clicks import simulate_click_logs
    >>> rng = np.random.default_rng(0)
    >>> rel = [rng.integers(0, 3, size=12) for _ in range(40)]
    >>> logs = simulate_click_logs([np.arange(12)] * 40, rel, n_sessions=2000, eta=1.0,
    ...                            swap=4, random_state=0)
    >>> curve = propensities_from_swaps(logs, 4, random_state=0)
    >>> np.round(curve.propensity, 2).tolist()   # true: 1, 1/2, 1/3, 1/4
    [1.0, 0.5, 0.33, 0.25]
    """
    return _estimate(logs, n_positions, "swaps", level, n_boot, random_state)


def propensities_from_rankers(logs, n_positions=10, *, level=0.95, n_boot=500,
                              random_state=None):
    """Examination propensities harvested from the logs of several rankers.

    No intervention is needed when two or more logging rankers show the same
    documents of a query at different positions (Agarwal et al. 2019): every pair
    of positions (k, l) some document was shown at gives X_k^{(k,l)} and
    X_l^{(k,l)} (see the module), and all ratios are fitted at once by maximum
    likelihood. The rankers must not depend on the user's session (their choice of
    ranking is exogenous); which ranker showed a session need not be known.

    Parameters
    ----------
    logs : ClickLogs or sequence of ClickLog
        The sessions of every logging ranker (e.g. ``ClickLogs.concatenate``).
    n_positions : int, default=10
        K: positions 1..K.
    level : float, default=0.95
    n_boot : int, default=500
    random_state : int, RandomState or None

    Returns
    -------
    PropensityCurve

    Raises
    ------
    ValueError
        When a position has no click on a document also shown elsewhere, or the
        positions fall into groups no document connects.

    References
    ----------
    A. Agarwal, I. Zaitsev, X. Wang, C. Li, M. Najork, T. Joachims. Estimating
    position bias without intrusive interventions. WSDM 2019.
    """
    return _estimate(logs, n_positions, "rankers", level, n_boot, random_state)
