"""Compiled loop of pairwise alignment with affine gaps (Gotoh's three-state program).

Private module: no validation here (the public wrappers in
:mod:`structsvm.structures.alignment.needleman_wunsch` check shapes, dtypes and finiteness).

A batch of pairs (s, t) is stored as per-position codes of every channel
(``s_codes[c, :]``, ``t_codes[c, :]``, pair p owning ``s_off[p]:s_off[p + 1]`` and
``t_off[p]:t_off[p + 1]``) and one score table per channel, so that the match score
of positions (i, j) is ``S[i, j] = Σ_c tables[c, s_codes[c, i], t_codes[c, j]]``
(plus ``bonus[p]`` where ``gold[i] == j``: a loss-augmented batch). Gap runs score
``gap_open + (L − 1) gap_extend``, runs before the first or after the last pair
``end_open + (L − 1) end_extend``.

One alignment is one path: between two consecutive pairs the unaligned positions
of s come first (state X), then those of t (state Y); Y never moves back to X.
With M the state "(i, j) aligned", in 1-based cells (i, j) of the prefixes::

    M[i, j] = S[i-1, j-1] + max(lead(i-1) + lead(j-1), M, X, Y at [i-1, j-1])
    X[i, j] = max(M[i-1, j] + open, X[i-1, j] + extend)
    Y[i, j] = max(M[i, j-1] + open, X[i, j-1] + open, Y[i, j-1] + extend)
    best    = max(lead(n) + lead(m), max_{i,j} M[i, j] + lead(n-i) + lead(m-j))

where lead(L) is the end-run score (0 for L = 0). The local program
(Smith-Waterman) sets lead ≡ 0: the alignment may start and end anywhere.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["align_batch"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "align_batch": (
        "i4:2 i8:1 i4:2 i8:1 f8:3 f8:1 "
        "b1 i8:1 f8:1 i8:2 i8:1 i8:1 f8:1",
        "void"),
}

_NEG = -np.inf


@numba.njit(cache=True, nogil=True)
def _run_scores(L, open_, extend, local):
    out = np.zeros(L + 1)
    if not local:
        for d in range(1, L + 1):
            out[d] = open_ + (d - 1) * extend
    return out


@numba.njit(cache=True, nogil=True)
def _align_one(s_codes, s0, n, t_codes, t0, m, tables, go, ge, eo, ee, local, gold,
               bonus, trace, srow, rows, out, o0):
    """Align one pair; write its pairs to out[o0:], return (count, best score)."""
    C = tables.shape[0]
    lead = _run_scores(max(n, m), eo, ee, local)
    Mp, Xp, Yp, Mc, Xc, Yc = rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]
    W = m + 1
    for j in range(W):
        Mp[j] = _NEG
        Xp[j] = _NEG
        Yp[j] = _NEG
    best = lead[n] + lead[m]
    bi = 0
    bj = 0
    has_gold = gold.shape[0] > 0
    for i in range(1, n + 1):
        si = s0 + i - 1
        # match scores of row i
        tab = tables[0, s_codes[0, si]]
        for j in range(m):
            srow[j] = tab[t_codes[0, t0 + j]]
        for c in range(1, C):
            tab = tables[c, s_codes[c, si]]
            for j in range(m):
                srow[j] += tab[t_codes[c, t0 + j]]
        if has_gold:
            g = gold[si]
            if g >= 0:
                srow[g] += bonus
        Mc[0] = _NEG
        Xc[0] = _NEG
        Yc[0] = _NEG
        li = lead[i - 1]
        tail_i = lead[n - i]
        base = i * W
        for j in range(1, W):
            # M: aligned (i-1, j-1)
            v = li + lead[j - 1]
            cm = 0
            if Mp[j - 1] > v:
                v = Mp[j - 1]
                cm = 1
            if Xp[j - 1] > v:
                v = Xp[j - 1]
                cm = 2
            if Yp[j - 1] > v:
                v = Yp[j - 1]
                cm = 3
            mv = v + srow[j - 1]
            Mc[j] = mv
            # X: s[i-1] against a gap
            x = Mp[j] + go
            cx = 0
            if Xp[j] + ge > x:
                x = Xp[j] + ge
                cx = 4
            Xc[j] = x
            # Y: t[j-1] against a gap
            y = Mc[j - 1] + go
            cy = 0
            if Xc[j - 1] + go > y:
                y = Xc[j - 1] + go
                cy = 8
            if Yc[j - 1] + ge > y:
                y = Yc[j - 1] + ge
                cy = 16
            Yc[j] = y
            trace[base + j] = cm | cx | cy
            f = mv + tail_i + lead[m - j]
            if f > best:
                best = f
                bi = i
                bj = j
        Mp, Mc = Mc, Mp
        Xp, Xc = Xc, Xp
        Yp, Yc = Yc, Yp
    # trace back from the last pair (bi, bj), state M
    k = 0
    i = bi
    j = bj
    state = 0 if bi > 0 else -1
    while state >= 0:
        code = trace[i * W + j]
        if state == 0:
            out[o0 + k, 0] = i - 1
            out[o0 + k, 1] = j - 1
            k += 1
            state = (code & 3) - 1  # -1: the first pair
            i -= 1
            j -= 1
        elif state == 1:
            state = 1 if code & 4 else 0
            i -= 1
        else:
            cy = code & 24
            state = 2 if cy == 16 else (1 if cy == 8 else 0)
            j -= 1
    # pairs were written last first
    for a in range(k // 2):
        for c in range(2):
            tmp = out[o0 + a, c]
            out[o0 + a, c] = out[o0 + k - 1 - a, c]
            out[o0 + k - 1 - a, c] = tmp
    return k, best


@numba.njit(cache=True, nogil=True)
def align_batch(s_codes, s_off, t_codes, t_off, tables, gaps, local, gold, bonus,
                out, out_off, n_pairs, best):
    """Best alignment of every pair of a batch (global, or local with ``local``).

    Parameters
    ----------
    s_codes, t_codes : int32 arrays of shape (n_channels, total length)
    s_off, t_off : int64 arrays of shape (n_pairs + 1,)
    tables : float64 array of shape (n_channels, Q, Q)
    gaps : float64 array (gap_open, gap_extend, end_open, end_extend)
    local : bool
    gold : int64 array of shape (total s length,) (gold column of each s position,
        −1 for none) or of shape (0,) (not augmented)
    bonus : float64 array of shape (n_pairs,) (added at gold cells)
    out : int64 array of shape (Σ min(n, m), 2), filled with the pairs
    out_off : int64 array of shape (n_pairs + 1,): where pair p writes
    n_pairs : int64 array of shape (n_pairs,), filled with the pair counts
    best : float64 array of shape (n_pairs,), filled with the best scores
    """
    P = s_off.shape[0] - 1
    max_n = 0
    max_m = 0
    max_cells = 0
    for p in range(P):
        n = s_off[p + 1] - s_off[p]
        m = t_off[p + 1] - t_off[p]
        max_n = max(max_n, n)
        max_m = max(max_m, m)
        max_cells = max(max_cells, (n + 1) * (m + 1))
    trace = np.zeros(max_cells, dtype=np.uint8)
    srow = np.zeros(max_m + 1)
    rows = np.empty((6, max_m + 1))
    go, ge, eo, ee = gaps[0], gaps[1], gaps[2], gaps[3]
    for p in range(P):
        s0 = s_off[p]
        t0 = t_off[p]
        b = bonus[p] if gold.shape[0] > 0 else 0.0
        k, sc = _align_one(s_codes, s0, s_off[p + 1] - s0, t_codes, t0,
                           t_off[p + 1] - t0, tables, go, ge, eo, ee, local, gold, b,
                           trace, srow, rows, out, out_off[p])
        n_pairs[p] = k
        best[p] = sc
