"""Compiled loop of the binary losses: the best labelling with fewer than k
positives for precision and recall at k, with a numpy reference.

For tp = a and fp = b with m = a + b < k, a labelling read as a ranking fills the
k − m places below its positives at random from the n − m others, so its expected
hits at k are a + (k − m)(P − a)/(n − m); the loss is 1 − hits / den (den = k for
precision, P for recall) and the labelling's score the prefix sums SP[a] + SN[b] of
the sorted gains. That loss is convex in b, so every (a, b) is tried: O(P k).

Private module: no validation (:mod:`structsvm.structures.binary.losses` checks
its inputs).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["below_k_search", "below_k_reference"]

#: the loops compiled at installation, with their argument and result types
SIGNATURES = {
    "below_k_search": ("f8:1 f8:1 i8 i8 f8", "(i8 i8 f8)"),
}


@numba.njit(cache=True, nogil=True)
def below_k_search(SP, SN, n, k, den):
    """(a, b, value) maximising 1 − hits(a, b)/den + SP[a] + SN[b] over a + b < k
    (value −inf when k = 0)."""
    P = SP.shape[0] - 1
    N = SN.shape[0] - 1
    best_a, best_b, best = 0, 0, -np.inf
    for a in range(min(P, k - 1) + 1):
        top = min(N, k - 1 - a)
        for b in range(top + 1):
            m = a + b
            hits = a + (k - m) * (P - a) / (n - m)
            value = 1.0 - hits / den + SP[a] + SN[b]
            if value > best:
                best_a, best_b, best = a, b, value
    return best_a, best_b, best


def below_k_reference(SP, SN, n, k, den):
    """The same in numpy (a grid over a and b)."""
    P, N = SP.size - 1, SN.size - 1
    a = np.arange(P + 1)[:, None]
    b = np.arange(N + 1)[None, :]
    m = a + b
    ok = m < k
    hits = a + (k - m) * (P - a) / np.where(ok, n - m, 1)
    value = np.where(ok, 1.0 - hits / den + SP[:, None] + SN[None, :], -np.inf)
    i = int(np.argmax(value))
    return i // (N + 1), i % (N + 1), float(value.flat[i])
