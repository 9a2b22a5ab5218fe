"""The sequence map's batched oracles: the 1-slack aggregate over a corpus or a chunk
(loss-augmented Viterbi, slacks, Σ δΦ_i), and the fused compiled oracle of a chunk;
first order and order k."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._compiled import loops
from ...protocols import LazyOutputs, check_decomposition
from ._chain import ChainPotentials
from ._rows import dense_difference_sum, sparse_difference_sum

__all__ = ["aggregate_chain_violation", "fused_chain_oracle", "FlatPaths",
           "fused_order_k_oracle", "aggregate_order_k_violation"]


def aggregate_chain_violation(fm, Xe, Ye, w, loss, idx=None):
    """1-slack oracle of a fitted ``SequenceFeatures`` over the sentences ``idx`` of
    ``Xe`` (all by default; see its ``aggregate_violation``): (Σ_i Δ_i, Σ_i δΦ_i, ξ per
    sentence); Σ_i δΦ_i is a dense vector for all sentences and a 1×D CSR row (sorted
    columns) for a chunk ``idx``, whose cost then follows the chunk, not D."""
    from .viterbi import viterbi_flat

    y_all = _flat_truth(Xe, Ye)
    if idx is None:
        Xs, offsets = Xe.select(None)
        y = y_all
    else:
        rows, offsets = Xe.rows(idx)
        Xs, y = Xe.take(rows), y_all[rows]
    n, lengths = len(offsets) - 1, np.diff(offsets)
    W, trans, start, end = fm.split_weights(w)  # = fm.batch_potentials(Xe, w, idx)
    batch = ChainPotentials(np.asarray(Xs @ W), offsets, trans, start, end)
    seq = np.repeat(np.arange(n), lengths)
    check_decomposition(loss, ChainPotentials.augments, "a sequence batch")
    Y = list(Ye) if idx is None else [Ye[i] for i in np.asarray(idx).reshape(-1)]
    if type(loss).counts_wrong_parts:  # augment in place: the unaries are ours
        scale = np.asarray(loss.part_costs(Y), dtype=float)[seq]
        batch.unary += scale[:, None]
        batch.unary[np.arange(y.size), y] -= scale
        yh = viterbi_flat(batch)
        delta = np.bincount(seq, weights=scale * (y != yh), minlength=n)
        # Δ(y, y) = 0, so on augmented scores: ξ_i = max(0, s'(ŷ_i) − s'(y_i))
        slack = np.maximum(0.0, batch.score_flat(yh) - batch.score_flat(y))
    else:
        aug = batch.augment([y[offsets[i]:offsets[i + 1]] for i in range(n)], loss)
        yh = viterbi_flat(aug)
        Y_hat = [yh[offsets[i]:offsets[i + 1]] for i in range(n)]
        delta = np.asarray(loss.batch(Y, Y_hat), dtype=float)
        slack = np.maximum(0.0, delta - (batch.score_flat(y) - batch.score_flat(yh)))
    if idx is None:
        psi = dense_difference_sum(Xs, offsets, y, yh, np.ones(y.size), fm.n_states_,
                                   fm.n_input_features_ * fm.n_states_, fm.n_features_)
    else:
        psi = sparse_difference_sum(Xe, Xs, offsets, y, yh, fm.n_states_,
                                    fm.n_input_features_ * fm.n_states_, fm.n_features_)
    return float(delta.sum()), psi, slack


def _flat_truth(Xe, Ye):
    """The true states of every corpus token, concatenated (cached on ``Xe``: the
    targets never change, w does every round)."""
    n_all = len(Xe)
    if len(Ye) != n_all:
        raise ValueError(f"{len(Ye)} outputs for {n_all} sentences")
    cache = getattr(Xe, "_flat_truth", None)
    if cache is None or cache[0] is not Ye:
        y = np.concatenate([np.asarray(a, dtype=np.int64).reshape(-1) for a in Ye]) \
            if n_all else np.zeros(0, np.int64)
        if y.size != Xe.X.shape[0]:
            raise ValueError(f"outputs have {y.size} states for {Xe.X.shape[0]} tokens")
        cache = Xe._flat_truth = (Ye, y)
    return cache[1]


def fused_chain_oracle(fm, Xe, Ye, w, loss, decoder, idx, augment=True):
    """The oracle of a chunk of sentences in one compiled call, or None.

    Handles margin-rescaled Viterbi with a loss that counts wrong tokens at a cost
    of 1, or of 1/T for a sentence of T tokens (Hamming, the default of a sequence
    map, plain or normalised): returns ``(y_hat, loss, psi, margin)`` for the
    sentences ``idx`` of ``Xe`` — decoded paths, Δ_i, the CSR rows δΦ_i (sorted
    columns, no explicit zeros) and w·δΦ_i — computed by
    :func:`structsvm.structures.sequence._oracle_jit.chain_oracle` without holding
    the GIL. Returns None for any other loss or decoder (the caller then takes the
    generic path).
    """
    from .viterbi import VITERBI
    chain_oracle = loops("structsvm.structures.sequence._oracle_jit").chain_oracle

    # (an unpickled Decoder, in a worker process, is a copy: compare its function)
    if (type(loss).decomposition != "position" or not type(loss).counts_wrong_parts
            or decoder.func is not VITERBI.func):
        return None
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= len(Xe)):  # the loop trusts idx
        bad = idx[(idx < 0) | (idx >= len(Xe))][0]
        raise IndexError(f"sentence index {bad} out of range for {len(Xe)} sentences")
    lengths = Xe.offsets[idx + 1] - Xe.offsets[idx]
    costs = np.asarray(loss.part_costs([Ye[i] for i in idx]), dtype=float)
    if np.all(costs == 1.0):
        per_token = False
    elif np.array_equal(costs, 1.0 / np.maximum(lengths, 1)):
        per_token = True
    else:
        return None
    y_all = _flat_truth(Xe, Ye)
    W, trans, start, end = fm.split_weights(w)
    X = Xe.X
    yh, lo, margin, ptr, col, val = chain_oracle(
        X.indptr, X.indices, np.asarray(X.data, dtype=float), Xe.offsets, idx, y_all,
        np.ascontiguousarray(W), np.ascontiguousarray(trans), np.ascontiguousarray(start),
        np.ascontiguousarray(end), np.asarray(w, dtype=float).ravel(), bool(augment),
        per_token)
    psi = sp.csr_matrix((val, col, ptr), shape=(idx.size, fm.n_features_))
    psi.has_canonical_format = True
    return FlatPaths(yh.astype(np.intp, copy=False), lengths), lo, psi, margin


def _hamming_costs(loss, Ye, idx, lengths):
    """``False`` (cost 1 per wrong token) or ``True`` (1/T) for a Hamming-like loss,
    None for any other."""
    if type(loss).decomposition != "position" or not type(loss).counts_wrong_parts:
        return None
    costs = np.asarray(loss.part_costs([Ye[i] for i in idx]), dtype=float)
    if np.all(costs == 1.0):
        return False
    if np.array_equal(costs, 1.0 / np.maximum(lengths, 1)):
        return True
    return None


def fused_order_k_oracle(fm, Xe, Ye, w, loss, decoder, idx, augment=True):
    """:func:`fused_chain_oracle` of an order-k map (``order`` > 1 or
    ``emission_order`` 1): one compiled call,
    :func:`structsvm.structures.sequence._order_oracle_jit.order_k_oracle`, decodes
    the chunk with the map's ``beam`` and counts its uncertified answers on the map
    (``n_decodes_``, ``n_uncertified_decodes_``). None for another loss or decoder."""
    from .viterbi import VITERBI, _order_loops
    oracle = loops("structsvm.structures.sequence._order_oracle_jit").order_k_oracle

    if decoder.func is not VITERBI.func:
        return None
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= len(Xe)):  # the loop trusts idx
        bad = idx[(idx < 0) | (idx >= len(Xe))][0]
        raise IndexError(f"sentence index {bad} out of range for {len(Xe)} sentences")
    lengths = Xe.offsets[idx + 1] - Xe.offsets[idx]
    per_token = _hamming_costs(loss, Ye, idx, lengths)
    if per_token is None:
        return None
    y_all = _flat_truth(Xe, Ye)
    W, trans, start, end = fm.split_weights(w)
    ngw, Wp = fm.order_k_weights(w)
    K, k = fm.n_states_, fm.order
    G1, keys = _bigram_table(trans, start, end), fm.tag_ngrams_
    ngw = np.ascontiguousarray(ngw)
    slots, values = _order_loops.build_hash(keys)
    btab, boff, _, _ = _order_loops.bound_tables(K, k, G1, keys, ngw)
    has_pair = Wp is not None
    Wp = np.ascontiguousarray(Wp) if has_pair else np.zeros((0, K + 1, K))
    X = Xe.X
    b_ng, b_pair = fm._block_starts()
    yh, lo, margin, ptr, col, val, exact = oracle(
        X.indptr, X.indices, np.asarray(X.data, dtype=float), Xe.offsets, idx, y_all,
        np.ascontiguousarray(W), Wp, has_pair, k, G1, keys, slots, values, ngw, btab,
        boff, fm._cap(), b_ng, b_pair, np.asarray(w, dtype=float).ravel(),
        bool(augment), per_token)
    fm._count_decodes(idx.size, int(idx.size - exact.sum()))
    psi = sp.csr_matrix((val, col, ptr), shape=(idx.size, fm.n_features_))
    psi.has_canonical_format = True
    return FlatPaths(yh.astype(np.intp, copy=False), lengths), lo, psi, margin


def _bigram_table(trans, start, end):
    K = trans.shape[0]
    G1 = np.zeros((K + 1, K + 1))
    G1[:K, :K] = trans
    G1[K, :K] = start
    G1[:K, K] = end
    return G1


def aggregate_order_k_violation(fm, Xe, Ye, w, loss, idx=None):
    """:func:`aggregate_chain_violation` of an order-k map: the fused oracle's rows
    summed (a generic loss: the potentials augmented, decoded by
    :func:`pruned_viterbi`, the rows of ``joint_feature_differences``)."""
    from .viterbi import VITERBI, pruned_viterbi

    whole = idx is None
    idx = np.arange(len(Xe)) if whole else np.asarray(idx, dtype=np.int64).reshape(-1)
    fused = fused_order_k_oracle(fm, Xe, Ye, w, loss, VITERBI, idx)
    if fused is not None:
        _, delta, psi, margin = fused
    else:
        Y = [Ye[i] for i in idx]
        batch = fm.batch_potentials(Xe, w, idx)
        Y_hat, exact = pruned_viterbi(batch.augment(Y, loss))
        fm._count_decodes(idx.size, int(idx.size - exact.sum()))
        delta = np.asarray(loss.batch(Y, Y_hat), dtype=float)
        psi = fm.joint_feature_differences(Xe, Y, Y_hat, idx)
        margin = np.asarray(psi @ w, dtype=float).ravel()
    slack = np.maximum(0.0, delta - margin)
    if whole:
        total = np.asarray(psi.sum(axis=0), dtype=float).ravel()
    else:
        total = sp.csr_matrix(psi.sum(axis=0))
        total.sum_duplicates()
        total.eliminate_zeros()
    return float(delta.sum()), total, slack


class FlatPaths(LazyOutputs):
    """State paths stored end to end: item i is a view of sentence i's states.

    A read-only sequence (``len``, indexing, iteration) that creates its per-sentence
    arrays only when asked, so an oracle call whose caller needs only losses and
    rows pays nothing per sentence.

    Parameters
    ----------
    flat : ndarray of int
        The paths concatenated.
    lengths : ndarray of int
        Tokens of each path.
    """

    def __init__(self, flat, lengths):
        self.flat = flat
        self.starts = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])

    def __len__(self):
        return len(self.starts) - 1

    def _item(self, i):
        return self.flat[self.starts[i]:self.starts[i + 1]]
