"""Viterbi decoding of chains (batched, numba), loss-augmented by the batch: first
order, and order k over tag k-grams with pruning certified exact."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops, warmup
from ...limits import check_total
from ...protocols import Decoder
from .lattice import chain_max_marginals, kbest_viterbi

__all__ = ["viterbi", "viterbi_flat", "pruned_viterbi", "VITERBI"]

# viterbi_batch, compiled ahead of time where the extension has it
_loops = loops("structsvm.structures.sequence._viterbi_jit")
# the order-k loops (decode_batch, build_hash, bound_tables)
_order_loops = loops("structsvm.structures.sequence._order_jit")


def _check_chain(batch):
    if getattr(type(batch), "structure", None) != "sequence":
        raise TypeError(f"viterbi decodes chain potentials (sequences), got {type(batch).__name__}")
    unary = np.ascontiguousarray(batch.unary, dtype=np.float64)
    offsets = np.ascontiguousarray(batch.offsets, dtype=np.int64)
    K = unary.shape[1] if unary.ndim == 2 else -1
    trans = np.ascontiguousarray(batch.transition, dtype=np.float64)
    start = np.ascontiguousarray(batch.start, dtype=np.float64)
    end = np.ascontiguousarray(batch.end, dtype=np.float64)
    if unary.ndim != 2 or K < 1:
        raise ValueError(f"unary must have shape (n_tokens, n_states >= 1), got "
                         f"{unary.shape}")
    if trans.shape != (K, K) or start.shape != (K,) or end.shape != (K,):
        raise ValueError(f"transition {trans.shape}, start {start.shape} and end "
                         f"{end.shape} do not fit {K} states")
    if (offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0
            or offsets[-1] != unary.shape[0] or np.any(np.diff(offsets) < 0)):
        raise ValueError("offsets must rise from 0 to n_tokens")
    for name, arr in (("unary", unary), ("transition", trans), ("start", start),
                      ("end", end)):
        if not (arr < np.inf).all():  # one pass: NaN and +inf both fail the test
            raise ValueError(f"{name} scores contain NaN or +inf")
    lengths = np.diff(offsets)
    if lengths.size:  # the loop's tables: forward, backward and two pointer rows
        i = int(np.argmax(lengths))
        check_total(32 * int(lengths[i]) * K, f"the Viterbi tables of its "
                                              f"{int(lengths[i])} tokens x {K} states",
                    f"Sequence {i} of the batch", verb="need")
    return unary, offsets, trans, start, end


def viterbi(batch, exclude=None):
    """Highest-scoring state path of every sequence of a chain batch.

    Dynamic programming over the first-order chain (Viterbi 1967): with
    α_0(k) = start[k] + u_0(k) and
    α_t(k) = u_t(k) + max_j (α_{t-1}(j) + A[j, k]), the best path ends in
    argmax_k α_{T-1}(k) + end[k] and is recovered by back-pointers, in
    O(T K²) per sequence. All sequences of the batch are decoded by one compiled call.

    Loss-augmented decoding needs nothing special: the batch's ``augment`` adds the
    per-token loss (Hamming: 1 for every wrong state) to the unaries.

    An :class:`OrderKChainPotentials` batch (a map of ``order`` k > 1, or with
    ``emission_order=1``) is decoded by :func:`pruned_viterbi` with the batch's
    ``beam``: exactly when the beam is None (the default), else with at most that
    many tags per position; one whose scores forbid tags or transitions (−inf, as
    :func:`~structsvm.structures.sequence.constraints.constrain_chains` sets them)
    by Viterbi over every tag history, exactly.

    Parameters
    ----------
    batch : ChainPotentials or OrderKChainPotentials
        Unaries of all sequences concatenated (``unary``, ``offsets``) and the
        shared ``transition``, ``start`` and ``end`` scores.
    exclude : list of ndarray of int, optional
        ``exclude[i]`` is a path to skip for sequence i: when the best path equals
        it, the best *other* path is returned ("argmax over y ≠ y_i"). It is found
        from max-marginals μ_t(k) = α_t(k) + β_t(k) (β the backward recursion): the
        best path y ≠ y* scores max over t and k ≠ y*_t of μ_t(k).

    Returns
    -------
    list of ndarray of int
        One state path per sequence (an empty sequence gets an empty path). Ties go
        to the lower state index at the last position and at each back-pointer.

    Raises
    ------
    ValueError
        On malformed potentials, or when ``exclude`` leaves no path (one state).

    References
    ----------
    A. J. Viterbi. Error bounds for convolutional codes and an asymptotically
    optimum decoding algorithm. IEEE Trans. Inf. Theory 13(2), 1967.
    Y. Altun, I. Tsochantaridis, T. Hofmann. Hidden Markov support vector machines.
    ICML 2003.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence.features import ChainPotentials
    >>> p = ChainPotentials(np.array([[2., 0.], [0., 1.], [1., 0.]]), [0, 2, 3],
    ...                     np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    >>> [y.tolist() for y in viterbi(p)]
    [[0, 1], [0]]
    >>> [y.tolist() for y in viterbi(p, exclude=[np.array([0, 1]), np.array([1])])]
    [[0, 0], [0]]
    """
    if getattr(type(batch), "structure", None) == "sequence" and type(batch).higher_order:
        return _viterbi_order_k(batch, exclude)
    unary, offsets, trans, start, end = _check_chain(batch)
    n_seq = len(offsets) - 1
    path = np.empty(unary.shape[0], dtype=np.int64)
    if exclude is None:
        ex = np.zeros(0, dtype=np.int64)
        use = False
    else:
        if len(exclude) != n_seq:
            raise ValueError(f"exclude has {len(exclude)} paths for {n_seq} sequences")
        parts = [np.asarray(e, dtype=np.int64).reshape(-1) for e in exclude]
        for i, e in enumerate(parts):
            if e.size != offsets[i + 1] - offsets[i]:
                raise ValueError(f"Sample {i}: exclude path has {e.size} states for "
                                 f"{offsets[i + 1] - offsets[i]} tokens")
        ex = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        use = True
    warmup.wait(_loops.viterbi_batch)
    stuck = _loops.viterbi_batch(unary, offsets, trans, start, end, ex, use, path)
    if use and stuck.any():
        i = int(np.flatnonzero(stuck)[0])
        raise ValueError(f"Sample {i}: no path other than the excluded one (1 state)")
    path = path.astype(np.intp, copy=False)
    return [path[offsets[i]:offsets[i + 1]] for i in range(n_seq)]


def viterbi_flat(batch):
    """Best paths of a chain batch concatenated into one array (rows of ``unary``).

    The same paths as :func:`viterbi` (without ``exclude``), for callers that work
    on the batch's flat layout (the sequence map's aggregated 1-slack oracle).

    Returns
    -------
    ndarray of int64 of shape (n_tokens,)
    """
    unary, offsets, trans, start, end = _check_chain(batch)
    path = np.empty(unary.shape[0], dtype=np.int64)
    warmup.wait(_loops.viterbi_batch)
    _loops.viterbi_batch(unary, offsets, trans, start, end,
                         np.zeros(0, dtype=np.int64), False, path)
    return path


# ----------------------------------------------------------------------- order k
def _check_order_k(batch, beam):
    """Validated kernel arguments of an order-k batch (and the tag cap)."""
    unary = np.ascontiguousarray(batch.unary, dtype=np.float64)
    offsets = np.ascontiguousarray(batch.offsets, dtype=np.int64)
    if unary.ndim != 2 or unary.shape[1] < 1:
        raise ValueError(f"unary must have shape (n_tokens, n_states >= 1), got "
                         f"{unary.shape}")
    K, k = unary.shape[1], batch.order
    if k not in (1, 2, 3):
        raise ValueError(f"order must be 1, 2 or 3, got {k!r}")
    if (offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0
            or offsets[-1] != unary.shape[0] or np.any(np.diff(offsets) < 0)):
        raise ValueError("offsets must rise from 0 to n_tokens")
    G1 = np.ascontiguousarray(batch.bigram_table())
    if G1.shape != (K + 1, K + 1):
        raise ValueError(f"transition {batch.transition.shape}, start "
                         f"{batch.start.shape} and end {batch.end.shape} do not fit {K} "
                         "states")
    keys = np.ascontiguousarray(batch.ngrams, dtype=np.int64)
    weights = np.ascontiguousarray(batch.ngram_weights, dtype=np.float64)
    top = 0 if k < 2 else (K + 1) ** 3 + (0 if k < 3 else (K + 1) ** 4)
    if keys.ndim != 1 or weights.shape != keys.shape:
        raise ValueError(f"ngrams {keys.shape} and ngram_weights {weights.shape} must "
                         "be 1-D and of one length")
    if keys.size and (keys[0] < 0 or keys[-1] >= top or np.any(np.diff(keys) <= 0)):
        raise ValueError(f"ngrams must be distinct sorted keys of tag windows of orders "
                         f"2..{k} over {K} tags (0 <= key < {top})")
    if batch.pair is None:
        pair, has_pair = np.zeros((0, 0, 0)), False
    else:
        pair, has_pair = np.ascontiguousarray(batch.pair, dtype=np.float64), True
        if pair.shape != (unary.shape[0], K + 1, K):
            raise ValueError(f"pair must have shape (n_tokens, n_states + 1, n_states) "
                             f"= {(unary.shape[0], K + 1, K)}, got {pair.shape}")
    for name, arr in (("unary", unary), ("transition", G1), ("ngram_weights", weights),
                      ("pair", pair)):
        if not (arr < np.inf).all():  # one pass: NaN and +inf both fail the test
            raise ValueError(f"{name} scores contain NaN or +inf")
    if beam is None:
        cap = K
    elif isinstance(beam, (int, np.integer)) and not isinstance(beam, bool) and beam >= 1:
        cap = min(int(beam), K)
    else:
        raise ValueError(f"beam must be None or an int >= 1, got {beam!r}")
    lengths = np.diff(offsets)
    if lengths.size:  # the lattice's tables at their largest: cap + 1 candidates
        i = int(np.argmax(lengths))
        width = min(cap + 1, K) ** k
        check_total(12 * int(lengths[i]) * width + 64 * int(lengths[i]) * K,
                    f"the order-{k} lattice of its {int(lengths[i])} tokens x "
                    f"{width} states (set a smaller beam)", f"Sequence {i} of the batch",
                    verb="need")
    return unary, offsets, pair, has_pair, k, G1, keys, weights, cap


def _decode_order_k(batch, beam):
    """Concatenated paths and certificates of an order-k batch."""
    unary, offsets, pair, has_pair, k, G1, keys, weights, cap = _check_order_k(batch, beam)
    K = unary.shape[1]
    for f in (_order_loops.build_hash, _order_loops.bound_tables,
              _order_loops.decode_batch):
        warmup.wait(f)
    slots, values = _order_loops.build_hash(keys)
    btab, boff, _, _ = _order_loops.bound_tables(K, k, G1, keys, weights)
    path = np.empty(unary.shape[0], dtype=np.int64)
    exact = _order_loops.decode_batch(unary, offsets, pair, has_pair, k, G1, keys,
                                      slots, values, weights, btab, boff, cap, path)
    return path.astype(np.intp, copy=False), exact.astype(bool)


def _as_order_k(batch):
    """An order-k batch of the same scores (a first-order one becomes order 1)."""
    if getattr(type(batch), "structure", None) == "sequence" and type(batch).higher_order:
        return batch
    if getattr(type(batch), "structure", None) != "sequence":
        raise TypeError(f"pruned_viterbi decodes chain potentials (sequences), got "
                        f"{type(batch).__name__}")
    from ._chain import OrderKChainPotentials

    return OrderKChainPotentials(batch.unary, batch.offsets, batch.transition,
                                 batch.start, batch.end, 1, np.zeros(0, np.int64),
                                 np.zeros(0))


def pruned_viterbi(batch, beam=None):
    """Best paths of a chain batch of any order, with certificates of exactness.

    Order-k Viterbi runs over the states (y_{t-k+1}, .., y_t), T^k of them per
    position for T tags. This decoder keeps few tags per position and proves when
    that lost nothing (coarse to fine, as in staggered decoding):

    1. the max-marginals μ_t(y) of the scores' first-order part (unaries,
       transitions, start and end) rank the tags of every position (as MarMoT
       prunes with a lower-order model); the best tag of each is kept;
    2. the kept tags and, where tags were pruned, one *rest* symbol R_t are decoded
       exactly; R_t scores an upper bound of every pruned tag at t: the best over
       them of the unary, the windows the tag closes and bounds of those it opens
       (a window holding R counted once, at its oldest R);
    3. when the best path holds no R it scores at least as much as any path through
       a pruned tag: the answer is certified exact. Otherwise the positions where R
       won keep twice as many tags (the next best by μ) and step 2 runs again;
       when R wins at more than a quarter of the positions, or once the lattices
       have cost an eighth of the exact Viterbi over every state, that one runs
       instead (near ties, as in loss-augmented decoding late in training, need
       most tags).

    With ``beam`` a position keeps its ``beam`` best tags from the start and step 2
    runs once: certified when R loses, else the best path over the kept tags is
    returned, not certified. With ``beam=None`` every answer is exact and
    certified. A batch that forbids tags or transitions (scores of −inf) is decoded
    by Viterbi over every tag history instead
    (:func:`~structsvm.structures.sequence.lattice.kbest_viterbi`), exact and
    certified (a chain that no path of finite score fits gets a path of score −inf).

    Parameters
    ----------
    batch : OrderKChainPotentials or ChainPotentials
    beam : int, optional
        Tags per position at most; by default the batch's own ``beam`` (a first-
        order batch: none).

    Returns
    -------
    paths : list of ndarray of int
        One path per sequence.
    exact : ndarray of bool of shape (n_sequences,)
        Whether each path is certified to be a highest-scoring path.

    References
    ----------
    N. Kaji, Y. Fujiwara, N. Yoshinaga, M. Kitsuregawa. Efficient staggered decoding
    for sequence labeling. ACL 2010.
    T. Müller, H. Schmid, H. Schütze. Efficient higher-order CRFs for morphological
    tagging. EMNLP 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence import ChainPotentials
    >>> p = ChainPotentials(np.array([[2., 0.], [0., 1.], [1., 0.]]), [0, 2, 3],
    ...                     np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    >>> paths, exact = pruned_viterbi(p)
    >>> [y.tolist() for y in paths], exact.tolist()
    ([[0, 1], [0]], [True, True])
    """
    batch = _as_order_k(batch)
    if _forbids(batch):  # the pruning's bounds assume finite scores
        found = kbest_viterbi(batch, 1)
        return ([ys[0] if ys else np.zeros(int(n), dtype=np.intp)
                 for (ys, _), n in zip(found, batch.lengths())],
                np.ones(len(found), dtype=bool))
    path, exact = _decode_order_k(batch, batch.beam if beam is None else beam)
    offsets = batch.offsets
    return [path[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)], exact


def _forbids(batch):
    """Whether an order-k batch scores some tag or transition −inf (forbidden)."""
    return any(np.isneginf(a).any() for a in
               (batch.unary, batch.transition, batch.start, batch.end))


def _viterbi_order_k(batch, exclude):
    """:func:`viterbi` of an order-k batch (``exclude``: the best path different from
    ``exclude[i]``, the best over t of the path that avoids exclude[i][t] at t).
    """
    paths, _ = pruned_viterbi(batch)
    if exclude is None:
        return paths
    n_seq = len(paths)
    if len(exclude) != n_seq:
        raise ValueError(f"exclude has {len(exclude)} paths for {n_seq} sequences")
    for i in range(n_seq):
        ex = np.asarray(exclude[i], dtype=np.intp).reshape(-1)
        if ex.size != paths[i].size:
            raise ValueError(f"Sample {i}: exclude path has {ex.size} states for "
                             f"{paths[i].size} tokens")
        if not np.array_equal(ex, paths[i]):
            continue
        if batch.n_states == 1:
            raise ValueError(f"Sample {i}: no path other than the excluded one (1 state)")
        one = batch[i]
        best, best_score = None, -np.inf
        for t in range(ex.size):  # forbid the excluded tag at t
            unary = one.unary.copy()
            unary[t, ex[t]] = -np.inf
            y = pruned_viterbi(one._with_unary(unary))[0][0]
            score = one.score(y)
            if score > best_score:
                best, best_score = y, score
        paths[i] = best
    return paths


VITERBI = Decoder(name="viterbi", structure="sequence", func=viterbi,
                  max_marginals=chain_max_marginals, nbest=kbest_viterbi)
