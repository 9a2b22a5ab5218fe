"""Chain batches: the potentials the Viterbi decoder consumes, their path scores and
their loss augmentation; first order (:class:`ChainPotentials`) and order k
(:class:`OrderKChainPotentials`), which share the batch layout, enumeration and
augmentation (:class:`ChainBatch`)."""
from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from ...protocols import check_decomposition

__all__ = ["ChainBatch", "ChainPotentials", "OrderKChainPotentials"]


class ChainBatch:
    """What every chain batch shares: sentences concatenated with ``offsets`` (row
    ``offsets[i] + t`` of ``unary`` is token t of sentence i), one path per sentence,
    the per-token loss added to the unaries.

    A subclass sets ``unary`` and ``offsets`` and gives ``_select(lo, hi)`` (the batch
    of the rows lo:hi as one sentence), ``_score_one(i, y)``, ``score_flat(y)`` and
    ``_with_unary(unary)`` (the same batch on other unaries).
    """

    structure: ClassVar[str] = "sequence"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)  # the loss decompositions augment adds
    #: whether the scores have more than first-order parts (the decoders ask)
    higher_order: ClassVar[bool] = False

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
        return self._select(self.offsets[i], self.offsets[i + 1])

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
        """Unaries plus the per-token loss: ``part_cost(y_i)`` on every wrong state for
        a loss that counts wrong positions (Hamming), else the table
        ``loss.part_losses(y_i, n_states)``."""
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} outputs for a batch of {len(self)} sequences")
        check_decomposition(loss, self.augments, "a sequence batch")
        K = self.n_states
        lengths = self.lengths()
        if type(loss).counts_wrong_parts:  # one table for all tokens at once
            return self._augment_wrong_tokens(Y, lengths, loss.part_costs(Y))
        tables = []
        for i, y in enumerate(Y):
            tab = np.asarray(loss.part_losses(np.asarray(y, dtype=np.intp).reshape(-1), K),
                             dtype=float).reshape(-1, K)
            if tab.shape[0] != lengths[i]:
                raise ValueError(f"Sample {i}: loss table has {tab.shape[0]} rows for "
                                 f"{lengths[i]} tokens")
            tables.append(tab)
        extra = np.concatenate(tables) if tables else np.zeros((0, K))
        return self._with_unary(self.unary + extra)

    def _augment_wrong_tokens(self, Y, lengths, costs):
        parts = [np.asarray(y, dtype=np.intp).reshape(-1) for y in Y]
        for i, y in enumerate(parts):
            if y.size != lengths[i]:
                raise ValueError(f"Sample {i}: output has {y.size} states for "
                                 f"{lengths[i]} tokens")
        y = np.concatenate(parts) if parts else np.zeros(0, np.intp)
        scale = np.repeat(np.asarray(costs, dtype=float), lengths)
        unary = self.unary + scale[:, None]
        unary[np.arange(y.size), y] -= scale
        return self._with_unary(unary)


class ChainPotentials(ChainBatch):
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

    def __init__(self, unary, offsets, transition, start, end):
        self.unary = np.asarray(unary, dtype=float)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.transition = np.asarray(transition, dtype=float)
        self.start = np.asarray(start, dtype=float)
        self.end = np.asarray(end, dtype=float)

    def _select(self, lo, hi):
        return ChainPotentials(self.unary[lo:hi], np.array([0, hi - lo]),
                               self.transition, self.start, self.end)

    def _with_unary(self, unary):
        return ChainPotentials(unary, self.offsets, self.transition, self.start, self.end)

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

class OrderKChainPotentials(ChainBatch):
    """Factor scores of a batch of order-k chains (k = 1, 2, 3), concatenated with
    offsets.

    A path y of sentence i (T tokens), padded to ỹ = (P^k, y_0, .., y_{T-1}, P)
    with the padding symbol P, scores

    .. math::

        s_i(y) = \\sum_t \\mathrm{unary}[o_i + t, y_t]
                 + \\sum_t \\mathrm{pair}[o_i + t, y_{t-1}, y_t]
                 + \\sum_{m=1}^{k} \\sum_{e} G_m(ỹ_{e-m}, .., ỹ_e)

    where e runs over the T + 1 window ends (every token and the final pad),
    ``y_{-1} = P``, G_1 is the first-order table (``transition``, ``start`` for
    (P, b), ``end`` for (a, P)) and G_m (m >= 2) the weight of a tag n-gram among
    ``ngrams`` (0 for any other).

    Parameters
    ----------
    unary : ndarray of shape (n_tokens, n_states)
    offsets : ndarray of int of shape (n_sequences + 1,)
    transition : ndarray of shape (n_states, n_states)
    start, end : ndarray of shape (n_states,)
    order : {1, 2, 3}
    ngrams : ndarray of int64
        Sorted keys of the scored tag n-grams of orders 2..k (see
        :mod:`structsvm.structures.sequence._tag_windows`; P is state ``n_states``).
    ngram_weights : ndarray of shape (len(ngrams),)
    pair : ndarray of shape (n_tokens, n_states + 1, n_states), optional
        ``pair[t, a, b]``: token t's score with previous tag a (P = ``n_states``
        at a sentence's first token) and tag b (emission order 1).
    beam : int, optional
        At most this many tags per position in decoding (None: as many as an
        answer certified exact needs; see
        :func:`structsvm.structures.sequence.pruned_viterbi`).

    Examples
    --------
    >>> import numpy as np
    >>> # two tags, order 2; the trigram (P, P, 1) -- P = 2 -- weighs 0.5
    >>> p = OrderKChainPotentials(np.array([[1., 0.], [0., 2.]]), [0, 2],
    ...                           np.zeros((2, 2)), np.zeros(2), np.zeros(2), 2,
    ...                           np.array([(2 * 3 + 2) * 3 + 1]), np.array([0.5]))
    >>> p.score(np.array([0, 1])), p.score(np.array([1, 1]))
    (3.0, 2.5)
    """

    higher_order: ClassVar[bool] = True

    def __init__(self, unary, offsets, transition, start, end, order, ngrams,
                 ngram_weights, pair=None, beam=None):
        self.unary = np.asarray(unary, dtype=float)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.transition = np.asarray(transition, dtype=float)
        self.start = np.asarray(start, dtype=float)
        self.end = np.asarray(end, dtype=float)
        self.order = int(order)
        self.ngrams = np.asarray(ngrams, dtype=np.int64)
        self.ngram_weights = np.asarray(ngram_weights, dtype=float)
        self.pair = None if pair is None else np.asarray(pair, dtype=float)
        self.beam = beam

    def _select(self, lo, hi):
        return OrderKChainPotentials(
            self.unary[lo:hi], np.array([0, hi - lo]), self.transition, self.start,
            self.end, self.order, self.ngrams, self.ngram_weights,
            None if self.pair is None else self.pair[lo:hi], self.beam)

    def _with_unary(self, unary):
        return OrderKChainPotentials(unary, self.offsets, self.transition, self.start,
                                     self.end, self.order, self.ngrams,
                                     self.ngram_weights, self.pair, self.beam)

    def bigram_table(self):
        """G_1 as a (K+1, K+1) table: transitions, ``start`` in row P, ``end`` in
        column P (entry (P, P) 0, no path uses it)."""
        K = self.n_states
        G1 = np.zeros((K + 1, K + 1))
        G1[:K, :K] = self.transition
        G1[K, :K] = self.start
        G1[:K, K] = self.end
        return G1

    # ------------------------------------------------------------------ scores
    def _score_one(self, i, y):
        """The score of one path, window by window (the plain reference)."""
        lo, hi = self.offsets[i], self.offsets[i + 1]
        y = np.asarray(y, dtype=np.intp).reshape(-1)
        if y.size != hi - lo:
            raise ValueError(f"Sample {i}: path of length {y.size} for a sequence of "
                             f"{hi - lo} tokens")
        K, k = self.n_states, self.order
        if y.size == 0:
            return 0.0
        G1, b = self.bigram_table(), K + 1
        weight = dict(zip(self.ngrams.tolist(), self.ngram_weights.tolist()))
        padded = [K] * k + [int(v) for v in y] + [K]
        s = 0.0
        for t, tag in enumerate(y):
            s += self.unary[lo + t, tag]
            if self.pair is not None:
                s += self.pair[lo + t, padded[k + t - 1], tag]
        for e in range(k, k + y.size + 1):
            s += G1[padded[e - 1], padded[e]]
            for m in range(2, k + 1):
                key = 0
                for sym in padded[e - m:e + 1]:
                    key = key * b + sym
                s += weight.get(key + (0 if m == 2 else b ** 3), 0.0)
        return float(s)

    def score_flat(self, y):
        """Scores of the paths concatenated in ``y`` (one state per row of ``unary``)."""
        from ._tag_windows import _previous, ngram_index, padded_windows

        y = np.asarray(y, dtype=np.int64)
        n, K = len(self), self.n_states
        offsets = self.offsets - self.offsets[0]
        lengths = np.diff(offsets)
        seq = np.repeat(np.arange(n), lengths)
        rows = self.offsets[0] + np.arange(y.size)
        out = np.bincount(seq, weights=self.unary[rows, y], minlength=n)
        prev = _previous(y, offsets, K)
        if self.pair is not None:
            out += np.bincount(seq, weights=self.pair[rows, prev, y], minlength=n)
        G1 = self.bigram_table()
        # first-order windows: (previous, tag) at every token, (last, P) at the end
        out += np.bincount(seq, weights=G1[prev, y], minlength=n)
        full = lengths > 0
        out[full] += G1[y[offsets[1:][full] - 1], K]
        if self.order >= 2:
            keys, sentence = padded_windows(y, offsets, K, self.order)
            for key in keys:
                j = ngram_index(self.ngrams, key)
                ok = j >= 0
                out += np.bincount(sentence[ok], weights=self.ngram_weights[j[ok]],
                                   minlength=n)
        return out


def _is_single_path(y):
    if isinstance(y, np.ndarray):
        return y.dtype != object
    if isinstance(y, (list, tuple)):
        return len(y) == 0 or np.ndim(y[0]) == 0
    return False
