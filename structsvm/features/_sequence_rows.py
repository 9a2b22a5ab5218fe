"""The rows δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i) of chain batches, from the tokens where
the paths differ: their COO entries, and their sum over a chunk as one sparse row."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["difference_entries", "sparse_difference_sum"]


def difference_entries(Xs, offsets, y, yh, n_states, base):
    """COO (sentence, column, value) entries of the rows δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i).

    Only tokens where ŷ differs from y (and the transitions next to them) contribute;
    duplicates are summed by the caller's CSR construction. ``Xs`` holds the token
    rows, ``y``/``yh`` the concatenated paths, ``base`` = n_input_features · K.
    """
    n_seq, K = len(offsets) - 1, n_states
    seq = np.repeat(np.arange(n_seq), np.diff(offsets))
    diff = np.flatnonzero(y != yh)
    first = np.zeros(y.size, dtype=bool)
    first[offsets[:-1][np.diff(offsets) > 0]] = True
    # emissions of differing tokens
    D = Xs[diff]
    nnz = np.diff(D.indptr)
    r_em = np.repeat(seq[diff], nnz)
    c_pos = D.indices * K + np.repeat(y[diff], nnz)
    c_neg = D.indices * K + np.repeat(yh[diff], nnz)
    # transitions t-1 -> t where t or t-1 differs
    touched = np.zeros(y.size, dtype=bool)
    touched[diff] = True
    touched[diff[diff + 1 < y.size] + 1] = True
    tr = np.flatnonzero(touched & ~first)
    # start / end of sentences whose first / last token differs
    full = np.diff(offsets) > 0
    st = offsets[:-1][full]
    st = st[y[st] != yh[st]]
    en = offsets[1:][full] - 1
    en = en[y[en] != yh[en]]
    rows = np.concatenate([r_em, r_em, seq[tr], seq[tr], seq[st], seq[st], seq[en],
                           seq[en]])
    cols = np.concatenate([
        c_pos, c_neg, base + y[tr - 1] * K + y[tr], base + yh[tr - 1] * K + yh[tr],
        base + K * K + y[st], base + K * K + yh[st],
        base + K * K + K + y[en], base + K * K + K + yh[en]])
    one_t, one_s, one_e = np.ones(tr.size), np.ones(st.size), np.ones(en.size)
    data = np.concatenate([D.data, -D.data, one_t, -one_t, one_s, -one_s, one_e, -one_e])
    return rows, cols, data


def sparse_difference_sum(Xe, Xs, offsets, y, yh, n_states, base, n_features):
    """Σ_i δΦ_i of a chunk as a 1×D CSR row, through a reused zero scratch vector."""
    from ._sequence_jit import gather_touched, scatter_differences_touched

    bound = 2 * Xs.nnz + 2 * y.size + 4 * (len(offsets) - 1)
    touched = np.empty(bound, dtype=np.int64)
    acc = Xe._take_scratch(n_features)
    n = scatter_differences_touched(Xs.indptr, Xs.indices, np.asarray(Xs.data, dtype=float),
                                    y, yh, offsets, n_states, base, acc, touched)
    touched = np.sort(touched[:n])
    cols, vals = np.empty(n, dtype=np.int64), np.empty(n)
    m = gather_touched(acc, touched, cols, vals)
    Xe._give_scratch(acc)  # zero again
    row = sp.csr_matrix((vals[:m], cols[:m], [0, m]), shape=(1, n_features))
    row.has_canonical_format = True
    return row
