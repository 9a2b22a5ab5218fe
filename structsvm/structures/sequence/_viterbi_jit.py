"""Compiled loops of first-order chain decoding, with plain numpy references.

Private module: no validation here (the public wrapper in
:mod:`structsvm.structures.sequence.viterbi` checks shapes, dtypes and finiteness). Every
loop has a reference implementation in numpy/Python that the tests compare it
against.

A batch of sentences is stored as one ``(n_tokens, n_states)`` array of unary scores
plus ``offsets`` (sentence i owns rows ``offsets[i]:offsets[i + 1]``), so one loop
call decodes a whole batch.

Scores (sentence of T tokens, states y_0 .. y_{T-1})::

    s(y) = start[y_0] + Σ_t unary[t, y_t] + Σ_{t≥1} trans[y_{t-1}, y_t] + end[y_{T-1}]
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["viterbi_batch", "viterbi_reference", "second_best_reference"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "viterbi_batch": ("f8:2 i8:1 f8:2 f8:1 f8:1 i8:1 b1 i8:1", "i1:1"),
}


@numba.njit(cache=True, nogil=True)
def row_maxima(trans):
    """max_k trans[j, k] for every j (the bound :func:`_forward` prunes with)."""
    out = np.empty(trans.shape[0])
    for j in range(trans.shape[0]):
        out[j] = trans[j, 0]
        for k in range(1, trans.shape[1]):
            if trans[j, k] > out[j]:
                out[j] = trans[j, k]
    return out


@numba.njit(cache=True, nogil=True)
def _forward(unary, lo, hi, trans, start, alpha, back, row_max):
    """α and back-pointers of rows lo:hi (``row_max[j] = max_k trans[j, k]``).

    Previous state j outer, current state k inner: the inner loop runs over
    contiguous rows of trans. A previous state j is skipped when even its best
    transition falls below every state's score through the best previous state j*,
    α(j) + row_max[j] < min_k (α(j*) + trans[j*, k]): rounding is monotone, so its
    candidates are then strictly below each state's maximum, and neither the maxima
    nor the back-pointers (the lowest j of equal scores) change.
    """
    n_states = unary.shape[1]
    for k in range(n_states):
        alpha[0, k] = start[k] + unary[lo, k]
        back[0, k] = -1
    for t in range(1, hi - lo):
        jb = 0
        amax = alpha[t - 1, 0]
        for j in range(1, n_states):
            if alpha[t - 1, j] > amax:
                amax = alpha[t - 1, j]
                jb = j
        bound = amax + trans[jb, 0]
        for k in range(1, n_states):
            v = amax + trans[jb, k]
            if v < bound:
                bound = v
        first = True
        for j in range(n_states):
            a = alpha[t - 1, j]
            if a + row_max[j] < bound:
                continue
            if first:
                for k in range(n_states):
                    alpha[t, k] = a + trans[j, k]
                    back[t, k] = j
                first = False
                continue
            for k in range(n_states):
                v = a + trans[j, k]
                if v > alpha[t, k]:
                    alpha[t, k] = v
                    back[t, k] = j
        for k in range(n_states):
            alpha[t, k] += unary[lo + t, k]


@numba.njit(cache=True, nogil=True)
def _best_path(alpha, back, T, end, path, lo):
    """path[lo:lo + T] := the best path after :func:`_forward` (ties: lowest state)."""
    best = alpha[T - 1, 0] + end[0]
    arg = 0
    for k in range(1, alpha.shape[1]):
        v = alpha[T - 1, k] + end[k]
        if v > best:
            best = v
            arg = k
    path[lo + T - 1] = arg
    for t in range(T - 1, 0, -1):
        path[lo + t - 1] = back[t, path[lo + t]]


@numba.njit(cache=True, nogil=True)
def _backward(unary, lo, hi, trans, end, beta, fwd):
    n_states = unary.shape[1]
    T = hi - lo
    for k in range(n_states):
        beta[T - 1, k] = end[k]
        fwd[T - 1, k] = -1
    for t in range(T - 2, -1, -1):
        for j in range(n_states):
            best = trans[j, 0] + unary[lo + t + 1, 0] + beta[t + 1, 0]
            arg = 0
            for k in range(1, n_states):
                v = trans[j, k] + unary[lo + t + 1, k] + beta[t + 1, k]
                if v > best:
                    best = v
                    arg = k
            beta[t, j] = best
            fwd[t, j] = arg


@numba.njit(cache=True, nogil=True)
def viterbi_batch(unary, offsets, trans, start, end, exclude, use_exclude, path):
    """Decode every sentence of a batch into ``path`` (n_tokens,).

    With ``use_exclude``, a sentence whose best path equals ``exclude[lo:hi]`` gets
    the best path different from it instead (through max-marginals: the best
    path y ≠ y* scores max over (t, k ≠ y*_t) of α_t(k) + β_t(k)). Returns an array
    of flags, 1 where no other path exists (one state only).
    """
    n_states = unary.shape[1]
    n_seq = offsets.shape[0] - 1
    max_len = 0
    for i in range(n_seq):
        if offsets[i + 1] - offsets[i] > max_len:
            max_len = offsets[i + 1] - offsets[i]
    alpha = np.empty((max(max_len, 1), n_states))
    back = np.empty((max(max_len, 1), n_states), dtype=np.int64)
    beta = np.empty((max(max_len, 1), n_states))
    fwd = np.empty((max(max_len, 1), n_states), dtype=np.int64)
    stuck = np.zeros(n_seq, dtype=np.int8)
    row_max = row_maxima(trans)
    for i in range(n_seq):
        lo = offsets[i]
        hi = offsets[i + 1]
        T = hi - lo
        if T == 0:
            continue
        _forward(unary, lo, hi, trans, start, alpha, back, row_max)
        _best_path(alpha, back, T, end, path, lo)
        if not use_exclude:
            continue
        same = True
        for t in range(T):
            if path[lo + t] != exclude[lo + t]:
                same = False
                break
        if not same:
            continue
        if n_states == 1:
            stuck[i] = 1
            continue
        _backward(unary, lo, hi, trans, end, beta, fwd)
        best = -np.inf
        bt = -1
        bk = -1
        for t in range(T):
            for k in range(n_states):
                if k == exclude[lo + t]:
                    continue
                v = alpha[t, k] + beta[t, k]
                if v > best:
                    best = v
                    bt = t
                    bk = k
        path[lo + bt] = bk
        for t in range(bt, 0, -1):
            path[lo + t - 1] = back[t, path[lo + t]]
        for t in range(bt, T - 1):
            path[lo + t + 1] = fwd[t, path[lo + t]]
    return stuck


# ----------------------------------------------------------------------- references
def viterbi_reference(unary, trans, start, end):
    """Best path of ONE sentence, vectorised numpy (ties: lowest state index)."""
    T, K = unary.shape
    alpha = start + unary[0]
    back = np.zeros((T, K), dtype=np.intp)
    for t in range(1, T):
        cand = alpha[:, None] + trans          # (previous, current)
        back[t] = np.argmax(cand, axis=0)
        alpha = cand[back[t], np.arange(K)] + unary[t]
    path = np.empty(T, dtype=np.intp)
    path[-1] = int(np.argmax(alpha + end))
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def _max_marginals_reference(unary, trans, start, end):
    T, K = unary.shape
    alpha = np.empty((T, K))
    beta = np.empty((T, K))
    alpha[0] = start + unary[0]
    for t in range(1, T):
        alpha[t] = np.max(alpha[t - 1][:, None] + trans, axis=0) + unary[t]
    beta[-1] = end
    for t in range(T - 2, -1, -1):
        beta[t] = np.max(trans + (unary[t + 1] + beta[t + 1])[None, :], axis=1)
    return alpha, beta


def second_best_reference(unary, trans, start, end, exclude):
    """Best path of ONE sentence different from ``exclude`` (numpy reference).

    The best path through state k at position t is found by fixing y_t = k and
    decoding the two halves on either side separately (one Viterbi per (t, k), the
    slow but obviously-correct construction).
    """
    T, K = unary.shape
    exclude = np.asarray(exclude, dtype=np.intp)
    best_path = viterbi_reference(unary, trans, start, end)
    if not np.array_equal(best_path, exclude):
        return best_path
    alpha, beta = _max_marginals_reference(unary, trans, start, end)
    mm = alpha + beta
    mm[np.arange(T), exclude] = -np.inf
    t, k = np.unravel_index(int(np.argmax(mm)), mm.shape)
    # clamp y_t = k by giving every other state at t a score of -inf
    clamped = unary.copy()
    keep = clamped[t, k]
    clamped[t] = -np.inf
    clamped[t, k] = keep
    return viterbi_reference(clamped, trans, start, end)
