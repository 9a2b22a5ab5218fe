"""SMO for the working-set dual (compiled loop; no validation here).

Problem (per group g a box Σ_{c∈g} α_c ≤ C, written with a slack s_g ≥ 0 so that
Σ_{c∈g} α_c + s_g = C):

    max_α  bᵀα − ½ αᵀGα   s.t. α ≥ 0,  Σ_{c∈g} α_c ≤ C.

The gradient is g = b − Gα (the slack's is 0). Each step moves mass inside one
group from the "down" variable with the smallest gradient (α or s > 0) to the "up"
variable with the largest (the maximal violating pair), by the exact line search
of the two-variable subproblem. At the optimum no group has a pair with
g_up − g_down > 0 (the KKT conditions), and the Frank-Wolfe gap
Σ_g [C·max(0, max_{c∈g} g_c) − Σ_{c∈g} α_c g_c] bounds the suboptimality.

Reference: R.-E. Fan, P.-H. Chen, C.-J. Lin. Working set selection using second
order information for training SVM. JMLR 6, 2005 (the maximal-violating-pair rule).
"""
import numba
import numpy as np

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "smo": ("f8:2 f8:1 i8:1 i8 f8 f8:1 f8 i8", "(i8 f8)"),
}


@numba.njit(cache=True, nogil=True)
def smo(G, b, groups, n_groups, C, alpha, tol, max_iter):
    """Run SMO in place on ``alpha``; returns (iterations, final max violation)."""
    m = b.shape[0]
    grad = b - G @ alpha
    slack = np.full(n_groups, C)
    for c in range(m):
        slack[groups[c]] -= alpha[c]
    for k in range(n_groups):
        if slack[k] < 0.0:
            slack[k] = 0.0
    viol = np.inf
    it = 0
    best_up = np.empty(n_groups, dtype=np.int64)
    best_dn = np.empty(n_groups, dtype=np.int64)
    g_up = np.empty(n_groups)
    g_dn = np.empty(n_groups)
    while it < max_iter:
        # per group: up = argmax gradient (slack counts with 0), down = argmin over
        # variables that can decrease (α_c > 0, or the slack when s_g > 0)
        for k in range(n_groups):
            best_up[k] = -1
            g_up[k] = 0.0
            if slack[k] > 0.0:
                best_dn[k] = -1
                g_dn[k] = 0.0
            else:
                best_dn[k] = -2  # nothing yet
                g_dn[k] = np.inf
        for c in range(m):
            k = groups[c]
            if grad[c] > g_up[k]:
                g_up[k] = grad[c]
                best_up[k] = c
            if alpha[c] > 0.0 and grad[c] < g_dn[k]:
                g_dn[k] = grad[c]
                best_dn[k] = c
        viol = 0.0
        kk = -1
        for k in range(n_groups):
            if best_dn[k] == -2:
                continue
            v = g_up[k] - g_dn[k]
            if v > viol:
                viol = v
                kk = k
        if kk < 0 or viol <= tol:
            break
        i = best_up[kk]
        j = best_dn[kk]
        # move t ≥ 0 from j (down) to i (up); -1 marks the group's slack
        if i >= 0 and j >= 0:
            curv = G[i, i] + G[j, j] - 2.0 * G[i, j]
            limit = alpha[j]
        elif i >= 0:
            curv = G[i, i]
            limit = slack[kk]
        else:
            curv = G[j, j]
            limit = alpha[j]
        t = limit
        if curv > 1e-300:
            t = min(limit, viol / curv)
        if t <= 0.0:
            break
        if i >= 0:
            alpha[i] += t
            for c in range(m):
                grad[c] -= t * G[i, c]  # G is symmetric: read rows (contiguous)
        else:
            slack[kk] += t
        if j >= 0:
            alpha[j] = alpha[j] - t if t < alpha[j] else 0.0
            for c in range(m):
                grad[c] += t * G[j, c]
        else:
            slack[kk] = slack[kk] - t if t < slack[kk] else 0.0
        it += 1
    return it, viol


def smo_reference(G, b, groups, C, alpha, tol=1e-12, max_iter=100000):
    """Plain numpy/Python version of :func:`smo` (the tests compare the two)."""
    alpha = alpha.astype(float).copy()
    n_groups = int(groups.max()) + 1
    for _ in range(max_iter):
        grad = b - G @ alpha
        slack = C - np.bincount(groups, weights=alpha, minlength=n_groups)
        best = (0.0, None)
        for k in range(n_groups):
            members = np.flatnonzero(groups == k)
            ups = [(grad[c], c) for c in members] + [(0.0, -1)]
            downs = [(grad[c], c) for c in members if alpha[c] > 0]
            if slack[k] > 0:
                downs.append((0.0, -1))
            if not downs:
                continue
            gu, i = max(ups)
            gd, j = min(downs)
            if gu - gd > best[0]:
                best = (gu - gd, (k, i, j))
        viol, choice = best
        if choice is None or viol <= tol:
            break
        k, i, j = choice
        e = np.zeros(len(b))
        if i >= 0:
            e[i] += 1.0
        if j >= 0:
            e[j] -= 1.0
        curv = e @ G @ e
        limit = alpha[j] if j >= 0 else slack[k]
        t = min(limit, viol / curv) if curv > 1e-300 else limit
        alpha += t * e
    return alpha
