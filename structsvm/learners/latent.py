"""Structural SVMs with hidden variables: the concave-convex procedure (CCCP).

An output of a latent structure is a pair (y, h) of which training data give y only:
the sub-class of a digit, the hidden state behind a tag, the tags of a partially
labelled sentence, the position of a motif. Yu & Joachims (2009) train w by
minimising

    f(w) = ½‖w‖² + C Σ_i [ max_(ŷ,ĥ) (w·Φ(x_i, ŷ, ĥ) + Δ(y_i, ŷ, ĥ))
                           − max_h w·Φ(x_i, y_i, h) ],

the difference of two convex functions: u(w) = ½‖w‖² + C Σ_i max_(ŷ,ĥ)(...) and
v(w) = C Σ_i max_h w·Φ(x_i, y_i, h). The concave-convex procedure (Yuille &
Rangarajan 2003) replaces −v by its linearisation at the current w_t, which is
exact at w_t and above −v everywhere (v is a maximum of linear functions):

    g_t(w) = ½‖w‖² + C Σ_i [ max_(ŷ,ĥ) (w·Φ(x_i, ŷ, ĥ) + Δ(y_i, ŷ, ĥ))
                             − w·Φ(x_i, y_i, h_i*) ],   h_i* = argmax_h w_t·Φ(x_i, y_i, h).

g_t is the objective of an ordinary structural SVM whose training outputs are the
completions (y_i, h_i*): any learner solves it. Since f ≤ g_t and f(w_t) = g_t(w_t),

    f(w_{t+1}) ≤ g_t(w_{t+1}) ≤ g_t(w_t) = f(w_t):

the objective never increases. :class:`CCCP` enforces the middle inequality too (a
convex solve that ends above its start is refused), so the reported objectives never
rise whatever the inner learner's accuracy. The procedure stops at a local minimum
(a fixed point of the imputation), which depends on where it starts: the first
completions (``init``) or the order in which examples enter (self-paced learning).
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import replace
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..protocols import LearnerBase, LearnerResult, capability, plugin_name

__all__ = ["CCCP"]


class CCCP(LearnerBase, BaseEstimator):
    """Latent structural SVM by the concave-convex procedure (Yu & Joachims 2009).

    Each round completes every training output with its best hidden part under the
    current weights, h_i = argmax_h w·Φ(x_i, (y_i, h)), and trains the ordinary
    structural SVM on the completed outputs with any learner, started from the
    current weights (learners that cannot continue from given weights start from
    zero). The rounds stop when the objective f(w) decreased by less than ``tol``
    (relative) or when the completions stay the same (the next convex problem would
    be the one just solved).

    The estimator's ``max_iter`` bounds the rounds (``n_iter_`` counts them, and
    ``objective_curve_`` holds f after each); its ``tol`` is every convex solve's
    (with the inner learner's own cap on its iterations). The estimator
    wraps any learner given for a latent map in a ``CCCP``
    (``learner="dual_cd"`` is ``CCCP(learner="dual_cd")``), and a latent map trains
    with ``CCCP()`` by default.

    Parameters
    ----------
    learner : str, learner or None, default=None
        The learner of each round's convex problem; None picks the map's
        ``convex_learners`` (the default learner of the structure it extends).
    init : {"guess", "random"} or sequence, default="guess"
        The completions of the first round: the map's own guess (sub-classes by
        k-means, hidden states by k-means of the token rows, unlabelled tags by a
        count-based chain model; a :class:`structsvm.Structure`'s ``init_latent``
        or its ``latent_argmax`` at w = 0), a random h seeded by the estimator's
        ``random_state``, or one raw h per training example. A warm start
        (non-zero starting weights) completes from those weights instead.
    min_decrease : float, default=1e-3
        Stop when f(w_t) − f(w_{t+1}) ≤ min_decrease × f(w_{t+1}).
    self_paced : bool, default=False
        Self-paced learning (Kumar, Packer & Koller 2010): after the first round,
        a round trains on the "easy" examples only, those with the smallest slack
        ξ_i(w) under the current completions, a share that grows every round
        until every example is in; then plain rounds follow until the objective
        settles.
    self_paced_start : float, default=0.5
        Share of the examples in the first self-paced round.
    self_paced_growth : float, default=1.3
        Factor by which the share grows every round (Kumar et al. anneal a
        threshold 1/K on the examples' losses by a factor μ; here the threshold
        is the quantile of the current slacks that keeps the share, so the
        schedule ends after a known number of rounds).

    Notes
    -----
    ``LearnerResult.extra["rounds"]`` lists, per round, the inner learner's
    iterations and objective g_t(w_{t+1}), whether its weights were taken
    (``accepted``: a convex solve that ends above its start leaves w as it was, and
    the rounds end there), the number of examples whose completion changed and the
    number trained on; ``extra["completions"]`` holds the last completions
    (encoded). The objective is the latent objective f(w) of all
    examples; during the self-paced rounds it may rise (those rounds minimise
    another objective), from the first round with every example it does not.

    References
    ----------
    C.-N. J. Yu, T. Joachims. Learning structural SVMs with latent variables.
    ICML 2009.
    A. L. Yuille, A. Rangarajan. The concave-convex procedure. Neural Computation
    15(4), 2003.
    M. P. Kumar, B. Packer, D. Koller. Self-paced learning for latent variable
    models. NIPS 2010.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures.multiclass import LatentMulticlassFeatures
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    >>> model = structsvm.fit(X, ["out", "out", "in", "in"], C=10.0,
    ...                       feature_map=LatentMulticlassFeatures(n_subclasses=2))
    >>> model.learner_.name, model.predict(X)
    ('cccp', ['out', 'out', 'in', 'in'])
    """

    name: ClassVar[str] = "cccp"
    trains_latent: ClassVar[bool] = True
    # the inner learner's state, for a map without hidden part (the rounds of a
    # latent map start from the weights only: each round's problem is another)
    keeps_state: ClassVar[bool] = True
    stopping_rule: ClassVar[str] = (
        "a round decreased the latent objective f(w) by at most min_decrease x f, or "
        "left the completions h_i as they were; each round's convex problem is solved "
        "to the estimator's tol")

    def __init__(self, learner=None, init="guess", min_decrease=1e-3, self_paced=False,
                 self_paced_start=0.5, self_paced_growth=1.3):
        self.learner = learner
        self.init = init
        self.min_decrease = min_decrease
        self.self_paced = self_paced
        self.self_paced_start = self_paced_start
        self.self_paced_growth = self_paced_growth

    # ------------------------------------------------------------------ checks
    def _check(self):
        if isinstance(self.init, str) and self.init not in ("guess", "random"):
            raise ValueError(f"init must be 'guess', 'random' or one h per example, got "
                             f"{self.init!r}")
        if not (isinstance(self.min_decrease, (int, float)) and self.min_decrease >= 0):
            raise ValueError(f"min_decrease must be a number >= 0, got "
                             f"{self.min_decrease!r}")
        if not (isinstance(self.self_paced_start, (int, float))
                and 0 < self.self_paced_start <= 1):
            raise ValueError(f"self_paced_start must be in (0, 1], got "
                             f"{self.self_paced_start!r}")
        if not (isinstance(self.self_paced_growth, (int, float))
                and self.self_paced_growth > 1):
            raise ValueError(f"self_paced_growth must be > 1, got "
                             f"{self.self_paced_growth!r}")

    def inner_learner(self, problem):
        """The learner of the convex problems of ``problem`` (configured).

        Raises
        ------
        ValueError
            The inner learner trains latent maps itself (a CCCP in a CCCP).
        """
        from ._choice import default_learner, get_learner

        fm = problem.feature_map
        if self.learner is None:
            which = "convex_learners" if capability(fm, "latent") else "default_learners"
            return default_learner(fm, (fm, problem.decoder, problem.loss,
                                        problem.rescaling), which=which)
        inner = get_learner(self.learner)
        if capability(inner, "trains_latent"):
            raise ValueError(f"CCCP's learner must solve the convex problem of a round, "
                             f"not train a latent map itself: got {plugin_name(inner)!r}")
        return inner

    # ------------------------------------------------------------------ solve
    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None):
        """Rounds of completion and convex training until f settles (see class).

        Parameters
        ----------
        problem : Problem
            Of a latent feature map (its ``Ye`` the observed outputs, as the map's
            ``encode_outputs`` gives them).
        w0 : ndarray of shape (n_features,)
            Non-zero: the first completions are those of ``w0`` (warm start).
        max_iter : int or None
            Rounds at most (None: 50; a ConvergenceWarning when they run out).
        tol : float
            Of every convex solve (the inner learner's; its ``max_iter`` is its own
            default).
        random_state : int, RandomState or None
            Seeds ``init="random"`` and the inner learner.
        callback : callable, optional
            Called after every round with ``round``, ``w``, ``objective`` (f),
            ``time``, ``changed`` and ``n_selected``.

        Returns
        -------
        LearnerResult
            ``objective`` = f(w) at the returned w, ``objective_curve`` f after each
            round, ``n_iter`` rounds, ``duality_gap`` nan (the problem is not
            convex).

        state : dict, optional
            A map without a hidden part: the inner learner's state (warm start).

        Notes
        -----
        A map without a hidden part (not ``latent``) has nothing to complete: it
        trains with the inner learner alone (its ``max_iter``, its state and its
        result).
        """
        self._check()
        fm = problem.feature_map
        inner = self.inner_learner(problem)
        max_rounds = 50 if max_iter is None else int(max_iter)
        if not capability(fm, "latent"):
            extra = {"state": state} if capability(inner, "keeps_state") else {}
            return inner.solve(problem, w0, max_iter=max_iter, tol=tol,
                               random_state=random_state, callback=callback, **extra)
        warm_inner = capability(inner, "supports_warm_start")
        # None: the fixed seed 0 for the first completions (the default call gives
        # the same model every time); the inner learner gets random_state as it is
        seed = 0 if random_state is None else \
            int(check_random_state(random_state).randint(2 ** 31 - 1))
        C, n, t0 = float(problem.C), problem.n_samples, time.perf_counter()
        observed = list(problem.Ye)
        w = np.array(w0, dtype=float)
        if np.any(w != 0):
            completed = fm.impute(problem.Xe, observed, w)
            convex = self._convex(problem, completed)
            slack = convex.oracle(w).slack
            f = self._objective(w, C, slack)
        else:
            completed = fm.init_latent(problem.Xe, observed, self.init, seed)
            convex = self._convex(problem, completed)
            slack, f = None, math.inf
        curve, rounds, converged = [], [], False
        fraction = None        # self-paced: the share of the examples trained on
        all_in = not self.self_paced
        try:
            for t in range(1, max_rounds + 1):
                sel = None
                if not all_in and slack is not None:
                    sel, fraction = self._easy(C * slack, fraction)
                    all_in = sel.size == n
                    if all_in:
                        sel = None
                train = convex if sel is None else self._convex(problem, completed, sel)
                start = w if warm_inner else np.zeros_like(w)
                try:
                    res = inner.solve(train, start, max_iter=None, tol=tol,
                                      random_state=random_state)
                finally:
                    if train is not convex:
                        train.close()
                info = {"inner": inner.name, "inner_iterations": int(res.n_iter),
                        "inner_objective": float(res.objective),
                        "n_selected": n if sel is None else int(sel.size)}
                if sel is None and slack is not None and not res.objective < f:
                    # g_t(w_{t+1}) ≥ g_t(w_t) = f(w_t): the convex solve found no
                    # better point than its start; w_t stays (a fixed point)
                    info.update(accepted=False, changed=0, objective=f)
                    rounds.append(info)
                    curve.append(f)
                    if callback is not None:
                        callback({"round": t, "w": w, "objective": f,
                                  "time": time.perf_counter() - t0, "changed": 0,
                                  "n_selected": n})
                    converged = True
                    break
                w_new = np.asarray(res.w, dtype=float)
                new = fm.impute(problem.Xe, observed, w_new)
                changed = sum(not _same(a, b) for a, b in zip(new, completed))
                convex.close()
                convex = self._convex(problem, new)
                slack = convex.oracle(w_new).slack
                f_new = self._objective(w_new, C, slack)
                info.update(accepted=True, changed=int(changed), objective=f_new)
                rounds.append(info)
                curve.append(f_new)
                decrease = f - f_new
                w, f, completed = w_new, f_new, new
                if callback is not None:
                    callback({"round": t, "w": w, "objective": f,
                              "time": time.perf_counter() - t0, "changed": int(changed),
                              "n_selected": info["n_selected"]})
                if all_in and sel is None and (changed == 0 or
                                               decrease <= self.min_decrease * abs(f)):
                    converged = True
                    break
        finally:
            convex.close()
        if not converged:
            warnings.warn(f"cccp stopped after max_iter={max_rounds} rounds before the "
                          f"objective settled (last {f:.6g}); raise max_iter",
                          ConvergenceWarning, stacklevel=3)
        return LearnerResult(w=w, objective=float(f), objective_curve=curve,
                             n_iter=len(rounds), duality_gap=float("nan"),
                             converged=converged,
                             extra={"rounds": rounds, "completions": completed,
                                    "inner": inner})

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _objective(w, C, slack):
        return 0.5 * float(w @ w) + C * float(np.sum(slack))

    @staticmethod
    def _convex(problem, completed, idx=None):
        """The convex problem of a round: the same data, plugins and C, with the
        completed outputs as training outputs (of the examples ``idx`` only)."""
        fresh = dict(_truth_cache={}, _pool=None, _timing={})
        if idx is None:
            return replace(problem, Ye=list(completed), **fresh)
        Xe = problem.feature_map.select_inputs(problem.Xe, idx)
        return replace(problem, Xe=Xe, Ye=[completed[i] for i in idx], **fresh)

    def _easy(self, cost, fraction):
        """The self-paced selection: the ``fraction`` of the examples with the
        smallest C·ξ_i (the threshold 1/K of Kumar et al. is that quantile), and
        the next round's fraction (× ``self_paced_growth``)."""
        n = cost.size
        fraction = float(self.self_paced_start if fraction is None else fraction)
        k = min(n, max(1, int(math.ceil(fraction * n))))
        if k == n:
            return np.arange(n), 1.0
        sel = np.sort(np.argsort(cost, kind="stable")[:k])
        return sel, fraction * float(self.self_paced_growth)


def _same(a, b):
    """Whether two encoded outputs are equal (arrays, numbers, tuples)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    eq = a == b
    try:
        return bool(np.all(eq))
    except (TypeError, ValueError):
        return False
