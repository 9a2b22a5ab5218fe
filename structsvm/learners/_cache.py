"""The 1-slack constraint cache and the fingerprint that guards warm-started working sets.

Reference: T. Joachims, T. Finley, C.-N. J. Yu. Cutting-plane training of structural
SVMs. Machine Learning 77(1), 2009, Sec. 4.2 (the constraint cache).
"""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp


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
        self.compiled = True  # the loops, or numpy (the learner decides: ._sparse)
        self.size = int(size)
        self.max_nnz = int(max_nnz)
        self.psi, self.loss = [], []
        self._key, self._arrays = (), None

    def push(self, psi, loss):
        """Store an oracle answer; drop the oldest beyond ``size`` answers or beyond
        ``max_nnz`` stored entries (the newest is always kept)."""
        self.psi.append(sp.csr_matrix(psi))
        self.loss.append(np.asarray(loss, dtype=float))
        del self.psi[:-self.size], self.loss[:-self.size]
        while len(self.psi) > 1 and sum(P.nnz for P in self.psi) > self.max_nnz:
            del self.psi[0], self.loss[0]

    def _stacked(self):
        """The stored answers stacked oldest first as raw CSR arrays and losses,
        rebuilt only when the stored answers changed; the stored matrices then become
        views of the stacked arrays, so the entries are held once."""
        key = (*self.psi, *self.loss)
        if len(self._key) != len(key) or any(a is not b for a, b in zip(self._key, key)):
            starts = np.cumsum([0] + [int(P.indptr[-1]) for P in self.psi])
            indptr = np.concatenate([P.indptr[:-1].astype(np.int64) + s0
                                     for P, s0 in zip(self.psi, starts)] + [starts[-1:]])
            indices = np.concatenate([P.indices[:P.indptr[-1]] for P in self.psi])
            data = np.concatenate([P.data[:P.indptr[-1]] for P in self.psi]).astype(float)
            self.psi = [sp.csr_matrix((data[a:b], indices[a:b], P.indptr), shape=P.shape,
                                      copy=False)
                        for P, a, b in zip(self.psi, starts[:-1], starts[1:])]
            self._arrays = (indptr, indices, data, np.concatenate(self.loss))
            self._key = (*self.psi, *self.loss)
        return self._arrays

    def constraint(self, w, rescaling):
        """The 1-slack constraint from cached outputs: (Σ Δ, Σ ω δΦ row, Σ_i ξ̃_i).

        ξ̃_i = max(0, max over the cache of the example's violation at w), a lower
        bound on ξ_i(w); the row sums the maximising cached output of every example
        with ξ̃_i > 0 (ω = 1 for margin, Δ for slack rescaling). The oldest of equal
        violations is taken.
        """
        if not self.psi:
            return None
        indptr, indices, data, loss = self._stacked()
        n, D = self.psi[0].shape
        if not self.compiled:
            loops = (_best_cached_rows, _gather_rows)
        else:
            from ._cache_jit import best_cached_rows, gather_rows
            loops = (best_cached_rows, gather_rows)
        best, top = loops[0](indptr, indices, data, loss, n,
                               np.ascontiguousarray(w, dtype=float), rescaling == "slack")
        take = top > 0.0
        if not take.any():
            return None
        rows = np.sort(best[take])  # oldest answers first, then by example
        lo = loss[rows]
        bounds = np.searchsorted(rows, np.arange(1, len(self.psi)) * n)
        loss_sum = sum(float(part.sum()) for part in np.split(lo, bounds) if part.size)
        weights = lo if rescaling == "slack" else np.ones(rows.size)
        cols, vals = loops[1](indptr, indices, data, rows, weights)
        if D <= 4 * cols.size:  # a dense sum of the full width is cheaper than sorting
            agg = np.bincount(cols, weights=vals, minlength=D)
            cols = np.flatnonzero(agg)
            vals = agg[cols]
        else:  # Σ ω δΦ in O(nnz log nnz): no vector of the full width
            cols, inv = np.unique(cols, return_inverse=True)
            agg = np.bincount(inv.ravel(), weights=vals, minlength=cols.size)
            keep = agg != 0.0
            cols, vals = cols[keep], agg[keep]
        row = sp.csr_matrix((vals, cols.astype(np.int64), np.array([0, cols.size])),
                            shape=(1, D))
        return loss_sum, row, float(top[take].sum())


def _best_cached_rows(indptr, indices, data, loss, n, w, slack):
    """numpy form of :func:`._cache_jit.best_cached_rows` (the same sums in the same
    order): per example the stacked row of its most violated cached answer (the
    oldest of equal ones) and the violation there."""
    r = loss.shape[0]
    margins = np.bincount(np.repeat(np.arange(r), np.diff(indptr)),
                          weights=data * w[indices], minlength=r)
    v = (loss * (1.0 - margins) if slack else loss - margins).reshape(r // n, n)
    best = v.argmax(axis=0)
    return best * n + np.arange(n), v[best, np.arange(n)]


def _gather_rows(indptr, indices, data, rows, weights):
    """numpy form of :func:`._cache_jit.gather_rows`: the column indices and weighted
    values of the given rows, concatenated."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    before = np.cumsum(lengths) - lengths  # where each row starts in the output
    at = np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()))
    return indices[at].astype(np.int64), data[at] * np.repeat(weights, lengths)


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
