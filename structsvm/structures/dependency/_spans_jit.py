"""Compiled loops over Eisner's spans beyond the best tree: max-marginals of every arc
(inside-outside in the (max, +) semiring) and the k best trees (Huang & Chiang's
k-best parsing on Eisner's hypergraph) (private; no validation here:
:mod:`structsvm.structures.dependency.spans` checks the arguments).

Sentence s of n words has the m × m block ``S[arc_off[s]:arc_off[s + 1]]`` (m = n + 1
nodes, row-major, ``h * m + d`` the best score of the arc h → d; −inf: forbidden)
and its words' heads at ``head_off[s] + d - 1``. The items are the spans [a, b] of
nodes, complete (C) or incomplete (I), facing right (head a) or left (head b),
numbered 0 CR, 1 CL, 2 IR, 3 IL:

    IR[a, b] = max_r CR[a, r] + CL[r+1, b] + S[a → b]      (a ≤ r < b)
    IL[a, b] = max_r CR[a, r] + CL[r+1, b] + S[b → a]      (a > 0: the root heads)
    CL[a, b] = max_r CL[a, r] + IL[r, b]                   (a ≤ r < b)
    CR[a, b] = max_r IR[a, r] + CR[r, b]                   (a < r ≤ b)

with CR[a, a] = CL[a, a] = 0; the best tree scores CR[0, n]. With ``single_root``
the root takes one dependent: IR[0, b] splits at r = 0 only, and CR[0, b] exists
for b = n only. Every projective tree has exactly one derivation, so max-marginals
of the items IR/IL are those of the arcs, and the k best derivations are the k best
trees. The tests compare both with enumeration of every projective tree.
"""
from __future__ import annotations

import numba
import numpy as np

from .._kbest_heap_jit import heap_pop, heap_push

__all__ = ["max_marginals_batch", "kbest_batch", "top_relations"]

NEG = -np.inf
CR, CL, IR, IL = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True)
def _inside(S, lo, m, single_root, A):
    """A[kind, a, b] := the best score of the item (−inf: none)."""
    for q in range(4):
        for a in range(m):
            for b in range(m):
                A[q, a, b] = NEG
    for a in range(m):
        A[CR, a, a] = 0.0
        A[CL, a, a] = 0.0
    for k in range(1, m):
        for a in range(m - k):
            b = a + k
            best = NEG
            top = a + 1 if (single_root and a == 0) else b
            for r in range(a, top):
                v = A[CR, a, r] + A[CL, r + 1, b]
                if v > best:
                    best = v
            A[IR, a, b] = best + S[lo + a * m + b]
            if a > 0:
                A[IL, a, b] = best + S[lo + b * m + a]
            best = NEG
            for r in range(a, b):
                v = A[CL, a, r] + A[IL, r, b]
                if v > best:
                    best = v
            A[CL, a, b] = best
            best = NEG
            if not (single_root and a == 0 and b < m - 1):
                for r in range(a + 1, b + 1):
                    v = A[IR, a, r] + A[CR, r, b]
                    if v > best:
                        best = v
            A[CR, a, b] = best


@numba.njit(cache=True, nogil=True, inline="always")
def _raise(B, q, a, b, v):
    if v > B[q, a, b]:
        B[q, a, b] = v


@numba.njit(cache=True, nogil=True)
def max_marginals_batch(S, arc_off, head_off, single_root, mm, best):
    """``mm[arc_off[s] + h * m + d]`` := the best score of a projective tree with the
    arc h → d (−inf: none, and for the non-arcs d = 0 or h = d); ``best[s]`` the best
    tree's score.

    Outside scores B (the best rest of a tree around an item) flow from the whole
    sentence CR[0, n] down the same recursions as the inside scores A; the spans go
    from longest to shortest, the complete items of a length before the incomplete
    ones (a complete item feeds an incomplete one of its own length).
    """
    n_sent = arc_off.shape[0] - 1
    max_m = 1
    for s in range(n_sent):
        m = head_off[s + 1] - head_off[s] + 1
        if m > max_m:
            max_m = m
    A = np.empty((4, max_m, max_m))
    B = np.empty((4, max_m, max_m))
    for s in range(n_sent):
        lo = arc_off[s]
        m = head_off[s + 1] - head_off[s] + 1
        _inside(S, lo, m, single_root, A)
        best[s] = A[CR, 0, m - 1]
        for q in range(4):
            for a in range(m):
                for b in range(m):
                    B[q, a, b] = NEG
        B[CR, 0, m - 1] = 0.0
        for k in range(m - 1, 0, -1):
            for a in range(m - k):  # complete items of length k
                b = a + k
                o = B[CL, a, b]
                if o > NEG:
                    for r in range(a, b):
                        _raise(B, CL, a, r, o + A[IL, r, b])
                        _raise(B, IL, r, b, o + A[CL, a, r])
                o = B[CR, a, b]
                if o > NEG and not (single_root and a == 0 and b < m - 1):
                    for r in range(a + 1, b + 1):
                        _raise(B, IR, a, r, o + A[CR, r, b])
                        _raise(B, CR, r, b, o + A[IR, a, r])
            for a in range(m - k):  # incomplete items of length k
                b = a + k
                top = a + 1 if (single_root and a == 0) else b
                for q in (IR, IL):
                    o = B[q, a, b]
                    if o == NEG:
                        continue
                    o += S[lo + a * m + b] if q == IR else S[lo + b * m + a]
                    for r in range(a, top):
                        _raise(B, CR, a, r, o + A[CL, r + 1, b])
                        _raise(B, CL, r + 1, b, o + A[CR, a, r])
        for h in range(m):
            for d in range(m):
                mm[lo + h * m + d] = NEG
        for a in range(m):
            for b in range(a + 1, m):
                mm[lo + a * m + b] = A[IR, a, b] + B[IR, a, b]
                if a > 0:
                    mm[lo + b * m + a] = A[IL, a, b] + B[IL, a, b]


@numba.njit(cache=True, nogil=True)
def top_relations(scores, relations, slot_off, k, top_sc, top_id, top_n):
    """The k best relations of every arc, best first: ``top_sc[a, :top_n[a]]`` and
    ``top_id[a, :top_n[a]]`` (relations scoring −inf left out; ties: the lower
    entry)."""
    n_arcs = slot_off.shape[0] - 1
    for a in range(n_arcs):
        lo = slot_off[a]
        hi = slot_off[a + 1]
        c = 0
        for e in range(lo, hi):
            v = scores[e]
            if v == NEG:
                continue
            # insertion into the sorted top list
            j = c if c < k else k
            if j == k and v <= top_sc[a, k - 1]:
                continue
            if j == k:
                j = k - 1
            while j > 0 and top_sc[a, j - 1] < v:
                if j < k:
                    top_sc[a, j] = top_sc[a, j - 1]
                    top_id[a, j] = top_id[a, j - 1]
                j -= 1
            top_sc[a, j] = v
            top_id[a, j] = relations[e]
            if c < k:
                c += 1
        top_n[a] = c


@numba.njit(cache=True, nogil=True)
def _combine(L, cnt, q1, a1, b1, q2, a2, b2, splits, k, hs, hi, hj1, hj2, out, ent_r,
             ent_j1, ent_j2):
    """The k best sums L[q1, a1[i], b1[i], j1] + L[q2, a2[i], b2[i], j2] over the
    hyperedges i < splits and the ranks (j1, j2), into out / ent_*; returns their
    number. Huang & Chiang's frontier: each edge starts at (0, 0); popping (j1, j2)
    pushes (j1 + 1, j2), and (j1, j2 + 1) when j1 = 0, so every pair enters the heap
    once and sums leave it in non-increasing order."""
    size = 0
    for i in range(splits):
        if cnt[q1, a1[i], b1[i]] > 0 and cnt[q2, a2[i], b2[i]] > 0:
            v = L[q1, a1[i], b1[i], 0] + L[q2, a2[i], b2[i], 0]
            if v > NEG:
                size = heap_push(hs, hi, hj1, hj2, size, v, i, 0, 0)
    m = 0
    while m < k and size > 0:
        v = hs[0]
        i = hi[0]
        j1 = hj1[0]
        j2 = hj2[0]
        size = heap_pop(hs, hi, hj1, hj2, size)
        out[m] = v
        ent_r[m] = i
        ent_j1[m] = j1
        ent_j2[m] = j2
        m += 1
        if j1 + 1 < cnt[q1, a1[i], b1[i]]:
            w = L[q1, a1[i], b1[i], j1 + 1] + L[q2, a2[i], b2[i], j2]
            if w > NEG:
                size = heap_push(hs, hi, hj1, hj2, size, w, i, j1 + 1, j2)
        if j1 == 0 and j2 + 1 < cnt[q2, a2[i], b2[i]]:
            w = L[q1, a1[i], b1[i], 0] + L[q2, a2[i], b2[i], j2 + 1]
            if w > NEG:
                size = heap_push(hs, hi, hj1, hj2, size, w, i, 0, j2 + 1)
    return m


@numba.njit(cache=True, nogil=True)
def kbest_batch(arc_off, head_off, top_sc, top_id, top_n, single_root, k, heads, rels,
                scores, counts):
    """The k best projective trees of every sentence: ``heads[head_off[s] + d - 1, j]``
    and ``rels[...]`` the head and relation of word d in the j-th best tree,
    ``scores[s, j]`` its score, ``counts[s]`` the number found.

    Every item keeps its k best derivations (score; the split and the ranks of its
    two children; for an incomplete item the rank of the arc's relation too), from
    the shortest spans up (Huang & Chiang 2005, Algorithm 2). An incomplete item
    first combines its splits without the arc, then adds the arc's k best relations
    by the same frontier over (rank of the combination, rank of the relation).
    """
    n_sent = arc_off.shape[0] - 1
    max_m = 1
    for s in range(n_sent):
        m = head_off[s + 1] - head_off[s] + 1
        if m > max_m:
            max_m = m
    sc = np.empty((4, max_m, max_m, k))
    er = np.zeros((4, max_m, max_m, k), dtype=np.int64)
    ej1 = np.zeros((4, max_m, max_m, k), dtype=np.int64)
    ej2 = np.zeros((4, max_m, max_m, k), dtype=np.int64)
    el = np.zeros((4, max_m, max_m, k), dtype=np.int64)
    cnt = np.zeros((4, max_m, max_m), dtype=np.int64)
    cap = max_m + 2 * k + 2
    hs = np.empty(cap)
    hi = np.empty(cap, dtype=np.int64)
    hj1 = np.empty(cap, dtype=np.int64)
    hj2 = np.empty(cap, dtype=np.int64)
    a1 = np.empty(max_m, dtype=np.int64)
    b1 = np.empty(max_m, dtype=np.int64)
    a2 = np.empty(max_m, dtype=np.int64)
    b2 = np.empty(max_m, dtype=np.int64)
    rs = np.empty(max_m, dtype=np.int64)
    u_sc = np.empty(k)
    u_r = np.empty(k, dtype=np.int64)
    u_j1 = np.empty(k, dtype=np.int64)
    u_j2 = np.empty(k, dtype=np.int64)
    o_sc = np.empty(k)
    o_r = np.empty(k, dtype=np.int64)
    o_j1 = np.empty(k, dtype=np.int64)
    o_j2 = np.empty(k, dtype=np.int64)
    # a one-entry list of the combination, for the relation frontier
    u_cnt = np.zeros((4, 1, 1), dtype=np.int64)
    u_list = np.empty((4, 1, 1, k))
    zero1 = np.zeros(1, dtype=np.int64)
    stack = np.empty((4 * max_m + 4, 4), dtype=np.int64)
    for s in range(n_sent):
        lo = arc_off[s]
        m = head_off[s + 1] - head_off[s] + 1
        for q in range(4):
            for a in range(m):
                for b in range(m):
                    cnt[q, a, b] = 0
        for a in range(m):
            for q in (CR, CL):
                sc[q, a, a, 0] = 0.0
                cnt[q, a, a] = 1
        for length in range(1, m):
            for a in range(m - length):
                b = a + length
                # incomplete items: the splits' k best, then the arc's relations
                top = a + 1 if (single_root and a == 0) else b
                n_e = 0
                for r in range(a, top):
                    a1[n_e] = a
                    b1[n_e] = r
                    a2[n_e] = r + 1
                    b2[n_e] = b
                    rs[n_e] = r
                    n_e += 1
                nu = _combine(sc, cnt, CR, a1, b1, CL, a2, b2, n_e, k, hs, hi, hj1, hj2,
                              u_sc, u_r, u_j1, u_j2)
                for q in (IR, IL):
                    if q == IL and a == 0:
                        continue
                    arc = lo + (a * m + b if q == IR else b * m + a)
                    nr = top_n[arc]
                    if nu == 0 or nr == 0:
                        continue
                    # frontier over (rank of the combination, rank of the relation)
                    for j in range(nu):
                        u_list[0, 0, 0, j] = u_sc[j]
                    u_cnt[0, 0, 0] = nu
                    for j in range(nr):
                        u_list[1, 0, 0, j] = top_sc[arc, j]
                    u_cnt[1, 0, 0] = nr
                    got = _combine(u_list, u_cnt, 0, zero1, zero1, 1, zero1, zero1, 1, k,
                                   hs, hi, hj1, hj2, o_sc, o_r, o_j1, o_j2)
                    for j in range(got):
                        sc[q, a, b, j] = o_sc[j]
                        er[q, a, b, j] = rs[u_r[o_j1[j]]]
                        ej1[q, a, b, j] = u_j1[o_j1[j]]
                        ej2[q, a, b, j] = u_j2[o_j1[j]]
                        el[q, a, b, j] = o_j2[j]
                    cnt[q, a, b] = got
                # complete items
                n_e = 0
                for r in range(a, b):
                    a1[n_e] = a
                    b1[n_e] = r
                    a2[n_e] = r
                    b2[n_e] = b
                    rs[n_e] = r
                    n_e += 1
                got = _combine(sc, cnt, CL, a1, b1, IL, a2, b2, n_e, k, hs, hi, hj1, hj2,
                               o_sc, o_r, o_j1, o_j2)
                for j in range(got):
                    sc[CL, a, b, j] = o_sc[j]
                    er[CL, a, b, j] = rs[o_r[j]]
                    ej1[CL, a, b, j] = o_j1[j]
                    ej2[CL, a, b, j] = o_j2[j]
                cnt[CL, a, b] = got
                n_e = 0
                if not (single_root and a == 0 and b < m - 1):
                    for r in range(a + 1, b + 1):
                        a1[n_e] = a
                        b1[n_e] = r
                        a2[n_e] = r
                        b2[n_e] = b
                        rs[n_e] = r
                        n_e += 1
                got = _combine(sc, cnt, IR, a1, b1, CR, a2, b2, n_e, k, hs, hi, hj1, hj2,
                               o_sc, o_r, o_j1, o_j2)
                for j in range(got):
                    sc[CR, a, b, j] = o_sc[j]
                    er[CR, a, b, j] = rs[o_r[j]]
                    ej1[CR, a, b, j] = o_j1[j]
                    ej2[CR, a, b, j] = o_j2[j]
                cnt[CR, a, b] = got
        found = cnt[CR, 0, m - 1]
        counts[s] = found
        h0 = head_off[s]
        for j in range(found):
            scores[s, j] = sc[CR, 0, m - 1, j]
            # back-pointers, by an explicit stack of (kind, a, b, rank)
            top = 0
            stack[0, 0] = CR
            stack[0, 1] = 0
            stack[0, 2] = m - 1
            stack[0, 3] = j
            top = 1
            while top > 0:
                top -= 1
                q = stack[top, 0]
                a = stack[top, 1]
                b = stack[top, 2]
                x = stack[top, 3]
                if a == b:
                    continue
                r = er[q, a, b, x]
                if q == IR or q == IL:
                    arc = lo + (a * m + b if q == IR else b * m + a)
                    if q == IR:
                        heads[h0 + b - 1, j] = a
                        rels[h0 + b - 1, j] = top_id[arc, el[q, a, b, x]]
                    else:
                        heads[h0 + a - 1, j] = b
                        rels[h0 + a - 1, j] = top_id[arc, el[q, a, b, x]]
                    c1, c1a, c1b, c2, c2a, c2b = CR, a, r, CL, r + 1, b
                elif q == CL:
                    c1, c1a, c1b, c2, c2a, c2b = CL, a, r, IL, r, b
                else:
                    c1, c1a, c1b, c2, c2a, c2b = IR, a, r, CR, r, b
                stack[top, 0] = c1
                stack[top, 1] = c1a
                stack[top, 2] = c1b
                stack[top, 3] = ej1[q, a, b, x]
                top += 1
                stack[top, 0] = c2
                stack[top, 1] = c2a
                stack[top, 2] = c2b
                stack[top, 3] = ej2[q, a, b, x]
                top += 1
