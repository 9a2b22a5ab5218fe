"""dual_cd's pool: the sparse rows ψ_i(y) of every cached output, stored end to end,
and their compaction (see :mod:`._dual_cd_jit` for the layout)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._compiled import loops


__all__ = ["RowPool"]


class RowPool:
    """Sparse rows stored end to end (sorted unique columns per row).

    Parameters
    ----------
    n_features : int
        Width of the rows.
    wait : callable, optional
        Called with a loop before each call of it: the learner passes
        ``structsvm._compiled.warmup.wait`` (the compile helper of its fit).
    """

    def __init__(self, n_features, wait=None):
        self.width = n_features
        self.wait = wait
        self.idx_dtype = np.int32 if n_features < 2**31 - 1 else np.int64
        self.ind = np.zeros(1024, dtype=self.idx_dtype)
        self.dat = np.zeros(1024)
        self.start = np.zeros(256, dtype=np.int64)
        self.len = np.zeros(256, dtype=np.int64)
        self.used = 0
        self.nrows = 0

    def append(self, M):
        """Append the rows of CSR ``M``; returns their row ids."""
        M.sum_duplicates()
        nnz, m = M.nnz, M.shape[0]
        if self.used + nnz > self.ind.size:
            cap = max(2 * self.ind.size, self.used + nnz)
            self.ind = _grow(self.ind, cap)
            self.dat = _grow(self.dat, cap)
        if self.nrows + m > self.start.size:
            cap = max(2 * self.start.size, self.nrows + m)
            self.start = _grow(self.start, cap)
            self.len = _grow(self.len, cap)
        self.ind[self.used:self.used + nnz] = M.indices
        self.dat[self.used:self.used + nnz] = M.data
        self.start[self.nrows:self.nrows + m] = self.used + M.indptr[:-1]
        self.len[self.nrows:self.nrows + m] = np.diff(M.indptr)
        self.used += nnz
        ids = np.arange(self.nrows, self.nrows + m, dtype=np.int64)
        self.nrows += m
        return ids

    def rows(self, ids, coefs):
        """CSR whose row m is Σ_j coefs[m, j] · (pool row ids[m, j])."""
        ids = np.asarray(ids, dtype=np.int64)
        rid, c = ids.ravel(), np.asarray(coefs, dtype=float).ravel()
        lens = self.len[rid]
        offs = np.cumsum(lens) - lens
        pos = np.repeat(self.start[rid] - offs, lens) + np.arange(int(lens.sum()))
        owner = np.repeat(np.repeat(np.arange(ids.shape[0]), ids.shape[1]), lens)
        M = sp.csr_matrix((self.dat[pos] * np.repeat(c, lens), (owner, self.ind[pos])),
                          shape=(ids.shape[0], self.width))
        M.sum_duplicates()
        M.eliminate_zeros()
        return M

    def columns(self, ids, mark=None):
        """The distinct columns of the pool rows ``ids`` (in the order first met).

        ``mark``: a zeroed array of one byte per column to work in (kept zero), so
        that the cost follows the rows' entries, not the number of columns."""
        jit = loops("structsvm.learners._partitioned_jit")

        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty(int(self.len[ids].sum()), dtype=np.int64)
        if mark is None:
            mark = np.zeros(self.width, dtype=np.uint8)
        if self.wait is not None:
            self.wait(jit.distinct_columns)
        m = jit.distinct_columns(self.ind, self.start, self.len, ids, mark, out)
        return out[:m]

    def compact(self, slot):
        """Rewrite the pool with the rows ``slot`` uses only (renumbering ``slot`` in
        place), when it holds more than twice their entries plus ``_COMPACT_SLACK``."""
        jit = loops("structsvm.learners._dual_cd_jit")

        live = slot[slot >= 0]
        nnz = int(self.len[live].sum())
        if self.used <= 2 * nnz + _COMPACT_SLACK:
            return
        # room for as much again: the next appends do not copy the pool to grow it
        ind = np.empty(max(2 * nnz, 1024), dtype=self.idx_dtype)
        dat = np.empty(max(2 * nnz, 1024))
        start = np.empty(max(2 * live.size, 256), dtype=np.int64)
        ln = np.empty_like(start)
        if self.wait is not None:
            self.wait(jit.compact_pool)
        self.used, self.nrows = jit.compact_pool(self.ind, self.dat, self.start, self.len,
                                                 slot, ind, dat, start, ln)
        self.ind, self.dat, self.start, self.len = ind, dat, start, ln


#: the pool is rewritten with only its live rows when it holds more than twice their
#: entries plus this many (dead rows: outputs dropped from or merged in the caches)
_COMPACT_SLACK = 100_000


def _grow(a, cap):
    """``a`` in an array of ``cap`` entries (those past ``a.size`` unset: the pool
    reads only what it has written)."""
    out = np.empty(cap, dtype=a.dtype)
    out[:a.size] = a
    return out
