"""Compiled Eisner and Chu-Liu-Edmonds decoders over a batch (no validation here:
see structures/dependency/eisner.py and chu_liu_edmonds.py).

Sentence s has the (n_s + 1) × (n_s + 1) block ``scores[score_off[s]:score_off[s +
1]]`` (row-major, ``h * (n_s + 1) + d`` scores the arc h → d; node 0 is the root);
its heads are written to ``heads[head_off[s] + d - 1]`` for d = 1 .. n_s, and its
tree's score to ``best[s]``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: The loops compiled at installation (those of the default training path; the
#: others are compiled by numba on first use), with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "eisner_batch": ("f8:1 i8:1 i8:1 b1 i8:1 f8:1", "void"),
}

NEG = -np.inf


# ------------------------------------------------------------------ Eisner
@njit(cache=True, nogil=True)
def _eisner(S, m, single_root, heads, h0):
    """Eisner's O(n³) search of one sentence (``S`` its flat block, m = n + 1 nodes).

    Tables over spans [s, t]: complete (C) and incomplete (I), each facing right
    (head s) or left (head t). With ``single_root`` the root takes one dependent:
    its incomplete span [0, t] only joins [0, 0] with [1, t], and its complete
    span is only built over the whole sentence.
    """
    CR = np.full((m, m), NEG)
    CL = np.full((m, m), NEG)
    IR = np.full((m, m), NEG)
    IL = np.full((m, m), NEG)
    bCR = np.zeros((m, m), dtype=np.int64)
    bCL = np.zeros((m, m), dtype=np.int64)
    bIR = np.zeros((m, m), dtype=np.int64)
    bIL = np.zeros((m, m), dtype=np.int64)
    for s in range(m):
        CR[s, s] = 0.0
        CL[s, s] = 0.0
    for k in range(1, m):
        for s in range(m - k):
            t = s + k
            # incomplete spans: s and t joined by the arc s -> t or t -> s
            best, arg = NEG, s
            top = s + 1 if (single_root and s == 0) else t
            for r in range(s, top):
                v = CR[s, r] + CL[r + 1, t]
                if v > best:
                    best, arg = v, r
            IR[s, t] = best + S[s * m + t]
            bIR[s, t] = arg
            if s > 0:  # the root is no one's dependent
                IL[s, t] = best + S[t * m + s]
                bIL[s, t] = arg
            # complete spans
            best, arg = NEG, s
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > best:
                    best, arg = v, r
            CL[s, t] = best
            bCL[s, t] = arg
            best, arg = NEG, t
            if not (single_root and s == 0 and t < m - 1):
                for r in range(s + 1, t + 1):
                    v = IR[s, r] + CR[r, t]
                    if v > best:
                        best, arg = v, r
            CR[s, t] = best
            bCR[s, t] = arg
    # back-pointers, by an explicit stack of (kind, s, t): 0 CR, 1 CL, 2 IR, 3 IL
    stack = np.empty((4 * m + 4, 3), dtype=np.int64)
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, m - 1
    top = 1
    while top > 0:
        top -= 1
        kind, s, t = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t:
            continue
        if kind == 0:
            r = bCR[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 2, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 0, r, t
            top += 2
        elif kind == 1:
            r = bCL[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 1, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 3, r, t
            top += 2
        else:
            r = bIR[s, t] if kind == 2 else bIL[s, t]
            if kind == 2:
                heads[h0 + t - 1] = s
            else:
                heads[h0 + s - 1] = t
            stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 1, r + 1, t
            top += 2
    return CR[0, m - 1]


@njit(cache=True, nogil=True)
def eisner_batch(scores, score_off, head_off, single_root, heads, best):
    """The best projective tree of every sentence (see :func:`_eisner`)."""
    for s in range(score_off.size - 1):
        m = head_off[s + 1] - head_off[s] + 1
        best[s] = _eisner(scores[score_off[s]:score_off[s + 1]], m, single_root, heads,
                          head_off[s])


# ------------------------------------------------------------------ Chu-Liu-Edmonds
@njit(cache=True, nogil=True)
def _best_heads(M, alive, m, par):
    for d in range(1, m):
        if not alive[d]:
            continue
        best, arg = NEG, -1
        for h in range(m):
            if h != d and alive[h] and M[h, d] > best:
                best, arg = M[h, d], h
        par[d] = arg


@njit(cache=True, nogil=True)
def _find_cycle(par, alive, m, mark, cycle):
    """A cycle of the parent pointers among the alive nodes: its length (its nodes in
    ``cycle``), or 0 when there is none."""
    for v in range(m):
        mark[v] = -1
    for v0 in range(1, m):
        if not alive[v0] or mark[v0] != -1:
            continue
        v = v0
        while v != 0 and mark[v] == -1:
            mark[v] = v0
            v = par[v]
        if v != 0 and mark[v] == v0:  # came back to a node of this walk: a cycle
            c, u = 0, v
            while True:
                cycle[c] = u
                c += 1
                u = par[u]
                if u == v:
                    break
            return c
    return 0


@njit(cache=True, nogil=True)
def _chu_liu_edmonds(S, m, single_root, heads, h0):
    """Maximum spanning arborescence rooted at node 0 (Chu & Liu 1965; Edmonds 1967).

    Greedy best heads; while they close a cycle, the cycle is contracted into one of
    its nodes c (arcs u → c score max_v∈C S[u, v] − S[par v, v], arcs c → v score
    max_u∈C S[u, v]), remembering for every arc the original arc it stands for;
    then the contractions are undone from the last, each keeping all arcs of its
    cycle but the one into the node the chosen entering arc reaches. O(n³).
    With ``single_root`` the root's arcs are all raised by a margin larger than any
    difference of tree scores but one: the best tree with one root arc is found
    (Gabow & Tarjan 1984), and its score restored.
    """
    M = np.empty((m, m))
    spread = 0.0
    lo, hi = np.inf, -np.inf
    for h in range(m):
        for d in range(m):
            M[h, d] = S[h * m + d]
            if d > 0 and d != h:
                lo = min(lo, M[h, d])
                hi = max(hi, M[h, d])
    if single_root and m > 2:
        # every tree has n arcs: a tree with fewer root arcs loses less than
        # n (hi - lo) + 1 when each root arc costs that much
        spread = (m - 1) * (hi - lo) + 1.0
        for d in range(1, m):
            M[0, d] -= spread
    orig_h = np.empty((m, m), dtype=np.int64)
    orig_d = np.empty((m, m), dtype=np.int64)
    for h in range(m):
        for d in range(m):
            orig_h[h, d] = h
            orig_d[h, d] = d
    alive = np.ones(m, dtype=np.bool_)
    group = np.arange(m)                      # the alive node holding each original
    par = np.full(m, -1, dtype=np.int64)
    mark = np.empty(m, dtype=np.int64)
    cycle = np.empty(m, dtype=np.int64)
    # contraction k: its cycle's nodes, the original arcs of their cycle arcs, and a
    # snapshot of ``group`` before it
    cyc_ptr = np.zeros(m + 1, dtype=np.int64)
    # Σ over contractions of (cycle length − 1) ≤ m − 2: at most 2m cycle nodes
    cyc_node = np.empty(2 * m, dtype=np.int64)
    cyc_h = np.empty(2 * m, dtype=np.int64)
    cyc_d = np.empty(2 * m, dtype=np.int64)
    groups = np.empty((m, m), dtype=np.int64)
    in_cycle = np.zeros(m, dtype=np.bool_)
    enter_val = np.empty(m)
    enter_h = np.empty(m, dtype=np.int64)
    enter_d = np.empty(m, dtype=np.int64)
    leave_val = np.empty(m)
    leave_h = np.empty(m, dtype=np.int64)
    leave_d = np.empty(m, dtype=np.int64)
    n_con = 0
    while True:
        _best_heads(M, alive, m, par)
        c = _find_cycle(par, alive, m, mark, cycle)
        if c == 0:
            break
        a = cyc_ptr[n_con]
        for q in range(c):
            v = cycle[q]
            in_cycle[v] = True
            cyc_node[a + q] = v
            cyc_h[a + q] = orig_h[par[v], v]
            cyc_d[a + q] = orig_d[par[v], v]
        cyc_ptr[n_con + 1] = a + c
        groups[n_con, :] = group
        rep = cycle[0]
        for u in range(m):
            if not alive[u] or in_cycle[u]:
                continue
            enter_val[u], leave_val[u] = NEG, NEG
            for q in range(c):
                v = cycle[q]
                val = M[u, v] - M[par[v], v]
                if val > enter_val[u]:
                    enter_val[u], enter_h[u], enter_d[u] = val, orig_h[u, v], orig_d[u, v]
                if u > 0 and M[v, u] > leave_val[u]:
                    leave_val[u], leave_h[u], leave_d[u] = M[v, u], orig_h[v, u], \
                        orig_d[v, u]
        for u in range(m):
            if not alive[u] or in_cycle[u]:
                continue
            M[u, rep], orig_h[u, rep], orig_d[u, rep] = enter_val[u], enter_h[u], \
                enter_d[u]
            if u > 0:
                M[rep, u], orig_h[rep, u], orig_d[rep, u] = leave_val[u], leave_h[u], \
                    leave_d[u]
        for q in range(c):
            v = cycle[q]
            in_cycle[v] = False
            if v != rep:
                alive[v] = False
        for o in range(m):
            if in_cycle_of(groups[n_con, o], cycle, c):
                group[o] = rep
        n_con += 1
    # the arcs of the last graph, as original arcs: the head of every original node
    head = np.full(m, -1, dtype=np.int64)
    for d in range(1, m):
        if alive[d]:
            head[orig_d[par[d], d]] = orig_h[par[d], d]
    for k in range(n_con - 1, -1, -1):
        a, b = cyc_ptr[k], cyc_ptr[k + 1]
        g = groups[k]
        entered = -1
        for o in range(1, m):  # the one arc into the cycle from outside it
            if head[o] >= 0 and _member(g[o], cyc_node, a, b) \
                    and not _member(g[head[o]], cyc_node, a, b):
                entered = g[o]
                break
        for q in range(a, b):
            if cyc_node[q] != entered:
                head[cyc_d[q]] = cyc_h[q]
    total = 0.0
    for d in range(1, m):
        heads[h0 + d - 1] = head[d]
        total += S[head[d] * m + d]
    return total


@njit(cache=True, nogil=True)
def in_cycle_of(v, cycle, c):
    for q in range(c):
        if cycle[q] == v:
            return True
    return False


@njit(cache=True, nogil=True)
def _member(v, nodes, a, b):
    for q in range(a, b):
        if nodes[q] == v:
            return True
    return False


@njit(cache=True, nogil=True)
def chu_liu_edmonds_batch(scores, score_off, head_off, single_root, heads, best):
    """The best tree (projective or not) of every sentence (see
    :func:`_chu_liu_edmonds`)."""
    for s in range(score_off.size - 1):
        m = head_off[s + 1] - head_off[s] + 1
        best[s] = _chu_liu_edmonds(scores[score_off[s]:score_off[s + 1]], m,
                                   single_root, heads, head_off[s])
