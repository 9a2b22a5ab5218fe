"""Compiled loops of the sequential dual method for multiclass SVMs (no validation here).

Layout (see :mod:`structsvm.learners.multiclass_cd`):

- X as CSR arrays ``indptr, indices, data`` (sorted unique columns per row); a dense X
  is passed as ``data = X.ravel()``, ``indptr = arange(n + 1) * d`` and ``dense=True``
  (then the column of entry p of row i is ``p − indptr[i]`` and ``indices`` is unused);
- ``WT`` of shape (d, K): the class weights feature-major, ``WT[j, k] = w[k * d + j]``
  (the K weights of a feature are contiguous: a row's class scores read each feature's
  weights once);
- ``beta`` of shape (n, K): β_ik with w_k = Σ_i β_ik x_i, Σ_k β_ik = 0, β_ik ≤ 0 for
  k ≠ y_i and β_iy_i ≤ C (β_ik = −α_ik for k ≠ y_i in the structural dual);
- ``cls`` of shape (n, K): per example a permutation of the classes whose first
  ``n_act[i]`` entries are its active (unshrunk) classes, ``cls[i, 0] = y_i`` always;
- ``table`` of shape (K, K): the loss Δ(c, k), row y_i for example i.

Sub-problem of example i (Keerthi et al. 2008), with q = ‖x_i‖², s_k = w_k·x_i,
G_k = Δ_ik + s_k and B_k = G_k − q β_ik:

    min_β  ½ q Σ_k β_k² + Σ_k B_k β_k   s.t.  Σ_k β_k = 0,  β_k ≤ C_k

(C_k = C for k = y_i, else 0). Its solution is β_k = min(C_k, (θ − B_k) / q) with θ
found by sorting D_k = B_k + q C_k in decreasing order: θ = (Σ_{r<R} D_(r) − q C) / R
for the largest prefix R whose members all exceed θ.

Plain-Python references of these loops are in ``tests/test_multiclass_cd.py``.
"""
import numba
import numpy as np

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "sweep": (
        "i8:1 i8:1 i4:1 f8:1 b1 i8:1 f8:1 "
        "f8:2 f8 f8:2 f8:2 i4:2 i4:1 b1 f8:1",
        "(i8 f8)"),
}


@numba.njit(cache=True, nogil=True)
def solve_subproblem(B, q, C, na, D, beta_new):
    """β of the exact sub-problem over the first ``na`` entries of B (entry 0: y_i).

    ``D`` is scratch (length ≥ na); the solution is written to ``beta_new[:na]``.
    """
    for a in range(na):  # D sorted decreasingly (insertion sort: na is small)
        v = B[a] + (q * C if a == 0 else 0.0)
        b = a
        while b > 0 and D[b - 1] < v:
            D[b] = D[b - 1]
            b -= 1
        D[b] = v
    total = D[0] - q * C
    r = 1
    while r < na and total < r * D[r]:
        total += D[r]
        r += 1
    theta = total / r
    for a in range(na):
        v = (theta - B[a]) / q
        cap = C if a == 0 else 0.0
        beta_new[a] = v if v < cap else cap


@numba.njit(cache=True, nogil=True)
def sweep(order, indptr, indices, data, dense, Y, sqn, table, C, WT, beta, cls, n_act,
          shrink, gaps):
    """One pass over the examples ``order``: per example its active class scores, its
    block gap (written to ``gaps[i]``), shrinking, the exact sub-problem and the
    updates of the weights of the classes whose β changed.

    Returns (number of examples whose β changed, increase of the dual D(β)): the sum
    of the sub-problems' decreases f(β_old) − f(β_new).
    """
    K = WT.shape[1]
    s = np.empty(K)
    G = np.empty(K)
    B = np.empty(K)
    Dtmp = np.empty(K)
    bnew = np.empty(K)
    dk = np.empty(K)
    ck = np.empty(K, dtype=np.int64)
    updated = 0
    gain = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        na = n_act[i]
        q = sqn[i]
        y = Y[i]
        p0, p1 = indptr[i], indptr[i + 1]
        for a in range(na):
            s[a] = 0.0
        for p in range(p0, p1):
            j = p - p0 if dense else indices[p]
            xv = data[p]
            for a in range(na):
                s[a] += xv * WT[j, cls[i, a]]
        maxG = -np.inf
        minG = np.inf
        gsum = 0.0
        for a in range(na):
            k = cls[i, a]
            G[a] = table[y, k] + s[a]
            b = beta[i, k]
            B[a] = G[a] - q * b
            gsum += b * G[a]
            if G[a] > maxG:
                maxG = G[a]
            cap = C if a == 0 else 0.0
            if b < cap and G[a] < minG:
                minG = G[a]
        gaps[i] = C * (maxG - G[0]) + gsum
        if shrink:  # classes at their bound whose gradient is below every free one
            a = 1
            while a < na:
                if beta[i, cls[i, a]] == 0.0 and G[a] < minG:
                    na -= 1
                    tmp = cls[i, a]
                    cls[i, a] = cls[i, na]
                    cls[i, na] = tmp
                    G[a], G[na] = G[na], G[a]
                    B[a], B[na] = B[na], B[a]
                else:
                    a += 1
            n_act[i] = na
        if na < 2 or maxG - minG <= 1e-12 * (1.0 + abs(maxG)):
            continue
        solve_subproblem(B, q, C, na, Dtmp, bnew)
        m = 0
        for a in range(na):
            k = cls[i, a]
            bo = beta[i, k]
            delta = bnew[a] - bo
            gain += (0.5 * q * bo + B[a]) * bo - (0.5 * q * bnew[a] + B[a]) * bnew[a]
            if delta != 0.0:
                beta[i, k] = bnew[a]
                dk[m] = delta
                ck[m] = k
                m += 1
        if m == 0:
            continue
        updated += 1
        for p in range(p0, p1):
            j = p - p0 if dense else indices[p]
            xv = data[p]
            for c in range(m):
                WT[j, ck[c]] += dk[c] * xv
    return updated, gain
