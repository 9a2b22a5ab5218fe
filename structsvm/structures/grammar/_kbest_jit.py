"""Compiled k-best CKY over a batch of sentences (private; no validation here:
:func:`structsvm.structures.grammar.kbest_cky` checks the arguments).

The layout of the scores, the rules and the trees is CKY's
(:mod:`structsvm.structures.grammar._cky_jit`). Every item (a span [i, j) and a
symbol A) keeps its k best derivations: a leaf item its one leaf score; a phrase
item the k best of rule_score[r] + (a derivation of (i, m, B)) + (one of (m, j, C))
over its rules r = A → B C and splits m, plus σ(i, j, A), merged best first by Huang
& Chiang's (2005) frontier over the ranks of the two halves. A binary tree has one
derivation, so the k best derivations of the whole sentence are its k best trees.
The tests compare them with enumeration of every tree.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .._kbest_heap_jit import heap_pop, heap_push

__all__ = ["kbest_batch"]

NEG = -np.inf


@njit(cache=True, nogil=True)
def kbest_batch(leaf_scores, word_off, span_scores, span_off, leaf_sym, phrase_sym,
                root_scores, rule_parent, rule_left, rule_right, rule_score, k, out,
                node_off, scores, counts):
    """The k best trees of every sentence: ``out[node_off[s] + q, j]`` the q-th row
    ``(i, j, split, symbol, rule)`` (pre-order) of the j-th best tree, ``scores[s,
    j]`` its score, ``counts[s]`` the number found."""
    n_sent = word_off.size - 1
    S = root_scores.size
    R = rule_parent.size
    par_ptr = np.zeros(S + 1, dtype=np.int64)
    for r in range(R):
        par_ptr[rule_parent[r] + 1] += 1
    for a in range(S):
        par_ptr[a + 1] += par_ptr[a]
    fill = par_ptr[:-1].copy()
    par_rule = np.empty(R, dtype=np.int64)
    for r in range(R):
        par_rule[fill[rule_parent[r]]] = r
        fill[rule_parent[r]] += 1
    widest = 1
    for a in range(S):
        widest = max(widest, par_ptr[a + 1] - par_ptr[a])
    pidx = np.full(S, -1, dtype=np.int64)
    for p in range(phrase_sym.size):
        pidx[phrase_sym[p]] = p
    n_max = 1
    for s in range(n_sent):
        n_max = max(n_max, word_off[s + 1] - word_off[s])
    sc = np.empty((n_max + 1, n_max + 1, S, k))
    bm = np.zeros((n_max + 1, n_max + 1, S, k), dtype=np.int64)
    br = np.zeros((n_max + 1, n_max + 1, S, k), dtype=np.int64)
    b1 = np.zeros((n_max + 1, n_max + 1, S, k), dtype=np.int64)
    b2 = np.zeros((n_max + 1, n_max + 1, S, k), dtype=np.int64)
    cnt = np.zeros((n_max + 1, n_max + 1, S), dtype=np.int64)
    cap = n_max * widest + 2 * k + S + 2
    hs = np.empty(cap)
    he = np.empty(cap, dtype=np.int64)
    hj1 = np.empty(cap, dtype=np.int64)
    hj2 = np.empty(cap, dtype=np.int64)
    e_m = np.empty(cap, dtype=np.int64)
    e_r = np.empty(cap, dtype=np.int64)
    stack = np.empty((2 * n_max + 2, 4), dtype=np.int64)
    for s in range(n_sent):
        n = word_off[s + 1] - word_off[s]
        w0 = word_off[s]
        s0 = span_off[s]
        for i in range(n + 1):
            for j in range(n + 1):
                for a in range(S):
                    cnt[i, j, a] = 0
        for i in range(n):
            for a in range(leaf_sym.size):
                v = leaf_scores[w0 + i, a]
                if v > NEG:
                    A = leaf_sym[a]
                    sc[i, i + 1, A, 0] = v
                    cnt[i, i + 1, A] = 1
        for length in range(2, n + 1):
            for i in range(n - length + 1):
                j = i + length
                row = s0 + i * (2 * n - 1 - i) // 2 + j - i - 2
                for A in range(S):
                    if par_ptr[A] == par_ptr[A + 1]:
                        continue
                    size = 0
                    n_e = 0
                    for m in range(i + 1, j):
                        for t in range(par_ptr[A], par_ptr[A + 1]):
                            r = par_rule[t]
                            B = rule_left[r]
                            C = rule_right[r]
                            if cnt[i, m, B] == 0 or cnt[m, j, C] == 0:
                                continue
                            v = sc[i, m, B, 0] + sc[m, j, C, 0] + rule_score[r]
                            if v > NEG:
                                e_m[n_e] = m
                                e_r[n_e] = r
                                size = heap_push(hs, he, hj1, hj2, size, v, n_e, 0, 0)
                                n_e += 1
                    got = 0
                    while got < k and size > 0:
                        v = hs[0]
                        e = he[0]
                        x1 = hj1[0]
                        x2 = hj2[0]
                        size = heap_pop(hs, he, hj1, hj2, size)
                        m = e_m[e]
                        r = e_r[e]
                        B = rule_left[r]
                        C = rule_right[r]
                        sc[i, j, A, got] = v
                        bm[i, j, A, got] = m
                        br[i, j, A, got] = r
                        b1[i, j, A, got] = x1
                        b2[i, j, A, got] = x2
                        got += 1
                        if x1 + 1 < cnt[i, m, B]:
                            w = sc[i, m, B, x1 + 1] + sc[m, j, C, x2] + rule_score[r]
                            if w > NEG:
                                size = heap_push(hs, he, hj1, hj2, size, w, e, x1 + 1, x2)
                        if x1 == 0 and x2 + 1 < cnt[m, j, C]:
                            w = sc[i, m, B, 0] + sc[m, j, C, x2 + 1] + rule_score[r]
                            if w > NEG:
                                size = heap_push(hs, he, hj1, hj2, size, w, e, 0, x2 + 1)
                    if got and pidx[A] >= 0:
                        add = span_scores[row, pidx[A]]
                        for q in range(got):
                            sc[i, j, A, q] += add
                        if add == NEG:
                            got = 0
                    cnt[i, j, A] = got
        # the k best whole trees: every root symbol's list plus its root score
        size = 0
        for A in range(S):
            if cnt[0, n, A] > 0 and root_scores[A] > NEG:
                size = heap_push(hs, he, hj1, hj2, size, sc[0, n, A, 0] + root_scores[A], A,
                             0, 0)
        found = 0
        while found < k and size > 0:
            v = hs[0]
            top = he[0]
            x = hj1[0]
            size = heap_pop(hs, he, hj1, hj2, size)
            if x + 1 < cnt[0, n, top]:
                size = heap_push(hs, he, hj1, hj2, size,
                             sc[0, n, top, x + 1] + root_scores[top], top, x + 1, 0)
            scores[s, found] = v
            pos = node_off[s]
            stack[0, 0] = 0
            stack[0, 1] = n
            stack[0, 2] = top
            stack[0, 3] = x
            sp = 1
            while sp > 0:
                sp -= 1
                i = stack[sp, 0]
                j = stack[sp, 1]
                A = stack[sp, 2]
                q = stack[sp, 3]
                if j - i == 1:
                    out[pos, found, 0] = i
                    out[pos, found, 1] = j
                    out[pos, found, 2] = -1
                    out[pos, found, 3] = A
                    out[pos, found, 4] = -1
                else:
                    m = bm[i, j, A, q]
                    r = br[i, j, A, q]
                    out[pos, found, 0] = i
                    out[pos, found, 1] = j
                    out[pos, found, 2] = m
                    out[pos, found, 3] = A
                    out[pos, found, 4] = r
                    stack[sp, 0] = m
                    stack[sp, 1] = j
                    stack[sp, 2] = rule_right[r]
                    stack[sp, 3] = b2[i, j, A, q]
                    stack[sp + 1, 0] = i
                    stack[sp + 1, 1] = m
                    stack[sp + 1, 2] = rule_left[r]
                    stack[sp + 1, 3] = b1[i, j, A, q]
                    sp += 2
                pos += 1
            found += 1
        counts[s] = found
