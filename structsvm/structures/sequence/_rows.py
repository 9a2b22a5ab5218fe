"""The rows Φ(x_i, y_i) and δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i) of chain batches, and the
names of their columns.

A layout ``(K, d, D)`` (tags, observation features, features) orders the columns as
:meth:`SequenceFeatures.split_weights` does: emissions (j·K + tag), transitions,
start, end. δΦ_i is built from the tokens where the paths differ only; Σ_i ω_i δΦ_i
comes as a dense vector or, over a chunk, as one sparse row.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._compiled import loops

__all__ = ["weight_blocks", "feature_rows", "difference_rows", "difference_sum",
           "dense_difference_sum", "sparse_difference_sum", "column_names",
           "observation_names",
           "order_k_feature_rows", "order_k_difference_rows"]

# the loops (_sequence_jit), imported with numba when first called
_jit = loops("structsvm.structures.sequence._jit")


def weight_blocks(w, layout):
    """W_em (d, K), transition (K, K), start (K,) and end (K,) views of ``w`` (the
    first-order blocks, which open the weights of every order)."""
    K, d, D = layout
    w = np.asarray(w, dtype=float).ravel()
    if w.size != D:
        raise ValueError(f"w has {w.size} entries, the feature map has {D} features")
    b = d * K
    return (w[:b].reshape(d, K), w[b:b + K * K].reshape(K, K),
            w[b + K * K:b + K * K + K], w[b + K * K + K:b + K * K + 2 * K])


def feature_rows(Xe, Ye, idx, layout):
    """CSR matrix whose row i is Φ(x_i, y_i) of the sentences ``idx`` of ``Xe``."""
    K, d, D = layout
    Xs, offsets = Xe.select(idx)
    n_seq = len(offsets) - 1
    if len(Ye) != n_seq:
        raise ValueError(f"{n_seq} inputs but {len(Ye)} outputs")
    rows, cols, data = feature_entries(Xs, offsets, Ye, K, d * K)
    return sp.csr_matrix((data, (rows, cols)), shape=(n_seq, D))


def _selected_paths(Xe, Ye, Ye_hat, idx):
    """Token rows and offsets of the sentences ``idx``, and both paths concatenated."""
    Xs, offsets = Xe.select(idx)
    n_seq = len(offsets) - 1
    if len(Ye) != n_seq or len(Ye_hat) != n_seq:
        raise ValueError(f"{n_seq} inputs but {len(Ye)} and {len(Ye_hat)} outputs")
    y, yh = (flat_states(Y, Xs.shape[0]) for Y in (Ye, Ye_hat))
    return Xs, offsets, y, yh


def difference_rows(Xe, Ye, Ye_hat, idx, layout):
    """CSR matrix whose row i is δΦ_i (no explicit zeros), from the differing tokens."""
    K, d, D = layout
    Xs, offsets, y, yh = _selected_paths(Xe, Ye, Ye_hat, idx)
    rows, cols, data = difference_entries(Xs, offsets, y, yh, K, d * K)
    out = sp.csr_matrix((data, (rows, cols)), shape=(len(offsets) - 1, D))
    out.eliminate_zeros()
    return out


def difference_sum(Xe, Ye, Ye_hat, idx, weights, layout):
    """Dense Σ_i ω_i δΦ_i over the sentences ``idx`` (ω ones for ``weights=None``)."""
    K, d, D = layout
    Xs, offsets, y, yh = _selected_paths(Xe, Ye, Ye_hat, idx)
    n_seq = len(offsets) - 1
    om = np.ones(n_seq) if weights is None else \
        np.asarray(weights, dtype=float).reshape(-1)
    if om.size != n_seq:
        raise ValueError(f"{om.size} weights for {n_seq} sentences")
    return dense_difference_sum(Xs, offsets, y, yh, np.repeat(om, np.diff(offsets)), K,
                                d * K, D)


def flat_states(Y, n_tokens):
    """Concatenated int64 states of a list of paths (checked against the token count)."""
    y = np.concatenate([np.asarray(a, dtype=np.int64).reshape(-1) for a in Y]) if len(Y) \
        else np.zeros(0, np.int64)
    if y.size != n_tokens:
        raise ValueError(f"outputs have {y.size} states for {n_tokens} tokens")
    return y


def feature_entries(Xs, offsets, Ye, n_states, base):
    """COO (sentence, column, value) entries of the rows Φ(x_i, y_i).

    ``Xs`` holds the token rows of the sentences (``offsets``), ``Ye`` one path per
    sentence, ``base`` = n_input_features · K: emissions at x_t[j]'s column j·K + y_t,
    then transitions, start and end with value one.
    """
    n_seq, K = len(offsets) - 1, n_states
    lengths = np.diff(offsets)
    y = np.concatenate([np.asarray(yi, dtype=np.int64).reshape(-1) for yi in Ye]) \
        if n_seq else np.zeros(0, np.int64)
    if y.size != Xs.shape[0]:
        bad = next(i for i, yi in enumerate(Ye) if np.size(yi) != lengths[i])
        raise ValueError(f"Sentence {bad}: output has {np.size(Ye[bad])} states for "
                         f"{lengths[bad]} tokens")
    seq = np.repeat(np.arange(n_seq), lengths)
    nnz = np.diff(Xs.indptr)
    inner = np.ones(y.size, dtype=bool)
    inner[offsets[:-1]] = False
    rows = np.concatenate([np.repeat(seq, nnz), seq[inner], np.arange(n_seq),
                           np.arange(n_seq)])
    cols = np.concatenate([Xs.indices * K + np.repeat(y, nnz),
                           base + y[np.flatnonzero(inner) - 1] * K + y[inner],
                           base + K * K + y[offsets[:-1]],
                           base + K * K + K + y[offsets[1:] - 1]])
    data = np.concatenate([Xs.data, np.ones(rows.size - Xs.data.size)])
    return rows, cols, data


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


def dense_difference_sum(Xs, offsets, y, yh, tok_weight, n_states, base, n_features):
    """Σ_i ω_i δΦ_i as a dense vector (``tok_weight``: ω of every token's sentence), by
    one compiled pass over the tokens where the paths ``y`` and ``yh`` differ."""
    out = np.zeros(n_features)
    _jit.scatter_differences(Xs.indptr, Xs.indices, np.asarray(Xs.data, dtype=float), y, yh,
                        tok_weight, offsets, n_states, base, out)
    return out


def sparse_difference_sum(Xe, Xs, offsets, y, yh, n_states, base, n_features):
    """Σ_i δΦ_i of a chunk as a 1×D CSR row, through a reused zero scratch vector."""
    bound = 2 * Xs.nnz + 2 * y.size + 4 * (len(offsets) - 1)
    touched = np.empty(bound, dtype=np.int64)
    acc = Xe._take_scratch(n_features)
    n = _jit.scatter_differences_touched(Xs.indptr, Xs.indices, np.asarray(Xs.data, dtype=float),
                                    y, yh, offsets, n_states, base, acc, touched)
    touched = np.sort(touched[:n])
    cols, vals = np.empty(n, dtype=np.int64), np.empty(n)
    m = _jit.gather_touched(acc, touched, cols, vals)
    Xe._give_scratch(acc)  # zero again
    row = sp.csr_matrix((vals[:m], cols[:m], [0, m]), shape=(1, n_features))
    row.has_canonical_format = True
    return row


def order_k_feature_rows(Xe, Ye, idx, layout, windows):
    """:func:`feature_rows` of an order-k map: the first-order entries, then its
    n-gram and pair blocks (``windows`` = (order, emission order, seen n-grams,
    n-gram block start, pair block start))."""
    from ._tag_windows import ngram_entries, pair_entries

    K, d, D = layout
    order, emission_order, ngrams, b_ng, b_pair = windows
    Xs, offsets = Xe.select(idx)
    n_seq = len(offsets) - 1
    if len(Ye) != n_seq:
        raise ValueError(f"{n_seq} inputs but {len(Ye)} outputs")
    parts = [feature_entries(Xs, offsets, Ye, K, d * K)]
    y = flat_states(Ye, Xs.shape[0])
    parts.append(ngram_entries(y, offsets, K, order, ngrams, b_ng))
    if emission_order:
        parts.append(pair_entries(Xs, y, offsets, K, b_pair))
    rows, cols, data = (np.concatenate(a) for a in zip(*parts))
    return sp.csr_matrix((data, (rows, cols)), shape=(n_seq, D))


def order_k_difference_rows(Xe, Ye, Ye_hat, idx, layout, windows):
    """:func:`difference_rows` of an order-k map (``windows`` as in
    :func:`order_k_feature_rows`)."""
    from ._tag_windows import ngram_difference_entries, pair_difference_entries

    K, d, D = layout
    order, emission_order, ngrams, b_ng, b_pair = windows
    Xs, offsets, y, yh = _selected_paths(Xe, Ye, Ye_hat, idx)
    parts = [difference_entries(Xs, offsets, y, yh, K, d * K),
             ngram_difference_entries(y, yh, offsets, K, order, ngrams, b_ng)]
    if emission_order:
        parts.append(pair_difference_entries(Xs, y, yh, offsets, K, b_pair))
    rows, cols, data = (np.concatenate(a) for a in zip(*parts))
    out = sp.csr_matrix((data, (rows, cols)), shape=(len(offsets) - 1, D))
    out.eliminate_zeros()
    return out


def observation_names(vocabulary, n_input_features, input_kind, kept=None):
    """Names of the observation columns: the ``vocabulary`` strings, else ``hash<j>``
    (hashed tokens) or ``x<j>`` (matrix inputs; j among the columns ``kept``)."""
    if vocabulary is not None:
        return [str(s) for s in vocabulary]
    if kept is not None:
        return [f"x{j}" for j in kept.tolist()]
    return [f"{'hash' if input_kind != 'matrix' else 'x'}{j}"
            for j in range(n_input_features)]


def column_names(tags, vocabulary, n_input_features, input_kind, kept=None):
    """``emission:<observation>:<tag>``, ``transition:<tag>-><tag>``, ``start:<tag>``,
    ``end:<tag>``; observations are the ``vocabulary`` strings, else ``hash<j>`` (hashed
    tokens) or ``x<j>`` (matrix inputs; j among the columns ``kept`` when given)."""
    tags = [str(t) for t in tags]
    obs = observation_names(vocabulary, n_input_features, input_kind, kept)
    return ([f"emission:{o}:{t}" for o in obs for t in tags]
            + [f"transition:{a}->{b}" for a in tags for b in tags]
            + [f"start:{t}" for t in tags] + [f"end:{t}" for t in tags])
