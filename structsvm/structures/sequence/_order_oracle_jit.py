"""Compiled loop of the fused oracle of order-k sequence maps (private, no validation
here).

One call, holding no GIL, does for a chunk of sentences what the generic oracle does
in several numpy/scipy steps: the unaries x_t·W (and, with emission order 1, the
pair scores x_t·W_pair), the Hamming augmentation, certified order-k decoding
(:func:`structsvm.structures.sequence._order_jit.decode_order`), the loss Δ_i, the
sparse row δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i) (sorted unique columns, no zeros), the
margin w·δΦ_i and whether each answer is certified exact.

The reference the tests compare it against is the generic path:
``batch_potentials`` → ``augment`` → ``pruned_viterbi`` →
``joint_feature_differences`` → ``loss.batch``. Column layout: see
:mod:`structsvm.structures.sequence._tag_windows`.
"""
from __future__ import annotations

import numba
import numpy as np

from ._oracle_jit import _entries, _stable_order
from ._order_jit import (_outgoing_bounds, decode_order, dense_tables,
                         first_order_chain, hash_lookup, order_offset, workspace)

__all__ = ["order_k_oracle"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "order_k_oracle": (
        "i4:1 i4:1 f8:1 i8:1 i8:1 i8:1 f8:2 f8:3 b1 i8 f8:2 i8:1 i8:1 i8:1 f8:1 "
        "f8:1 i8:2 i8 i8 i8 f8:1 b1 b1",
        "(i8:1 f8:1 f8:1 i8:1 i8:1 f8:1 i1:1)"),
}


@numba.njit(cache=True, nogil=True, inline="always")
def _symbol(arr, start, T, p, K):
    """Tag at position p of a sentence of T tokens stored from ``arr[start]``; the
    pad K outside it."""
    if p < 0 or p >= T:
        return K
    return arr[start + p]


@numba.njit(cache=True, nogil=True)
def _window(arr, start, T, e, m, K):
    """Key of the window of order m ending at position e (e = T: the final pad)."""
    b = K + 1
    key = 0
    for j in range(m + 1):
        key = key * b + _symbol(arr, start, T, e - m + j, K)
    return key + order_offset(m, K)


@numba.njit(cache=True, nogil=True)
def _higher_entries(indptr, indices, data, y, yh, lo, T, shift, k, K, has_pair, slots,
                    values, b_ng, b_pair, cols, vals, n):
    """Append δΦ's n-gram and emission-pair entries of one sentence (corpus tokens
    lo..lo+T, decoded states ``yh[t - shift]``) after the n already there; returns
    the new count."""
    for e in range(T + 1):
        for m in range(2, k + 1):
            a = _window(y, lo, T, e, m, K)
            b = _window(yh, lo - shift, T, e, m, K)
            if a == b:
                continue
            j = hash_lookup(slots, values, a)
            if j >= 0:
                cols[n] = b_ng + j
                vals[n] = 1.0
                n += 1
            j = hash_lookup(slots, values, b)
            if j >= 0:
                cols[n] = b_ng + j
                vals[n] = -1.0
                n += 1
    if has_pair:
        width = (K + 1) * K
        for t in range(T):
            pa = _symbol(y, lo, T, t - 1, K) * K + y[lo + t]
            pb = _symbol(yh, lo - shift, T, t - 1, K) * K + yh[lo - shift + t]
            if pa == pb:
                continue
            for p in range(indptr[lo + t], indptr[lo + t + 1]):
                c = b_pair + indices[p] * width
                cols[n] = c + pa
                vals[n] = data[p]
                cols[n + 1] = c + pb
                vals[n + 1] = -data[p]
                n += 2
    return n


@numba.njit(cache=True, nogil=True)
def order_k_oracle(indptr, indices, data, offsets, idx, y, W, Wp, has_pair, k, G1,
                   ngrams, slots, values, ngw, btab, boff, cap, b_ng, b_pair, w,
                   augment, normalize):
    """Loss-augmented (Hamming) order-k oracle of the sentences ``idx``.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the corpus's token rows (all sentences).
    offsets : int64 array, sentence s owns token rows ``offsets[s]:offsets[s + 1]``.
    idx : int64 array of the sentences to decode.
    y : int64 array of the true states of every corpus token.
    W : (d, K) emission weights; Wp (d, K+1, K) the pair weights (``has_pair``).
    k, G1, ngrams, slots, values, ngw, btab, boff : the order, the first-order
        table, the seen n-grams, their hash table and weights, the bound tables.
    cap : tags per position at most.
    b_ng, b_pair : first columns of the n-gram and pair blocks.
    w : the whole weight vector (for the margins).
    augment : bool
        Add the Hamming loss to the unaries (False: plain prediction).
    normalize : bool
        Hamming loss divided by the sentence length.

    Returns
    -------
    yh, loss, margin, ptr, col, val : as the first-order fused oracle's;
    exact : int8 array, 1 where the decoded path is certified exact.
    """
    K = W.shape[1]
    d = W.shape[0]
    base = d * K
    m_idx = idx.shape[0]
    max_len = 1
    n_tok = 0
    for q in range(m_idx):
        T = offsets[idx[q] + 1] - offsets[idx[q]]
        n_tok += T
        if T > max_len:
            max_len = T
    chain = first_order_chain(K, G1)
    out = _outgoing_bounds(k, K, btab, boff)
    dense = dense_tables(k, K, ngrams, ngw, cap)
    ws = workspace(max_len, K, has_pair)
    unary = np.empty((max_len, K))
    pair = np.zeros((max_len if has_pair else 0, K + 1, K))
    yh = np.empty(n_tok, dtype=np.int64)
    first = np.zeros(m_idx, dtype=np.int64)
    loss = np.zeros(m_idx)
    margin = np.zeros(m_idx)
    bound = np.zeros(m_idx, dtype=np.int64)
    exact = np.zeros(m_idx, dtype=np.int8)
    pos = np.int64(0)
    width = (K + 1) * K
    for q in range(m_idx):
        lo = offsets[idx[q]]
        hi = offsets[idx[q] + 1]
        T = hi - lo
        first[q] = pos
        if T == 0:
            exact[q] = 1
            continue
        scale = 1.0 / T if normalize else 1.0
        for t in range(T):
            for s in range(K):
                unary[t, s] = 0.0
            for p in range(indptr[lo + t], indptr[lo + t + 1]):
                v = data[p]
                r = indices[p]
                for s in range(K):
                    unary[t, s] += v * W[r, s]
            if augment:
                for s in range(K):
                    unary[t, s] += scale
                unary[t, y[lo + t]] -= scale
            if has_pair:
                for a in range(K + 1):
                    for s in range(K):
                        pair[t, a, s] = 0.0
                for p in range(indptr[lo + t], indptr[lo + t + 1]):
                    v = data[p]
                    r = indices[p]
                    for a in range(K + 1):
                        for s in range(K):
                            pair[t, a, s] += v * Wp[r, a, s]
        if decode_order(unary[:T], pair[:T] if has_pair else pair, has_pair, k, G1,
                      slots, values, ngw, btab, boff, out, chain, dense, cap, ws,
                      yh[pos:pos + T]):
            exact[q] = 1
        wrong = 0
        cnt = 0
        for t in range(T):
            if yh[pos + t] != y[lo + t]:
                wrong += 1
                cnt += 2 * (indptr[lo + t + 1] - indptr[lo + t]) + 4
                cnt += 2 * (k + 1) * k  # the n-gram windows it touches, both paths
            if has_pair:
                pa = _symbol(y, lo, T, t - 1, K) * K + y[lo + t]
                pb = _symbol(yh, pos, T, t - 1, K) * K + yh[pos + t]
                if pa != pb:
                    cnt += 2 * (indptr[lo + t + 1] - indptr[lo + t])
        loss[q] = wrong / T if normalize else float(wrong)
        bound[q] = cnt + 4 + 2 * k
        pos += T
    # pass 2: the rows of δΦ, columns sorted and merged
    ptr = np.zeros(m_idx + 1, dtype=np.int64)
    total = 0
    longest = 1
    for q in range(m_idx):
        total += bound[q]
        if bound[q] > longest:
            longest = bound[q]
    col = np.empty(total, dtype=np.int64)
    val = np.empty(total)
    tc = np.empty(longest, dtype=np.int64)
    tv = np.empty(longest)
    order = np.empty(longest, dtype=np.int64)
    tmp = np.empty(longest, dtype=np.int64)
    nnz = 0
    for q in range(m_idx):
        lo = offsets[idx[q]]
        hi = offsets[idx[q] + 1]
        n = 0
        if loss[q] > 0.0:
            n = _entries(indptr, indices, data, y, yh, lo, hi, lo - first[q], K, base,
                         tc, tv)
            n = _higher_entries(indptr, indices, data, y, yh, lo, hi - lo, lo - first[q],
                                k, K, has_pair, slots, values, b_ng, b_pair, tc, tv, n)
        if n > 0:
            _stable_order(tc, n, order, tmp)
            last = -1
            acc = 0.0
            for r in range(n):
                c = tc[order[r]]
                if c != last:
                    if last >= 0 and acc != 0.0:
                        col[nnz] = last
                        val[nnz] = acc
                        nnz += 1
                    last = c
                    acc = 0.0
                acc += tv[order[r]]
            if last >= 0 and acc != 0.0:
                col[nnz] = last
                val[nnz] = acc
                nnz += 1
        mg = 0.0
        for r in range(ptr[q], nnz):
            mg += val[r] * w[col[r]]
        margin[q] = mg
        ptr[q + 1] = nnz
    return yh, loss, margin, ptr, col[:nnz].copy(), val[:nnz].copy(), exact
