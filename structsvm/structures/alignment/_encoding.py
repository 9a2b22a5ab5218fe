"""Alignment batches: encoded pairs of sequences, alignment checks and the potentials."""
from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np

from ...protocols import check_decomposition
from .losses import as_pairs
from .._ragged import consecutive_run, gather_rows

__all__ = ["EncodedPairs", "AlignmentPotentials", "check_alignment", "checked_pairs",
           "gap_counts", "flat_pairs"]


class EncodedPairs:
    """Per-position codes of a corpus of sequence pairs, one row per channel.

    Parameters
    ----------
    s_codes : ndarray of int32 of shape (n_channels, total length of the s's)
    s_off : ndarray of int64 of shape (n_pairs + 1,)
    t_codes : ndarray of int32 of shape (n_channels, total length of the t's)
    t_off : ndarray of int64 of shape (n_pairs + 1,)
    """

    def __init__(self, s_codes, s_off, t_codes, t_off):
        self.s_codes = s_codes
        self.s_off = np.asarray(s_off, dtype=np.int64)
        self.t_codes = t_codes
        self.t_off = np.asarray(t_off, dtype=np.int64)

    def __len__(self):
        return len(self.s_off) - 1

    def lengths(self):
        """(n, m) of every pair, two int arrays."""
        return np.diff(self.s_off), np.diff(self.t_off)

    def select(self, idx=None):
        """The pairs ``idx`` (all, without copy, for None) as a new instance."""
        if idx is None:
            return self
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            a, b = run
            s0, s1, t0, t1 = self.s_off[a], self.s_off[b], self.t_off[a], self.t_off[b]
            return EncodedPairs(self.s_codes[:, s0:s1], self.s_off[a:b + 1] - s0,
                                self.t_codes[:, t0:t1], self.t_off[a:b + 1] - t0)
        rs, so = gather_rows(self.s_off, idx)
        rt, to = gather_rows(self.t_off, idx)
        return EncodedPairs(self.s_codes[:, rs], so, self.t_codes[:, rt], to)



def check_alignment(y, n, m, sample):
    """``y`` as an int64 array of shape (k, 2) of pairs (i, j) of a pair of sequences of
    lengths n and m, strictly increasing in both columns; errors name the sample."""
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError):
        raise TypeError(f"Sample {sample}: an alignment is an array of shape (k, 2) of "
                        f"index pairs, got {type(y).__name__}") from None
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"Sample {sample}: an alignment is an array of shape (k, 2) of "
                         f"index pairs (i, j), got shape {arr.shape}")
    integral = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and \
        np.all(arr == np.round(arr))
    if arr.dtype.kind not in "iu" and not integral:
        raise TypeError(f"Sample {sample}: alignment pairs must be integers, got "
                        f"dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    for col, name, size in ((0, "i (into s)", n), (1, "j (into t)", m)):
        c = arr[:, col]
        bad = np.flatnonzero((c < 0) | (c >= size))
        if bad.size:
            raise ValueError(f"Sample {sample}: pair {int(bad[0])} has {name} = "
                             f"{int(c[bad[0]])}, out of range for a sequence of "
                             f"{size} symbols")
        step = np.flatnonzero(np.diff(c) <= 0)
        if step.size:
            k = int(step[0]) + 1
            raise ValueError(f"Sample {sample}: pairs must increase strictly in both "
                             f"columns, but pair {k} {arr[k].tolist()} follows "
                             f"{arr[k - 1].tolist()}")
    return arr


def checked_pairs(Y, n, m):
    """:func:`flat_pairs` of alignments checked against the lengths n, m of their
    sequences (vectorised; a failure is reported by :func:`check_alignment`)."""
    try:
        flat, off = flat_pairs(Y)
    except ValueError:
        flat = None
    if flat is not None:
        seq = np.repeat(np.arange(len(off) - 1), np.diff(off))
        i, j = flat[:, 0], flat[:, 1]
        same = seq[1:] == seq[:-1]
        if (i >= 0).all() and (j >= 0).all() and (i < n[seq]).all() and \
                (j < m[seq]).all() and (np.diff(i)[same] > 0).all() and \
                (np.diff(j)[same] > 0).all():
            return flat, off
    for p, y in enumerate(Y):
        check_alignment(y, n[p], m[p], p)
    raise ValueError("malformed alignments")  # pragma: no cover - raised above


def flat_pairs(Y):
    """All pairs of the alignments ``Y`` stacked, and their offsets."""
    parts = [as_pairs(y) for y in Y]
    sizes = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    flat = np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)
    return flat.reshape(-1, 2), off


def gap_counts(flat, off, n, m):
    """Gap runs of every alignment: an array of shape (n_pairs, 4) holding the number
    of internal runs, their extensions (length − 1 summed), and the same for the end
    runs (before the first or after the last pair; the one run of each sequence of an
    alignment without pairs)."""
    P = len(off) - 1
    k = np.diff(off)
    E = np.empty((len(flat) + P, 2), dtype=np.int64)
    eoff = off + np.arange(P + 1)
    last = eoff[:-1] + k
    is_last = np.zeros(len(E), dtype=bool)
    is_last[last] = True
    E[is_last] = np.column_stack([n, m])
    E[~is_last] = flat
    prev = np.empty_like(E)
    prev[1:] = E[:-1]
    prev[eoff[:-1]] = -1
    d = E - prev - 1
    end = is_last.copy()
    end[eoff[:-1]] = True
    seq = np.repeat(np.arange(P), k + 1)
    out = np.zeros((P, 4))
    for col, sel in ((0, ~end), (2, end)):
        dd = d[sel]
        out[:, col] = np.bincount(seq[sel], weights=(dd > 0).sum(axis=1), minlength=P)
        out[:, col + 1] = np.bincount(seq[sel], weights=np.maximum(dd - 1, 0).sum(axis=1),
                                      minlength=P)
    return out


class AlignmentPotentials:
    r"""Scores of a batch of sequence pairs under a weight vector, for the alignment
    decoders.

    The match score of positions i of s and j of t is a sum of table entries over
    channels (the symbol pair, and the pairs of neighbours for context features),

    .. math::

        S_{ij} = \sum_c T_c[a_c(i), b_c(j)],

    and an alignment y scores Σ_{(i,j)∈y} S_ij plus, per gap run of length L,
    o + (L − 1) e (``gaps`` = internal open and extend, end-run open and extend).

    Parameters
    ----------
    s_codes, t_codes : array-like of int of shape (n_channels, total length)
        Codes a_c, b_c of the positions of all s's and all t's, concatenated.
    s_off, t_off : array-like of int of shape (n_pairs + 1,)
        Pair p owns positions ``s_off[p]:s_off[p + 1]`` and ``t_off[p]:t_off[p + 1]``.
    tables : ndarray of shape (n_channels, Q, Q)
        T_c.
    gaps : array-like of 4 floats
        (open, extend, end_open, end_extend).
    free_ends : bool, default=False
        The end runs carry no features (their scores are 0 whatever w): local
        alignment (:func:`structsvm.structures.alignment.needleman_wunsch.smith_waterman`)
        is then an exact decoder.
    gold, gold_bonus, offset : optional
        Set by :meth:`augment`: the gold column of every s position (−1 for
        none), the score added at gold cells and a constant per pair.

    Examples
    --------
    >>> S = np.array([[2., -1.], [-1., 2.]])
    >>> p = AlignmentPotentials([[0, 1, 0]], [0, 3], [[0, 0]], [0, 2], S[None],
    ...                         gaps=[-3., -1., -0.5, 0.])
    >>> p.score(np.array([[0, 0], [2, 1]]))        # 2 + 2, gap (1 in s), no end gaps
    1.0
    """

    structure: ClassVar[str] = "alignment"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("cell",)  # the loss decompositions augment adds

    def __init__(self, s_codes, s_off, t_codes, t_off, tables, gaps, free_ends=False,
                 gold=None, gold_bonus=None, offset=None):
        self.s_codes = np.atleast_2d(np.asarray(s_codes, dtype=np.int32))
        self.s_off = np.asarray(s_off, dtype=np.int64)
        self.t_codes = np.atleast_2d(np.asarray(t_codes, dtype=np.int32))
        self.t_off = np.asarray(t_off, dtype=np.int64)
        self.tables = np.asarray(tables, dtype=float)
        self.gaps = np.asarray(gaps, dtype=float).reshape(-1)
        self.free_ends = bool(free_ends)
        self.gold = gold
        self.gold_bonus = gold_bonus
        self.offset = offset

    def __len__(self):
        return len(self.s_off) - 1

    def lengths(self):
        """(n, m) of every pair, two int arrays."""
        return np.diff(self.s_off), np.diff(self.t_off)

    def __getitem__(self, p):
        P = len(self)
        if not -P <= p < P:
            raise IndexError(f"pair {p} out of range for a batch of {P}")
        p %= P
        a, b, c, d = self.s_off[p], self.s_off[p + 1], self.t_off[p], self.t_off[p + 1]
        return AlignmentPotentials(
            self.s_codes[:, a:b], [0, b - a], self.t_codes[:, c:d], [0, d - c],
            self.tables, self.gaps, self.free_ends,
            None if self.gold is None else self.gold[a:b],
            None if self.gold is None else self.gold_bonus[p:p + 1],
            None if self.offset is None else self.offset[p:p + 1])

    def match_scores(self, p=0):
        """The matrix S of pair ``p``, of shape (n, m) (for inspection; decoders sum
        it on the fly), loss augmentation included."""
        q = self[p]
        S = sum(q.tables[c][np.ix_(q.s_codes[c], q.t_codes[c])]
                for c in range(len(q.tables)))
        if q.gold is not None:
            rows = np.flatnonzero(q.gold >= 0)
            S[rows, q.gold[rows]] += q.gold_bonus[0]
        return S

    # ------------------------------------------------------------------ scores
    def _score_batch(self, Y):
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} alignments for a batch of {len(self)} pairs")
        n, m = self.lengths()
        flat, off = checked_pairs(Y, n, m)
        seq = np.repeat(np.arange(len(self)), np.diff(off))
        si = self.s_off[seq] + flat[:, 0]
        tj = self.t_off[seq] + flat[:, 1]
        per_pair = np.zeros(len(flat))
        for c in range(len(self.tables)):
            per_pair += self.tables[c][self.s_codes[c, si], self.t_codes[c, tj]]
        if self.gold is not None:
            per_pair += np.where(self.gold[si] == flat[:, 1], self.gold_bonus[seq], 0.0)
        out = np.bincount(seq, weights=per_pair, minlength=len(self)).astype(float)
        out += gap_counts(flat, off, n, m) @ self.gaps
        if self.offset is not None:
            out += self.offset
        return out

    def score(self, y):
        """Score of alignment ``y`` (batch of one pair), or an array with the score of
        ``Y[p]`` for every pair p when given a list."""
        if isinstance(y, np.ndarray) and y.ndim == 2:
            if len(self) != 1:
                raise ValueError("score(y) with one alignment needs a batch of one pair; "
                                 "pass a list of alignments")
            return float(self._score_batch([y])[0])
        return self._score_batch(list(y))

    def output_space_sizes(self):
        """Number of alignments of every pair: C(n + m, n) (sets of increasing pairs)."""
        n, m = self.lengths()
        return [math.comb(int(a) + int(b), int(a)) for a, b in zip(n, m)]

    def enumerate(self):
        """Every alignment of a one-pair batch (small pairs only), pairs in order."""
        if len(self) != 1:
            raise ValueError("enumerate() needs a batch of one pair")
        n, m = (int(v[0]) for v in self.lengths())
        for k in range(min(n, m) + 1):
            for I in _combinations(n, k):
                for J in _combinations(m, k):
                    yield np.array(list(zip(I, J)), dtype=np.int64).reshape(-1, 2)

    # ------------------------------------------------------------------ loss
    def augment(self, Y, loss):
        """The batch with Δ(y_p, ·) of a loss that counts missed gold cells added (the
        alignment loss): Δ(y_p, ∅) per pair, and −c_y at every gold cell, c_y =
        ``loss.part_cost(y_p)``."""
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} alignments for a batch of {len(self)} pairs")
        if self.gold is not None:
            raise ValueError("these potentials are loss-augmented already")
        check_decomposition(loss, self.augments, "an alignment batch (e.g. "
                            "loss='alignment')")
        n, m = self.lengths()
        flat, off = checked_pairs(Y, n, m)
        seq = np.repeat(np.arange(len(self)), np.diff(off))
        gold = np.full(self.s_codes.shape[1], -1, dtype=np.int64)
        gold[self.s_off[seq] + flat[:, 0]] = flat[:, 1]
        costs = np.asarray(loss.part_costs(Y), dtype=float)
        # the loss of aligning nothing: the constant that the gold cells' −c_y reduce
        offset = np.asarray(loss.batch(Y, [np.zeros((0, 2), np.int64)] * len(Y)),
                            dtype=float)
        return AlignmentPotentials(self.s_codes, self.s_off, self.t_codes, self.t_off,
                                   self.tables, self.gaps, self.free_ends, gold, -costs,
                                   offset)


def _combinations(n, k):
    return itertools.combinations(range(n), k)
