"""Pegasos: stochastic subgradient descent on the structured hinge loss.

With λ = 1/(nC) the structural-SVM primal ½‖w‖² + C Σ_i ξ_i equals nC · f(w) with

    f(w) = λ/2 ‖w‖² + (1/n) Σ_i ξ_i(w),

and Pegasos takes, at step t on a mini-batch B, the subgradient step

    w ← (1 − η_t λ) w + (η_t / |B|) Σ_{i∈B, ξ_i>0} δΦ_i(ŷ_i),   η_t = 1/(λ t),

optionally followed by the projection onto the ball ‖w‖ ≤ √(2 L̄ / λ) that holds the
optimum (L̄ = mean largest loss; f(w*) ≤ f(0) = L̄). Returning an average of the
iterates removes most of the last iterate's noise; the polynomial-decay average

    w̄_t = (1 − (γ+1)/(t+γ)) w̄_{t−1} + (γ+1)/(t+γ) w_t,   γ = 3,

weights recent iterates more and keeps the optimal O(1/t) rate for strongly convex
objectives, which the plain average (O(log t / t)) loses.

References
----------
S. Shalev-Shwartz, Y. Singer, N. Srebro, A. Cotter. Pegasos: primal estimated
sub-gradient solver for SVM. Mathematical Programming 127(1), 2011.
O. Shamir, T. Zhang. Stochastic gradient descent for non-smooth optimization:
convergence results and optimal averaging schemes. ICML 2013.
N. Ratliff, J. A. Bagnell, M. Zinkevich. (Online) subgradient methods for structured
prediction. AISTATS 2007.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops
from ..protocols import LearnerBase, LearnerResult
from ._sparse import aggregate_rows

__all__ = ["Pegasos"]


class Pegasos(LearnerBase, BaseEstimator):
    """Stochastic subgradient learner (Pegasos) for the structural SVM.

    ``max_iter`` of the estimator counts epochs (passes over the data).

    Parameters
    ----------
    batch_size : int, default=1
        Examples per step (decoded in one batched oracle call).
    average : bool, default=True
        Return the polynomial-decay average of the iterates (γ = 3).
    projection : bool, default=True
        Project onto the ball that contains the optimum after every step.
    eval_every : int, default=1
        Epochs between evaluations of the exact primal objective (one full
        loss-augmented decode each); the curve is of the returned (averaged) iterate.

    Notes
    -----
    The estimator's ``n_jobs`` parallelises only oracle calls on 256 or more
    examples (2 :data:`~structsvm.learners.problem.MIN_CHUNK`; a smaller call is one chunk)
    of problems with 512 or more examples (:data:`~structsvm.learners.problem.MIN_REMOTE`;
    smaller problems open no pool), and, with workers in other processes, only
    calls on 512 or more examples: here the per-epoch evaluations, and the steps
    themselves only when ``batch_size`` is that large; smaller steps run serially.
    """

    name: ClassVar[str] = "pegasos"
    stopping_rule: ClassVar[str] = ("the relative change of the evaluated primal "
                                    "objective between two evaluations ≤ tol "
                                    "(no certificate)")
    # (its sparse sums, gather_dot and scatter_add, take int64 columns: numba
    # compiles them on first use)
    compiled_loops: ClassVar[tuple] = ("structsvm.learners._sparse_jit:average_inplace",)
    keeps_state: ClassVar[bool] = True

    def __init__(self, batch_size=1, average=True, projection=True, eval_every=1):
        self.batch_size = batch_size
        self.average = average
        self.projection = projection
        self.eval_every = eval_every

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None):
        """Run ``max_iter`` epochs (default 50); stop early when the relative change of
        the evaluated objective over one evaluation falls below ``tol``.

        ``state`` (``extra["state"]`` of a previous result) continues that run: its
        step counter t (so the first step does not shrink w to 0), last iterate,
        average and random stream."""
        jit = loops("structsvm.learners._sparse_jit")
        average_inplace, gather_dot, scatter_add = (jit.average_inplace, jit.gather_dot,
                                                    jit.scatter_add)

        bs, every = int(self.batch_size), int(self.eval_every)
        if bs < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if every < 1:
            raise ValueError(f"eval_every must be >= 1, got {self.eval_every}")
        epochs = 50 if max_iter is None else int(max_iter)
        n, C = problem.n_samples, problem.C
        lam = 1.0 / (n * C)
        radius = np.sqrt(2.0 * problem.max_losses().mean() / lam)
        w = np.array(w0, dtype=float)
        w_avg = w.copy()
        t = 0
        rng = check_random_state(random_state)
        if state and state.get("learner") == self.name and len(state["w"]) == len(w):
            t, w = int(state["steps"]), np.array(state["w"], dtype=float)
            rng = np.random.RandomState()
            rng.set_state(state["rng"])
        curve, converged, t0 = [], False, time.perf_counter()
        nsq = float(w @ w)  # ‖w‖², kept up to date without passes over w
        for epoch in range(1, epochs + 1):
            order = rng.permutation(n)
            for start in range(0, n, bs):
                idx = order[start:start + bs]
                t += 1
                eta = 1.0 / (lam * t)
                v = problem.oracle(w, idx)
                shrink = 1.0 - eta * lam
                w *= shrink
                nsq *= shrink * shrink
                hit = v.slack > 0
                if hit.any():
                    weights = np.where(hit, v.loss if problem.rescaling == "slack" else 1.0,
                                       0.0)
                    cols, vals = aggregate_rows(v.psi, weights)
                    c = eta / len(idx)
                    # ‖w + c u‖² = ‖w‖² + 2c w·u + c²‖u‖²  (u sparse, unique columns)
                    nsq += 2.0 * c * gather_dot(cols, vals, w) + c * c * float(vals @ vals)
                    scatter_add(w, cols, vals, c)
                if self.projection and nsq > radius * radius:
                    w *= radius / np.sqrt(nsq)
                    nsq = radius * radius
                if self.average:
                    average_inplace(w_avg, w, 4.0 / (t + 3.0))  # (γ+1)/(t+γ), γ = 3
            nsq = float(w @ w)  # drop the round-off drift once per epoch
            if epoch % every == 0 or epoch == epochs:
                w_out = w_avg if self.average else w
                primal = problem.primal_objective(w_out)
                curve.append(primal)
                if callback is not None:
                    callback(dict(round=epoch, w=w_out, objective=primal, gap=float("nan"),
                                  time=time.perf_counter() - t0))
                if (len(curve) > 2 and
                        abs(curve[-2] - curve[-1]) <= tol * max(abs(curve[-1]), 1e-300)):
                    converged = True
                    break
        w_out = w_avg if self.average else w
        return LearnerResult(w=w_out.copy(), objective=curve[-1], objective_curve=curve,
                             n_iter=epoch, converged=converged,
                             extra=dict(steps=t, state=dict(learner=self.name, steps=t, w=w,
                                                            rng=rng.get_state())))
