"""Compiled helpers of the grammar map: summed weight rows, scattered differences."""
from __future__ import annotations

from numba import njit

__all__ = ["scatter_nodes"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "_gather_sum": ("i4:2 f8:2 f8:2", "void"),
}


@njit(cache=True, nogil=True)
def _gather_sum(cols, W, out):
    n, T = cols.shape
    K = W.shape[1]
    for r in range(n):
        for t in range(T):
            c = cols[r, t]
            for a in range(K):
                out[r, a] += W[c, a]


@njit(cache=True, nogil=True)
def scatter_nodes(out, nodes, sign, word_base, span_base, leaf_cols, span_cols, leaf_col,
                  phrase_col, n_leaf, n_phrase, leaf_off, span_off_base, rule_off,
                  root_off):
    """Add ``sign`` × Φ of one encoded tree into the dense vector ``out``.

    ``word_base``/``span_base``: the sentence's first row in ``leaf_cols`` /
    ``span_cols``; ``leaf_off``/``span_off_base``/``rule_off``/``root_off``: where
    the leaf, span, rule and root blocks start in ``out``.
    """
    m = nodes.shape[0]
    n = (m + 1) // 2
    for q in range(m):
        i, j, k, A, r = nodes[q, 0], nodes[q, 1], nodes[q, 2], nodes[q, 3], nodes[q, 4]
        if k < 0:
            c = leaf_col[A]
            if c >= 0:
                for t in range(leaf_cols.shape[1]):
                    out[leaf_off + leaf_cols[word_base + i, t] * n_leaf + c] += sign
        else:
            c = phrase_col[A]
            if c >= 0:
                row = span_base + i * (2 * n - 1 - i) // 2 + j - i - 2
                for t in range(span_cols.shape[1]):
                    out[span_off_base + span_cols[row, t] * n_phrase + c] += sign
            if r >= 0:
                out[rule_off + r] += sign
    out[root_off + nodes[0, 3]] += sign
