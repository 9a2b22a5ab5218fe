"""Averaged structured perceptron (Collins 2002): the baseline learner.

For each example in turn, decode ŷ = argmax_y w·Φ(x_i, y) (no loss, no margin) and,
when ŷ ≠ y_i, update w ← w + δΦ_i(ŷ). The averaged weights (1/T) Σ_t w_t are kept
in O(1) per update with the usual trick: w̄ = w − u / c, where u accumulates c·update
and c counts steps.

Reference: M. Collins. Discriminative training methods for hidden Markov models:
theory and experiments with perceptron algorithms. EMNLP 2002.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ..protocols import LearnerBase, LearnerResult

__all__ = ["Perceptron"]


class Perceptron(LearnerBase, BaseEstimator):
    """Averaged structured perceptron; ``max_iter`` counts epochs (default 20).

    Stops early after an epoch without mistakes (the data are separated). If the
    averaged weights then still make a training mistake, the separating last
    weights are returned instead (``extra["averaged"]`` says which). The
    reported objective is the structural-SVM primal of the returned weights at the
    estimator's C (the perceptron does not minimise it; it is there to compare).

    It decodes one example per step, so the estimator's ``n_jobs`` parallelises only
    the per-epoch evaluation of the objective (on problems of 512 or more examples,
    :data:`~structsvm.learners.problem.MIN_REMOTE`).

    Parameters
    ----------
    average : bool, default=True
        Return the averaged weights rather than the last ones.
    """

    name: ClassVar[str] = "perceptron"
    stopping_rule: ClassVar[str] = "an epoch without a mistake (tol is not used)"
    keeps_state: ClassVar[bool] = True

    def __init__(self, average=True):
        self.average = average

    def solve(self, problem, w0, *, max_iter, tol=None, random_state=None, callback=None,
              state=None):
        """Run epochs until one makes no mistake or ``max_iter`` epochs are done.

        ``state`` (``extra["state"]`` of a previous result) continues that run: its
        last weights, running average and random stream."""
        epochs = 20 if max_iter is None else int(max_iter)
        rng = check_random_state(random_state)
        n = problem.n_samples
        w = np.array(w0, dtype=float)
        u = np.zeros_like(w)
        c = 1
        if state and state.get("learner") == self.name and len(state["w"]) == len(w):
            w, u, c = (np.array(state["w"], dtype=float), np.array(state["u"], dtype=float),
                       int(state["c"]))
            rng = np.random.RandomState()
            rng.set_state(state["rng"])
        curve, converged, t0 = [], False, time.perf_counter()
        for epoch in range(1, epochs + 1):
            mistakes = 0
            for i in rng.permutation(n):
                v = problem.oracle(w, [i], augment=False)
                if v.loss[0] > 0:
                    step = np.asarray(v.psi[0].todense()).ravel()
                    w += step
                    u += c * step
                    mistakes += 1
                c += 1
            w_out = w - u / c if self.average else w
            primal = problem.primal_objective(w_out)
            curve.append(primal)
            if callback is not None:
                callback(dict(round=epoch, w=w_out, objective=primal, gap=float("nan"),
                              mistakes=mistakes, time=time.perf_counter() - t0))
            if mistakes == 0:
                converged = True
                break
        averaged = bool(self.average)
        w_out = w - u / c if averaged else w
        if converged and averaged and problem.oracle(w_out, augment=False).loss.any():
            averaged, w_out = False, w
            curve.append(problem.primal_objective(w_out))
        return LearnerResult(w=w_out.copy(), objective=curve[-1], objective_curve=curve,
                             n_iter=epoch, converged=converged,
                             extra=dict(averaged=averaged,
                                        state=dict(learner=self.name, w=w, u=u, c=c,
                                                   steps=c - 1, rng=rng.get_state())))
