"""The 1-slack constraint cache and the fingerprint that guards warm-started working sets.

Reference: T. Joachims, T. Finley, C.-N. J. Yu. Cutting-plane training of structural
SVMs. Machine Learning 77(1), 2009, Sec. 4.2 (the constraint cache).
"""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

from ._sparse_jit import aggregate_rows

__all__ = ["OutputCache", "problem_fingerprint"]

_MAX_NNZ = 20_000_000  # stored δΦ entries (12 bytes each): at most ~240 MB of cache


class OutputCache:
    """The most violated outputs of the last ``size`` oracle calls, for every example.

    Each oracle call stores its n×D matrix of δΦ rows and its n losses, so an
    example's cache holds its ``size`` most recent answers at O(nnz) cost; the oldest
    answers also go when the cache holds more than ``max_nnz`` entries (early answers
    at w ≈ 0 differ from the truth everywhere and are the largest).
    """

    def __init__(self, size, max_nnz=_MAX_NNZ):
        self.size = int(size)
        self.max_nnz = int(max_nnz)
        self.psi, self.loss = [], []

    def push(self, psi, loss):
        """Store an oracle answer; drop the oldest beyond ``size`` answers or beyond
        ``max_nnz`` stored entries (the newest is always kept)."""
        self.psi.append(sp.csr_matrix(psi))
        self.loss.append(np.asarray(loss, dtype=float))
        del self.psi[:-self.size], self.loss[:-self.size]
        while len(self.psi) > 1 and sum(P.nnz for P in self.psi) > self.max_nnz:
            del self.psi[0], self.loss[0]

    def constraint(self, w, rescaling):
        """The 1-slack constraint from cached outputs: (Σ Δ, Σ ω δΦ row, Σ_i ξ̃_i).

        ξ̃_i = max(0, max over the cache of the example's violation at w), a lower
        bound on ξ_i(w); the row sums the maximising cached output of every example
        with ξ̃_i > 0 (ω = 1 for margin, Δ for slack rescaling).
        """
        if not self.psi:
            return None
        margins = [np.asarray(P @ w).ravel() for P in self.psi]
        if rescaling == "slack":
            vals = np.array([lo * (1.0 - m) for lo, m in zip(self.loss, margins)])
        else:
            vals = np.array([lo - m for lo, m in zip(self.loss, margins)])
        best = np.argmax(vals, axis=0)
        top = vals[best, np.arange(vals.shape[1])]
        take = top > 0.0
        if not take.any():
            return None
        loss_sum, parts, weights = 0.0, [], []
        for k, (P, lo) in enumerate(zip(self.psi, self.loss)):
            sel = np.flatnonzero(take & (best == k))
            if sel.size:
                parts.append(P[sel])
                weights.append(lo[sel] if rescaling == "slack" else np.ones(sel.size))
                loss_sum += float(lo[sel].sum())
        # Σ ω δΦ over the selected rows in O(nnz log nnz): no vector of the full width
        cols, vals = aggregate_rows(sp.vstack(parts, format="csr"), np.concatenate(weights))
        row = sp.csr_matrix((vals, cols, [0, cols.size]), shape=(1, self.psi[0].shape[1]))
        return loss_sum, row, float(top[take].sum())


def problem_fingerprint(problem):
    """A hash of the examples (their true joint features), the loss and the rescaling:
    a saved working set is reused only on the same training problem."""
    phi = problem.truth_features()
    h = hashlib.sha1()
    for arr in (phi.indptr, phi.indices, phi.data, problem.max_losses()):
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(f"{problem.n_features}|{problem.rescaling}|{type(problem.loss).__name__}"
             .encode())
    return h.hexdigest()
