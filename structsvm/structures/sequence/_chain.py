"""Chain batches: the potentials the Viterbi decoder consumes, their path scores and
their loss augmentation."""
from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from ...protocols import check_decomposition

__all__ = ["ChainPotentials"]


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

    structure: ClassVar[str] = "sequence"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)  # the loss decompositions augment adds

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
        return ChainPotentials(self.unary + extra, self.offsets, self.transition,
                               self.start, self.end)

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
        return ChainPotentials(unary, self.offsets, self.transition, self.start, self.end)


def _is_single_path(y):
    if isinstance(y, np.ndarray):
        return y.dtype != object
    if isinstance(y, (list, tuple)):
        return len(y) == 0 or np.ndim(y[0]) == 0
    return False
