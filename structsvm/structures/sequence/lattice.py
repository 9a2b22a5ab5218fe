"""Max-marginals and k-best paths of chains of any order the sequence map builds,
over the lattice of tag histories (batched, numba)."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops
from ...limits import check_total
from ._chain import ChainBatch

__all__ = ["chain_max_marginals", "kbest_viterbi", "history_tables"]

# max_marginals_batch, kbest_batch (numba, compiled on first use)
_loops = loops("structsvm.structures.sequence._lattice_jit")


def history_tables(batch):
    """The scores of a chain batch as a first-order chain over tag histories.

    The state after a token is its last k tags (k the batch's order; padding
    P = K before the first token): a history h < S = (K + 1)^k, its tags the digits
    base K + 1, oldest first. Moving from h with tag c scores ``Tr[h, c]`` (every
    window of the scores that ends at that token: the first-order table and the
    tag n-grams of orders 2..k), besides the token's unary and pair scores; a path
    that ends in h adds ``F[h]`` (the windows ending at the final pad).

    Parameters
    ----------
    batch : ChainPotentials or OrderKChainPotentials

    Returns
    -------
    order : int
    Tr : ndarray of shape (S, K)
    F : ndarray of shape (S,)

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence import ChainPotentials
    >>> p = ChainPotentials(np.zeros((1, 2)), [0, 1], [[0., 1.], [2., 3.]],
    ...                     [4., 5.], [6., 7.])
    >>> k, Tr, F = history_tables(p)
    >>> k, Tr.tolist(), F.tolist()      # rows: tag 0, tag 1, the start
    (1, [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [6.0, 7.0, 0.0])
    """
    K = int(batch.n_states)
    b = K + 1
    if not type(batch).higher_order:
        G1 = np.zeros((b, b))
        G1[:K, :K] = batch.transition
        G1[K, :K] = batch.start
        G1[:K, K] = batch.end
        return 1, np.ascontiguousarray(G1[:, :K]), np.ascontiguousarray(G1[:, K])
    from ._tag_windows import ngram_symbols

    k = int(batch.order)
    S = b ** k
    G1 = batch.bigram_table()
    h = np.arange(S)
    last = h % b
    Tr = np.ascontiguousarray(G1[last, :K])
    F = G1[last, K].copy()
    keys = np.asarray(batch.ngrams, dtype=np.int64)
    if keys.size:
        sym, m_of = ngram_symbols(keys, K, k)
        weights = np.asarray(batch.ngram_weights, dtype=float)
        for m in range(2, k + 1):
            rows = np.flatnonzero(m_of == m)
            if not rows.size:
                continue
            # the history's last m symbols are the window's first m; any older ones
            tail = np.zeros(rows.size, dtype=np.int64)
            for j in range(k - m, k):
                tail = tail * b + sym[rows, j]
            older = np.arange(b ** (k - m), dtype=np.int64) * b ** m
            hist = (older[None, :] + tail[:, None]).ravel()
            newest = np.repeat(sym[rows, k], older.size)
            w = np.repeat(weights[rows], older.size)
            tag = newest < K
            np.add.at(Tr, (hist[tag], newest[tag]), w[tag])
            np.add.at(F, hist[~tag], w[~tag])
    return k, Tr, F


def _check(batch, per_state_bytes):
    """Kernel arguments of a chain batch (scores may be −inf, never NaN or +inf)."""
    if not isinstance(batch, ChainBatch):
        raise TypeError(f"expected chain potentials (sequences), got "
                        f"{type(batch).__name__}")
    unary = np.ascontiguousarray(batch.unary, dtype=np.float64)
    offsets = np.ascontiguousarray(batch.offsets, dtype=np.int64)
    if unary.ndim != 2 or unary.shape[1] < 1:
        raise ValueError(f"unary must have shape (n_tokens, n_states >= 1), got "
                         f"{unary.shape}")
    K = unary.shape[1]
    if (offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0
            or offsets[-1] != unary.shape[0] or np.any(np.diff(offsets) < 0)):
        raise ValueError("offsets must rise from 0 to n_tokens")
    k = int(batch.order) if type(batch).higher_order else 1
    if k not in (1, 2, 3):
        raise ValueError(f"order must be 1, 2 or 3, got {k!r}")
    lengths = np.diff(offsets)
    if lengths.size:
        i = int(np.argmax(lengths))
        S = (K + 1) ** k
        check_total(per_state_bytes * int(max(lengths[i], 1)) * S + 8 * S * K,
                    f"the order-{k} lattice of its {int(lengths[i])} tokens x {S} "
                    "tag histories", f"Sequence {i} of the batch", verb="needs")
    k, Tr, F = history_tables(batch)
    pair = batch.pair if type(batch).higher_order else None
    if pair is None:
        pair, has_pair = np.zeros((0, 0, 0)), False
    else:
        pair, has_pair = np.ascontiguousarray(pair, dtype=np.float64), True
        if pair.shape != (unary.shape[0], K + 1, K):
            raise ValueError(f"pair must have shape (n_tokens, n_states + 1, n_states) "
                             f"= {(unary.shape[0], K + 1, K)}, got {pair.shape}")
    for name, arr in (("unary", unary), ("transition scores", Tr), ("end scores", F),
                      ("pair", pair)):
        if not (arr < np.inf).all():  # one pass: NaN and +inf both fail the test
            raise ValueError(f"{name} contain NaN or +inf")
    return unary, offsets, pair, has_pair, np.ascontiguousarray(Tr), \
        np.ascontiguousarray(F), K + 1


def chain_max_marginals(batch):
    """Max-marginals of a chain batch: the best score of a path with tag c at token t,
    for every token and tag, and the best score of every chain.

    In the (max, +) semiring the forward and backward recursions over the lattice of
    tag histories (:func:`history_tables`; the tags themselves at order 1) give

    .. math::

        \\alpha_t(h) = \\max_{h' \\to h} \\alpha_{t-1}(h') + s_t(h' \\to h), \\qquad
        \\beta_t(h) = \\max_{h \\to h'} s_{t+1}(h \\to h') + \\beta_{t+1}(h'),

    with β at the last token the end scores, and the max-marginal
    μ_t(c) = max over histories h ending in c of α_t(h) + β_t(h), in
    O(T (K + 1)^k K) per chain of T tokens (O(T K²) at order 1). A part's margin is
    then the best score minus the best with another tag there:
    max_c μ_t(c) − max_{c ≠ ŷ_t} μ_t(c) (Viterbi 1967; the max-marginals of
    Weiss & Taskar 2010).

    Scores of −inf (forbidden tags or transitions) stay −inf: μ_t(c) = −inf when no
    path of finite score has tag c at t.

    Parameters
    ----------
    batch : ChainPotentials or OrderKChainPotentials
        Decoded exactly, whatever the batch's ``beam``.

    Returns
    -------
    max_marginals : list of ndarray of shape (n_tokens_i, n_states)
        One table per chain.
    best : ndarray of shape (n_sequences,)
        The best path's score of every chain (−inf: no path of finite score; 0 for
        an empty chain).

    Raises
    ------
    ValueError
        On malformed potentials or NaN / +inf scores.
    structsvm.limits.MemoryLimitError
        A chain's lattice does not fit the memory budget.

    References
    ----------
    A. J. Viterbi. Error bounds for convolutional codes and an asymptotically
    optimum decoding algorithm. IEEE Trans. Inf. Theory 13(2), 1967.
    D. Weiss, B. Taskar. Structured prediction cascades. AISTATS 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence import ChainPotentials
    >>> p = ChainPotentials(np.array([[2., 0.], [0., 1.]]), [0, 2],
    ...                     np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    >>> mm, best = chain_max_marginals(p)
    >>> mm[0].tolist(), best.tolist()
    ([[3.0, 1.0], [2.0, 3.0]], [3.0])
    """
    unary, offsets, pair, has_pair, Tr, F, b = _check(batch, 16)
    mm = np.empty(unary.shape)
    best = np.empty(len(offsets) - 1)
    _loops.max_marginals_batch(unary, offsets, pair, has_pair, Tr, F, b, mm, best)
    return [mm[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)], best


def kbest_viterbi(batch, k):
    """The ``k`` highest-scoring paths of every chain, best first, with their scores.

    k-best Viterbi over the lattice of tag histories (:func:`history_tables`): every
    history after token t keeps the k best prefixes ending in it, merged best first
    from the lists of its predecessors with back-pointers to them; the k best paths
    are the best k of the last token's lists with their end scores. O(T (K + 1)^(o+1)
    k) per chain of order o, against K^T paths in all (Schwartz & Chow 1990; the
    list Viterbi of Seshadri & Sundberg 1994, and Huang & Chiang's 2005 k-best
    algorithms on a chain's hypergraph).

    Every path has one derivation in the lattice, so the paths are distinct; paths
    scoring −inf (through a forbidden tag or transition) are left out, so a chain
    with fewer than k allowed paths gets fewer. Among paths of equal score the
    order is the kernel's (deterministic, not lexicographic).

    Parameters
    ----------
    batch : ChainPotentials or OrderKChainPotentials
        Decoded exactly, whatever the batch's ``beam``.
    k : int
        Paths per chain (>= 1).

    Returns
    -------
    list of (list of ndarray of int, ndarray of float)
        For every chain its paths, best first, and their scores (non-increasing).
        An empty chain has one path, the empty one, of score 0.

    Raises
    ------
    ValueError
        On malformed potentials, NaN / +inf scores, or k < 1.

    References
    ----------
    R. Schwartz, Y.-L. Chow. The N-best algorithm: an efficient and exact procedure
    for finding the N most likely sentence hypotheses. ICASSP 1990.
    N. Seshadri, C.-E. W. Sundberg. List Viterbi decoding algorithms with
    applications. IEEE Trans. Communications 42(234), 1994.
    L. Huang, D. Chiang. Better k-best parsing. IWPT 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence import ChainPotentials
    >>> p = ChainPotentials(np.array([[2., 0.], [0., 1.]]), [0, 2],
    ...                     np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    >>> [(y.tolist(), float(s)) for y, s in zip(*kbest_viterbi(p, 3)[0])]
    [([0, 1], 3.0), ([0, 0], 2.0), ([1, 1], 1.0)]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    k = int(k)
    unary, offsets, pair, has_pair, Tr, F, b = _check(batch, 24 * k)
    n_seq = len(offsets) - 1
    paths = np.zeros((unary.shape[0], k), dtype=np.int64)
    scores = np.empty((n_seq, k))
    counts = np.zeros(n_seq, dtype=np.int64)
    _loops.kbest_batch(unary, offsets, pair, has_pair, Tr, F, b, k, paths, scores,
                       counts)
    out = []
    for i in range(n_seq):
        lo, hi, m = offsets[i], offsets[i + 1], int(counts[i])
        out.append(([paths[lo:hi, j].astype(np.intp) for j in range(m)],
                    scores[i, :m].copy()))
    return out
