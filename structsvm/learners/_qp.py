"""The working-set dual QP of the cutting-plane learners, solved with cvxpy.

Given constraints c = 1..m with joint-feature differences ψ_c and losses Δ_c, grouped
into slack groups g(c) (one group for the 1-slack formulation, one per example for
n-slack), the primal

    min_w,ξ  ½‖w‖² + C Σ_g ξ_g   s.t.  w·ψ_c ≥ Δ_c − ξ_g(c),  ξ ≥ 0

has the dual

    max_α  Δᵀα − ½ αᵀ G α   s.t.  α ≥ 0,  Σ_{c ∈ g} α_c ≤ C  for every group g,

with G_cd = ψ_c·ψ_d, and w = Σ_c α_c ψ_c. G is factored once per solve
(G = L Lᵀ from its eigen-decomposition, negative round-off eigenvalues dropped), so
the solver sees ½‖Lᵀα‖², a second-order cone it handles exactly.
"""
from __future__ import annotations

import contextlib
import threading
import warnings

import numpy as np
import scipy.sparse as sp

from .._compiled import loops
from ..protocols import QPError
from ._active_set import active_set_single, kkt_tolerance, kkt_violation

__all__ = ["solve_dual_qp", "SOLVERS"]

CVXPY_SOLVERS = ("CLARABEL", "OSQP", "SCS")
SOLVERS = ("AUTO", "SMO") + CVXPY_SOLVERS
_OK = "optimal"


def _factor(G):
    """F with F Fᵀ = G: Cholesky with a round-off jitter, else the PSD eigen-part."""
    G = 0.5 * (G + G.T)
    m = len(G)
    jitter = 1e-12 * max(float(np.trace(G)) / max(m, 1), 1e-300)
    try:
        return np.linalg.cholesky(G + jitter * np.eye(m))
    except np.linalg.LinAlgError:
        vals, vecs = np.linalg.eigh(G)
        keep = vals > max(vals.max(initial=0.0), 1.0) * 1e-13
        return vecs[:, keep] * np.sqrt(vals[keep])


def _solver_options(solver, warm):
    if solver == "OSQP":
        return dict(eps_abs=1e-10, eps_rel=1e-10, max_iter=200000, polishing=True,
                    warm_start=warm)
    if solver == "SCS":
        return dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200000)
    return dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


def _run(prob, alpha, solver, warm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver=solver, **_solver_options(solver, warm))
        except Exception as exc:  # cvxpy.error.SolverError and solver crashes
            return None, f"solver error: {exc}"
    if prob.status != _OK or alpha.value is None:
        return None, prob.status
    return np.asarray(alpha.value, dtype=float), prob.status


def _solve_once(F, b, groups, C, solver, alpha0):
    import cvxpy as cp

    m = len(b)
    n_groups = int(groups.max()) + 1
    A = sp.csr_matrix((np.ones(m), (groups, np.arange(m))), shape=(n_groups, m))
    alpha = cp.Variable(m, nonneg=True)
    if alpha0 is not None:
        alpha.value = alpha0
    quad = cp.sum_squares(F.T @ alpha) if F.shape[1] else 0.0
    prob = cp.Problem(cp.Maximize(b @ alpha - 0.5 * quad), [A @ alpha <= C])
    return _run(prob, alpha, solver, alpha0 is not None)


class _SingleGroupQP:
    """The 1-slack dual, compiled once per capacity (cvxpy DPP parameters).

    Constraints beyond the current count are padded with a zero factor row, zero
    loss and an upper bound 0, so one compiled problem serves many rounds.
    """

    def __init__(self, capacity):
        import cvxpy as cp

        self.capacity = capacity
        self.F = cp.Parameter((capacity, capacity))
        self.b = cp.Parameter(capacity)
        self.ub = cp.Parameter(capacity, nonneg=True)
        self.C = cp.Parameter(nonneg=True)
        self.alpha = cp.Variable(capacity, nonneg=True)
        obj = self.b @ self.alpha - 0.5 * cp.sum_squares(self.F.T @ self.alpha)
        self.prob = cp.Problem(cp.Maximize(obj), [self.alpha <= self.ub,
                                                  cp.sum(self.alpha) <= self.C])

    def solve(self, F, b, C, solver, alpha0):
        m, r = F.shape
        Fp = np.zeros((self.capacity, self.capacity))
        Fp[:m, :r] = F
        bp = np.zeros(self.capacity)
        bp[:m] = b
        ub = np.zeros(self.capacity)
        ub[:m] = C
        self.F.value, self.b.value, self.ub.value, self.C.value = Fp, bp, ub, C
        if alpha0 is not None:
            a0 = np.zeros(self.capacity)
            a0[:m] = alpha0
            self.alpha.value = a0
        alpha, status = _run(self.prob, self.alpha, solver, alpha0 is not None)
        return (None if alpha is None else alpha[:m]), status


_LOCAL = threading.local()  # compiled problems are not shared between threads


def _cached_single_group(m):
    cap = 16
    while cap < m:
        cap *= 2
    if cap > 512:
        return None
    cache = _LOCAL.__dict__.setdefault("problems", {})
    if cap not in cache:
        cache[cap] = _SingleGroupQP(cap)
    return cache[cap]


def _solve_smo(G, b, groups, C, alpha0, compiled=True):
    m = len(b)
    alpha = np.zeros(m) if alpha0 is None else np.array(alpha0, dtype=float)
    alpha = _feasible(alpha, groups, C)
    n_groups = int(groups.max()) + 1
    tol = kkt_tolerance(G, b, C)
    max_iter = 1000 * m + 100000
    if not compiled and n_groups == 1:
        # a small problem's one-group QPs by the active-set method in numpy, from the
        # warm start: exact on its support, accepted under SMO's own tolerance; SMO
        # only where it gives up
        exact = active_set_single(G, b, alpha, C, tol)
        if exact is not None:
            return exact, "optimal"
    smo = loops("structsvm.learners._smo_jit").smo

    G_c, groups64 = np.ascontiguousarray(G), groups.astype(np.int64)
    if n_groups == 1 and m >= _POLISH_MIN:
        # SMO's linear tail (most of its steps on the ill-conditioned 1-slack Gram
        # matrices) replaced by the exact solution on the support it found
        loose = max(tol, _POLISH_LOOSE * float(np.abs(b).max(initial=0.0)))
        it, viol = smo(G_c, b, groups64, 1, C, alpha, loose, max_iter)
        if viol <= tol:
            return alpha, "optimal"
        polished = _polish_single(G, b, alpha, C, tol)
        if polished is not None:
            return polished, "optimal"
    it, viol = smo(G_c, b, groups64, n_groups, C, alpha, tol, max_iter)
    if not np.isfinite(viol) or viol > tol:
        return None, f"KKT violation {viol:.3g} > {tol:.3g} after {it} iterations"
    return alpha, "optimal"


# one-group QPs of at least this many constraints are polished, from SMO's iterate at
# a KKT violation of this fraction of max|Δ|
_POLISH_MIN = 4
_POLISH_LOOSE = 1e-4


def _polish_single(G, b, alpha, C, tol, steps=8):
    """The optimum of the one-group dual from an approximate ``alpha``: an active-set
    method on the KKT system of its support, or None.

    With support S (α_S > 0) and the box Σα ≤ C tight, the KKT conditions are
    G_SS α_S + ν 1 = Δ_S, 1ᵀα_S = C (ν ≥ 0 its multiplier; without the box, ν = 0 and
    G_SS α_S = Δ_S), and b_c − (Gα)_c ≤ ν outside S. A step solves this system; a
    negative α drops its constraint, a violated condition outside S adds the most
    violated one. The result is accepted only when α ≥ 0, Σα ≤ C and SMO's own KKT
    violation is at most ``tol``, so it is an optimum to the same precision.
    """
    S = np.flatnonzero(alpha > 0.0)
    tight = C - float(alpha.sum()) <= 1e-9 * C
    m = b.shape[0]
    for _ in range(steps):
        k = S.size
        if k == 0:
            return None
        G_SS = G[np.ix_(S, S)]
        if tight:
            K = np.zeros((k + 1, k + 1))
            K[:k, :k] = G_SS
            K[:k, k] = K[k, :k] = 1.0
            rhs = np.append(b[S], C)
        else:
            K, rhs = G_SS, b[S]
        try:
            sol = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            return None
        a_S = sol[:k]
        if not np.all(np.isfinite(sol)):
            return None
        if (a_S <= 0.0).any():
            S = S[a_S > 0.0]
            continue
        if not tight and a_S.sum() > C:
            tight = True
            continue
        if tight and sol[k] < 0.0:
            tight = False
            continue
        a = np.zeros(m)
        a[S] = a_S
        if tight:
            a *= min(1.0, C / float(a.sum()))
        if kkt_violation(G, b, a, C) <= tol:
            return a
        grad = b - G @ a
        outside = np.ones(m, dtype=bool)
        outside[S] = False
        if not outside.any():
            return None
        c = int(np.flatnonzero(outside)[np.argmax(grad[outside])])
        S = np.sort(np.append(S, c))
    return None


def _feasible(alpha, groups, C):
    """Clip round-off: α ≥ 0 and every group sum ≤ C."""
    alpha = np.maximum(alpha, 0.0)
    sums = np.bincount(groups, weights=alpha)
    scale = np.where(sums > C, C / np.maximum(sums, 1e-300), 1.0)
    return alpha * scale[groups]


# working sets up to this many constraints are solved with one BLAS thread
_ONE_THREAD_MAX = 4000
_controller = []  # threadpoolctl's controller, made on the first solve


def _one_blas_thread(m):
    """A context in which BLAS runs in one thread, for a QP of ``m`` constraints.

    The working-set QPs are small dense systems (SMO's polishing solves, the active
    set's KKT systems, the factor of G), solved many times per round: a second BLAS
    thread costs more in synchronisation than it saves at these sizes (measured
    about 10x on 200 x 200 solves on two cores), and far more on a busy machine.
    """
    if m > _ONE_THREAD_MAX:
        return contextlib.nullcontext()
    if not _controller:
        from threadpoolctl import ThreadpoolController

        _controller.append(ThreadpoolController())
    return _controller[0].limit(limits=1, user_api="blas")


def solve_dual_qp(G, b, groups, C, *, solver="CLARABEL", round_=None, alpha0=None,
                  factor=None, compiled=True):
    """Solve the working-set dual QP; retry principled, else raise :class:`QPError`.

    Parameters
    ----------
    G : ndarray of shape (m, m)
        Gram matrix of the constraints' ψ vectors (PSD up to round-off).
    b : ndarray of shape (m,)
        Constraint losses Δ_c.
    groups : ndarray of int, shape (m,)
        Slack group of each constraint (0..n_groups-1).
    C : float
        Upper bound of every group's α sum.
    solver : {"AUTO", "SMO", "CLARABEL", "OSQP", "SCS"}, default="CLARABEL"
        First solver tried (case-insensitive). "CLARABEL", "OSQP" and "SCS" are
        cvxpy back-ends. "SMO" is structsvm's own maximal-violating-pair SMO
        (``_smo_jit``), warm started from ``alpha0``, 10-100x faster on these small
        dense QPs; "AUTO" is SMO with cvxpy/Clarabel taking over whenever SMO does
        not reach its KKT tolerance (as does "SMO").
    round_ : int, optional
        Cutting-plane round, for the error message.
    alpha0 : ndarray of shape (m,), optional
        Warm start (used by solvers that accept one).
    factor : ndarray, sparse matrix of shape (m, r) or callable, optional
        Any F with F Fᵀ = G (e.g. the constraint matrix itself when it has fewer
        columns than rows), or a function returning it (called only if a cvxpy
        solver runs); by default G is factored here.
    compiled : bool, default=True
        False: with "SMO" or "AUTO", a one-group QP is first solved by the active-set
        method in numpy (:func:`._active_set.active_set_single`), so that a small
        problem needs no compiled loop.

    Returns
    -------
    alpha : ndarray of shape (m,)
    dual_objective : float
        Δᵀα − ½ αᵀGα at the returned α.

    Raises
    ------
    QPError
        When the first solver, the other solvers, and the first solver on a
        Tikhonov-regularised Gram matrix all fail; the message names solver, status
        and round.

    Examples
    --------
    One constraint ψ with ψ·ψ = 4 and loss 1: α = min(C, 1/4).

    >>> a, d = solve_dual_qp(np.array([[4.0]]), np.array([1.0]), np.array([0]), C=1.0)
    >>> round(float(a[0]), 6), round(d, 6)
    (0.25, 0.125)
    """
    with _one_blas_thread(len(b)):
        return _solve(G, b, groups, C, solver=solver, round_=round_, alpha0=alpha0,
                      factor=factor, compiled=compiled)


def _solve(G, b, groups, C, *, solver, round_, alpha0, factor, compiled):
    G = np.asarray(G, dtype=float)
    b = np.asarray(b, dtype=float)
    groups = np.asarray(groups, dtype=np.intp)
    solver = str(solver).upper()
    if solver not in SOLVERS:
        raise ValueError(f"Unknown QP solver {solver!r}; choose one of {list(SOLVERS)}")
    if alpha0 is not None and len(alpha0) != len(b):
        alpha0 = None
    m = len(b)
    single = m > 0 and not groups.any() and factor is None
    failures = []
    if solver in ("SMO", "AUTO"):
        alpha, status = _solve_smo(G, b, groups, float(C), alpha0, compiled)
        if alpha is not None:
            alpha = _feasible(alpha, groups, float(C))
            return alpha, float(b @ alpha - 0.5 * alpha @ G @ alpha)
        failures.append(f"SMO: {status}")
        solver = "CLARABEL"
    if callable(factor):
        factor = factor()
    F = _factor(G) if factor is None else factor
    if single and (qp := _cached_single_group(m)) is not None:
        alpha, status = qp.solve(F, b, float(C), solver, alpha0)
        if alpha is not None:
            alpha = _feasible(alpha, groups, float(C))
            return alpha, float(b @ alpha - 0.5 * alpha @ G @ alpha)
        failures.append(f"{solver} (compiled): {status}")
    ridge = 1e-8 * max(float(np.trace(G)) / max(m, 1), 1e-12)
    attempts = [(s_, F) for s_ in (solver,) + tuple(x for x in CVXPY_SOLVERS
                                                      if x != solver)]
    attempts.append((solver, _factor(G + ridge * np.eye(m))))
    for name, fac in attempts:
        alpha, status = _solve_once(fac, b, groups, float(C), name, alpha0)
        if alpha is not None:
            alpha = _feasible(alpha, groups, float(C))
            return alpha, float(b @ alpha - 0.5 * alpha @ G @ alpha)
        failures.append(f"{name}: {status}")
    where = f" in round {round_}" if round_ is not None else ""
    raise QPError(f"working-set QP ({len(b)} constraints) failed{where}: "
                  + "; ".join(failures) + " (last try: regularised Gram)")
