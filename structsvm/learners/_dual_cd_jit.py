"""Compiled loops of the dual coordinate-descent learner (no validation here).

State (see :mod:`structsvm.learners.dual_cd`): a pool of sparse rows (sorted unique
column indices ``p_ind[p_start[r]:p_start[r] + p_len[r]]``, values ``p_dat[...]``) and,
per example i, ``S`` slots: ``slot[i, s]`` (pool row or −1), ``alpha[i, s]``,
``loss[i, s]``, ``gram[i, s, t]`` (ψ_s·ψ_t) and ``stamp[i, s]`` (last outer
iteration the slot had α > 0). The implicit "null" output y_i has ψ = 0, Δ = 0 and
α_null = C − Σ_s α_s.

Block step (:func:`block_smo`): with g_s = Δ_s − w·ψ_s (g_null = 0), move mass t from
the "down" slot (smallest g among those with α > 0) to the "up" slot (largest g):

    t = min( (g_up − g_down) / ‖ψ_up − ψ_down‖²,  α_down ),

the exact maximiser of the dual along that direction; then g_s −= t (G_s,up −
G_s,down). Repeated until g_up − g_down ≤ eps; w then moves once, by
Σ_s (α_s − α_s⁰) ψ_s over the slots whose α changed.

Plain-Python references of these loops are in ``tests/test_dual_cd.py``.
"""
import numba
import numpy as np

from ._atomic_jit import atomic_add

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "insert_rows": (
        "i8:1 i8:1 f8:1 f8:1 i4:1 f8:1 i8:1 i8:1 i8:2 f8:2 "
        "f8:2 f8:3 i8:2 f8 f8 i8 i8 i8:2 f8:2 f8:1 f8:1 b1",
        "i8"),
    "cached_pass": (
        "i8:1 f8:1 i4:1 f8:1 i8:1 i8:1 i8:2 "
        "f8:2 f8:2 f8:3 f8 f8 i8 f8:1 f8:1 b1",
        "f8"),
    "compact_pool": ("i4:1 f8:1 i8:1 i8:1 i8:2 i4:1 f8:1 i8:1 i8:1", "(i8 i8)"),
    "weights_from_alpha": ("i8 i4:1 f8:1 i8:1 i8:1 i8:2 f8:2", "f8:1"),
}


@numba.njit(cache=True, nogil=True)
def row_dot_dense(p_ind, p_dat, start, length, w):
    total = 0.0
    for j in range(start, start + length):
        total += p_dat[j] * w[p_ind[j]]
    return total


@numba.njit(cache=True, nogil=True)
def row_dot_row(p_ind, p_dat, sa, la, sb, lb, omega):
    """ψ_a·ψ_b of two sorted sparse rows (merge join); Σ_j ω_j ψ_aj ψ_bj when
    ``omega`` is not empty."""
    i, j, ea, eb, total = sa, sb, sa + la, sb + lb, 0.0
    weighted = omega.shape[0] > 0
    while i < ea and j < eb:
        ci, cj = p_ind[i], p_ind[j]
        if ci == cj:
            if weighted:
                total += omega[ci] * p_dat[i] * p_dat[j]
            else:
                total += p_dat[i] * p_dat[j]
            i += 1
            j += 1
        elif ci < cj:
            i += 1
        else:
            j += 1
    return total


@numba.njit(cache=True, nogil=True)
def _scatter(w, p_ind, p_dat, start, length, a):
    for j in range(start, start + length):
        w[p_ind[j]] += a * p_dat[j]


@numba.njit(cache=True, nogil=True)
def _scatter_weighted(w, p_ind, p_dat, start, length, a, omega, shared):
    """w += a ω ⊙ ψ (plain :func:`_scatter` when ``omega`` is empty); with ``shared``
    (a w other processes step on at the same time) w += a ψ in atomic additions, ω
    having only damped the step."""
    if shared:
        for j in range(start, start + length):
            atomic_add(w, p_ind[j], a * p_dat[j])
        return
    if omega.shape[0] == 0:
        _scatter(w, p_ind, p_dat, start, length, a)
        return
    for j in range(start, start + length):
        c = p_ind[j]
        w[c] += a * omega[c] * p_dat[j]


@numba.njit(cache=True, nogil=True)
def block_smo(i, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram, C, eps,
              max_steps, g, omega, shared):
    """Exact pairwise steps on example i's block; returns its cached gap before them.

    ``g`` is scratch of length S. The block gap C·max(0, max g) − Σ α g is the
    block's duality gap restricted to its cached outputs.
    """
    S = slot.shape[1]
    for s in range(S):
        r = slot[i, s]
        if r < 0:
            g[s] = 0.0
            continue
        g[s] = loss[i, s] - row_dot_dense(p_ind, p_dat, p_start[r], p_len[r], w)
    return block_steps(i, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram, C,
                       eps, max_steps, g, omega, shared)


@numba.njit(cache=True, nogil=True)
def block_steps(i, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram, C, eps,
                max_steps, g, omega, shared):
    """:func:`block_smo` with ``g`` already holding g_s = Δ_s − w·ψ_s of the occupied
    slots (a caller that has just computed them, as :func:`insert_rows`).

    With a non-empty ``omega`` the steps are those of the weighted quadratic
    ½ Σ_j ω_j (Σ α ψ)_j² (``gram`` holds the ω-weighted products) and w moves by
    ω ⊙ Σ_s (α_s − α_s⁰) ψ_s. With ``shared`` (a w that other processes step on at
    the same time) w moves by Σ_s (α_s − α_s⁰) ψ_s in atomic additions
    (:mod:`._atomic_jit`): ω then only damps the steps along the columns the
    processes share, so that their simultaneous steps cannot overshoot (the local
    subproblem of :mod:`structsvm.learners.partitioned_cd`, one step at a time)."""
    S = slot.shape[1]
    gmax, a_sum, ag = 0.0, 0.0, 0.0
    for s in range(S):
        if slot[i, s] < 0:
            continue
        if g[s] > gmax:
            gmax = g[s]
        a_sum += alpha[i, s]
        ag += alpha[i, s] * g[s]
    gap = C * gmax - ag
    # w moves once per changed slot after the steps, by (α_s − α_s⁰) ψ_s: the steps
    # themselves only need g, which the Gram matrix updates
    moved = False
    a0 = np.empty(S)
    for s in range(S):
        a0[s] = alpha[i, s]
    for _ in range(max_steps):
        a_null = C - a_sum
        # up: largest g (null = −1 with g = 0); down: smallest g with mass
        up, g_up = -1, 0.0
        dn, g_dn = -1, 0.0
        has_dn = a_null > 1e-12 * C
        for s in range(S):
            if slot[i, s] < 0:
                continue
            if g[s] > g_up:
                up, g_up = s, g[s]
            if alpha[i, s] > 0.0 and (not has_dn or g[s] < g_dn):
                dn, g_dn, has_dn = s, g[s], True
        if not has_dn or up == dn or g_up - g_dn <= eps * (1.0 + abs(g_up)):
            break
        # ‖ψ_up − ψ_dn‖² from the block's Gram matrix (null row: 0)
        q = 0.0
        if up >= 0:
            q += gram[i, up, up]
        if dn >= 0:
            q += gram[i, dn, dn]
        if up >= 0 and dn >= 0:
            q -= 2.0 * gram[i, up, dn]
        cap = alpha[i, dn] if dn >= 0 else a_null
        t = cap if q <= 1e-300 else min((g_up - g_dn) / q, cap)
        if t <= 0.0:
            break
        moved = True
        if up >= 0:
            alpha[i, up] += t
        if dn >= 0:
            alpha[i, dn] -= t
            if alpha[i, dn] < 1e-14 * C:
                alpha[i, dn] = 0.0
        a_sum = 0.0
        for s in range(S):
            if slot[i, s] < 0:
                continue
            a_sum += alpha[i, s]
            d = 0.0
            if up >= 0:
                d += gram[i, s, up]
            if dn >= 0:
                d -= gram[i, s, dn]
            g[s] -= t * d
    if moved:
        for s in range(S):
            r = slot[i, s]
            if r >= 0 and alpha[i, s] != a0[s]:
                _scatter_weighted(w, p_ind, p_dat, p_start[r], p_len[r],
                                  alpha[i, s] - a0[s], omega, shared)
    return gap


@numba.njit(cache=True, nogil=True)
def insert_rows(ex, rows, new_loss, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss,
                gram, stamp, C, eps, max_steps, it, merges, coefs, est, omega, shared):
    """Offer pool row ``rows[k]`` (loss ``new_loss[k]``) to example ``ex[k]``'s cache.

    A row is taken when it is more violated at the current w than every cached output
    of its example; the block is then re-optimised. When the cache is then full (all
    S slots), a slot with α = 0 (the longest unused) is dropped; if every α > 0, the
    two smallest-α slots are merged into one convex combination (exact: w and the dual
    are unchanged) — the Gram entries here, the row content by the caller, who gets
    ``merges[k] = (slot a, row a, row b)`` (slot −1: nothing to merge) and
    ``coefs[k] = (α_a, α_b) / (α_a + α_b)``: slot a must then hold
    coefs[k, 0] ψ_a + coefs[k, 1] ψ_b. Returns the number of rows taken.
    """
    S = slot.shape[1]
    g = np.empty(S)
    taken = 0
    for k in range(ex.shape[0]):
        merges[k, 0] = -1
        i, r = ex[k], rows[k]
        g_new = new_loss[k] - row_dot_dense(p_ind, p_dat, p_start[r], p_len[r], w)
        best, free, ag = 0.0, -1, 0.0
        for s in range(S):
            q = slot[i, s]
            if q < 0:
                g[s] = 0.0
                if free < 0:
                    free = s
                continue
            gs = loss[i, s] - row_dot_dense(p_ind, p_dat, p_start[q], p_len[q], w)
            g[s] = gs
            ag += alpha[i, s] * gs
            if gs > best:
                best = gs
        est[k] = C * max(best, g_new) - ag
        if g_new <= best + eps * (1.0 + abs(g_new)) or free < 0:
            continue
        taken += 1
        g[free] = g_new  # w has not moved: these g are the block's (block_steps)
        slot[i, free] = r
        alpha[i, free] = 0.0
        loss[i, free] = new_loss[k]
        stamp[i, free] = it
        for s in range(S):
            q = slot[i, s]
            if q < 0 or s == free:
                continue
            d = row_dot_row(p_ind, p_dat, p_start[r], p_len[r], p_start[q], p_len[q],
                            omega)
            gram[i, free, s] = d
            gram[i, s, free] = d
        gram[i, free, free] = row_dot_row(p_ind, p_dat, p_start[r], p_len[r], p_start[r],
                                          p_len[r], omega)
        block_steps(i, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram, C, eps,
                    max_steps, g, omega, shared)
        used, drop = 0, -1
        for s in range(S):
            if slot[i, s] < 0:
                continue
            used += 1
            if alpha[i, s] > 0.0:
                stamp[i, s] = it
            elif drop < 0 or stamp[i, s] < stamp[i, drop]:
                drop = s
        if used < S:
            continue
        if drop >= 0:
            slot[i, drop] = -1
            alpha[i, drop] = 0.0
            continue
        # all S slots active: merge the two smallest-α slots a, b into a (typed
        # int64 from the start: literal -1s would compile merge_into once more)
        a, b = np.int64(-1), np.int64(-1)
        for s in range(S):
            if a < 0 or alpha[i, s] < alpha[i, a]:
                b = a
                a = s
            elif b < 0 or alpha[i, s] < alpha[i, b]:
                b = s
        merges[k, 0], merges[k, 1], merges[k, 2] = a, slot[i, a], slot[i, b]
        tot = alpha[i, a] + alpha[i, b]
        coefs[k, 0], coefs[k, 1] = alpha[i, a] / tot, alpha[i, b] / tot
        merge_into(i, a, b, slot, alpha, loss, gram)
    return taken


@numba.njit(cache=True, nogil=True)
def merge_into(i, a, b, slot, alpha, loss, gram):
    """Slot a ← (α_a ψ_a + α_b ψ_b)/(α_a + α_b) (Gram, loss, α); slot b freed.

    The row of slot a is left for the caller to replace (``slot[i, a]`` keeps the
    old row id until then)."""
    S = slot.shape[1]
    aa, ab = alpha[i, a], alpha[i, b]
    tot = aa + ab
    ca, cb = aa / tot, ab / tot
    gaa, gbb, gab = gram[i, a, a], gram[i, b, b], gram[i, a, b]
    for s in range(S):
        if slot[i, s] < 0 or s == a or s == b:
            continue
        d = ca * gram[i, s, a] + cb * gram[i, s, b]
        gram[i, s, a] = d
        gram[i, a, s] = d
    gram[i, a, a] = ca * ca * gaa + 2.0 * ca * cb * gab + cb * cb * gbb
    loss[i, a] = ca * loss[i, a] + cb * loss[i, b]
    alpha[i, a] = tot
    alpha[i, b] = 0.0
    slot[i, b] = -1


@numba.njit(cache=True, nogil=True)
def cached_pass(order, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram, C, eps,
                max_steps, gaps, omega, shared):
    """One pass of block steps over the examples in ``order`` (cached outputs only);
    ``gaps[i]`` receives example i's cached block gap before its step. Returns Σ gaps."""
    g = np.empty(slot.shape[1])
    total = 0.0
    for k in range(order.shape[0]):
        i = order[k]
        gaps[i] = block_smo(i, w, p_ind, p_dat, p_start, p_len, slot, alpha, loss, gram,
                            C, eps, max_steps, g, omega, shared)
        total += gaps[i]
    return total


@numba.njit(cache=True, nogil=True)
def weights_from_alpha(n_features, p_ind, p_dat, p_start, p_len, slot, alpha):
    """w = Σ_i Σ_s α_is ψ_is, recomputed from scratch (no accumulated rounding)."""
    w = np.zeros(n_features)
    for i in range(slot.shape[0]):
        for s in range(slot.shape[1]):
            r = slot[i, s]
            if r >= 0 and alpha[i, s] != 0.0:
                _scatter(w, p_ind, p_dat, p_start[r], p_len[r], alpha[i, s])
    return w


@numba.njit(cache=True, nogil=True)
def compact_pool(p_ind, p_dat, p_start, p_len, slot, new_ind, new_dat, new_start,
                 new_len):
    """Copy the rows still referenced by a slot into fresh arrays; renumber slots."""
    pos, nr = 0, 0
    for i in range(slot.shape[0]):
        for s in range(slot.shape[1]):
            r = slot[i, s]
            if r < 0:
                continue
            st, ln = p_start[r], p_len[r]
            # element loops, not slice assignment: a slice copy compiles numba's
            # shape-mismatch error message (string formatting), seconds of compile time
            for j in range(ln):
                new_ind[pos + j] = p_ind[st + j]
                new_dat[pos + j] = p_dat[st + j]
            new_start[nr] = pos
            new_len[nr] = ln
            slot[i, s] = nr
            pos += ln
            nr += 1
    return pos, nr
