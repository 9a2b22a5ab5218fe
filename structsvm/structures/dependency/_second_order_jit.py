"""Compiled second-order dependency decoding (no validation here: see
structures/dependency/_second_order.py and decoders.py).

A sentence of n words has m = n + 1 nodes (0 the root). Its arc scores ``A`` are an
m × m block (``A[h * m + d]`` scores h → d, the best relation's score); ``K`` (same
layout, bool) says which arcs the search may use (the pruning's). The second-order
scores of the kept arcs are stored compactly, in a layout that depends on ``K``
only (:func:`layout`):

- the kept dependents of head h in ascending order, k_h of them, and the rank of
  each; the kept heads of word h in ascending order, g_h of them, and the rank of
  each;
- sibling scores: head h has the block ``sib[sib_base[h]:sib_base[h + 1]]``, a
  (k_h + 1) × k_h matrix whose entry (slot(s), rank(d)) scores the sibling factor
  (h, s, d): d a dependent of h and s the previous (closer) dependent of h on the
  same side, slot(s) = rank(s) + 1, or s = h (slot 0) when d is the closest;
- grandparent scores: a kept arc h → d with h >= 1 has the block
  ``grand[grand_base[h * m + d]:... + g_h]`` whose entry rank(g) scores the factor
  (g, h, d), g the head of h.

A tree y scores Σ_d A[y_d, d] + sib(y_d, prev_d, d) + grand(y_{y_d}, y_d, d) (no
grandparent factor for the root's dependents). The projective decoders are dynamic
programs over spans (Eisner 1996): McDonald & Pereira (2006) with sibling spans,
O(n³); with grandparents, spans carry the head of their head (Carreras 2007; Koo &
Collins 2010), O(n⁴) over all arcs and far less over pruned ones. The non-projective
search starts from the projective tree and moves one head at a time while the score
rises (McDonald & Pereira 2006).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._decoders_jit import _eisner

#: The loops compiled at installation (see :mod:`structsvm._compiled`).
SIGNATURES = {
    "prune_batch": ("f8:1 i8:1 i8:1 i8:1 i8 f8 i8:1 b1:1", "void"),
    "layout_sizes": ("b1:1 i8:1 i8:1 i8:1 i8:1", "void"),
    "second_order_batch": ("f8:1 b1:1 f8:1 f8:1 i8:1 i8:1 i8:1 i8:1 b1 b1 b1 i8:1 "
                           "f8:1", "void"),
}

NEG = -np.inf


# ------------------------------------------------------------------ the layout
@njit(cache=True, nogil=True)
def layout(K, m, dep_rank, head_rank, k_dep, n_head, sib_base, grand_base):
    """Fill the ranks and block offsets of the kept arcs ``K`` (see the module's
    text); returns (number of sibling scores, number of grandparent scores).

    ``dep_rank`` and ``head_rank`` are m × m (flat): ``dep_rank[h * m + d]`` the rank
    of d among h's kept dependents, ``head_rank[g * m + h]`` the rank of g among
    h's kept heads (−1 where the arc is not kept); ``sib_base`` has m + 1 entries,
    ``grand_base`` m × m.
    """
    for h in range(m):
        k_dep[h] = 0
        n_head[h] = 0
    for h in range(m):
        for d in range(m):
            dep_rank[h * m + d] = -1
            head_rank[h * m + d] = -1
    for h in range(m):
        for d in range(1, m):
            if d != h and K[h * m + d]:
                dep_rank[h * m + d] = k_dep[h]
                k_dep[h] += 1
                head_rank[h * m + d] = n_head[d]
                n_head[d] += 1
    sib_base[0] = 0
    for h in range(m):
        sib_base[h + 1] = sib_base[h] + (k_dep[h] + 1) * k_dep[h]
    total = 0
    for h in range(m):
        for d in range(m):
            grand_base[h * m + d] = total
            if h >= 1 and dep_rank[h * m + d] >= 0:
                total += n_head[h]
    return sib_base[m], total


@njit(cache=True, nogil=True)
def layout_sizes(kept, arc_off, head_off, sib_off, grand_off):
    """The offsets of every sentence's sibling and grandparent scores in a batch
    (``sib_off``, ``grand_off``: n_sentences + 1 entries, filled here)."""
    sib_off[0] = 0
    grand_off[0] = 0
    for s in range(arc_off.size - 1):
        m = head_off[s + 1] - head_off[s] + 1
        K = kept[arc_off[s]:arc_off[s + 1]]
        dep_rank = np.empty(m * m, dtype=np.int64)
        head_rank = np.empty(m * m, dtype=np.int64)
        k_dep = np.empty(m, dtype=np.int64)
        n_head = np.empty(m, dtype=np.int64)
        sib_base = np.empty(m + 1, dtype=np.int64)
        grand_base = np.empty(m * m, dtype=np.int64)
        ns, ng = layout(K, m, dep_rank, head_rank, k_dep, n_head, sib_base, grand_base)
        sib_off[s + 1] = sib_off[s] + ns
        grand_off[s + 1] = grand_off[s] + ng


@njit(cache=True, nogil=True)
def _sib_index(h, s, d, m, dep_rank, k_dep, sib_base):
    slot = 0 if s == h else dep_rank[h * m + s] + 1
    return sib_base[h] + slot * k_dep[h] + dep_rank[h * m + d]


# ------------------------------------------------------------------ pruning
@njit(cache=True, nogil=True)
def max_marginals(S, m, out):
    """out[h * m + d] = the best score of a projective tree with the arc h → d
    (max-product inside-outside over Eisner's spans; the root may take several
    dependents); −inf for no arc."""
    CR = np.full((m, m), NEG)
    CL = np.full((m, m), NEG)
    IR = np.full((m, m), NEG)
    IL = np.full((m, m), NEG)
    for s in range(m):
        CR[s, s] = 0.0
        CL[s, s] = 0.0
    for k in range(1, m):
        for s in range(m - k):
            t = s + k
            best = NEG
            for r in range(s, t):
                v = CR[s, r] + CL[r + 1, t]
                if v > best:
                    best = v
            IR[s, t] = best + S[s * m + t]
            if s > 0:
                IL[s, t] = best + S[t * m + s]
            best = NEG
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > best:
                    best = v
            CL[s, t] = best
            best = NEG
            for r in range(s + 1, t + 1):
                v = IR[s, r] + CR[r, t]
                if v > best:
                    best = v
            CR[s, t] = best
    # outside scores: the best completion of a span into a whole tree
    oCR = np.full((m, m), NEG)
    oCL = np.full((m, m), NEG)
    oIR = np.full((m, m), NEG)
    oIL = np.full((m, m), NEG)
    oCR[0, m - 1] = 0.0
    for k in range(m - 1, 0, -1):
        # complete spans of length k: final now; they pass it to their parts
        for s in range(m - k):
            t = s + k
            o = oCR[s, t]
            if o > NEG:
                for r in range(s + 1, t + 1):  # CR[s,t] = IR[s,r] + CR[r,t]
                    v = o + CR[r, t]
                    if v > oIR[s, r]:
                        oIR[s, r] = v
                    v = o + IR[s, r]
                    if v > oCR[r, t]:
                        oCR[r, t] = v
            o = oCL[s, t]
            if o > NEG:
                for r in range(s, t):  # CL[s,t] = CL[s,r] + IL[r,t]
                    v = o + IL[r, t]
                    if v > oCL[s, r]:
                        oCL[s, r] = v
                    v = o + CL[s, r]
                    if v > oIL[r, t]:
                        oIL[r, t] = v
        # incomplete spans of length k: final after the complete ones of length k
        for s in range(m - k):
            t = s + k
            o = oIR[s, t] + S[s * m + t]
            if s > 0 and oIL[s, t] + S[t * m + s] > o:
                o = oIL[s, t] + S[t * m + s]
            if o > NEG:
                for r in range(s, t):  # I[s,t] = CR[s,r] + CL[r+1,t] + arc
                    v = o + CL[r + 1, t]
                    if v > oCR[s, r]:
                        oCR[s, r] = v
                    v = o + CR[s, r]
                    if v > oCL[r + 1, t]:
                        oCL[r + 1, t] = v
    for h in range(m):
        for d in range(m):
            out[h * m + d] = NEG
    for s in range(m):
        for t in range(s + 1, m):
            out[s * m + t] = IR[s, t] + oIR[s, t]
            if s > 0:
                out[t * m + s] = IL[s, t] + oIL[s, t]


@njit(cache=True, nogil=True)
def prune_batch(scores, arc_off, head_off, include, max_heads, margin, heads_buf,
                kept):
    """The arcs the second-order search keeps: for every word, of the ``max_heads``
    heads whose arcs have the best first-order max-marginals (:func:`max_marginals`
    of the arc scores ``scores``), those within ``margin`` of the best; the arcs of
    the best first-order tree; and the arc from ``include[w]`` (a head, or −1) into
    word w (words numbered through the batch). ``max_heads`` <= 0 keeps every arc.
    ``heads_buf`` holds a head per word (scratch)."""
    for s in range(arc_off.size - 1):
        a0 = arc_off[s]
        w0 = head_off[s]
        m = head_off[s + 1] - w0 + 1
        S = scores[a0:arc_off[s + 1]]
        K = kept[a0:arc_off[s + 1]]
        for q in range(m * m):
            K[q] = False
        if max_heads <= 0 or (max_heads >= m - 1 and margin == np.inf):
            for h in range(m):
                for d in range(1, m):
                    if h != d:
                        K[h * m + d] = True
        else:
            M = np.empty(m * m)
            max_marginals(S, m, M)
            order = np.empty(m, dtype=np.int64)
            vals = np.empty(m)
            for d in range(1, m):
                c = 0
                for h in range(m):
                    if h != d:
                        vals[c] = M[h * m + d]
                        order[c] = h
                        c += 1
                # partial selection of the max_heads largest (stable by head)
                for i in range(min(max_heads, c)):
                    best = i
                    for j in range(i + 1, c):
                        if vals[j] > vals[best]:
                            best = j
                    vals[i], vals[best] = vals[best], vals[i]
                    order[i], order[best] = order[best], order[i]
                    if i > 0 and vals[i] < vals[0] - margin:
                        break
                    K[order[i] * m + d] = True
            _eisner(S, m, False, heads_buf, w0)
            for d in range(1, m):
                K[heads_buf[w0 + d - 1] * m + d] = True
        for d in range(1, m):
            g = include[w0 + d - 1]
            if g >= 0:
                K[g * m + d] = True


# ------------------------------------------------------------------ tree scores
@njit(cache=True, nogil=True)
def tree_score(A, m, heads, h0, sib, grand, dep_rank, head_rank, k_dep, sib_base,
               grand_base, use_sib, use_grand):
    """The score of the tree ``heads[h0 + d - 1]`` (every arc kept)."""
    total = 0.0
    for d in range(1, m):
        h = heads[h0 + d - 1]
        total += A[h * m + d]
        if use_sib:
            prev = h  # the closest dependent of h between h and d, or h
            if d > h:
                for q in range(d - 1, h, -1):
                    if heads[h0 + q - 1] == h:
                        prev = q
                        break
            else:
                for q in range(d + 1, h):
                    if heads[h0 + q - 1] == h:
                        prev = q
                        break
            total += sib[_sib_index(h, prev, d, m, dep_rank, k_dep, sib_base)]
        if use_grand and h >= 1:
            g = heads[h0 + h - 1]
            total += grand[grand_base[h * m + d] + head_rank[g * m + h]]
    return total


# ------------------------------------------------------------------ siblings, O(n³)
@njit(cache=True, nogil=True)
def _sibling_eisner(A, K, m, sib, dep_rank, k_dep, sib_base, single_root, heads, h0):
    """McDonald & Pereira's (2006) second-order projective search: Eisner's spans
    plus sibling spans SB[s, t] (two adjacent dependents of one head, s's right
    subtree and t's left subtree), so that an incomplete span adds its dependent
    next to the previous one and scores the pair. O(n³)."""
    CR = np.full((m, m), NEG)
    CL = np.full((m, m), NEG)
    IR = np.full((m, m), NEG)
    IL = np.full((m, m), NEG)
    SB = np.full((m, m), NEG)
    bCR = np.zeros((m, m), dtype=np.int64)
    bCL = np.zeros((m, m), dtype=np.int64)
    bIR = np.zeros((m, m), dtype=np.int64)
    bIL = np.zeros((m, m), dtype=np.int64)
    bSB = np.zeros((m, m), dtype=np.int64)
    for s in range(m):
        CR[s, s] = 0.0
        CL[s, s] = 0.0
    for k in range(1, m):
        for s in range(m - k):
            t = s + k
            if s >= 1:  # two words side by side, below a common head
                best, arg = NEG, s
                for r in range(s, t):
                    v = CR[s, r] + CL[r + 1, t]
                    if v > best:
                        best, arg = v, r
                SB[s, t] = best
                bSB[s, t] = arg
            if K[s * m + t]:  # s -> t, r the previous dependent of s (or s)
                best = CL[s + 1, t] + sib[_sib_index(s, s, t, m, dep_rank, k_dep,
                                                     sib_base)]
                arg = s
                if not (single_root and s == 0):
                    for r in range(s + 1, t):
                        if K[s * m + r]:
                            v = IR[s, r] + SB[r, t] + \
                                sib[_sib_index(s, r, t, m, dep_rank, k_dep, sib_base)]
                            if v > best:
                                best, arg = v, r
                IR[s, t] = best + A[s * m + t]
                bIR[s, t] = arg
            if s >= 1 and K[t * m + s]:  # t -> s, r the previous dependent of t
                best = CR[s, t - 1] + sib[_sib_index(t, t, s, m, dep_rank, k_dep,
                                                     sib_base)]
                arg = t
                for r in range(s + 1, t):
                    if K[t * m + r]:
                        v = SB[s, r] + IL[r, t] + \
                            sib[_sib_index(t, r, s, m, dep_rank, k_dep, sib_base)]
                        if v > best:
                            best, arg = v, r
                IL[s, t] = best + A[t * m + s]
                bIL[s, t] = arg
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
    # back-pointers: kind 0 CR, 1 CL, 2 IR, 3 IL, 4 SB
    stack = np.empty((6 * m + 8, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, m - 1
    top = 1
    while top > 0:
        top -= 1
        kind, s, t = stack[top, 0], stack[top, 1], stack[top, 2]
        if s >= t:
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
        elif kind == 2:
            heads[h0 + t - 1] = s
            r = bIR[s, t]
            if r == s:
                stack[top, 0], stack[top, 1], stack[top, 2] = 1, s + 1, t
                top += 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = 2, s, r
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 4, r, t
                top += 2
        elif kind == 3:
            heads[h0 + s - 1] = t
            r = bIL[s, t]
            if r == t:
                stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, t - 1
                top += 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = 4, s, r
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 3, r, t
                top += 2
        else:
            r = bSB[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 1, r + 1, t
            top += 2
    return CR[0, m - 1]


# ------------------------------------------------------------------ grandparents, O(n⁴)
@njit(cache=True, nogil=True)
def _grand_eisner(A, K, m, sib, grand, dep_rank, head_rank, k_dep, n_head, sib_base,
                  grand_base, use_sib, single_root, heads, h0):
    """The projective search with grandparent (and sibling) factors: every span of
    head h also fixes the head g of h (its *slot*, the rank of g among h's kept
    heads; the root has one slot and no head), so that adding a dependent d to h
    scores (g, h, d) (Carreras 2007; the spans of Koo & Collins 2010, Model 1,
    without their grand-sibling factors). Tables: complete CR/CL[h, slot, e],
    incomplete IR/IL[h, slot, d] and sibling spans SB[h; a, b] (a's right subtree
    and b's left subtree, both dependents of h). O(n⁴) over all arcs."""
    # heads of every word, by slot
    hptr = np.zeros(m + 1, dtype=np.int64)
    for h in range(m):
        hptr[h + 1] = hptr[h] + (1 if h == 0 else n_head[h])
    hlist = np.full(hptr[m], -1, dtype=np.int64)  # the root's one slot: no head
    for g in range(m):
        for h in range(1, m):
            r = head_rank[g * m + h]
            if r >= 0:
                hlist[hptr[h] + r] = g
    size = hptr[m] * m
    CR = np.full(size, NEG)
    CL = np.full(size, NEG)
    IR = np.full(size, NEG)
    IL = np.full(size, NEG)
    bC = np.zeros(size, dtype=np.int64)   # CR and CL cover other (h, e): one array
    bI = np.zeros(size, dtype=np.int64)   # IR and IL likewise
    nsb = sib_base[m]
    SB = np.full(nsb, NEG)
    bSB = np.zeros(nsb, dtype=np.int64)
    for h in range(m):
        for j in range(hptr[h], hptr[h + 1]):
            CR[j * m + h] = 0.0
            CL[j * m + h] = 0.0
    for k in range(1, m):
        for a in range(m - k):
            b = a + k
            # sibling spans between a and b, for every kept head of both
            if a >= 1:
                for q in range(hptr[a], hptr[a + 1]):  # the kept heads of a
                    h = hlist[q]
                    if (h < a or h > b) and K[h * m + b]:
                        ja = hptr[a] + head_rank[h * m + a]
                        jb = hptr[b] + head_rank[h * m + b]
                        best, arg = NEG, a
                        for r in range(a, b):
                            v = CR[ja * m + r] + CL[jb * m + r + 1]
                            if v > best:
                                best, arg = v, r
                        q = _sib_index(h, a, b, m, dep_rank, k_dep, sib_base)
                        SB[q] = best
                        bSB[q] = arg
            # a -> b, for every slot of a
            if K[a * m + b]:
                jb = hptr[b] + head_rank[a * m + b]
                for j in range(hptr[a], hptr[a + 1]):
                    best = CL[jb * m + a + 1]
                    if use_sib:
                        best += sib[_sib_index(a, a, b, m, dep_rank, k_dep, sib_base)]
                    arg = -1
                    if not (single_root and a == 0):
                        for s in range(a + 1, b):
                            if K[a * m + s]:
                                q = _sib_index(a, s, b, m, dep_rank, k_dep, sib_base)
                                v = IR[j * m + s] + SB[q]
                                if use_sib:
                                    v += sib[q]
                                if v > best:
                                    best, arg = v, s
                    v = best + A[a * m + b]
                    if a >= 1:
                        g = hlist[j]
                        v += grand[grand_base[a * m + b] + head_rank[g * m + a]]
                    IR[j * m + b] = v
                    bI[j * m + b] = arg
            # b -> a, for every slot of b
            if a >= 1 and K[b * m + a]:
                ja = hptr[a] + head_rank[b * m + a]
                for j in range(hptr[b], hptr[b + 1]):
                    best = CR[ja * m + b - 1]
                    if use_sib:
                        best += sib[_sib_index(b, b, a, m, dep_rank, k_dep, sib_base)]
                    arg = -1
                    for s in range(a + 1, b):
                        if K[b * m + s]:
                            q = _sib_index(b, s, a, m, dep_rank, k_dep, sib_base)
                            v = IL[j * m + s] + SB[_sib_index(b, a, s, m, dep_rank,
                                                              k_dep, sib_base)]
                            if use_sib:
                                v += sib[q]
                            if v > best:
                                best, arg = v, s
                    g = hlist[j]
                    IL[j * m + a] = best + A[b * m + a] + \
                        grand[grand_base[b * m + a] + head_rank[g * m + b]]
                    bI[j * m + a] = arg
            # complete spans [a, b]: head a (right) and head b (left)
            if not (single_root and a == 0 and b < m - 1):
                for j in range(hptr[a], hptr[a + 1]):
                    best, arg = NEG, -1
                    for d in range(a + 1, b + 1):
                        if K[a * m + d]:
                            jd = hptr[d] + head_rank[a * m + d]
                            v = IR[j * m + d] + CR[jd * m + b]
                            if v > best:
                                best, arg = v, d
                    CR[j * m + b] = best
                    bC[j * m + b] = arg
            if a >= 1:
                for j in range(hptr[b], hptr[b + 1]):
                    best, arg = NEG, -1
                    for d in range(a, b):
                        if K[b * m + d]:
                            jd = hptr[d] + head_rank[b * m + d]
                            v = IL[j * m + d] + CL[jd * m + a]
                            if v > best:
                                best, arg = v, d
                    CL[j * m + a] = best
                    bC[j * m + a] = arg
    # back-pointers: (kind, h, slot or a, e or b): 0 CR, 1 CL, 2 IR, 3 IL, 4 SB
    stack = np.empty((6 * m + 8, 4), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, 0, 0, m - 1
    top = 1
    while top > 0:
        top -= 1
        kind, h, j, e = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        if kind <= 1:
            if h == e:
                continue
            d = bC[j * m + e]
            jd = hptr[d] + head_rank[h * m + d]
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = 2 + kind, h, j, d
            stack[top + 1, 0], stack[top + 1, 1] = kind, d
            stack[top + 1, 2], stack[top + 1, 3] = jd, e
            top += 2
        elif kind <= 3:
            heads[h0 + e - 1] = h
            s = bI[j * m + e]
            je = hptr[e] + head_rank[h * m + e]
            if s < 0:  # e is h's closest dependent: e's inner subtree
                if kind == 2:
                    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = \
                        1, e, je, h + 1
                else:
                    stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = \
                        0, e, je, h - 1
                top += 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = kind, h, j, s
                stack[top + 1, 0], stack[top + 1, 1] = 4, h
                if kind == 2:
                    stack[top + 1, 2], stack[top + 1, 3] = s, e
                else:
                    stack[top + 1, 2], stack[top + 1, 3] = e, s
                top += 2
        else:  # sibling span of head h between words j < e
            a, b = j, e
            r = bSB[_sib_index(h, a, b, m, dep_rank, k_dep, sib_base)]
            ja = hptr[a] + head_rank[h * m + a]
            jb = hptr[b] + head_rank[h * m + b]
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = 0, a, ja, r
            stack[top + 1, 0], stack[top + 1, 1] = 1, b
            stack[top + 1, 2], stack[top + 1, 3] = jb, r + 1
            top += 2
    return CR[m - 1]


# ------------------------------------------------------------------ non-projective
@njit(cache=True, nogil=True)
def _descends(heads, h0, v, d):
    """Whether node v descends from word d (v == d included)."""
    while v != 0:
        if v == d:
            return True
        v = heads[h0 + v - 1]
    return False


@njit(cache=True, nogil=True)
def _rearrange(A, K, m, sib, grand, dep_rank, head_rank, k_dep, sib_base, grand_base,
               use_sib, use_grand, single_root, heads, h0):
    """McDonald & Pereira's (2006) approximate non-projective search: from a tree,
    give one word another (kept) head, the change that raises the score most and
    keeps a tree, until no change raises it."""
    cur = tree_score(A, m, heads, h0, sib, grand, dep_rank, head_rank, k_dep,
                     sib_base, grand_base, use_sib, use_grand)
    for _ in range(m * m):
        best, bd, bh = cur, -1, -1
        for d in range(1, m):
            old = heads[h0 + d - 1]
            for h in range(m):
                if h == old or h == d or not K[h * m + d]:
                    continue
                if h != 0 and _descends(heads, h0, h, d):
                    continue  # a cycle
                if single_root and (h == 0 or old == 0):
                    continue  # the root keeps its one dependent
                heads[h0 + d - 1] = h
                v = tree_score(A, m, heads, h0, sib, grand, dep_rank, head_rank,
                               k_dep, sib_base, grand_base, use_sib, use_grand)
                heads[h0 + d - 1] = old
                if v > best + 1e-12 * (1.0 + abs(best)):
                    best, bd, bh = v, d, h
        if bd < 0:
            break
        heads[h0 + bd - 1] = bh
        cur = best
    return cur


# ------------------------------------------------------------------ the batch
@njit(cache=True, nogil=True)
def second_order_batch(scores, kept, sib, grand, arc_off, sib_off, grand_off, head_off,
                       use_grand, single_root, projective, heads, best):
    """The best tree of every sentence under first- and second-order scores: the
    sibling search when ``grand`` is empty and not ``use_grand``, else the
    grandparent search; then, unless ``projective``, the rearrangement search.
    ``sib`` empty means no sibling factors."""
    for s in range(arc_off.size - 1):
        a0 = arc_off[s]
        m = head_off[s + 1] - head_off[s] + 1
        A = scores[a0:arc_off[s + 1]]
        K = kept[a0:arc_off[s + 1]]
        dep_rank = np.empty(m * m, dtype=np.int64)
        head_rank = np.empty(m * m, dtype=np.int64)
        k_dep = np.empty(m, dtype=np.int64)
        n_head = np.empty(m, dtype=np.int64)
        sib_base = np.empty(m + 1, dtype=np.int64)
        grand_base = np.empty(m * m, dtype=np.int64)
        layout(K, m, dep_rank, head_rank, k_dep, n_head, sib_base, grand_base)
        use_sib = sib.size > 0
        S = sib[sib_off[s]:sib_off[s + 1]] if use_sib else sib
        G = grand[grand_off[s]:grand_off[s + 1]] if use_grand else grand
        h0 = head_off[s]
        if use_grand:
            v = _grand_eisner(A, K, m, S, G, dep_rank, head_rank, k_dep, n_head,
                              sib_base, grand_base, use_sib, single_root, heads, h0)
        elif use_sib:
            v = _sibling_eisner(A, K, m, S, dep_rank, k_dep, sib_base, single_root,
                                heads, h0)
        else:
            v = _eisner_kept(A, K, m, single_root, heads, h0)
        if not projective:
            v = _rearrange(A, K, m, S, G, dep_rank, head_rank, k_dep, sib_base,
                           grand_base, use_sib, use_grand, single_root, heads, h0)
        best[s] = v


@njit(cache=True, nogil=True)
def _eisner_kept(A, K, m, single_root, heads, h0):
    """Eisner's search over the kept arcs only (the others scored −inf)."""
    S = np.empty(m * m)
    for q in range(m * m):
        S[q] = A[q] if K[q] else NEG
    return _eisner(S, m, single_root, heads, h0)
