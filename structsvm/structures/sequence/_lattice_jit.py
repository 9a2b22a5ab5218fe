"""Compiled loops of the chain lattice: max-marginals and k-best paths (private; no
validation here: :mod:`structsvm.structures.sequence.lattice` checks the arguments).

A chain of order k is a first-order chain over *histories*: the state after token t
is the last k symbols (y_{t-k+1}, .., y_t), the padding symbol P = K standing for the
positions before the first token. A history is a number h < S = b^k, its symbols
the digits base b = K + 1, oldest first; the history before the first token is
h0 = P..P = S − 1, and tag c moves h to ``(h * b + c) % S``. Moving from h with tag c
at token t (row r of the batch) scores

    U[r, c] + Tr[h, c] + pair[r, h % b, c]     (the pair term with emission order 1)

(``Tr`` holds every window that ends at the token: transitions and tag n-grams), and
a path ends in history h with ``F[h]`` (the windows that end at the final pad). A
first-order chain is the case k = 1 (S = K + 1: the tags and P, ``Tr[P]`` its start
scores and ``F`` its end scores).

Scores of −inf mark forbidden tags or transitions; a table entry of −inf is never on
a path with a finite score. The tests compare these loops with plain Python
recursions over the same lattice and with enumeration of every path.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["max_marginals_batch", "kbest_batch"]

NEG = -np.inf


@numba.njit(cache=True, nogil=True, inline="always")
def _edge(U, r, pair, has_pair, Tr, h, last, c):
    v = U[r, c] + Tr[h, c]
    if has_pair:
        v += pair[r, last, c]
    return v


@numba.njit(cache=True, nogil=True)
def max_marginals_batch(U, offsets, pair, has_pair, Tr, F, b, mm, best):
    """Max-marginals of every token and tag, and the best score of every sentence.

    Forward α_t(h) (the best prefix ending in history h after token t) and backward
    β_t(h) (the best suffix after it, end scores included) in the (max, +) semiring;
    ``mm[r, c]`` := max over the histories h ending in tag c of α_t(h) + β_t(h), the
    best score of a path with tag c at token t (−inf: none), and ``best[i]`` the best
    score of sentence i (0 for an empty one).
    """
    K = U.shape[1]
    S = Tr.shape[0]
    h0 = S - 1
    n_seq = offsets.shape[0] - 1
    max_len = 1
    for i in range(n_seq):
        if offsets[i + 1] - offsets[i] > max_len:
            max_len = offsets[i + 1] - offsets[i]
    alpha = np.empty((max_len, S))
    beta = np.empty((max_len, S))
    for i in range(n_seq):
        lo = offsets[i]
        T = offsets[i + 1] - lo
        if T == 0:
            best[i] = 0.0
            continue
        for t in range(T):
            for h in range(S):
                alpha[t, h] = NEG
        base = (h0 * b) % S
        for c in range(K):
            alpha[0, base + c] = _edge(U, lo, pair, has_pair, Tr, h0, h0 % b, c)
        for t in range(1, T):
            r = lo + t
            for h in range(S):
                a = alpha[t - 1, h]
                if a == NEG:
                    continue
                last = h % b
                base = (h * b) % S
                for c in range(K):
                    v = a + _edge(U, r, pair, has_pair, Tr, h, last, c)
                    if v > alpha[t, base + c]:
                        alpha[t, base + c] = v
        top = NEG
        for h in range(S):
            beta[T - 1, h] = F[h]
            if alpha[T - 1, h] != NEG and alpha[T - 1, h] + F[h] > top:
                top = alpha[T - 1, h] + F[h]
        best[i] = top
        for t in range(T - 1, 0, -1):
            r = lo + t
            for h in range(S):
                if alpha[t - 1, h] == NEG:
                    beta[t - 1, h] = NEG
                    continue
                last = h % b
                base = (h * b) % S
                m = NEG
                for c in range(K):
                    v = _edge(U, r, pair, has_pair, Tr, h, last, c) + beta[t, base + c]
                    if v > m:
                        m = v
                beta[t - 1, h] = m
        for t in range(T):
            r = lo + t
            for c in range(K):
                mm[r, c] = NEG
            for h in range(S):
                a = alpha[t, h]
                if a == NEG:
                    continue
                v = a + beta[t, h]
                c = h % b
                if v > mm[r, c]:
                    mm[r, c] = v


@numba.njit(cache=True, nogil=True)
def kbest_batch(U, offsets, pair, has_pair, Tr, F, b, n, paths, scores, counts):
    """The ``n`` best paths of every sentence (k-best Viterbi).

    Every history h after token t keeps the n best prefixes that end in it, sorted,
    each with its predecessor history and rank (back-pointers): the prefixes of h
    are the extensions of the lists of its b predecessor histories, merged best
    first. The sentence's n best paths are the best n of all lists extended by the
    end scores, recovered by the back-pointers. Every path has one derivation, so
    the paths are distinct; prefixes scoring −inf are dropped, so a sentence with
    fewer than n paths of finite score gets fewer.

    ``paths[r, j]`` := the tag at row r of the j-th best path, ``scores[i, j]`` its
    score and ``counts[i]`` the number found (ties: the first found).
    """
    K = U.shape[1]
    S = Tr.shape[0]
    h0 = S - 1
    n_seq = offsets.shape[0] - 1
    shift = S // b  # b^(k-1): the weight of a history's oldest symbol
    max_len = 1
    for i in range(n_seq):
        if offsets[i + 1] - offsets[i] > max_len:
            max_len = offsets[i + 1] - offsets[i]
    sc = np.empty((max_len, S, n))
    bh = np.empty((max_len, S, n), dtype=np.int64)
    br = np.empty((max_len, S, n), dtype=np.int64)
    cnt = np.zeros((max_len, S), dtype=np.int64)
    ptr = np.zeros(b, dtype=np.int64)
    edge = np.empty(b)
    fptr = np.zeros(S, dtype=np.int64)
    for i in range(n_seq):
        lo = offsets[i]
        T = offsets[i + 1] - lo
        if T == 0:
            counts[i] = 1
            scores[i, 0] = 0.0
            continue
        for t in range(T):
            for h in range(S):
                cnt[t, h] = 0
        base = (h0 * b) % S
        for c in range(K):
            v = _edge(U, lo, pair, has_pair, Tr, h0, h0 % b, c)
            if v > NEG:
                sc[0, base + c, 0] = v
                bh[0, base + c, 0] = h0
                br[0, base + c, 0] = 0
                cnt[0, base + c] = 1
        for t in range(1, T):
            r = lo + t
            for h2 in range(S):
                c = h2 % b
                if c == K:
                    continue
                stem = h2 // b
                for d in range(b):
                    ptr[d] = 0
                    h = stem + d * shift
                    if cnt[t - 1, h] > 0:
                        edge[d] = _edge(U, r, pair, has_pair, Tr, h, h % b, c)
                    else:
                        edge[d] = NEG
                m = 0
                while m < n:
                    top = NEG
                    arg = -1
                    for d in range(b):
                        h = stem + d * shift
                        if ptr[d] < cnt[t - 1, h] and edge[d] > NEG:
                            v = sc[t - 1, h, ptr[d]] + edge[d]
                            if v > top:
                                top = v
                                arg = d
                    if arg < 0:
                        break
                    h = stem + arg * shift
                    sc[t, h2, m] = top
                    bh[t, h2, m] = h
                    br[t, h2, m] = ptr[arg]
                    ptr[arg] += 1
                    m += 1
                cnt[t, h2] = m
        # the best n complete paths: every list extended by its end scores
        for h in range(S):
            fptr[h] = 0
        m = 0
        while m < n:
            top = NEG
            arg = -1
            for h in range(S):
                if fptr[h] < cnt[T - 1, h] and F[h] > NEG:
                    v = sc[T - 1, h, fptr[h]] + F[h]
                    if v > top:
                        top = v
                        arg = h
            if arg < 0:
                break
            scores[i, m] = top
            h = arg
            q = fptr[arg]
            fptr[arg] += 1
            for t in range(T - 1, -1, -1):
                paths[lo + t, m] = h % b
                h, q = bh[t, h, q], br[t, h, q]
            m += 1
        counts[i] = m
