"""Tag windows of order-k chains: the keys of the tag n-grams of padded paths, the
n-grams seen in training, and their entries (and the emission pairs') in Φ and δΦ.

A path y of T tags over K tags is padded to ``P^k y_0 .. y_{T-1} P`` (``P = K``); for
every order m = 2..k the T + 1 windows of m + 1 symbols that end at a token or at the
final pad each have a key: their symbols as digits base K + 1, oldest first, plus the
order's offset (0 for m = 2, (K+1)^3 for m = 3), as
:func:`structsvm.structures.sequence._order_jit.window_key` computes them. The map
keeps one feature per key seen in training (``tag_ngrams_``, sorted); a window whose
key was not seen has none.

Column layout of an order-k map with K tags, d observation features and n seen
n-grams: emissions ``j * K + tag``, transitions, start and end (the first-order
blocks, ``d*K + K^2 + 2K`` columns in all), then the n-grams (``n``), then, with
emission order 1, the pairs ``j * (K+1) * K + previous * K + tag`` (previous = P at a
sentence's first token).
"""
from __future__ import annotations

import numpy as np

__all__ = ["order_offset", "padded_windows", "seen_ngrams", "ngram_index",
           "ngram_entries", "ngram_difference_entries", "pair_entries",
           "pair_difference_entries", "ngram_names", "ngram_symbols", "named_windows",
           "keys_of_named"]


def order_offset(m, K):
    """First key of the windows of order m (m >= 2)."""
    return 0 if m <= 2 else (K + 1) ** 3


def _padded(y, offsets, k, K):
    """The padded paths end to end, and where each token sits in them."""
    lengths = np.diff(offsets)
    n = lengths.size
    pstart = np.concatenate([[0], np.cumsum(lengths + k + 1)])
    ps = np.full(int(pstart[-1]), K, dtype=np.int64)
    seq = np.repeat(np.arange(n), lengths)
    tok = np.arange(y.size) - np.repeat(offsets[:-1] - offsets[0], lengths)
    pos = pstart[:-1][seq] + k + tok
    ps[pos] = y
    return ps, pstart, pos


def padded_windows(y, offsets, K, order):
    """Keys of every window of the paths ``y`` (concatenated, sentences by
    ``offsets``) for the orders 2..``order``.

    Returns
    -------
    keys : list of ndarray of int64
        One array per order m = 2..order, ``T_i + 1`` windows per sentence, in order.
    sentence : ndarray of int
        The sentence of each window (the same for every order).
    """
    y = np.asarray(y, dtype=np.int64)
    lengths = np.diff(offsets)
    ps, pstart, _ = _padded(y, offsets, order, K)
    n_win = lengths + 1
    sentence = np.repeat(np.arange(lengths.size), n_win)
    first = np.concatenate([[0], np.cumsum(n_win)])[:-1]
    ends = np.repeat(pstart[:-1] + order, n_win) + (np.arange(int(n_win.sum()))
                                                     - np.repeat(first, n_win))
    b = K + 1
    keys = []
    for m in range(2, order + 1):
        key = np.zeros(ends.size, dtype=np.int64)
        for j in range(m + 1):
            key = key * b + ps[ends - m + j]
        keys.append(key + order_offset(m, K))
    return keys, sentence


def seen_ngrams(y, offsets, K, order):
    """Sorted distinct keys of the windows of orders 2..``order`` of the paths ``y``."""
    if order < 2:
        return np.zeros(0, dtype=np.int64)
    keys, _ = padded_windows(y, offsets, K, order)
    return np.unique(np.concatenate(keys))


def ngram_index(vocabulary, keys):
    """Index of every key in the sorted ``vocabulary`` (-1 where absent)."""
    at = np.searchsorted(vocabulary, keys)
    at[at >= vocabulary.size] = 0
    found = vocabulary.size > 0
    hit = (vocabulary[at] == keys) if found else np.zeros(keys.shape, dtype=bool)
    return np.where(hit, at, -1)


def ngram_entries(y, offsets, K, order, vocabulary, base):
    """COO (sentence, column, value) of the n-gram block of Φ(x_i, y_i)."""
    if order < 2:
        return _empty()
    keys, sentence = padded_windows(y, offsets, K, order)
    rows, cols = [], []
    for key in keys:
        j = ngram_index(vocabulary, key)
        ok = j >= 0
        rows.append(sentence[ok])
        cols.append(base + j[ok])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return rows, cols, np.ones(rows.size)


def ngram_difference_entries(y, yh, offsets, K, order, vocabulary, base):
    """COO entries of the n-gram block of δΦ_i: +1 for a window of y, -1 for one of
    ŷ, over the windows where the two differ."""
    if order < 2:
        return _empty()
    keys, sentence = padded_windows(y, offsets, K, order)
    keys_h, _ = padded_windows(yh, offsets, K, order)
    rows, cols, vals = [], [], []
    for key, key_h in zip(keys, keys_h):
        differ = np.flatnonzero(key != key_h)
        for kk, sign in ((key, 1.0), (key_h, -1.0)):
            j = ngram_index(vocabulary, kk[differ])
            ok = j >= 0
            rows.append(sentence[differ[ok]])
            cols.append(base + j[ok])
            vals.append(np.full(int(ok.sum()), sign))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def _previous(y, offsets, K):
    """The tag before every token (P at a sentence's first token)."""
    prev = np.empty_like(y)
    prev[1:] = y[:-1]
    lengths = np.diff(offsets)
    first = (offsets[:-1] - offsets[0])[lengths > 0]
    prev[first] = K
    return prev


def pair_entries(Xs, y, offsets, K, base):
    """COO entries of the emission-pair block of Φ(x_i, y_i): token t's features at
    ``base + j * (K+1) * K + y_{t-1} * K + y_t``."""
    y = np.asarray(y, dtype=np.int64)
    lengths = np.diff(offsets)
    seq = np.repeat(np.arange(lengths.size), lengths)
    pair = _previous(y, offsets, K) * K + y
    nnz = np.diff(Xs.indptr)
    rows = np.repeat(seq, nnz)
    cols = base + Xs.indices.astype(np.int64) * ((K + 1) * K) + np.repeat(pair, nnz)
    return rows, cols, np.asarray(Xs.data, dtype=float)


def pair_difference_entries(Xs, y, yh, offsets, K, base):
    """COO entries of the emission-pair block of δΦ_i, from the tokens whose
    (previous, current) tags differ."""
    y = np.asarray(y, dtype=np.int64)
    yh = np.asarray(yh, dtype=np.int64)
    lengths = np.diff(offsets)
    seq = np.repeat(np.arange(lengths.size), lengths)
    pair = _previous(y, offsets, K) * K + y
    pair_h = _previous(yh, offsets, K) * K + yh
    diff = np.flatnonzero(pair != pair_h)
    D = Xs[diff]
    nnz = np.diff(D.indptr)
    rows = np.repeat(seq[diff], nnz)
    col = base + D.indices.astype(np.int64) * ((K + 1) * K)
    data = np.asarray(D.data, dtype=float)
    return (np.concatenate([rows, rows]),
            np.concatenate([col + np.repeat(pair[diff], nnz),
                            col + np.repeat(pair_h[diff], nnz)]),
            np.concatenate([data, -data]))


def ngram_symbols(vocabulary, K, order):
    """(n, order + 1) symbols of the keys (oldest first; a window of a lower order
    is left-filled with -1) and the order of each."""
    b = K + 1
    n = vocabulary.size
    out = np.full((n, order + 1), -1, dtype=np.int64)
    m_of = np.full(n, 2, dtype=np.int64)
    key = vocabulary.copy()
    if order >= 3:
        high = key >= order_offset(3, K)
        m_of[high] = 3
        key[high] -= order_offset(3, K)
    for i in range(n):
        m, kk = int(m_of[i]), int(key[i])
        for j in range(order, order - m - 1, -1):
            out[i, j] = kk % b
            kk //= b
    return out, m_of


def ngram_names(vocabulary, tags, order):
    """``transition:<a>-><b>-><c>`` for every seen n-gram (``<s>`` for the pads
    before the first tag, ``</s>`` for the pad after the last)."""
    K = len(tags)
    sym, _ = ngram_symbols(vocabulary, K, order)
    names = []
    for row in sym:
        row = [int(s) for s in row if s >= 0]
        real = [i for i, s in enumerate(row) if s < K]
        first = real[0] if real else len(row)
        parts = [("<s>" if i < first else "</s>") if s == K else str(tags[s])
                 for i, s in enumerate(row)]
        names.append("transition:" + "->".join(parts))
    return names


def named_windows(Y, order):
    """The distinct tag windows of orders 2..``order`` of the tag sequences ``Y``, as
    tuples of tags oldest first (None for a pad): what one partition of the training
    data contributes to ``tag_ngrams_``, independent of its tags' numbering."""
    if order < 2:
        return []
    tags = list(dict.fromkeys(t for y in Y for t in y))
    index = {t: i for i, t in enumerate(tags)}
    K = len(tags)
    y = np.fromiter((index[t] for seq in Y for t in seq), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(seq) for seq in Y])]).astype(np.int64)
    sym, _ = ngram_symbols(seen_ngrams(y, offsets, K, order), K, order)
    return [tuple(None if s == K else tags[s] for s in row if s >= 0) for row in sym]


def keys_of_named(windows, index, K):
    """Sorted distinct keys of the named windows (:func:`named_windows`) under the
    tag numbering ``index`` (tag -> state) of K tags."""
    b = K + 1
    keys = set()
    for win in windows:
        key = 0
        for t in win:
            key = key * b + (K if t is None else index[t])
        keys.add(key + order_offset(len(win) - 1, K))
    return np.array(sorted(keys), dtype=np.int64)


def _empty():
    return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
