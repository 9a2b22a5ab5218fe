"""Cutting-plane working-set learners: 1-slack (the default for rankings) and n-slack.

Both minimise the structural-SVM primal

    min_w  ½‖w‖² + C Σ_i ξ_i,   ξ_i = max_y [Δ(y_i, y) − w·δΦ_i(y)]   (margin rescaling)

by alternating the oracle (most violated constraint of every example under the
current w, :meth:`structsvm.learners.problem.Problem.oracle`) with the dual QP over a working set
of constraints (:func:`structsvm.learners._qp.solve_dual_qp`).
The estimator's ``n_jobs`` splits the oracle over examples, except for the 1-slack
round with maps that compute that oracle themselves in one pass
(``has_aggregate_oracle`` without ``has_chunked_aggregate``: rankings under margin
rescaling), where it has no effect; the sequence map computes it in chunks, which
run in parallel.

Certificate. After each QP, w is optimal for the working set, so the dual value
½‖w‖² + C ξ_ws is a lower bound on the optimum, and the oracle gives the exact primal
value ½‖w‖² + C Σ_i ξ_i at w. Their difference is the duality gap; both learners stop
when ``gap <= tol * primal``, so the returned objective is within a relative ``tol``
of the optimum. The gap equals C times the violation of the most violated
constraint beyond the working set's slack, which is Joachims' stopping rule.

Constraint cache (1-slack, Joachims, Finley & Yu 2009, Sec. 4.2). Every example keeps
its most violated outputs of the last ``cache_size`` oracle calls (their sparse δΦ rows
and losses). Before calling the oracle, the learner builds the 1-slack constraint from
the cache (per example the cached output maximising Δ − w·δΦ, or none when all are
satisfied) and adds it without decoding when it is violated by more than the current
precision ε = tol · primal / C beyond the working set's slack, and asks the cache
again while the last cache round raised the dual value, at most
``_MAX_CACHED_IN_A_ROW`` (10) times between two oracle calls. Otherwise it calls the
oracle. The certified gap comes only from oracle rounds. Maps that compute the
margin-rescaled 1-slack oracle themselves in one pass (rankings) run without the
cache: that pass costs about as much as reading the cache.

Constraints on w. With ``constraints=f`` (see :class:`structsvm.StructuredSVM`) the
working-set QP is solved in primal form with cvxpy (:mod:`._primal_qp`), the user's
constraints included; its optimal value is a lower bound on the constrained problem's
optimum and the oracle's primal at the (feasible) w an upper bound, so the gap is
certified for the constrained problem.

Warm start. The state returned in ``LearnerResult.extra["state"]`` holds the working
set (and cache); a later ``solve`` on the same examples starts from it (its α scaled
to a new C stay feasible, so the first round's dual is still a lower bound). On other
examples only w0 is used.

References
----------
T. Joachims, T. Finley, C.-N. J. Yu. Cutting-plane training of structural SVMs.
Machine Learning 77(1), 2009 (1-slack, Algorithm 4).
I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
structured and interdependent output variables. JMLR 6, 2005 (n-slack).
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..protocols import LearnerBase, LearnerResult
from ._cache import OutputCache, problem_fingerprint
from ._qp import CVXPY_SOLVERS, SOLVERS
from ._sparse import aggregate_rows, compiled_for
from ._working_set import WorkingSet

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane"]

#: cache rounds between two oracle calls, at most (measured: 50 made every oracle
#: call cost up to 50 QP solves for slivers of progress, docs/learners_cutting_plane.md)
_MAX_CACHED_IN_A_ROW = 10


def _cache_pays(problem):
    """False when the map computes the margin-rescaled 1-slack oracle itself in one
    pass (rankings): that pass costs about as much as reading the cached answers, so
    cached rounds would only add QP solves (and the cache needs per-example rows)."""
    return not problem.aggregates_in_one_pass()


class _CuttingPlaneBase(LearnerBase, BaseEstimator):
    name: ClassVar[str] = ""
    certifies_gap: ClassVar[bool] = True
    resumable: ClassVar[bool] = True  # from the saved weights (see _checkpoints)
    accepts_constraints: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = True
    _n_groups_one: ClassVar[bool] = True
    compiled_loops: ClassVar[tuple] = ("structsvm.learners._smo_jit:smo",
                                       "structsvm.learners._sparse_jit:rows_dot",
                                       "structsvm.learners._sparse_jit:rows_scatter")

    def __init__(self, solver="auto", inactive_window=10, min_rounds=1):
        self.solver = solver
        self.inactive_window = inactive_window
        self.min_rounds = min_rounds

    def _check(self):
        if str(self.solver).upper() not in SOLVERS:
            raise ValueError(f"Unknown QP solver {self.solver!r}; choose one of "
                             f"{[s.lower() for s in SOLVERS]}")
        if int(self.inactive_window) < 1:
            raise ValueError(f"inactive_window must be >= 1, got {self.inactive_window}")

    def _weights(self, problem, violation):
        # slack rescaling: Δ_i (1 − w·δΦ_i) ≤ ξ_i, i.e. ψ = Δ_i δΦ_i with loss Δ_i
        if problem.rescaling == "slack":
            return violation.loss
        return np.ones(len(violation.idx))

    def _start(self, problem, state):
        """The working set (and cache) to start from: the saved one on the same problem."""
        fp = problem_fingerprint(problem)
        if state and state.get("fingerprint") == fp and state.get("learner") == self.name:
            ws = state["working_set"]
            ws.alpha = ws.alpha * min(1.0, problem.C / state["C"])  # stays feasible
            return ws, state.get("cache"), fp
        return WorkingSet(problem.n_features), None, fp

    def _loop(self, problem, w0, max_iter, tol, callback, round_, state=None,
              constraints=None, cache=None):
        """The shared cutting-plane loop.

        ``round_(ws, w) -> (primal, new)`` queries the oracle at w and returns the exact
        primal objective there and the constraints to add, ``(psi_rows, losses,
        groups)``, or None when nothing is violated beyond the working set. ``cache``
        (1-slack only) is an :class:`OutputCache` that ``round_`` fills. The loop
        always ends right after an oracle call, so the objective is the one at the
        returned w.
        """
        self._check()
        max_iter = 1000 if max_iter is None else int(max_iter)
        C = problem.C
        ws, saved_cache, fp = self._start(problem, state)
        if cache is not None and saved_cache is not None and saved_cache.size == cache.size:
            cache.psi, cache.loss = saved_cache.psi, saved_cache.loss
        # a small problem in numpy from start to end, a larger one with the loops
        ws.compiled = compiled_for(problem, 1 if cache is None else cache.size)
        if cache is not None:
            cache.compiled = ws.compiled
        n_groups = 1 if self._n_groups_one else problem.n_samples
        qp = None
        if constraints is not None:
            from ._primal_qp import PrimalQP

            solver = str(self.solver).upper()
            qp = PrimalQP(problem.n_features, n_groups, constraints, problem.feature_map,
                          solver if solver in CVXPY_SOLVERS else "CLARABEL")

        def resolve(r):
            if qp is None:
                w_, value = ws.solve(C, self.solver, r)
            else:
                w_, alpha, value = qp.solve(ws.matrix(), ws.loss, ws.group, C, r)
                ws.alpha = alpha
                ws.mark(C)
            ws.prune(int(self.inactive_window))
            return w_, value

        w = np.array(w0, dtype=float)
        dual = ws.dual_value() if len(ws) else -np.inf
        if qp is not None or (len(ws) and problem.C != state["C"]):
            # a feasible start, optimal for the saved working set at this C
            w, dual = resolve(0)
        curve, gap, converged = [], np.inf, False
        n_qp, n_cached, in_a_row, primal = 0, 0, 0, None
        t0 = time.perf_counter()
        r = 0
        while True:
            if cache is not None and primal is not None and in_a_row < _MAX_CACHED_IN_A_ROW:
                cached = cache.constraint(w, problem.rescaling)
                if cached is not None:
                    xi_ws = float(ws.slacks(w, 1)[0]) if len(ws) else 0.0
                    if C * (cached[2] - xi_ws) > tol * primal:
                        before = dual
                        ws.add(cached[1], [cached[0]], [0])
                        n_qp += 1
                        n_cached += 1
                        in_a_row += 1
                        w, dual = resolve(r)
                        if dual > before:  # it improved the objective: ask again
                            continue
            r += 1
            in_a_row = 0
            primal, new = round_(ws, w)
            curve.append(primal)
            # any feasible α certifies: dual(α) ≤ optimum ≤ primal(w)
            gap = max(0.0, primal - dual) if (len(ws) or qp is not None) else np.inf
            if callback is not None:
                callback(dict(round=r, w=w, objective=primal, gap=gap, n_constraints=len(ws),
                              n_qp=n_qp, time=time.perf_counter() - t0))
            if n_qp >= self.min_rounds and gap <= tol * max(primal, 1e-300):
                converged = True
                break
            if new is None:  # nothing left to add: the QP's accuracy is the limit
                converged = gap <= tol * max(primal, 1e-300)
                break
            if r >= max_iter:  # stop here: the objective is the one at w
                break
            ws.add(*new)
            n_qp += 1
            w, dual = resolve(r)
        counts = dict(learner=self.name, n_oracle_calls=r, n_qp=n_qp,
                      n_cached_rounds=n_cached)
        new_state = dict(counts, fingerprint=fp, working_set=ws, C=C, cache=cache)
        return LearnerResult(w=w, objective=curve[-1], objective_curve=curve, n_iter=r,
                             duality_gap=float(gap), converged=converged,
                             extra=dict(n_constraints=len(ws), n_oracle_calls=r,
                                        n_qp=n_qp, n_cached_rounds=n_cached,
                                        state=new_state, light_state=counts))


class OneSlackCuttingPlane(_CuttingPlaneBase):
    """1-slack cutting plane (Joachims, Finley & Yu 2009): the default learner for
    rankings, and the one ``StructuredSVM(learner=None)`` runs with constraints on w
    or checkpoints.

    Each round adds ONE aggregated constraint w·Σ_i δΦ_i(ŷ_i) ≥ Σ_i Δ(y_i, ŷ_i) − ξ
    from a loss-augmented decode of every example, then re-solves the dual QP over
    the working set (all constraints share the single slack ξ = Σ_i ξ_i).

    Parameters
    ----------
    solver : {"auto", "smo", "clarabel", "osqp", "scs"}, default="auto"
        Solver of the working-set QP. "clarabel", "osqp", "scs": that cvxpy
        back-end (the others as fallbacks). "smo" / "auto": structsvm's own
        warm-started SMO, checked against its KKT tolerance, with cvxpy (Clarabel,
        then OSQP, SCS) taking over when it falls short; far faster per round than a
        cvxpy solve, which rebuilds its problem every round.
        With constraints on w the primal QP is solved with cvxpy ("auto"/"smo" mean
        Clarabel there).
    inactive_window : int, default=10
        A constraint whose dual variable stayed 0 for this many rounds is dropped
        (a dropped constraint that matters again is simply found again by the
        oracle; on POS tagging 10 rounds gave 10% faster training than 50).
    min_rounds : int, default=1
        QP rounds to run before the stopping rule may fire.
    cache_size : int, default=10
        Most violated outputs kept per example (those of the last ``cache_size``
        oracle calls, at most 2·10⁷ stored entries); 0 turns the constraint cache
        off. On digits, POS and chunking slices it cut the oracle calls several times
        over at equal or lower training time (the cutting-plane page of the
        documentation). Rankings under margin
        rescaling run without it: their one-pass oracle costs about as much as
        reading the cache.

    Notes
    -----
    The number of rounds to reach a relative gap ε is O(1/ε) independently of n
    (Joachims et al. 2009, Theorem 5). ``n_iter_`` counts oracle calls; rounds that
    used the cache are in ``extra["n_cached_rounds"]``.

    References
    ----------
    T. Joachims, T. Finley, C.-N. J. Yu. Cutting-plane training of structural SVMs.
    Machine Learning 77(1), 2009.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> m = structsvm.fit(X, ["a", "b", "a"], learner=OneSlackCuttingPlane(cache_size=3))
    >>> m.predict([np.array([0.9, 0.1])])
    ['a']
    """

    name: ClassVar[str] = "one_slack"
    trains_dataset_losses: ClassVar[bool] = True  # oracle_sum: one labelling of all

    def __init__(self, solver="auto", inactive_window=10, min_rounds=1, cache_size=10):
        super().__init__(solver=solver, inactive_window=inactive_window,
                         min_rounds=min_rounds)
        self.cache_size = cache_size

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None, constraints=None):
        """Run to ``gap <= tol * primal`` or ``max_iter`` oracle calls; see module docs."""
        C = problem.C
        if int(self.cache_size) < 0:
            raise ValueError(f"cache_size must be >= 0, got {self.cache_size}")
        cache = (OutputCache(self.cache_size)
                 if int(self.cache_size) > 0 and _cache_pays(problem) else None)

        def round_(ws, w):
            if cache is None:
                loss, psi, slack = problem.oracle_sum(w, dense=True)
            else:  # per-example rows, kept for the cache
                v = problem.oracle(w)
                cache.push(v.psi, v.loss)
                cols, vals = aggregate_rows(v.psi, self._weights(problem, v))
                psi = sp.csr_matrix((vals, cols, [0, cols.size]), shape=(1, v.psi.shape[1]))
                loss, slack = float(v.loss.sum()), v.slack
            return 0.5 * float(w @ w) + C * float(slack.sum()), (psi, [loss], [0])

        return self._loop(problem, w0, max_iter, tol, callback, round_, state, constraints,
                          cache)


class NSlackCuttingPlane(_CuttingPlaneBase):
    """n-slack cutting plane (Tsochantaridis et al. 2005): one slack per example.

    Each round decodes every example (batched) and adds, for each example whose
    most violated constraint is violated beyond its working-set slack, that
    constraint; the dual QP then has one box Σ_{c∈W_i} α_c ≤ C per example.

    Parameters
    ----------
    solver : {"auto", "smo", "clarabel", "osqp", "scs"}, default="auto"
    inactive_window : int, default=10
    min_rounds : int, default=1

    References
    ----------
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> structsvm.fit(X, ["a", "b", "a"], learner="n_slack").predict([np.array([0., 1.])])
    ['b']
    """

    name: ClassVar[str] = "n_slack"
    _n_groups_one: ClassVar[bool] = False

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None, constraints=None):
        """Run to ``gap <= tol * primal`` or ``max_iter`` oracle calls."""
        n = problem.n_samples

        def round_(ws, w):
            v = problem.oracle(w)
            primal = problem.primal_objective(w, v)
            excess = v.slack - ws.slacks(w, n)[v.idx]
            add = np.flatnonzero(excess > 1e-12 * np.maximum(1.0, v.loss))
            if len(add) == 0:
                return primal, None
            weights = self._weights(problem, v)[add]
            return primal, (sp.diags(weights) @ v.psi[add], v.loss[add], v.idx[add])

        return self._loop(problem, w0, max_iter, tol, callback, round_, state, constraints)
