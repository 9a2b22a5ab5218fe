"""Chain batches: encoded sentences and the potentials the Viterbi decoder consumes."""
from __future__ import annotations

import itertools
import queue
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..losses import HammingLoss
from ..outputs import LazyOutputs
from ._ragged import consecutive_run, gather_rows

__all__ = ["ChainPotentials", "EncodedSequences", "aggregate_chain_violation",
           "difference_entries", "fused_chain_oracle", "FlatPaths"]


class EncodedSequences:
    """Observation features of a corpus: one CSR row per token, sentences by offsets.

    Parameters
    ----------
    X : csr_matrix of shape (n_tokens, n_input_features)
    offsets : ndarray of int of shape (n_sequences + 1,)
        Sentence i owns rows ``offsets[i]:offsets[i + 1]``.
    shared : tuple (table, rows) or None
        When X's entries are ones and token t's row starts with the columns
        ``table[rows[t]]`` (their entries >= 0, in order), tokens of the same type
        share that part of their unary scores (computed once per type).
    """

    def __init__(self, X, offsets, shared=None):
        self.X = X
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.shared = shared

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        return self.X[self.offsets[i]:self.offsets[i + 1]]

    def select(self, idx=None):
        """Token rows and offsets of the sentences ``idx`` (all, without copy, for None).

        A contiguous run of sentences is a view of the corpus matrix (no copy of
        the data); any other ``idx`` copies the selected rows.
        """
        if idx is None:
            return self.X, self.offsets
        rows, offsets = self.rows(idx)
        return self.take(rows), offsets

    def take(self, rows):
        """The token rows ``rows`` (from :meth:`rows`): a view for a slice."""
        if isinstance(rows, slice):
            X, a, b = self.X, rows.start, rows.stop
            ptr = X.indptr[a:b + 1]
            return sp.csr_matrix((X.data[ptr[0]:ptr[-1]], X.indices[ptr[0]:ptr[-1]],
                                  ptr - ptr[0]), shape=(b - a, X.shape[1]), copy=False)
        return self.X[rows]

    def rows(self, idx):
        """Token rows of the sentences ``idx`` (a slice when they are contiguous) and
        their offsets within the selection."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            lo, hi = self.offsets[run[0]], self.offsets[run[1]]
            return slice(int(lo), int(hi)), self.offsets[run[0]:run[1] + 1] - lo
        return gather_rows(self.offsets, idx)

    # Scratch vectors of the map's width for the chunked 1-slack oracle, one per
    # concurrent caller (threads), zero between uses; they live as long as the data.
    def _take_scratch(self, n):
        pool = self.__dict__.setdefault("_scratch", queue.SimpleQueue())
        try:
            buf = pool.get_nowait()
        except queue.Empty:
            return np.zeros(n)
        return buf if buf.size == n else np.zeros(n)

    def _give_scratch(self, buf):
        self._scratch.put(buf)

    def __getstate__(self):
        # scratch vectors and caches stay in this process
        return {"X": self.X, "offsets": self.offsets}


class ChainPotentials:
    """Factor scores of a batch of chains, concatenated with offsets.

    Sentence i owns rows ``offsets[i]:offsets[i + 1]`` of ``unary``; the transition,
    start and end scores are shared. A path y of sentence i scores

    .. math::

        s_i(y) = \\mathrm{start}[y_0] + \\sum_{t} \\mathrm{unary}[o_i + t, y_t]
                 + \\sum_{t \\ge 1} \\mathrm{trans}[y_{t-1}, y_t]
                 + \\mathrm{end}[y_{T_i - 1}].

    Parameters
    ----------
    unary : ndarray of shape (n_tokens, n_states)
    offsets : ndarray of int of shape (n_sequences + 1,)
    transition : ndarray of shape (n_states, n_states)
        ``transition[a, b]`` scores the step a → b.
    start, end : ndarray of shape (n_states,)

    Examples
    --------
    >>> import numpy as np
    >>> p = ChainPotentials(np.array([[1., 0.], [0., 2.]]), np.array([0, 2]),
    ...                     np.array([[0., .5], [0., 0.]]), np.zeros(2), np.zeros(2))
    >>> p[0].score(np.array([0, 1]))
    3.5
    """

    structure: ClassVar[str] = "chain"
    enumerable: ClassVar[bool] = True

    def __init__(self, unary, offsets, transition, start, end):
        self.unary = np.asarray(unary, dtype=float)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.transition = np.asarray(transition, dtype=float)
        self.start = np.asarray(start, dtype=float)
        self.end = np.asarray(end, dtype=float)

    @property
    def n_states(self):
        """Number of states (tags) K."""
        return self.unary.shape[1]

    def __len__(self):
        return len(self.offsets) - 1

    def lengths(self):
        """Number of tokens of every chain of the batch."""
        return np.diff(self.offsets)

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sequence {i} out of range for a batch of {n}")
        i %= n
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return ChainPotentials(self.unary[lo:hi], np.array([0, hi - lo]),
                               self.transition, self.start, self.end)

    # ------------------------------------------------------------------ scores
    def _score_one(self, i, y):
        lo, hi = self.offsets[i], self.offsets[i + 1]
        y = np.asarray(y, dtype=np.intp).reshape(-1)
        if y.size != hi - lo:
            raise ValueError(f"Sample {i}: path of length {y.size} for a sequence of "
                             f"{hi - lo} tokens")
        if y.size == 0:
            return 0.0
        s = self.unary[np.arange(lo, hi), y].sum()
        s += self.transition[y[:-1], y[1:]].sum()
        return float(s + self.start[y[0]] + self.end[y[-1]])

    def score(self, y):
        """Score of path ``y`` (batch of one), or an array of ``Y[i]``'s scores."""
        if _is_single_path(y):
            if len(self) != 1:
                raise ValueError("score(y) with one path needs a batch of one sequence;"
                                 " pass a list of paths")
            return self._score_one(0, y)
        if len(y) != len(self):
            raise ValueError(f"{len(y)} paths for a batch of {len(self)} sequences")
        return self._score_batch(y)

    def _score_batch(self, Y):
        """Scores of one path per sequence, vectorised over the whole batch."""
        n, lengths = len(self), self.lengths()
        parts = [np.asarray(yi, dtype=np.intp).reshape(-1) for yi in Y]
        sizes = np.fromiter((p.size for p in parts), dtype=np.int64, count=n)
        if not np.array_equal(sizes, lengths):
            i = int(np.flatnonzero(sizes != lengths)[0])
            raise ValueError(f"Sample {i}: path of length {sizes[i]} for a sequence of "
                             f"{lengths[i]} tokens")
        return self.score_flat(np.concatenate(parts) if n else np.zeros(0, np.intp))

    def score_flat(self, y):
        """Scores of the paths concatenated in ``y`` (one state per row of ``unary``)."""
        n, lengths = len(self), self.lengths()
        seq = np.repeat(np.arange(n), lengths)
        full = lengths > 0
        rel = self.offsets - self.offsets[0]
        first, last = rel[:-1][full], rel[1:][full] - 1
        inner = np.ones(y.size, dtype=bool)
        inner[first] = False
        inner = np.flatnonzero(inner)
        out = np.bincount(seq, weights=self.unary[self.offsets[0] + np.arange(y.size), y],
                          minlength=n)
        out += np.bincount(seq[inner], weights=self.transition[y[inner - 1], y[inner]],
                           minlength=n)
        out[full] += self.start[y[first]] + self.end[y[last]]
        return out

    def output_space_sizes(self):
        """Number of paths of each sequence: K^T (Python ints, exact)."""
        K = int(self.n_states)
        return [K ** int(T) for T in self.lengths()]

    def enumerate(self):
        """Every path of a batch of one (K^T of them: for tests on tiny chains)."""
        if len(self) != 1:
            raise ValueError("enumerate() needs a batch of one sequence")
        T = int(self.offsets[1] - self.offsets[0])
        for y in itertools.product(range(self.n_states), repeat=T):
            yield np.array(y, dtype=np.intp)

    def augment(self, Y, loss):
        """Unaries plus the per-token loss table ``loss.part_losses(y_i, n_states)``."""
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} outputs for a batch of {len(self)} sequences")
        if not type(loss).decomposable:
            raise TypeError(f"{type(loss).__name__} does not decompose over tokens; "
                            "a chain batch can only be augmented by a decomposable loss")
        K = self.n_states
        lengths = self.lengths()
        if isinstance(loss, HammingLoss):  # same table, built for all tokens at once
            return self._augment_hamming(Y, lengths, loss.normalize)
        tables = []
        for i, y in enumerate(Y):
            tab = np.asarray(loss.part_losses(np.asarray(y, dtype=np.intp).reshape(-1), K),
                             dtype=float).reshape(-1, K)
            if tab.shape[0] != lengths[i]:
                raise ValueError(f"Sample {i}: loss table has {tab.shape[0]} rows for "
                                 f"{lengths[i]} tokens")
            tables.append(tab)
        extra = np.concatenate(tables) if tables else np.zeros((0, K))
        return ChainPotentials(self.unary + extra, self.offsets, self.transition,
                               self.start, self.end)

    def _augment_hamming(self, Y, lengths, normalize):
        parts = [np.asarray(y, dtype=np.intp).reshape(-1) for y in Y]
        for i, y in enumerate(parts):
            if y.size != lengths[i]:
                raise ValueError(f"Sample {i}: output has {y.size} states for "
                                 f"{lengths[i]} tokens")
        y = np.concatenate(parts) if parts else np.zeros(0, np.intp)
        scale = 1.0 / np.repeat(np.maximum(lengths, 1), lengths) if normalize else \
            np.ones(y.size)
        unary = self.unary + scale[:, None]
        unary[np.arange(y.size), y] -= scale
        return ChainPotentials(unary, self.offsets, self.transition, self.start, self.end)


def _is_single_path(y):
    if isinstance(y, np.ndarray):
        return y.dtype != object
    if isinstance(y, (list, tuple)):
        return len(y) == 0 or np.ndim(y[0]) == 0
    return False


def aggregate_chain_violation(fm, Xe, Ye, w, loss, idx=None):
    """1-slack oracle of a fitted ``SequenceFeatures`` over the sentences ``idx`` of
    ``Xe`` (all by default; see its ``aggregate_violation``): (Σ_i Δ_i, Σ_i δΦ_i, ξ per
    sentence); Σ_i δΦ_i is a dense vector for all sentences and a 1×D CSR row (sorted
    columns) for a chunk ``idx``, whose cost then follows the chunk, not D."""
    from ..inference.viterbi import viterbi_flat

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
    if isinstance(loss, HammingLoss):  # augment in place: the unaries are ours
        scale = 1.0 / np.maximum(lengths, 1)[seq] if loss.normalize else np.ones(y.size)
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
        Y = list(Ye) if idx is None else [Ye[i] for i in np.asarray(idx).reshape(-1)]
        delta = np.asarray(loss.batch(Y, Y_hat), dtype=float)
        slack = np.maximum(0.0, delta - (batch.score_flat(y) - batch.score_flat(yh)))
    if idx is None:
        psi = fm._scatter(Xs, offsets, y, yh, np.ones(y.size))
    else:
        psi = _sparse_difference_sum(Xe, Xs, offsets, y, yh, fm.n_states_,
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

    Handles margin-rescaled Hamming-loss Viterbi (the default of a sequence map):
    returns ``(y_hat, loss, psi, margin)`` for the sentences ``idx`` of ``Xe`` —
    decoded paths, Δ_i, the CSR rows δΦ_i (sorted columns, no explicit zeros) and
    w·δΦ_i — computed by :func:`structsvm.features._sequence_oracle_jit.chain_oracle`
    without holding the GIL. Returns None for any other loss or decoder (the caller
    then takes the generic path).
    """
    from ..inference import get_decoder
    from ._sequence_oracle_jit import chain_oracle

    # (an unpickled Decoder, in a worker process, is a copy: compare its function)
    if (type(loss) is not HammingLoss
            or decoder.func is not get_decoder("viterbi").func):
        return None
    y_all = _flat_truth(Xe, Ye)
    W, trans, start, end = fm.split_weights(w)
    X = Xe.X
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= len(Xe)):  # the kernel trusts idx
        bad = idx[(idx < 0) | (idx >= len(Xe))][0]
        raise IndexError(f"sentence index {bad} out of range for {len(Xe)} sentences")
    yh, lo, margin, ptr, col, val = chain_oracle(
        X.indptr, X.indices, np.asarray(X.data, dtype=float), Xe.offsets, idx, y_all,
        np.ascontiguousarray(W), np.ascontiguousarray(trans), np.ascontiguousarray(start),
        np.ascontiguousarray(end), np.asarray(w, dtype=float).ravel(), bool(augment),
        bool(loss.normalize))
    psi = sp.csr_matrix((val, col, ptr), shape=(idx.size, fm.n_features_))
    psi.has_canonical_format = True
    lengths = Xe.offsets[idx + 1] - Xe.offsets[idx]
    return FlatPaths(yh.astype(np.intp, copy=False), lengths), lo, psi, margin


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


def _sparse_difference_sum(Xe, Xs, offsets, y, yh, n_states, base, n_features):
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
