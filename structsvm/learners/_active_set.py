"""The one-group working-set dual of the 1-slack cutting plane by a primal active-set
method in numpy (no numba: a small problem of a researcher's own structure trains
without compiling anything), and SMO's KKT measure shared with :mod:`._qp`.

The dual (see :mod:`._qp`): max_α bᵀα − ½ αᵀGα subject to α ≥ 0, Σα ≤ C.
"""
from __future__ import annotations

import numpy as np

__all__ = ["active_set_single", "kkt_tolerance", "kkt_violation"]


def active_set_single(G, b, alpha, C, tol, max_steps=None):
    """The one-group dual's optimum by a primal active-set method, or None.

    With the box's slack s = C − Σα as one more variable, the dual maximises
    f(x) = bᵀα − ½ αᵀGα over the simplex x = (α, s) ≥ 0, Σx = C. From the feasible
    ``alpha`` (the previous round's α: its support is usually the new one's but for
    the constraint just added) each step solves the equality-constrained problem on
    the free variables F (the KKT system G̃_FF z + ν 1 = b̃_F, 1ᵀz = C, where s has no
    curvature: a ridge of 1e-14 max G_cc keeps the system regular when the ψ vectors
    of F are dependent, as 1-slack Gram matrices often are); a z ≥ 0 is taken, else
    the step towards it stops where the first variable reaches 0 and that variable
    leaves F (Lawson & Hanson's ratio test, which cannot cycle on regular systems).
    At a z ≥ 0 the most violated variable outside F (gradient above ν) enters F.
    The result is accepted only when α ≥ 0, Σα ≤ C and SMO's own KKT violation is
    at most ``tol``, so it is an optimum to the same precision as SMO's.

    References
    ----------
    C. L. Lawson, R. J. Hanson. Solving Least Squares Problems. Prentice-Hall, 1974,
    Ch. 23 (the active-set method with its ratio test).
    J. Nocedal, S. J. Wright. Numerical Optimization. Springer, 2006, Sec. 16.5.
    """
    m = b.shape[0]
    ridge = 1e-14 * max(float(np.diag(G).max(initial=0.0)), 1e-300)
    # the KKT matrix of all m + 1 variables (α, s) and the multiplier ν, whose rows
    # and columns of F and ν each step's system takes
    E = np.zeros((m + 2, m + 2))
    E[:m, :m] = G
    E[np.arange(m + 1), np.arange(m + 1)] += ridge
    E[:m + 1, m + 1] = E[m + 1, :m + 1] = 1.0
    rhs_all = np.append(b, [0.0, C])
    x = np.append(alpha, max(C - float(alpha.sum()), 0.0))
    if x.sum() <= 0.0:
        x[m] = C
    x *= C / x.sum()
    free = x > 0.0
    for _ in range(max_steps or 4 * m + 20):
        F = np.flatnonzero(free)
        k = F.size
        rows = np.append(F, m + 1)
        try:
            z = np.linalg.solve(E[np.ix_(rows, rows)], rhs_all[rows])[:k]
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(z)):
            return None
        if (z <= 0.0).any():  # ratio test: step until the first variable reaches 0
            down = z < x[F]
            t = np.min(x[F][down] / (x[F][down] - z[down])) if down.any() else 1.0
            x[F] += min(t, 1.0) * (z - x[F])
            leave = F[x[F] <= 1e-15 * C]
            if leave.size == 0:
                leave = F[[int(np.argmin(x[F]))]]
            x[leave] = 0.0
            free[leave] = False
            if not free.any():
                return None
            continue
        x[:] = 0.0
        x[F] = z
        grad = np.append(b - G @ x[:m], 0.0)
        nu = float(np.mean(grad[F]))
        out = np.flatnonzero(~free)
        if out.size == 0 or grad[out].max() - nu <= tol:
            a = x[:m].copy()
            if kkt_violation(G, b, a, C) <= tol:
                return a
            return None
        free[out[int(np.argmax(grad[out]))]] = True
    return None


def kkt_tolerance(G, b, C):
    """The KKT tolerance of the one-group and grouped duals on the gradient b − Gα:
    near the round-off of computing it."""
    return max(1e-11 * float(np.abs(b).max(initial=0.0)),
               1e-13 * float(np.abs(np.diag(G)).max(initial=0.0)) * C, 1e-300)


def kkt_violation(G, b, alpha, C):
    """SMO's optimality measure of the one-group dual at a feasible α: the largest
    gradient (the slack's, 0, included) less the smallest over the variables that can
    decrease (α_c > 0, and the slack when Σα < C)."""
    grad = b - G @ alpha
    up = max(0.0, float(grad.max(initial=0.0)))
    S = alpha > 0.0
    down = float(grad[S].min()) if S.any() else np.inf
    if C - float(alpha.sum()) > 1e-12 * C:
        down = min(down, 0.0)
    return up - down
