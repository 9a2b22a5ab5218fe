"""Compiled loops of the partitioned learner's bookkeeping (no validation here): a
block's update from its vector u, and the driver's updates applied to a block's w
and u. Plain-Python references are in ``tests/test_partitioned_cd.py``."""
import numba
import numpy as np

#: The loops compiled at installation (see :mod:`structsvm._compiled`).
SIGNATURES = {
    "block_update": ("f8:1 f8:1 f8:1 i8:1 i8:1 f8:1", "(i8 f8 f8 f8)"),
    "apply_updates": ("f8:1 f8:1 i8:1 f8:1 i8:1", "void"),
}


@numba.njit(cache=True, nogil=True)
def block_update(u, w, omega, cols, idx, val):
    """Δw_k = (u − w) / ω on the columns ``cols`` where u ≠ w, written to ``idx`` and
    ``val`` (each at least as long as ``cols``); returns ``(m, Σ val², Σ ω val²,
    Σ w val)`` with m the number written."""
    m = 0
    sq = wsq = wdot = 0.0
    for k in range(cols.shape[0]):
        c = cols[k]
        d = u[c] - w[c]
        if d != 0.0:
            v = d / omega[c]
            idx[m] = c
            val[m] = v
            m += 1
            sq += v * v
            wsq += omega[c] * v * v
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
