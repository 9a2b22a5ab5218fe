"""Viterbi decoding of first-order chains (batched, numba), loss-augmented by the batch."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops, warmup
from ...limits import check_total
from ...protocols import Decoder

__all__ = ["viterbi", "viterbi_flat", "VITERBI"]

# viterbi_batch, compiled ahead of time where the extension has it
_loops = loops("structsvm.structures.sequence._viterbi_jit")


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

    Parameters
    ----------
    batch : ChainPotentials
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


VITERBI = Decoder(name="viterbi", structure="sequence", func=viterbi)
