r"""Hyper-parameter selection for (kernel) SVMs: grid, line and subset search.

All searches minimise the k-fold cross-validation error

.. math::

    E(\theta) = \text{max\_score} - \frac1k \sum_{f=1}^{k}
    \mathrm{score}\bigl(\text{model}_\theta \text{ fitted without fold } f,\ f\bigr)

(``max_score=1`` turns accuracy into the error rate; use ``max_score=0`` with
scikit-learn's ``neg_*`` scorers). They work with any estimator that has
``get_params``/``set_params`` (every structsvm estimator, scikit-learn's SVC, ...)
and any scorer ``scorer(estimator, X, y)``, structured ones included; X and y may be
lists of structures. Parameters named in ``bounds``/``grid`` are searched on a log
scale.

* :func:`grid_search`: the full grid; its ``errors`` array is the error surface
  (contour plots: :func:`structsvm.plotting.plot_error_surface`).
* :func:`line_search`: alternating golden-section searches in log space, one
  parameter at a time (C with σ fixed, then σ with C fixed, ...).
* :func:`subset_search`: tune on a random subset of N_sub examples, scale
  :math:`C_\text{full} = C_\text{sub} N_\text{sub} / N_\text{full}` (the summed
  slacks grow with N while the margin term does not), then refine σ in a narrow
  window around σ_sub on all data.
* :func:`cluster_sigma`, :func:`structsvm.svm.kernels.median_sigma`: σ heuristics;
  :func:`epsilon_from_residuals`: ε = υ·std(residuals of an ε = 0 SVR).

References
----------
C. J. van Heerden, E. Barnard. Towards understanding the influence of SVM
hyperparameters. PRASA 2010 (the subset strategy).
C.-W. Hsu, C.-C. Chang, C.-J. Lin. A practical guide to support vector
classification. 2003 (grid search over log C, log γ).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_val_score
from sklearn.utils.validation import check_random_state

from .heuristics import cluster_sigma, epsilon_from_residuals
from ..svm.kernels import median_sigma

__all__ = ["SearchResult", "cv_error", "grid_search", "line_search", "subset_search",
           "golden_section", "median_sigma", "cluster_sigma", "epsilon_from_residuals"]

_PHI = (math.sqrt(5.0) - 1.0) / 2.0  # 0.618...


@dataclass
class SearchResult:
    """Outcome of a hyper-parameter search.

    Attributes
    ----------
    best_params : dict
        The parameters with the lowest CV error found.
    best_error : float
        Their CV error.
    evaluations : list of (dict, float)
        Every distinct evaluated point and its CV error, in order (the search path).
    n_fits : int
        Model fits done (points × folds).
    fit_samples : int
        Training examples summed over all fits: the cost of the search in data
        units (a subset search's fits are smaller).
    seconds : float
        Wall-clock time of the search.
    grid : dict or None
        Grid values per parameter (grid search only).
    errors : ndarray or None
        Error surface, ``errors[i, j, ...]`` at the i-th value of the first grid
        parameter, the j-th of the second, ... (grid search only).
    path : list of dict
        For line search: the point after every line (start first).
    """

    best_params: dict
    best_error: float
    evaluations: list = field(default_factory=list)
    n_fits: int = 0
    fit_samples: int = 0
    seconds: float = 0.0
    grid: dict | None = None
    errors: np.ndarray | None = None
    path: list = field(default_factory=list)


def _take(X, idx):
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return X[idx]
    return [X[int(i)] for i in idx]


def _splitter(cv, random_state):
    if isinstance(cv, int):
        if cv < 2:
            raise ValueError(f"cv must be >= 2 folds, got {cv}")
        return KFold(n_splits=cv, shuffle=True, random_state=random_state)
    return cv


class _Evaluator:
    """CV error with a cache (keyed by the rounded parameter values) and a fit count."""

    def __init__(self, estimator, X, y, cv, scoring, max_score, n_jobs, random_state):
        self.estimator, self.X, self.y = estimator, X, y
        self.cv = _splitter(cv, random_state)
        self.scoring, self.max_score, self.n_jobs = scoring, max_score, n_jobs
        self.cache, self.order, self.n_fits, self.fit_samples = {}, [], 0, 0
        self._train_sizes = None

    def __call__(self, params):
        key = tuple(sorted((k, float(f"{v:.10g}") if isinstance(v, float) else v)
                           for k, v in params.items()))
        if key not in self.cache:
            est = clone(self.estimator).set_params(**params)
            scores = cross_val_score(est, self.X, self.y, cv=self.cv, scoring=self.scoring,
                                     n_jobs=self.n_jobs, error_score="raise")
            self.n_fits += len(scores)
            if self._train_sizes is None:
                self._train_sizes = sum(len(tr) for tr, _ in self.cv.split(self.X, self.y))
            self.fit_samples += self._train_sizes
            self.cache[key] = float(self.max_score - np.mean(scores))
            self.order.append((dict(params), self.cache[key]))
        return self.cache[key]

    def best(self):
        params, err = min(self.order, key=lambda pe: pe[1])
        return dict(params), err


def cv_error(estimator, X, y, params=None, *, cv=5, scoring=None, max_score=1.0,
             n_jobs=None, random_state=0):
    """k-fold CV error of ``estimator`` with ``params`` set (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.svm import PegasosClassifier
    >>> X = np.linspace(-1, 1, 20).reshape(-1, 1)
    >>> cv_error(PegasosClassifier(random_state=0), X, X.ravel() > 0, {"C": 10.0}, cv=2)
    0.0
    """
    ev = _Evaluator(estimator, X, y, cv, scoring, max_score, n_jobs, random_state)
    return ev(dict(params or {}))


def grid_search(estimator, X, y, grid, *, fixed=None, cv=5, scoring=None, max_score=1.0,
                n_jobs=None, random_state=0):
    """CV error at every point of a grid; the error surface and its minimum.

    Parameters
    ----------
    estimator : estimator with get_params/set_params
    X, y : training data (arrays, sparse matrices or lists of structures)
    grid : dict of str to sequence
        Values per parameter, e.g. ``{"C": np.logspace(-1, 3, 9),
        "sigma": np.logspace(-1, 1, 9)}`` (add "epsilon" for SVR).
    fixed : dict, optional
        Other parameters set on every model.
    cv : int or splitter, default=5
        Folds (shuffled KFold with ``random_state``) or a scikit-learn splitter.
    scoring : str or callable, optional
        Scorer (default: ``estimator.score``).
    max_score : float, default=1.0
        The error is ``max_score - mean CV score``.
    n_jobs : int, optional
        Parallel folds (joblib).
    random_state : int, default=0

    Returns
    -------
    SearchResult
        With ``grid`` and ``errors`` of shape ``tuple(len(v) for v in grid.values())``.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.svm import PegasosClassifier
    >>> X = np.linspace(-1, 1, 20).reshape(-1, 1)
    >>> res = grid_search(PegasosClassifier(random_state=0), X, X.ravel() > 0,
    ...                   {"C": [0.001, 10.0]}, cv=2)
    >>> res.errors.tolist(), res.best_params
    ([0.5, 0.0], {'C': 10.0})
    """
    t0 = time.perf_counter()
    names = list(grid)
    values = [[v.item() if isinstance(v, np.generic) else v for v in grid[k]]
              for k in names]
    if not names or any(len(v) == 0 for v in values):
        raise ValueError("grid must map at least one parameter name to a non-empty "
                         f"sequence of values, got {grid!r}")
    ev = _Evaluator(estimator, X, y, cv, scoring, max_score, n_jobs, random_state)
    errors = np.empty([len(v) for v in values])
    for idx in np.ndindex(*errors.shape):
        params = dict(fixed or {})
        params.update({k: values[j][idx[j]] for j, k in enumerate(names)})
        errors[idx] = ev(params)
    best_idx = np.unravel_index(int(np.argmin(errors)), errors.shape)
    best = dict(fixed or {})
    best.update({k: values[j][best_idx[j]] for j, k in enumerate(names)})
    return SearchResult(best_params=best, best_error=float(errors[best_idx]),
                        evaluations=list(ev.order), n_fits=ev.n_fits,
                        fit_samples=ev.fit_samples, seconds=time.perf_counter() - t0,
                        grid={k: np.asarray(v) for k, v in zip(names, values)},
                        errors=errors)


def golden_section(f, lo, hi, *, xtol=0.05, x0=None, f0=None):
    """Minimise f on [lo, hi] by golden-section search; return (x_best, f_best).

    The best point evaluated is returned (``x0`` with value ``f0`` is a candidate
    too, so a line step never ends worse than where it started). CV errors are
    piecewise constant and need not be unimodal: the result is a local minimum.

    Examples
    --------
    >>> x, fx = golden_section(lambda u: (u - 1.0) ** 2, -3.0, 4.0, xtol=1e-6)
    >>> round(x, 4), round(fx, 8)
    (1.0, 0.0)
    """
    if not hi > lo:
        raise ValueError(f"golden_section needs lo < hi, got [{lo}, {hi}]")
    seen = [] if x0 is None else [(f0 if f0 is not None else f(x0), x0)]
    a, b = lo, hi
    c, d = b - _PHI * (b - a), a + _PHI * (b - a)
    fc, fd = f(c), f(d)
    seen += [(fc, c), (fd, d)]
    while b - a > xtol:
        if fc <= fd:           # ties: keep the lower part (smaller C / σ: simpler)
            b, d, fd = d, c, fc
            c = b - _PHI * (b - a)
            fc = f(c)
            seen.append((fc, c))
        else:
            a, c, fc = c, d, fd
            d = a + _PHI * (b - a)
            fd = f(d)
            seen.append((fd, d))
    f_best, x_best = min(seen, key=lambda p: p[0])
    return x_best, f_best


def _check_bounds(bounds):
    out = {}
    for k, (lo, hi) in bounds.items():
        if not (0 < lo < hi and np.isfinite(hi)):
            raise ValueError(f"bounds[{k!r}] must be (lo, hi) with 0 < lo < hi, got "
                             f"{(lo, hi)!r}")
        out[k] = (math.log10(lo), math.log10(hi))
    return out


def line_search(estimator, X, y, bounds, *, start=None, fixed=None, n_rounds=2,
                xtol=0.05, cv=5, scoring=None, max_score=1.0, n_jobs=None,
                random_state=0, _evaluator=None):
    """Alternating line search: golden section over one log-parameter at a time.

    Starting from ``start`` (default: the geometric middle of every interval), each
    round minimises the CV error over the first parameter with the others fixed,
    then over the second, ...; it stops after ``n_rounds`` rounds or when a round
    changes nothing.

    Parameters
    ----------
    bounds : dict of str to (float, float)
        Search interval of every parameter, in order (e.g. ``{"C": (1, 100),
        "sigma": (0.1, 10)}``, as in the notes).
    start : dict, optional
    xtol : float, default=0.05
        Golden-section tolerance in decades (log10 units).
    fixed, cv, scoring, max_score, n_jobs, random_state
        As in :func:`grid_search`.

    Returns
    -------
    SearchResult
        ``path`` holds the point after each line (start first).
    """
    t0 = time.perf_counter()
    logb = _check_bounds(bounds)
    ev = _evaluator or _Evaluator(estimator, X, y, cv, scoring, max_score, n_jobs,
                                  random_state)
    point = dict(fixed or {})
    for k, (lo, hi) in logb.items():
        point[k] = float(start[k]) if start and k in start else 10 ** (0.5 * (lo + hi))
    err = ev(point)
    path = [dict(point)]
    for _ in range(int(n_rounds)):
        before = dict(point)
        for k, (lo, hi) in logb.items():
            def f(u, k=k):
                return ev({**point, k: float(10 ** u)})
            u0 = math.log10(point[k])
            u, err_u = golden_section(f, lo, hi, xtol=xtol,
                                      x0=u0 if lo <= u0 <= hi else None,
                                      f0=err if lo <= u0 <= hi else None)
            if err_u < err or not (lo <= u0 <= hi):
                point[k], err = float(10 ** u), err_u
            path.append(dict(point))
        if point == before:
            break
    best, best_err = ev.best()
    return SearchResult(best_params=best, best_error=best_err, evaluations=list(ev.order),
                        n_fits=ev.n_fits, fit_samples=ev.fit_samples,
                        seconds=time.perf_counter() - t0, path=path)


def subset_search(estimator, X, y, bounds, n_subset, *, C_name="C", refine="sigma",
                  refine_factor=2.0, start=None, fixed=None, n_rounds=2, xtol=0.05, cv=5,
                  scoring=None, max_score=1.0, n_jobs=None, random_state=0):
    """Tune on a random subset, scale C by N_sub/N_full, refine σ nearby on all data.

    Parameters
    ----------
    bounds : dict of str to (float, float)
        Search intervals for the subset's line search (see :func:`line_search`).
    n_subset : int
        Size N_sub of the random subset (< N_full).
    C_name : str, default="C"
        The parameter scaled by N_sub / N_full (the sum-of-slacks convention).
    refine : str or None, default="sigma"
        Parameter re-tuned on all data within [p_sub / refine_factor,
        p_sub · refine_factor] by golden section (None: no refinement).
    refine_factor : float, default=2.0
        Ratio of the refinement interval's bounds to the subset's value.

    Other Parameters
    ----------------
    start, fixed, n_rounds, xtol, cv, scoring, max_score, n_jobs, random_state
        As in :func:`line_search`.

    Returns
    -------
    SearchResult
        ``best_params`` and ``best_error`` are on the full data; ``evaluations`` and
        ``path`` hold the subset search followed by the full-data refinement, and
        ``n_fits``/``seconds`` the total cost.
    """
    t0 = time.perf_counter()
    n = len(y)
    if not (isinstance(n_subset, (int, np.integer)) and 2 <= n_subset < n):
        raise ValueError(f"n_subset must be an integer in [2, {n}), got {n_subset!r}")
    if C_name not in bounds:
        raise ValueError(f"C_name={C_name!r} is not one of the searched parameters "
                         f"{list(bounds)}")
    idx = np.sort(check_random_state(random_state).choice(n, n_subset, replace=False))
    sub = line_search(estimator, _take(X, idx), _take(y, idx), bounds, start=start,
                      fixed=fixed, n_rounds=n_rounds, xtol=xtol, cv=cv, scoring=scoring,
                      max_score=max_score, n_jobs=n_jobs, random_state=random_state)
    params = dict(sub.best_params)
    params[C_name] = params[C_name] * n_subset / n
    full = _Evaluator(estimator, X, y, cv, scoring, max_score, n_jobs, random_state)
    err = full(params)
    path = list(sub.path) + [dict(params)]
    if refine is not None:
        p = params[refine]
        lo, hi = math.log10(p / refine_factor), math.log10(p * refine_factor)
        u, err_u = golden_section(lambda u: full({**params, refine: float(10 ** u)}),
                                  lo, hi, xtol=xtol, x0=math.log10(p), f0=err)
        if err_u < err:
            params[refine], err = float(10 ** u), err_u
        path.append(dict(params))
    return SearchResult(best_params=params, best_error=err,
                        evaluations=list(sub.evaluations) + list(full.order),
                        n_fits=sub.n_fits + full.n_fits,
                        fit_samples=sub.fit_samples + full.fit_samples,
                        seconds=time.perf_counter() - t0,
                        path=path)
