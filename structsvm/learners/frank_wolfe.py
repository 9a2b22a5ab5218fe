"""Block-coordinate Frank-Wolfe (BCFW) on the structural-SVM dual.

Dual (our convention ½‖w‖² + C Σ_i ξ_i, margin rescaling): one simplex per example,
α_i ≥ 0 with Σ_y α_iy = C, and

    D(α) = Σ_i ℓ_i − ½‖w‖²,   w = Σ_i w_i,   w_i = Σ_y α_iy ψ_i(y),   ℓ_i = Σ_y α_iy Δ_i(y),

with ψ_i(y) = Φ(x_i, y_i) − Φ(x_i, y). Starting from α_i = C e_{y_i} (w = 0), a
block step on example i takes the Frank-Wolfe corner of its simplex from the
loss-augmented decode ŷ at the current w, w_s = C ψ_i(ŷ), ℓ_s = C Δ_i(ŷ), and
moves by the exact line search

    γ = clip( [(ℓ_s − ℓ_i) − w·(w_s − w_i)] / ‖w_s − w_i‖², 0, 1 ),
    w_i ← (1−γ) w_i + γ w_s,  ℓ_i ← (1−γ) ℓ_i + γ ℓ_s,  w ← w + Δw_i.

The numerator is the block's duality gap; D never decreases. After each pass the
exact primal at w (one batched oracle call) and D(α) give a certified duality gap;
training stops when it is at most ``tol`` × primal.

With ``batch_size`` > 1 the corners of a batch are decoded together at the same w
and the block steps then applied one after the other, each with its exact line
search at the current w (still dual ascent; the corners are slightly stale).

Reference: S. Lacoste-Julien, M. Jaggi, M. Schmidt, P. Pletscher. Block-coordinate
Frank-Wolfe optimization for structural SVMs. ICML 2013.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops
from ..protocols import LearnerBase, LearnerResult

__all__ = ["FrankWolfe"]


class FrankWolfe(LearnerBase, BaseEstimator):
    """Block-coordinate Frank-Wolfe learner; ``max_iter`` counts passes (default 50).

    Parameters
    ----------
    batch_size : int, default=1
        Examples decoded together per oracle call (1 is the textbook algorithm).

    Notes
    -----
    Margin rescaling only. Per-example dual blocks are kept as sparse vectors, so
    memory grows with the distinct outputs each example has visited.

    The estimator's ``n_jobs`` parallelises only oracle calls on 256 or more
    examples (2 :data:`~structsvm.learners.problem.MIN_CHUNK`; a smaller call is one chunk)
    of problems with 512 or more examples (:data:`~structsvm.learners.problem.MIN_REMOTE`;
    smaller problems open no pool), and, with workers in other processes, only
    calls on 512 or more examples: the per-pass certificate (serial for rankings,
    whose map computes the 1-slack oracle in one pass) and block steps with a
    ``batch_size`` that large; smaller block steps run serially.
    """

    name: ClassVar[str] = "frank_wolfe"
    certifies_gap: ClassVar[bool] = True
    supports_warm_start: ClassVar[bool] = False  # its dual variables must match w

    def __init__(self, batch_size=1):
        self.batch_size = batch_size

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None):
        """Run passes until the certified gap is ≤ ``tol`` × primal or ``max_iter``."""
        jit = loops("structsvm.learners._sparse_jit")
        gather_dot, scatter_add = jit.gather_dot, jit.scatter_add

        if problem.rescaling != "margin":
            raise ValueError("learner='frank_wolfe' supports rescaling='margin' only")
        bs = int(self.batch_size)
        if bs < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        passes = 50 if max_iter is None else int(max_iter)
        rng = check_random_state(random_state)
        n, C, D = problem.n_samples, problem.C, problem.n_features
        if np.any(np.asarray(w0) != 0):
            raise ValueError("learner='frank_wolfe' starts from w = 0 (its dual "
                             "variables must match w); warm_start is not supported")
        w = np.zeros(D)
        blocks = [sp.csr_matrix((1, D)) for _ in range(n)]  # w_i
        ell = np.zeros(n)                                   # ℓ_i
        curve, gap, converged, t0 = [], np.inf, False, time.perf_counter()
        for epoch in range(1, passes + 1):
            order = rng.permutation(n)
            for start in range(0, n, bs):
                idx = order[start:start + bs]
                v = problem.oracle(w, idx)
                for k, i in enumerate(idx):
                    ws = C * v.psi[k]
                    ws.sum_duplicates()
                    step = ws - blocks[i]
                    step.sum_duplicates()
                    denom = float(step.data @ step.data)
                    g = C * v.loss[k] - ell[i] - gather_dot(step.indices, step.data, w)
                    if g <= 0.0:
                        continue
                    gamma = 1.0 if denom <= 0.0 else min(1.0, g / denom)
                    blocks[i] = blocks[i] + gamma * step
                    ell[i] += gamma * (C * v.loss[k] - ell[i])
                    scatter_add(w, step.indices, step.data, gamma)
            loss_sum, _, slack = problem.oracle_sum(w)
            wsq = float(w @ w)
            primal = 0.5 * wsq + C * float(slack.sum())
            dual = float(ell.sum()) - 0.5 * wsq
            gap = max(0.0, primal - dual)
            curve.append(primal)
            if callback is not None:
                callback(dict(round=epoch, w=w, objective=primal, gap=gap,
                              time=time.perf_counter() - t0))
            if gap <= tol * max(primal, 1e-300):
                converged = True
                break
        return LearnerResult(w=w.copy(), objective=curve[-1], objective_curve=curve,
                             n_iter=epoch, duality_gap=float(gap), converged=converged)
