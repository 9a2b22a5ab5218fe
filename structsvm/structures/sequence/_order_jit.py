"""Compiled loops of order-k chain decoding (private, no validation here).

Symbols: tags ``0..K-1``, the padding symbol ``P = K`` (before the first and after
the last token) and, inside the decoder only, the *rest* symbol ``R = K + 1`` that
stands for every tag pruned at a position. A path y of T tags is padded to
``P^k y_0 .. y_{T-1} P``; for m = 1..k each window of m + 1 consecutive symbols that
ends at a token or at the final pad scores

- m = 1: ``G1[a, b]`` (a (K+1, K+1) table: transitions, ``G1[P, b]`` the start and
  ``G1[a, P]`` the end scores);
- m >= 2: the weight of the window's tag n-gram when it is one of the n-grams seen in
  training, found through an open-addressing hash table of their keys
  (:func:`window_key`), else 0.

A token t adds its unary score ``U[t, y_t]`` and, with emission order 1, its pair
score ``pair[t, y_{t-1}, y_t]`` (``y_{-1} = P``).

Decoding (:func:`decode_one`) is exact Viterbi over a *lattice*: at every position a
list of candidate symbols (the tags kept there, plus R when some were pruned), the
state the last k of them. R's score at a position is the best, over the tags it
stands for, of the tag's unary, the windows it closes (exactly, or bounded over
their symbols before the previous one) and bounds of the windows it opens; a window
that holds R is counted once, at its oldest R. So every path through a pruned tag
scores at most the lattice path that puts R in its place: when the best lattice path
holds no R, no path through a pruned tag beats it and the answer is certified
exact. Otherwise the positions where R won get more of their tags (the next best by
first-order max-marginals, twice as many each round) and the lattice is decoded
again, as in staggered decoding (Kaji et al. 2010); when R wins at more than a quarter
of the positions, or the lattices have cost an eighth of the exact Viterbi over all
(K+1)^k states (:func:`_dense`), that one runs instead. With a beam, each position keeps its ``cap`` best tags from the start: the
lattice with R certifies the answer or not, and without R gives it.

The references the tests compare with are exhaustive enumeration of all K^T paths
(:meth:`OrderKChainPotentials.enumerate` and ``score``).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["window_key", "build_hash", "hash_lookup", "bound_tables",
           "first_order_chain", "decode_one", "decode_order", "decode_batch"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "build_hash": ("i8:1", "(i8:1 i8:1)"),
    "bound_tables": ("i8 i8 f8:2 i8:1 f8:1", "(f8:1 i8:2 i8:2 i8:2)"),
    "decode_batch": ("f8:2 i8:1 f8:3 b1 i8 f8:2 i8:1 i8:1 i8:1 f8:1 f8:1 i8:2 i8 i8:1",
                     "i1:1"),
}

_EMPTY = -1


# ----------------------------------------------------------------------- n-gram keys
@numba.njit(cache=True, nogil=True, inline="always")
def order_offset(m, K):
    """First key of the windows of order m (m >= 2): keys of order 2 start at 0,
    those of order 3 after the (K+1)^3 of order 2."""
    if m <= 2:
        return 0
    b = K + 1
    return b * b * b


@numba.njit(cache=True, nogil=True, inline="always")
def window_key(m, s0, s1, s2, s3, K):
    """Key of the window of order m made of the last m + 1 of (s0, s1, s2, s3)
    (s3 the newest): its symbols as digits base K + 1, oldest first, plus the
    order's offset."""
    b = K + 1
    if m == 2:
        return (s1 * b + s2) * b + s3
    return ((s0 * b + s1) * b + s2) * b + s3 + order_offset(m, K)


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(key, mask):
    x = np.uint64(key) * np.uint64(11400714819323198485)
    x ^= x >> np.uint64(29)
    return np.int64(x & np.uint64(mask))


#: key spaces up to this size are indexed directly (one array read per look-up)
DIRECT_KEYS = 1 << 18


@numba.njit(cache=True, nogil=True)
def build_hash(keys):
    """Index of the distinct ``keys`` (>= 0, sorted) for :func:`hash_lookup`:
    ``(slots, values)``. Keys below :data:`DIRECT_KEYS`: ``slots[key]`` is the
    key's index (-1: none) and ``values`` is empty; larger ones: an open-addressing
    table, ``values[s]`` the index of the key in slot s."""
    n = keys.shape[0]
    if n == 0 or keys[n - 1] < DIRECT_KEYS:
        slots = np.full(keys[n - 1] + 1 if n else 1, _EMPTY, dtype=np.int64)
        for i in range(n):
            slots[keys[i]] = i
        return slots, np.zeros(0, dtype=np.int64)
    size = 4
    while size < 2 * n:
        size *= 2
    slots = np.full(size, _EMPTY, dtype=np.int64)
    values = np.full(size, _EMPTY, dtype=np.int64)
    mask = size - 1
    for i in range(n):
        s = _slot(keys[i], mask)
        while slots[s] != _EMPTY and slots[s] != keys[i]:
            s = (s + 1) & mask
        slots[s] = keys[i]
        values[s] = i
    return slots, values


@numba.njit(cache=True, nogil=True)
def hash_lookup(slots, values, key):
    """Index of ``key`` in the keys of :func:`build_hash`, or -1."""
    if values.shape[0] == 0:
        if key < slots.shape[0]:
            return slots[key]
        return -1
    mask = slots.shape[0] - 1
    s = _slot(key, mask)
    while True:
        k = slots[s]
        if k == key:
            return values[s]
        if k == _EMPTY:
            return -1
        s = (s + 1) & mask


# ----------------------------------------------------------------------- bounds
@numba.njit(cache=True, nogil=True)
def _fixed_positions(m, mask):
    """Positions of a window of order m not covered by ``mask`` (the R positions),
    at most the last two of them (a bound over fewer fixed symbols is looser but
    still a bound, and its table has at most (K+1)^2 entries)."""
    f0 = -1
    f1 = -1
    for i in range(m + 1):
        if not (mask >> i) & 1:
            f0 = f1
            f1 = i
    return f0, f1


@numba.njit(cache=True, nogil=True)
def bound_tables(K, order, G1, keys, weights):
    """Upper bounds of the windows that hold R, for every order m <= ``order`` and
    every set of R positions (``mask``, bit i: position i of the window, 0 the
    oldest).

    The entry of a window is the maximum over every symbol (tag or pad) at its R
    positions of its score given its other symbols (at most the last two of them, see
    :func:`_fixed_positions`); for m >= 2 the maximum over the seen n-grams and 0
    (an unseen one). Returns ``(table, offset, fix0, fix1)``: the bound of a window is
    ``table[offset[m, mask] + index]`` with ``index`` its symbols at ``fix0[m, mask]``
    and ``fix1[m, mask]`` (-1: none) as digits base K + 1.
    """
    b = K + 1
    offset = np.zeros((4, 16), dtype=np.int64)
    fix0 = np.full((4, 16), -1, dtype=np.int64)
    fix1 = np.full((4, 16), -1, dtype=np.int64)
    total = 0
    for m in range(1, order + 1):
        for mask in range(1, 1 << (m + 1)):
            f0, f1 = _fixed_positions(m, mask)
            fix0[m, mask] = f0
            fix1[m, mask] = f1
            offset[m, mask] = total
            size = 1
            if f0 >= 0:
                size *= b
            if f1 >= 0:
                size *= b
            total += size
    table = np.zeros(total)
    # order 1: every window is in G1
    for mask in range(1, 4):
        lo = offset[1, mask]
        hi = lo + (b if fix1[1, mask] >= 0 else 1)
        for q in range(lo, hi):
            table[q] = -np.inf
    sym = np.zeros(4, dtype=np.int64)
    for a in range(b):
        for c in range(b):
            v = G1[a, c]
            sym[0] = a
            sym[1] = c
            for mask in range(1, 4):
                q = offset[1, mask] + _digits(sym, fix0[1, mask], fix1[1, mask], b)
                if v > table[q]:
                    table[q] = v
    # orders >= 2: the seen n-grams (unseen ones score 0, the tables' start)
    for i in range(keys.shape[0]):
        key = keys[i]
        m = 2
        if order >= 3 and key >= order_offset(3, K):
            m = 3
            key -= order_offset(3, K)
        if m > order:
            continue
        for j in range(m, -1, -1):
            sym[j] = key % b
            key //= b
        v = weights[i]
        for mask in range(1, 1 << (m + 1)):
            q = offset[m, mask] + _digits(sym, fix0[m, mask], fix1[m, mask], b)
            if v > table[q]:
                table[q] = v
    return table, offset, fix0, fix1


@numba.njit(cache=True, nogil=True, inline="always")
def _digits(sym, f0, f1, b):
    q = 0
    if f0 >= 0:
        q = sym[f0]
    if f1 >= 0:
        q = q * b + sym[f1]
    return q


# ----------------------------------------------------------------------- lattice
@numba.njit(cache=True, nogil=True)
def _outgoing_bounds(k, K, btab, boff):
    """``out[m, j, c]``: a bound of the window of order m that ends j positions after
    tag c (c at its position m - j), over every other symbol; ``out[4]`` their sums
    (see below)."""
    out = np.zeros((5, 4, K))
    for m in range(1, k + 1):
        for j in range(1, m + 1):
            mask = ((1 << (m + 1)) - 1) ^ (1 << (m - j))
            for c in range(K):
                out[m, j, c] = btab[boff[m, mask] + c]
    # out[4, v, c]: the sums over every window c opens when all of them end by the
    # final pad, v = 0: none excluded, 1: those with two symbols before c (R two
    # back), 2: those with any symbol before c (R just before)
    for m in range(1, k + 1):
        for j in range(1, m + 1):
            older = m - j
            for c in range(K):
                out[4, 0, c] += out[m, j, c]
                if older < 2:
                    out[4, 1, c] += out[m, j, c]
                if older < 1:
                    out[4, 2, c] += out[m, j, c]
    return out


@numba.njit(cache=True, nogil=True)
def _plain(m, s0, s1, s2, s3, K, G1, slots, values, ngw):
    """Score of a window of order m without R."""
    if m == 1:
        return G1[s2, s3]
    j = hash_lookup(slots, values, window_key(m, s0, s1, s2, s3, K))
    if j < 0:
        return 0.0
    return ngw[j]


@numba.njit(cache=True, nogil=True)
def _rest_charge(t, T, k, K, s2, r1, r0, U, pair, has_pair, pout, pruned, npruned,
                 G1, btab, boff, out):
    """The score of R at t after the symbol s2 at t-1 (P before the sentence, R
    where the lattice put R), ``r1``/``r0``: whether t-2 / t-3 hold R. The best over
    the pruned tags c of U[t, c], plus the windows ending at t without an older R
    (the first-order one exactly, higher ones bounded over their symbols before
    t-1), plus a bound of every window c opens towards t+1..T without an older R:
    a window that holds R is scored once, at its oldest R."""
    R = K + 1
    variant = 2 if s2 == R else (1 if r1 else 0)
    best = -np.inf
    for q in range(npruned):
        c = pruned[q]
        v = U[t, c]
        if s2 != R:
            v += G1[s2, c]
            if has_pair:
                v += pair[t, s2, c]
            for m in range(2, k + 1):
                if r1 or (m >= 3 and r0):
                    continue
                mask = (1 << (m - 1)) - 1  # R at the positions before t-1
                v += btab[boff[m, mask] + s2 * (K + 1) + c]
        if has_pair and t + 1 < T:
            v += pout[t + 1, c]
        if t + k <= T:  # every window c opens ends by the final pad
            v += out[4, variant, c]
        else:
            for m in range(1, k + 1):
                for j in range(1, m + 1):
                    if t + j > T:
                        continue
                    older = m - j  # symbols of the window before t
                    if older >= 1 and s2 == R:
                        continue
                    if older >= 2 and r1:
                        continue
                    v += out[m, j, c]
        if v > best:
            best = v
    return best


@numba.njit(cache=True, nogil=True)
def _lattice(U, pair, has_pair, pout, T, k, K, cand, ncand, pruned, npruned, G1, slots,
             values, ngw, btab, boff, out, path):
    """Best lattice path into ``path`` (symbols, R = K + 1 included); returns its
    score. ``cand[t, :ncand[t]]`` are the candidates at t (R last, when some tags
    were pruned), ``pruned[t, :npruned[t]]`` the tags R stands for. A window that
    holds R scores 0: :func:`_rest_charge` counts it, at its oldest R."""
    P = K
    R = K + 1
    sizes = np.empty(T + 1, dtype=np.int64)
    sizes[0] = 1
    for t in range(T):
        s = 1
        for j in range(k):
            if t - j >= 0:
                s *= ncand[t - j]
        sizes[t + 1] = s
    off = np.empty(T + 2, dtype=np.int64)
    off[0] = 0
    for t in range(T + 1):
        off[t + 1] = off[t] + sizes[t]
    alpha = np.empty(off[T + 1])
    back = np.empty(off[T + 1], dtype=np.int32)
    alpha[0] = 0.0
    # R's charges at t by the symbol at t-1 and whether t-2, t-3 hold R (memo[key]
    # holds the one of position stamp[key])
    memo = np.empty(4 * (K + 2))
    stamp = np.full(4 * (K + 2), -1, dtype=np.int64)
    for t in range(T):
        n0 = ncand[t - k] if t - k >= 0 else 1          # the position dropped
        n1 = ncand[t - 1] if (k >= 2 and t - 1 >= 0) else 1
        n2 = ncand[t - 2] if (k >= 3 and t - 2 >= 0) else 1
        mid = n1 * n2                                   # positions t-k+1..t-1
        nt = ncand[t]
        prev = off[t]
        cur = off[t + 1]
        for r in range(mid):
            d1 = r % n1
            d2 = r // n1
            s2 = P  # t - 1 (when in the state)
            s1 = P  # t - 2
            if k >= 2 and t - 1 >= 0:
                s2 = cand[t - 1, d1]
            if k >= 3 and t - 2 >= 0:
                s1 = cand[t - 2, d2]
            for it in range(nt):
                c = cand[t, it]
                base = 0.0
                if c != R:
                    base = U[t, c]
                    # windows of orders below k: their symbols are all in the state
                    for m in range(1, k):
                        if not (s2 == R or (m >= 2 and s1 == R)):
                            base += _plain(m, P, s1, s2, c, K, G1, slots, values, ngw)
                best = -np.inf
                arg = 0
                for i0 in range(n0):
                    a0 = cand[t - k, i0] if t - k >= 0 else P
                    if k == 1:
                        x0, x1, x2 = P, P, a0
                    elif k == 2:
                        x0, x1, x2 = P, a0, s2
                    else:
                        x0, x1, x2 = a0, s1, s2
                    if c == R:
                        key = x2 * 4 + (2 if x1 == R else 0) + (1 if x0 == R else 0)
                        if stamp[key] == t:
                            v = memo[key]
                        else:
                            stamp[key] = t
                            v = _rest_charge(t, T, k, K, x2, x1 == R, x0 == R, U, pair,
                                             has_pair, pout, pruned[t], npruned[t], G1,
                                             btab, boff, out)
                            memo[key] = v
                    else:
                        v = 0.0
                        if not (x2 == R or (k >= 2 and x1 == R) or (k >= 3 and x0 == R)):
                            v = _plain(k, x0, x1, x2, c, K, G1, slots, values, ngw)
                        if has_pair and k == 1 and a0 != R:
                            v += pair[t, a0, c]
                    v += alpha[prev + i0 * mid + r]
                    if v > best:
                        best = v
                        arg = i0
                if has_pair and k >= 2 and c != R and s2 != R:
                    best += pair[t, s2, c]
                alpha[cur + r * nt + it] = best + base
                back[cur + r * nt + it] = arg
    # the end windows (the last k symbols then P); one with R was counted by its R
    nT = sizes[T]
    last = off[T]
    n1 = ncand[T - 1]
    n2 = ncand[T - 2] if (k >= 2 and T - 2 >= 0) else 1
    best = -np.inf
    arg = 0
    for q in range(nT):
        i1 = q % n1
        rest = q // n1
        i2 = rest % n2
        i3 = rest // n2
        s3 = cand[T - 1, i1]
        s2 = cand[T - 2, i2] if (k >= 2 and T - 2 >= 0) else P
        s1 = cand[T - 3, i3] if (k >= 3 and T - 3 >= 0) else P
        v = alpha[last + q]
        for m in range(1, k + 1):
            if s3 == R or (m >= 2 and s2 == R) or (m >= 3 and s1 == R):
                continue
            v += _plain(m, s1, s2, s3, P, K, G1, slots, values, ngw)
        if v > best:
            best = v
            arg = q
    q = arg
    for t in range(T - 1, -1, -1):
        nt = ncand[t]
        it = q % nt
        r = q // nt
        path[t] = cand[t, it]
        n1 = ncand[t - 1] if (k >= 2 and t - 1 >= 0) else 1
        n2 = ncand[t - 2] if (k >= 3 and t - 2 >= 0) else 1
        q = back[off[t + 1] + q] * (n1 * n2) + r
    return best


# ----------------------------------------------------------------------- bound chain
@numba.njit(cache=True, nogil=True)
def first_order_chain(K, G1):
    """The first-order part of the scores, whose max-marginals rank the tags of a
    position: transitions E (K, K) and their transpose, start and end scores, and
    E's row and column maxima."""
    P = K
    E = np.ascontiguousarray(G1[:K, :K])
    start = G1[P, :K].copy()
    end = G1[:K, P].copy()
    row_max = np.empty(K)
    col_max = np.empty(K)
    for a in range(K):
        row_max[a] = E[a, 0]
        for c in range(1, K):
            if E[a, c] > row_max[a]:
                row_max[a] = E[a, c]
    for c in range(K):
        col_max[c] = E[0, c]
        for a in range(1, K):
            if E[a, c] > col_max[c]:
                col_max[c] = E[a, c]
    return E, np.ascontiguousarray(E.T), start, end, row_max, col_max


@numba.njit(cache=True, nogil=True)
def _max_marginals(U, pair, has_pair, chain, ub, alpha, beta):
    """Max-marginals of the first-order chain of :func:`first_order_chain` (a
    token's pair score taken at its best over the previous tag) into ``alpha``
    (T, K), by a forward and a backward pass that skip a tag whose best step cannot
    reach any maximum (``ub`` and ``beta``: scratch of the same shape)."""
    E, ET, start, end, row_max, col_max = chain
    T = U.shape[0]
    K = U.shape[1]
    P = K
    for t in range(T):
        for c in range(K):
            ub[t, c] = U[t, c]
        if has_pair:
            for c in range(K):
                if t == 0:
                    ub[t, c] += pair[0, P, c]
                else:
                    best = pair[t, 0, c]
                    for a in range(1, K):
                        if pair[t, a, c] > best:
                            best = pair[t, a, c]
                    ub[t, c] += best
    for c in range(K):
        alpha[0, c] = start[c] + ub[0, c]
    for t in range(1, T):
        ab = 0
        for a in range(1, K):
            if alpha[t - 1, a] > alpha[t - 1, ab]:
                ab = a
        low = alpha[t - 1, ab] + E[ab, 0]
        for c in range(1, K):
            if alpha[t - 1, ab] + E[ab, c] < low:
                low = alpha[t - 1, ab] + E[ab, c]
        for c in range(K):
            alpha[t, c] = -np.inf
        for a in range(K):
            x = alpha[t - 1, a]
            if x + row_max[a] < low:
                continue
            for c in range(K):
                v = x + E[a, c]
                if v > alpha[t, c]:
                    alpha[t, c] = v
        for c in range(K):
            alpha[t, c] += ub[t, c]
    for a in range(K):
        beta[T - 1, a] = end[a]
    for t in range(T - 2, -1, -1):
        # g(c) = ub[t+1, c] + beta[t+1, c]; beta[t, a] = max_c E[a, c] + g(c)
        cb = 0
        gb = ub[t + 1, 0] + beta[t + 1, 0]
        for c in range(1, K):
            g = ub[t + 1, c] + beta[t + 1, c]
            if g > gb:
                gb = g
                cb = c
        low = ET[cb, 0] + gb
        for a in range(1, K):
            if ET[cb, a] + gb < low:
                low = ET[cb, a] + gb
        for a in range(K):
            beta[t, a] = -np.inf
        for c in range(K):
            g = ub[t + 1, c] + beta[t + 1, c]
            if g + col_max[c] < low:
                continue
            for a in range(K):
                v = ET[c, a] + g
                if v > beta[t, a]:
                    beta[t, a] = v
    for t in range(T):
        for c in range(K):
            alpha[t, c] += beta[t, c]


@numba.njit(cache=True, nogil=True)
def workspace(max_len, K, has_pair):
    """Scratch arrays of :func:`decode_one` for sentences of up to ``max_len``
    tokens (allocated once per batch)."""
    n = max(max_len, 1)
    return (np.empty((n, K)), np.empty((n, K)), np.empty((n, K)),
            np.zeros((n, K), dtype=np.bool_), np.zeros(n, dtype=np.int64),
            np.empty((n, K + 1), dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty((n, K), dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.int64), np.zeros((n if has_pair else 0, K)))


# ----------------------------------------------------------------------- dense
#: exact decoding over every state runs when the states (K+1)^k number at most this
DENSE_STATES = 1 << 17


@numba.njit(cache=True, nogil=True)
def corrections(k, K, keys, weights):
    """The seen windows of order k (k >= 2) grouped by their newest k symbols:
    group g = (s_{t-k+1} .. s_t) as digits base K + 1 holds the oldest symbols
    ``first[ptr[g]:ptr[g + 1]]`` (increasing) with their ``weight``; and, for k = 3,
    the dense table of the windows of order 2 ((K+1)^3 entries, 0 where unseen)."""
    b = K + 1
    S = 1
    for _ in range(k):
        S *= b
    lo = order_offset(k, K)
    hi = lo + S * b
    ptr = np.zeros(S + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        if lo <= keys[i] < hi:
            ptr[(keys[i] - lo) % S + 1] += 1
    for g in range(S):
        ptr[g + 1] += ptr[g]
    fill = ptr[:-1].copy()
    first = np.empty(ptr[S], dtype=np.int64)
    weight = np.empty(ptr[S])
    for i in range(keys.shape[0]):
        if lo <= keys[i] < hi:
            g = (keys[i] - lo) % S
            first[fill[g]] = (keys[i] - lo) // S
            weight[fill[g]] = weights[i]
            fill[g] += 1
    D2 = np.zeros(b * b * b if k == 3 else 0)
    if k == 3:
        for i in range(keys.shape[0]):
            if keys[i] < b * b * b:
                D2[keys[i]] = weights[i]
    return ptr, first, weight, D2


@numba.njit(cache=True, nogil=True)
def _dense(U, pair, has_pair, k, G1, slots, values, ngw, ptr, first, weight, D2, path):
    """Exact order-k Viterbi over all (K+1)^k states (the pad P among them).

    A state is (s_{t-k+1}, .., s_t) as digits base K + 1. The window of order k
    adds its weight only where seen: for the newest k symbols g and tag c, the
    best predecessor is the best of those in g's correction list (score plus
    weight) and the best one outside it (score only), found among the three best
    predecessors of g (a full scan when all three are in the list). Returns the
    best score."""
    T = U.shape[0]
    K = U.shape[1]
    b = K + 1
    P = K
    S = 1
    for _ in range(k):
        S *= b
    mid = S // b
    alpha = np.full(S, -np.inf)
    nxt = np.empty(S)
    back = np.empty((T, S), dtype=np.int32)
    pads = 0
    for _ in range(k):
        pads = pads * b + P
    alpha[pads] = 0.0
    for t in range(T):
        for q in range(S):
            nxt[q] = -np.inf
        if k == 1:
            for c in range(K):
                best = -np.inf
                arg = 0
                for a in range(b):
                    x = alpha[a]
                    if x == -np.inf:
                        continue
                    v = x + G1[a, c]
                    if has_pair:
                        v += pair[t, a, c]
                    if v > best:
                        best = v
                        arg = a
                nxt[c] = best + U[t, c]
                back[t, c] = arg
        else:
            for g in range(mid):
                # the three best predecessors (a, g)
                a1 = -1
                a2 = -1
                a3 = -1
                for a in range(b):
                    x = alpha[a * mid + g]
                    if x == -np.inf:
                        continue
                    if a1 < 0 or x > alpha[a1 * mid + g]:
                        a3 = a2
                        a2 = a1
                        a1 = a
                    elif a2 < 0 or x > alpha[a2 * mid + g]:
                        a3 = a2
                        a2 = a
                    elif a3 < 0 or x > alpha[a3 * mid + g]:
                        a3 = a
                if a1 < 0:
                    continue
                s2 = g % b
                s1 = (g // b) % b
                x1 = alpha[a1 * mid + g]
                row = g * b
                # every tag after the best predecessor (a window without weight) ...
                for c in range(K):
                    base = U[t, c] + G1[s2, c]
                    if has_pair:
                        base += pair[t, s2, c]
                    if k == 3:
                        base += D2[(s1 * b + s2) * b + c]
                    nxt[row + c] = base + x1
                    back[t, row + c] = a1
                # ... then the groups with seen windows: the best listed predecessor
                # (score plus weight) against the best unlisted one
                for c in range(K):
                    lo = ptr[row + c]
                    hi = ptr[row + c + 1]
                    if lo == hi:
                        continue
                    base = U[t, c] + G1[s2, c]
                    if has_pair:
                        base += pair[t, s2, c]
                    if k == 3:
                        base += D2[(s1 * b + s2) * b + c]
                    best = -np.inf
                    arg = -1
                    for e in range(lo, hi):
                        v = alpha[first[e] * mid + g] + weight[e]
                        if v > best:
                            best = v
                            arg = first[e]
                    out_a = -1
                    for cand_a in (a1, a2, a3):
                        if cand_a < 0:
                            break
                        listed = False
                        for e in range(lo, hi):
                            if first[e] == cand_a:
                                listed = True
                                break
                        if not listed:
                            out_a = cand_a
                            break
                    if out_a < 0 and a3 >= 0:
                        for a in range(b):
                            x = alpha[a * mid + g]
                            if x == -np.inf:
                                continue
                            listed = False
                            for e in range(lo, hi):
                                if first[e] == a:
                                    listed = True
                                    break
                            if not listed and (out_a < 0 or x > alpha[out_a * mid + g]):
                                out_a = a
                    if out_a >= 0 and alpha[out_a * mid + g] > best:
                        best = alpha[out_a * mid + g]
                        arg = out_a
                    nxt[row + c] = base + best
                    back[t, row + c] = arg
        for q in range(S):
            alpha[q] = nxt[q]
    best = -np.inf
    arg = 0
    for q in range(S):
        x = alpha[q]
        if x == -np.inf:
            continue
        s3 = q % b
        s2 = (q // b) % b if k >= 2 else P
        s1 = (q // (b * b)) % b if k >= 3 else P
        v = x
        for m in range(1, k + 1):
            v += _plain(m, s1, s2, s3, P, K, G1, slots, values, ngw)
        if v > best:
            best = v
            arg = q
    q = arg
    for t in range(T - 1, -1, -1):
        path[t] = q % b
        q = back[t, q] * mid + q // b
    return best


# ----------------------------------------------------------------------- decoding
@numba.njit(cache=True, nogil=True)
def decode_one(U, pair, has_pair, k, G1, slots, values, ngw, btab, boff, out, chain,
               dense, cap, ws, path):
    """Decode one sentence (unaries ``U`` of shape (T, K)) into ``path``; returns
    whether the answer is certified exact (see the module's docstring).

    ``chain`` is :func:`first_order_chain`'s answer for these weights, ``out``
    :func:`_outgoing_bounds`'s, ``dense`` :func:`dense_tables`', ``ws`` a
    :func:`workspace`. Where ``dense`` is usable (no beam, few enough states), the
    exact Viterbi over all states takes over when R wins at more than a quarter of
    the positions, or once the lattices decoded so far have cost an eighth of it
    (near ties: a loss-augmented sentence whose tags score alike needs most of its
    tags).

    With a beam (``cap`` < K) the ``cap`` best tags of every position by the
    first-order max-marginals are kept from the start: one lattice with R
    (certified when R loses everywhere), else one without."""
    T = U.shape[0]
    K = U.shape[1]
    R = K + 1
    S = 1
    for _ in range(k):
        S *= K + 1
    budget = T * S // 8
    work = 0
    ub, mu, beta, kept, nkept, cand, ncand, pruned, npruned, sym, pout = ws
    _max_marginals(U, pair, has_pair, chain, ub, mu, beta)
    # exact decoding starts from the best tag of every position and grows where R
    # wins; a beam keeps its tags from the start (one lattice with R, then at most
    # one without)
    first_keep = 1 if cap >= K else cap
    for t in range(T):
        for c in range(K):
            kept[t, c] = False
        nkept[t] = 0
        for _ in range(first_keep):
            cb = -1
            for c in range(K):
                if not kept[t, c] and (cb < 0 or mu[t, c] > mu[t, cb]):
                    cb = c
            kept[t, cb] = True
            nkept[t] += 1
    if has_pair:
        for t in range(T):
            for a in range(K):
                best = pair[t, a, 0]
                for c in range(1, K):
                    if pair[t, a, c] > best:
                        best = pair[t, a, c]
                pout[t, a] = best
    with_rest = True
    while True:
        for t in range(T):
            n = 0
            q = 0
            for c in range(K):
                if kept[t, c]:
                    cand[t, n] = c
                    n += 1
                else:
                    pruned[t, q] = c
                    q += 1
            if with_rest and q > 0:
                cand[t, n] = R
                n += 1
            ncand[t] = n
            npruned[t] = q
        for t in range(T):
            w = 1
            for j in range(k + 1):
                if t - j >= 0:
                    w *= ncand[t - j]
            work += w
        if dense[0] and work > budget:
            _, ptr, first, weight, D2 = dense
            _dense(U, pair, has_pair, k, G1, slots, values, ngw, ptr, first, weight,
                   D2, path)
            return True
        _lattice(U, pair, has_pair, pout, T, k, K, cand, ncand, pruned, npruned, G1,
                 slots, values, ngw, btab, boff, out, sym)
        if not with_rest:
            for t in range(T):
                path[t] = sym[t]
            return False
        grown = False
        rested = False
        n_rest = 0
        for t in range(T):
            if sym[t] == R:
                n_rest += 1
        if dense[0] and 4 * n_rest > T:
            # near ties (R wins at a quarter of the positions): exact over all states
            _, ptr, first, weight, D2 = dense
            _dense(U, pair, has_pair, k, G1, slots, values, ngw, ptr, first, weight,
                   D2, path)
            return True
        for t in range(T):
            if sym[t] != R:
                continue
            rested = True
            if nkept[t] >= cap or cap < K:
                continue
            add = min(nkept[t], cap - nkept[t])
            for _ in range(add):
                cb = -1
                for c in range(K):
                    if not kept[t, c] and (cb < 0 or mu[t, c] > mu[t, cb]):
                        cb = c
                if cb < 0:
                    break
                kept[t, cb] = True
                nkept[t] += 1
            grown = True
        if not rested:
            for t in range(T):
                path[t] = sym[t]
            return True
        if not grown:
            with_rest = False


@numba.njit(cache=True, nogil=True)
def decode_batch(unary, offsets, pair, has_pair, k, G1, ngrams, slots, values, ngw,
                 btab, boff, cap, path):
    """Decode every sentence of a batch (``offsets``) into ``path``; returns one
    flag per sentence, 1 where the answer is certified exact."""
    n_seq = offsets.shape[0] - 1
    exact = np.zeros(n_seq, dtype=np.int8)
    K = unary.shape[1]
    chain = first_order_chain(K, G1)
    out = _outgoing_bounds(k, K, btab, boff)
    dense = dense_tables(k, K, ngrams, ngw, cap)
    max_len = 1
    for i in range(n_seq):
        max_len = max(max_len, offsets[i + 1] - offsets[i])
    ws = workspace(max_len, K, has_pair)
    for i in range(n_seq):
        lo = offsets[i]
        hi = offsets[i + 1]
        if hi == lo:
            exact[i] = 1
            continue
        P_i = pair[lo:hi] if has_pair else pair
        if decode_order(unary[lo:hi], P_i, has_pair, k, G1, slots, values, ngw, btab,
                        boff, out, chain, dense, cap, ws, path[lo:hi]):
            exact[i] = 1
    return exact


@numba.njit(cache=True, nogil=True)
def decode_order(U, pair, has_pair, k, G1, slots, values, ngw, btab, boff, out, chain,
                 dense, cap, ws, path):
    """:func:`decode_one` with the order as a constant: numba compiles one decoder
    per order, whose window loops it unrolls (twice as fast as one decoder for a
    variable order)."""
    if k == 1:
        return decode_one(U, pair, has_pair, 1, G1, slots, values, ngw, btab, boff, out,
                          chain, dense, cap, ws, path)
    if k == 2:
        return decode_one(U, pair, has_pair, 2, G1, slots, values, ngw, btab, boff, out,
                          chain, dense, cap, ws, path)
    return decode_one(U, pair, has_pair, 3, G1, slots, values, ngw, btab, boff, out,
                      chain, dense, cap, ws, path)


@numba.njit(cache=True, nogil=True)
def dense_tables(k, K, ngrams, ngw, cap):
    """``(usable, *corrections)``: whether decoding may run over all states (no
    beam, at most :data:`DENSE_STATES` of them) and :func:`corrections`' tables
    (empty ones where it may not, or for k = 1, which needs none)."""
    S = 1
    for _ in range(k):
        S *= K + 1
    if cap < K or S > DENSE_STATES or k == 1:
        return (cap >= K and S <= DENSE_STATES, np.zeros(1, dtype=np.int64),
                np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
    ptr, first, weight, D2 = corrections(k, K, ngrams, ngw)
    return True, ptr, first, weight, D2
