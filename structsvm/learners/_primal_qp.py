"""The working-set QP in primal form, with the user's constraints on w (cvxpy).

With constraints on w the dual of the working-set QP is no longer the box-constrained
problem of :mod:`._qp` (every user constraint adds dual variables and changes w's
formula), so the cutting planes then solve the primal directly:

    min_{w, ξ}  ½‖w‖² + C Σ_g ξ_g
    s.t.        ψ_c·w ≥ Δ_c − ξ_{g(c)}   for every working-set constraint c,
                ξ ≥ 0,   and the user's constraints  f(w, feature_map).

The problem is compiled once per capacity as a DPP problem (ψ, Δ, the group matrix and
C are cvxpy Parameters; unused rows are zero, Δ = 0, so they read 0 ≥ −ξ and bind
nothing) and re-solved with new parameter values every round, warm-started from the
previous w. When the padded ψ would be too large to hold densely (capacity × n_features
beyond ``_DENSE_LIMIT``), each round builds the problem from the sparse ψ instead.
The dual values of the working-set rows are the α of the dual (the cutting plane
uses them to drop long-inactive constraints).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..protocols import QPError

__all__ = ["PrimalQP", "check_constraints"]

_DENSE_LIMIT = 4_000_000   # entries of the padded dense ψ parameter
_OPTIONS = {"CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-11),
            "OSQP": dict(eps_abs=1e-10, eps_rel=1e-10, max_iter=200000, polishing=True),
            "SCS": dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200000)}


def check_constraints(func, w, feature_map):
    """Call the user's ``constraints(w, feature_map)``; return a list of cvxpy constraints.

    Raises
    ------
    TypeError
        When ``func`` is not callable or does not return cvxpy constraints.
    ValueError
        When a constraint does not involve w only.
    """
    import cvxpy as cp

    if not callable(func):
        raise TypeError(f"constraints must be a callable f(w, feature_map) returning a "
                        f"list of cvxpy constraints, got {type(func).__name__}")
    out = func(w, feature_map)
    if isinstance(out, cp.constraints.constraint.Constraint):
        out = [out]
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"constraints(w, feature_map) must return a list of cvxpy "
                        f"constraints, got {type(out).__name__}")
    for k, c in enumerate(out):
        if not isinstance(c, cp.constraints.constraint.Constraint):
            raise TypeError(f"constraints(w, feature_map)[{k}] is a {type(c).__name__}, "
                            "not a cvxpy constraint (write e.g. w[idx] >= 0)")
        other = [v for v in c.variables() if v is not w]
        if other:
            raise ValueError(f"constraints(w, feature_map)[{k}] involves a variable other "
                             f"than w ({other[0].name()}); only constraints on w are "
                             "supported")
    return list(out)


class PrimalQP:
    """Primal working-set QP with the user's constraints, compiled once per capacity.

    Parameters
    ----------
    n_features : int
    n_groups : int
        Slack variables (1 for the 1-slack formulation, n for n-slack).
    constraints : callable
        ``f(w, feature_map)`` returning cvxpy constraints on the Variable ``w``.
    feature_map : FeatureMap (fitted)
    solver : str
        cvxpy solver name ("CLARABEL", "OSQP", "SCS").
    """

    def __init__(self, n_features, n_groups, constraints, feature_map, solver="CLARABEL"):
        import cvxpy as cp

        self.D, self.n_groups = int(n_features), int(n_groups)
        self.w = cp.Variable(self.D, name="w")
        self.xi = cp.Variable(self.n_groups, nonneg=True, name="xi")
        self.user = check_constraints(constraints, self.w, feature_map)
        self.solver = solver if solver in _OPTIONS else "CLARABEL"
        self._compiled = {}
        self.n_compiled = 0

    # ------------------------------------------------------------------ problems
    def _objective(self, C):
        import cvxpy as cp

        return cp.Minimize(0.5 * cp.sum_squares(self.w) + C * cp.sum(self.xi))

    def _parametrised(self, cap):
        import cvxpy as cp

        if cap not in self._compiled:
            psi = cp.Parameter((cap, self.D), name="psi")
            loss = cp.Parameter(cap, name="loss")
            C = cp.Parameter(nonneg=True, name="C")
            if self.n_groups == 1:
                rhs = loss - self.xi[0]
                A = None
            else:
                A = cp.Parameter((cap, self.n_groups), name="groups")
                rhs = loss - A @ self.xi
            ws = psi @ self.w >= rhs
            prob = cp.Problem(self._objective(C), [ws] + self.user)
            self._compiled[cap] = (prob, psi, loss, C, A, ws)
            self.n_compiled += 1
        return self._compiled[cap]

    def solve(self, rows, loss, group, C, round_=None):
        """Solve over the working set; return (w, α, optimal value).

        Parameters
        ----------
        rows : csr_matrix of shape (m, n_features)
            Working-set ψ_c (m may be 0).
        loss : ndarray of shape (m,)
        group : ndarray of int, shape (m,)
        C : float

        Returns
        -------
        w : ndarray of shape (n_features,)
        alpha : ndarray of shape (m,)
            Dual values of the working-set constraints.
        value : float
            Optimal value (a lower bound on the constrained full problem's optimum).
        """
        import cvxpy as cp

        m = rows.shape[0]
        cap = 8
        while cap < m:
            cap *= 2
        if cap * self.D <= _DENSE_LIMIT:
            prob, psi, lo, Cp, A, ws = self._parametrised(cap)
            P = np.zeros((cap, self.D))
            if m:
                P[:m] = rows.toarray()
            b = np.zeros(cap)
            b[:m] = loss
            psi.value, lo.value, Cp.value = P, b, float(C)
            if A is not None:
                G = np.zeros((cap, self.n_groups))
                G[np.arange(m), group] = 1.0
                A.value = G
        else:
            Psi = sp.csr_matrix(rows)
            rhs = (np.asarray(loss, dtype=float) - self.xi[np.asarray(group)]) if m else None
            cons = ([Psi @ self.w >= rhs] if m else []) + self.user
            prob = cp.Problem(self._objective(float(C)), cons)
            ws = cons[0] if m else None
        status = self._run(prob)
        if status is None:
            # principled retry: the other solvers before giving up
            for other in (s for s in _OPTIONS if s != self.solver):
                status = self._run(prob, other)
                if status is not None:
                    break
        if status is None:
            where = f" in round {round_}" if round_ is not None else ""
            raise QPError(f"constrained working-set QP ({m} constraints) failed{where}: "
                          f"status {prob.status!r} with {self.solver} and the other cvxpy "
                          "solvers" + (" -- are the constraints on w feasible?"
                                       if "infeasible" in str(prob.status) else ""))
        w = np.asarray(self.w.value, dtype=float).ravel()
        if m and ws is not None and ws.dual_value is not None:
            alpha = np.maximum(np.asarray(ws.dual_value, dtype=float).ravel()[:m], 0.0)
        else:
            alpha = np.zeros(m)
        return w, alpha, float(prob.value)

    def _run(self, prob, solver=None):
        solver = solver or self.solver
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(solver=solver, warm_start=True, **_OPTIONS[solver])
            except Exception:  # cvxpy.error.SolverError and solver crashes
                return None
        if prob.status != "optimal" or self.w.value is None:
            return None
        return prob.status
