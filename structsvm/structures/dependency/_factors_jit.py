"""Compiled loops of the second-order features: sibling and grandparent factors,
their scores over the kept arcs, and the factors of given trees (no validation
here: see structures/dependency/_second_order.py).

The token layout is that of :mod:`._arcs_jit`. A sibling factor (h, s, d): d a
dependent of h and s the previous (closer) dependent of h on d's side, or s = h when
d is the closest (McDonald & Pereira 2006, Table 2: the tags of head, sibling and
dependent, the pairs of sibling and dependent words and tags). A grandparent factor
(g, h, d): g the head of h (Carreras 2007; Koo & Collins 2010: the tags of the
three, the pairs of grandparent and dependent words and tags, with the directions
of both arcs). Where the input has coarse tags, the tag templates are repeated over
them. Every template value is hashed to a block as the arc templates are: column b,
and b + c with c the direction/distance class of the arc h → d.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._arcs_jit import (CTAG, TAG, USE_CTAG, WORD, block, direction_distance, mix,
                        start)
from ._second_order_jit import layout

#: The loops compiled at installation (see :mod:`structsvm._compiled`).
SIGNATURES = {
    "factor_tables": ("i8:2 i8:1 b1:1 i8:1 i8:1 i8:1 i8:1 f8:1 i8 b1 b1 i8 f8:1 f8:1",
                      "void"),
    "tree_factor_columns": ("i8:2 i8:1 i8:1 i8:1 i8 b1 b1 i8 i8:1", "i8:1"),
}

#: the id a template reads for "no sibling" (the vocabularies' reserved NONE)
NONE = 4
#: blocks of one factor, at most
MAX_BLOCKS = 8


@njit(cache=True, nogil=True)
def sibling_blocks(tok, base, h, s, d, flags, D, out):
    """The blocks of the sibling factor (h, s, d) (s = h: d is h's closest
    dependent on its side); returns how many."""
    a, c = base + h, base + d
    right = 1 if d > h else 0
    if s == h:
        st, sw, sc = NONE, NONE, NONE
    else:
        st, sw, sc = tok[base + s, TAG], tok[base + s, WORD], tok[base + s, CTAG]
    out[0] = block(mix(mix(mix(mix(start(200), right), tok[a, TAG]), st), tok[c, TAG]), D)
    out[1] = block(mix(mix(mix(start(201), right), st), tok[c, TAG]), D)
    out[2] = block(mix(mix(mix(start(202), right), sw), tok[c, WORD]), D)
    out[3] = block(mix(mix(mix(start(203), right), sw), tok[c, TAG]), D)
    out[4] = block(mix(mix(mix(start(204), right), st), tok[c, WORD]), D)
    k = 5
    if flags & USE_CTAG:
        out[5] = block(mix(mix(mix(mix(start(205), right), tok[a, CTAG]), sc),
                           tok[c, CTAG]), D)
        out[6] = block(mix(mix(mix(start(206), right), sc), tok[c, CTAG]), D)
        k = 7
    return k


@njit(cache=True, nogil=True)
def grand_blocks(tok, base, g, h, d, flags, D, out):
    """The blocks of the grandparent factor (g, h, d); returns how many."""
    a, b, c = base + g, base + h, base + d
    dirs = (2 if g < h else 0) + (1 if h < d else 0)
    out[0] = block(mix(mix(mix(mix(start(210), dirs), tok[a, TAG]), tok[b, TAG]),
                       tok[c, TAG]), D)
    out[1] = block(mix(mix(mix(start(211), dirs), tok[a, TAG]), tok[c, TAG]), D)
    out[2] = block(mix(mix(mix(start(212), dirs), tok[a, WORD]), tok[c, TAG]), D)
    out[3] = block(mix(mix(mix(start(213), dirs), tok[a, TAG]), tok[c, WORD]), D)
    k = 4
    if flags & USE_CTAG:
        out[4] = block(mix(mix(mix(mix(start(214), dirs), tok[a, CTAG]), tok[b, CTAG]),
                           tok[c, CTAG]), D)
        out[5] = block(mix(mix(mix(start(215), dirs), tok[a, CTAG]), tok[c, CTAG]), D)
        k = 6
    return k


@njit(cache=True, nogil=True)
def _blocks_score(blocks, k, dd, w):
    total = 0.0
    for q in range(k):
        total += w[blocks[q]] + w[blocks[q] + dd]
    return total


@njit(cache=True, nogil=True)
def factor_tables(tok, off, kept, arc_off, head_off, sib_off, grand_off, w, flags,
                  use_sib, use_grand, D, sib, grand):
    """The scores of every sibling and grandparent factor over the kept arcs of
    every sentence, in the layout of :func:`._second_order_jit.layout` (``sib`` and
    ``grand`` at ``sib_off`` and ``grand_off``; either may be skipped)."""
    blocks = np.empty(MAX_BLOCKS, dtype=np.int64)
    for s in range(off.size - 1):
        base = off[s]
        m = head_off[s + 1] - head_off[s] + 1
        K = kept[arc_off[s]:arc_off[s + 1]]
        dep_rank = np.empty(m * m, dtype=np.int64)
        head_rank = np.empty(m * m, dtype=np.int64)
        k_dep = np.empty(m, dtype=np.int64)
        n_head = np.empty(m, dtype=np.int64)
        sib_base = np.empty(m + 1, dtype=np.int64)
        grand_base = np.empty(m * m, dtype=np.int64)
        layout(K, m, dep_rank, head_rank, k_dep, n_head, sib_base, grand_base)
        if use_sib:
            S = sib[sib_off[s]:sib_off[s + 1]]
            for h in range(m):
                kh = k_dep[h]
                for d in range(1, m):
                    rd = dep_rank[h * m + d]
                    if rd < 0:
                        continue
                    dd = direction_distance(h, d)
                    k = sibling_blocks(tok, base, h, h, d, flags, D, blocks)
                    S[sib_base[h] + rd] = _blocks_score(blocks, k, dd, w)
                    lo, hi = (h + 1, d) if d > h else (d + 1, h)
                    for q in range(lo, hi):  # the kept siblings between h and d
                        rq = dep_rank[h * m + q]
                        if rq >= 0:
                            k = sibling_blocks(tok, base, h, q, d, flags, D, blocks)
                            S[sib_base[h] + (rq + 1) * kh + rd] = \
                                _blocks_score(blocks, k, dd, w)
        if use_grand:
            G = grand[grand_off[s]:grand_off[s + 1]]
            for h in range(1, m):
                for d in range(1, m):
                    if dep_rank[h * m + d] < 0:
                        continue
                    dd = direction_distance(h, d)
                    for g in range(m):
                        r = head_rank[g * m + h]
                        if r >= 0:
                            k = grand_blocks(tok, base, g, h, d, flags, D, blocks)
                            G[grand_base[h * m + d] + r] = _blocks_score(blocks, k, dd, w)


@njit(cache=True, nogil=True)
def _previous_sibling(heads, h0, h, d):
    """The closest dependent of h between h and d in the tree, or h."""
    if d > h:
        for q in range(d - 1, h, -1):
            if heads[h0 + q - 1] == h:
                return q
    else:
        for q in range(d + 1, h):
            if heads[h0 + q - 1] == h:
                return q
    return h


@njit(cache=True, nogil=True)
def _tree_factors(tok, base, heads, h0, n, flags, use_sib, use_grand, D, w, weight,
                  out, blocks):
    """Σ w over the factor columns of one tree (``out`` None-like: size 0), or
    ``out[c] += weight`` for each of them; returns the sum."""
    total = 0.0
    scatter = out.size > 0
    for d in range(1, n + 1):
        h = heads[h0 + d - 1]
        dd = direction_distance(h, d)
        for kind in range(2):
            if kind == 0:
                if not use_sib:
                    continue
                s = _previous_sibling(heads, h0, h, d)
                k = sibling_blocks(tok, base, h, s, d, flags, D, blocks)
            else:
                if not use_grand or h == 0:
                    continue
                k = grand_blocks(tok, base, heads[h0 + h - 1], h, d, flags, D, blocks)
            for q in range(k):
                if scatter:
                    out[blocks[q]] += weight
                    out[blocks[q] + dd] += weight
                else:
                    total += w[blocks[q]] + w[blocks[q] + dd]
    return total


@njit(cache=True, nogil=True)
def tree_factor_scores(tok, off, heads, head_off, w, flags, use_sib, use_grand, D, out):
    """out[s] = Σ w over the second-order columns of the tree of sentence s."""
    blocks = np.empty(MAX_BLOCKS, dtype=np.int64)
    none = np.empty(0)
    for s in range(off.size - 1):
        n = head_off[s + 1] - head_off[s]
        out[s] = _tree_factors(tok, off[s], heads, head_off[s], n, flags, use_sib,
                               use_grand, D, w, 0.0, none, blocks)


@njit(cache=True, nogil=True)
def scatter_tree_factors(tok, off, heads, head_off, weight, flags, use_sib, use_grand,
                         D, out):
    """out[c] += weight[s] for every second-order column c of the tree of every
    sentence s (with repeats)."""
    blocks = np.empty(MAX_BLOCKS, dtype=np.int64)
    for s in range(off.size - 1):
        if weight[s] == 0.0:
            continue
        n = head_off[s + 1] - head_off[s]
        _tree_factors(tok, off[s], heads, head_off[s], n, flags, use_sib, use_grand, D,
                      out, weight[s], out, blocks)


@njit(cache=True, nogil=True)
def tree_factor_columns(tok, off, heads, head_off, flags, use_sib, use_grand, D,
                        row_ptr):
    """The second-order columns of the tree of every sentence, concatenated;
    ``row_ptr[s]:row_ptr[s + 1]`` are sentence s's (filled here)."""
    total = 0
    for s in range(off.size - 1):
        total += 4 * MAX_BLOCKS * (head_off[s + 1] - head_off[s])
    cols = np.empty(total, dtype=np.int64)
    blocks = np.empty(MAX_BLOCKS, dtype=np.int64)
    pos = 0
    for s in range(off.size - 1):
        row_ptr[s] = pos
        base, h0 = off[s], head_off[s]
        n = head_off[s + 1] - h0
        for d in range(1, n + 1):
            h = heads[h0 + d - 1]
            dd = direction_distance(h, d)
            for kind in range(2):
                if kind == 0:
                    if not use_sib:
                        continue
                    k = sibling_blocks(tok, base, h, _previous_sibling(heads, h0, h, d),
                                       d, flags, D, blocks)
                else:
                    if not use_grand or h == 0:
                        continue
                    k = grand_blocks(tok, base, heads[h0 + h - 1], h, d, flags, D,
                                     blocks)
                for q in range(k):
                    cols[pos] = blocks[q]
                    cols[pos + 1] = blocks[q] + dd
                    pos += 2
    row_ptr[off.size - 1] = pos
    return cols[:pos]
