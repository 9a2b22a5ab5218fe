"""The cutting-plane learners' working set: constraints ψ_c, their losses and slack
groups, the Gram matrix grown in place, the dual QP over them and the pruning of
constraints that stayed inactive (Joachims, Finley & Yu 2009)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._qp import solve_dual_qp
from ._sparse import gather_dots, scatter_rows

__all__ = ["WorkingSet"]


class _Row(NamedTuple):
    """One constraint's ψ_c as its nonzero columns (sorted, unique) and values."""

    indices: np.ndarray
    data: np.ndarray

    @property
    def nnz(self):
        return self.data.shape[0]


class WorkingSet:
    """Constraints (ψ_c sparse rows, Δ_c, group) with their Gram matrix grown in place.

    Rows are kept as separate sparse vectors (never re-stacked); products with dense
    vectors cost O(nnz), which keeps a round cheap when ψ has millions of columns, and
    a round builds no scipy matrix (their constructors' checks would cost more than
    the round's arithmetic on small problems).
    """

    def __init__(self, n_features):
        self.compiled = True  # the loops, or numpy (the learner decides: ._sparse)
        self.rows = []          # list of _Row
        self.loss = np.zeros(0)
        self.group = np.zeros(0, dtype=np.intp)
        self.G = np.zeros((0, 0))
        self.idle = np.zeros(0, dtype=int)  # rounds since α_c was last > 0
        self.alpha = np.zeros(0)
        self.n_features = n_features
        # column indices as scipy would store them (one type for the loops)
        self._index_dtype = np.int32 if n_features <= np.iinfo(np.int32).max else np.int64

    def __len__(self):
        return len(self.rows)

    def matrix(self):
        """The constraints' ψ_c as the rows of one CSR matrix."""
        if not self.rows:
            return sp.csr_matrix((0, self.n_features))
        indptr = np.concatenate([[0], np.cumsum([r.nnz for r in self.rows])])
        return sp.csr_matrix((np.concatenate([r.data for r in self.rows]),
                              np.concatenate([r.indices for r in self.rows]), indptr),
                             shape=(len(self.rows), self.n_features))

    def _dots(self, dense):
        """ψ_c · v for every constraint c (v dense)."""
        return gather_dots(self.rows, dense, self.compiled)

    def _as_rows(self, psi_rows):
        """``psi_rows`` (a dense vector: one row; or a sparse matrix) as a list of
        _Row, its dense form (one dense row) and its CSR form (sparse rows)."""
        if isinstance(psi_rows, np.ndarray) and psi_rows.ndim == 1:
            dense = np.asarray(psi_rows, dtype=float)
            nz = np.flatnonzero(dense)
            return [_Row(nz.astype(self._index_dtype), dense[nz])], dense, None
        M = sp.csr_matrix(psi_rows, dtype=float)
        M.sum_duplicates()
        rows = [_Row(M.indices[a:b].astype(self._index_dtype, copy=False), M.data[a:b])
                for a, b in zip(M.indptr[:-1], M.indptr[1:])]
        return rows, None, M

    def add(self, psi_rows, losses, groups):
        """Append constraints; each new Gram column from O(nnz) sparse-dense products.

        ``psi_rows``: a sparse matrix of rows ψ_c, or one dense ψ (1-D array)."""
        new, dense, M = self._as_rows(psi_rows)
        if len(new) > 1:  # many rows at once (n-slack): two sparse products
            m, k = len(self.rows), len(new)
            cross = (self.matrix() @ M.T).toarray() if m else np.zeros((0, k))
            G = np.empty((m + k, m + k))
            G[:m, :m], G[:m, m:], G[m:, :m] = self.G, cross, cross.T
            G[m:, m:] = (M @ M.T).toarray()
            self.G = G
            self.rows.extend(new)
        elif new:  # one row (1-slack)
            row = new[0]
            if dense is None:
                dense = np.zeros(self.n_features)
                dense[row.indices] = row.data
            col = self._dots(dense) if self.rows else np.zeros(0)
            m = len(self.rows)
            G = np.empty((m + 1, m + 1))
            G[:m, :m], G[:m, m], G[m, :m] = self.G, col, col
            G[m, m] = float(row.data @ row.data)
            self.G = G
            self.rows.append(row)
        k = len(losses)
        self.loss = np.concatenate([self.loss, losses])
        self.group = np.concatenate([self.group, np.asarray(groups, dtype=np.intp)])
        self.idle = np.concatenate([self.idle, np.zeros(k, dtype=int)])
        self.alpha = np.concatenate([self.alpha, np.zeros(k)])

    def prune(self, window):
        """Drop constraints whose α has been 0 for ``window`` rounds (Joachims et al.)."""
        keep = self.idle < window
        if keep.all():
            return
        ids = np.flatnonzero(keep)
        self.rows = [self.rows[j] for j in ids]
        self.loss, self.group = self.loss[ids], self.group[ids]
        self.G = self.G[np.ix_(ids, ids)]
        self.idle, self.alpha = self.idle[ids], self.alpha[ids]

    def slacks(self, w, n_groups):
        """ξ_g of the working set: max(0, max_{c∈g} Δ_c − w·ψ_c) per group."""
        xi = np.zeros(n_groups)
        if len(self):
            np.maximum.at(xi, self.group, self.loss - self._dots(w))
        return xi

    def weights(self, alpha):
        """w = Σ_c α_c ψ_c."""
        return scatter_rows(np.zeros(self.n_features), self.rows, alpha, self.compiled)

    def dual_value(self):
        """Δᵀα − ½ αᵀGα at the stored α (a lower bound when α is feasible)."""
        return float(self.loss @ self.alpha - 0.5 * self.alpha @ self.G @ self.alpha)

    def solve(self, C, solver, round_):
        # when the constraints have fewer columns than rows, they factor G themselves
        factor = self.matrix if self.n_features <= len(self) else None
        alpha, dual = solve_dual_qp(self.G, self.loss, self.group, C, solver=solver,
                                    round_=round_, alpha0=self.alpha, factor=factor,
                                    compiled=self.compiled)
        self.alpha = alpha
        active = alpha > 1e-9 * max(C, 1e-300)
        self.idle = np.where(active, 0, self.idle + 1)
        return self.weights(alpha), dual
