"""Compiled loops of the partitioned learner's bookkeeping (no validation here): in
rounds, the columns a block's steps changed, its update from its vector u, and the
driver's updates applied to a block's w and u; in memory, the count of examples the
workers decoded. Plain-Python references are in ``tests/test_partitioned_cd.py``.
Not on a default fit's path: numba compiles them on first use (and keeps them in
its cache)."""
import numba

from ._atomic_jit import atomic_add


@numba.njit(cache=True, nogil=True)
def count_decoded(counter, k):
    """Add ``k`` to ``counter[0]`` (shared by the workers) atomically; returns the
    count with it."""
    return atomic_add(counter, 0, float(k)) + float(k)


@numba.njit(cache=True, nogil=True)
def block_update(u, w, omega, sigma, cols, idx, val):
    """Δw_k = (u − w) / ω on the columns ``cols`` where u ≠ w, written to ``idx`` and
    ``val`` (each at least as long as ``cols``), ω the column's ``omega`` or, when
    ``omega`` is empty, ``sigma``; returns ``(m, Σ val², Σ ω val², Σ w val)`` with m
    the number written."""
    m = 0
    sq = wsq = wdot = 0.0
    weighted = omega.shape[0] > 0
    for k in range(cols.shape[0]):
        c = cols[k]
        d = u[c] - w[c]
        if d != 0.0:
            om = omega[c] if weighted else sigma
            v = d / om
            idx[m] = c
            val[m] = v
            m += 1
            sq += v * v
            wsq += om * v * v
            wdot += w[c] * v
    return m, sq, wsq, wdot


@numba.njit(cache=True, nogil=True)
def apply_updates(w, u, idx, val, touched):
    """w[idx[j]] += val[j] in order (the driver's order: the same sums, to the bit);
    then u = w on ``touched`` and on ``idx`` (u's own changes of the last round and
    everyone's). ``u`` may be ``w`` itself (the driver's copy has no u)."""
    for j in range(idx.shape[0]):
        w[idx[j]] += val[j]
    for j in range(touched.shape[0]):
        u[touched[j]] = w[touched[j]]
    for j in range(idx.shape[0]):
        u[idx[j]] = w[idx[j]]


@numba.njit(cache=True, nogil=True)
def distinct_columns(p_ind, p_start, p_len, rows, mark, out):
    """The distinct columns of the pool rows ``rows``, written to ``out`` in the order
    first met; returns how many. ``mark`` (one byte per column) must be all zero, and
    is again on return; ``out`` holds at least the rows' entries."""
    m = 0
    for k in range(rows.shape[0]):
        r = rows[k]
        for j in range(p_start[r], p_start[r] + p_len[r]):
            c = p_ind[j]
            if mark[c] == 0:
                mark[c] = 1
                out[m] = c
                m += 1
    for q in range(m):
        mark[out[q]] = 0
    return m
