"""Compiled loop of the sequence map's fused oracle (private, no validation here).

One compiled call, holding no GIL, does for a chunk of sentences what the generic
oracle of :class:`~structsvm.learners.problem.Problem` does in several numpy/scipy steps:
the unaries x_t·W of every token, the Hamming augmentation, Viterbi decoding, the
loss Δ_i, the sparse row δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i) (sorted unique columns,
no zeros) and the margin w·δΦ_i. Threads running chunks of one oracle call then
really run at once (scipy's sparse products hold the GIL).

The reference the tests compare it against is the generic path: ``batch_potentials``
→ ``augment`` → ``viterbi`` → ``joint_feature_differences`` → ``loss.batch``.

Column layout (as :class:`~structsvm.structures.sequence.features.SequenceFeatures`): emission of input
feature j in state k at ``j * K + k``; transition a → b at ``base + a * K + b``;
start ``base + K * K + s``; end ``base + K * K + K + s`` (``base = d * K``).
"""
from __future__ import annotations

import numba
import numpy as np

from ._viterbi_jit import _best_path, _forward, row_maxima

__all__ = ["chain_oracle"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "chain_oracle": (
        "i4:1 i4:1 f8:1 i8:1 i8:1 i8:1 "
        "f8:2 f8:2 f8:1 f8:1 f8:1 b1 b1",
        "(i8:1 f8:1 f8:1 i8:1 i8:1 f8:1)"),
}


@numba.njit(cache=True, nogil=True)
def _entries(indptr, indices, data, y, yh, lo, hi, shift, K, base, cols, vals):
    """Unsorted entries of δΦ of one sentence: corpus tokens lo..hi, true states
    ``y[t]``, decoded ``yh[t - shift]``; returns their number."""
    n = 0
    for t in range(lo, hi):
        a = y[t]
        b = yh[t - shift]
        if a != b:
            for p in range(indptr[t], indptr[t + 1]):
                c = indices[p] * K
                cols[n] = c + a
                vals[n] = data[p]
                cols[n + 1] = c + b
                vals[n + 1] = -data[p]
                n += 2
        if t > lo:
            pa = y[t - 1]
            pb = yh[t - 1 - shift]
            if a != b or pa != pb:
                cols[n] = base + pa * K + a
                vals[n] = 1.0
                cols[n + 1] = base + pb * K + b
                vals[n + 1] = -1.0
                n += 2
    if hi > lo:
        if y[lo] != yh[lo - shift]:
            cols[n] = base + K * K + y[lo]
            vals[n] = 1.0
            cols[n + 1] = base + K * K + yh[lo - shift]
            vals[n + 1] = -1.0
            n += 2
        if y[hi - 1] != yh[hi - 1 - shift]:
            cols[n] = base + K * K + K + y[hi - 1]
            vals[n] = 1.0
            cols[n + 1] = base + K * K + K + yh[hi - 1 - shift]
            vals[n + 1] = -1.0
            n += 2
    return n


@numba.njit(cache=True, nogil=True)
def _stable_order(keys, n, order, tmp):
    """``order[:n]`` := the stable ascending order of ``keys[:n]``, as
    ``np.argsort(keys[:n], kind="mergesort")``: insertion sort of runs of 16, then
    bottom-up merges through ``tmp`` (a few lines of compiled code, where numba's
    generic argsort costs more than a second to compile)."""
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for q in range(lo, hi):
            v = q
            kv = keys[q]
            p = q
            while p > lo and keys[order[p - 1]] > kv:
                order[p] = order[p - 1]
                p -= 1
            order[p] = v
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j = lo, mid
            for o in range(lo, hi):
                if j >= hi or (i < mid and keys[order[i]] <= keys[order[j]]):
                    tmp[o] = order[i]
                    i += 1
                else:
                    tmp[o] = order[j]
                    j += 1
        for q in range(n):
            order[q] = tmp[q]
        width *= 2


@numba.njit(cache=True, nogil=True)
def chain_oracle(indptr, indices, data, offsets, idx, y, W, trans, start, end, w,
                 augment, normalize):
    """Loss-augmented (Hamming) Viterbi oracle of the sentences ``idx``.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the corpus's token rows (all sentences).
    offsets : int64 array, sentence s owns token rows ``offsets[s]:offsets[s + 1]``.
    idx : int64 array of the sentences to decode.
    y : int64 array of the true states of every corpus token.
    W : (d, K) emission weights; trans (K, K), start (K,), end (K,) the others.
    w : the whole weight vector (for the margins).
    augment : bool
        Add the Hamming loss to the unaries (False: plain prediction).
    normalize : bool
        Hamming loss divided by the sentence length.

    Returns
    -------
    yh : int64 array, the decoded states of the chunk's tokens, sentence after
        sentence; loss, margin : float arrays (one per sentence);
    ptr, col, val : CSR arrays of the δΦ rows (sorted unique columns, no zeros).
    """
    K = W.shape[1]
    base = W.shape[0] * K
    m = idx.shape[0]
    max_len = 1
    n_tok = 0
    for k in range(m):
        T = offsets[idx[k] + 1] - offsets[idx[k]]
        n_tok += T
        if T > max_len:
            max_len = T
    unary = np.empty((max_len, K))
    alpha = np.empty((max_len, K))
    back = np.empty((max_len, K), dtype=np.int64)
    row_max = row_maxima(trans)
    yh = np.empty(n_tok, dtype=np.int64)       # chunk tokens
    first = np.zeros(m, dtype=np.int64)       # where sentence k starts in yh
    loss = np.zeros(m)
    margin = np.zeros(m)
    bound = np.zeros(m, dtype=np.int64)
    # int64 variables, not the literal 0: a literal argument compiles the callees
    # (_forward, _best_path) once more for that constant
    zero = np.int64(0)
    pos = np.int64(0)
    # pass 1: decode, count each row's entries (before merging duplicates)
    for k in range(m):
        lo = offsets[idx[k]]
        hi = offsets[idx[k] + 1]
        T = hi - lo
        first[k] = pos
        if T == 0:
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
        _forward(unary, zero, T, trans, start, alpha, back, row_max)
        _best_path(alpha, back, T, end, yh, pos)
        wrong = 0
        cnt = 0
        for t in range(T):
            if yh[pos + t] != y[lo + t]:
                wrong += 1
                cnt += 2 * (indptr[lo + t + 1] - indptr[lo + t]) + 4
        loss[k] = wrong / T if normalize else float(wrong)
        bound[k] = cnt + 4
        pos += T
    # pass 2: the rows of δΦ, columns sorted and merged
    ptr = np.zeros(m + 1, dtype=np.int64)
    total = 0
    for k in range(m):
        total += bound[k]
    col = np.empty(total, dtype=np.int64)
    val = np.empty(total)
    longest = 1
    for k in range(m):
        if bound[k] > longest:
            longest = bound[k]
    tc = np.empty(longest, dtype=np.int64)
    tv = np.empty(longest)
    order = np.empty(longest, dtype=np.int64)
    tmp = np.empty(longest, dtype=np.int64)
    nnz = 0
    for k in range(m):
        lo = offsets[idx[k]]
        hi = offsets[idx[k] + 1]
        n = 0
        if loss[k] > 0.0:
            n = _entries(indptr, indices, data, y, yh, lo, hi, lo - first[k], K, base,
                         tc, tv)
        if n > 0:
            _stable_order(tc, n, order, tmp)
            last = -1
            acc = 0.0
            for q in range(n):
                c = tc[order[q]]
                if c != last:
                    if last >= 0 and acc != 0.0:
                        col[nnz] = last
                        val[nnz] = acc
                        nnz += 1
                    last = c
                    acc = 0.0
                acc += tv[order[q]]
            if last >= 0 and acc != 0.0:
                col[nnz] = last
                val[nnz] = acc
                nnz += 1
        mg = 0.0
        for q in range(ptr[k], nnz):
            mg += val[q] * w[col[q]]
        margin[k] = mg
        ptr[k + 1] = nnz
    return yh, loss, margin, ptr, col[:nnz].copy(), val[:nnz].copy()
