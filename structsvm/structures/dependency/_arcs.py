"""Arc-factored potentials: the arc scores a dependency decoder reads (with relations
where the arcs carry them), a tree's score, loss augmentation, and the projective
trees of a short sentence."""
from __future__ import annotations

import itertools
from functools import lru_cache
from typing import ClassVar

import numpy as np

from ..._compiled import loops
from ...protocols import check_decomposition

__all__ = ["ArcPotentials", "count_projective_trees", "projective_trees", "is_tree",
           "is_projective", "encode_tree", "decode_tree"]


def encode_tree(heads, relations=None):
    """The encoded output of a tree: word d's code is ``relation_d * (n + 1) +
    head_d`` (relation ids 0 .. L − 1; the head alone without relations).

    Examples
    --------
    >>> encode_tree([2, 0], [1, 0]).tolist()
    [5, 0]
    """
    h = np.asarray(heads, dtype=np.int64).ravel()
    if relations is None:
        return h.copy()
    return np.asarray(relations, dtype=np.int64).ravel() * (h.size + 1) + h


def decode_tree(code):
    """Heads and relation ids of an encoded tree (see :func:`encode_tree`).

    Examples
    --------
    >>> [a.tolist() for a in decode_tree([5, 0])]
    [[2, 0], [1, 0]]
    """
    c = np.asarray(code, dtype=np.int64).ravel()
    return c % (c.size + 1), c // (c.size + 1)


class ArcPotentials:
    """Arc scores of a batch of sentences: s(h → d, l) for every head h, dependent d
    and relation l the arc may take.

    Sentence i of n_i words has nodes 0 (the root) .. n_i and the arcs
    ``arc_off[i] + h * (n_i + 1) + d`` (an (n_i + 1) × (n_i + 1) block in row-major
    order; entries with d = 0 or h = d are no arcs). Arc a has the scores
    ``scores[slot_off[a]:slot_off[a + 1]]`` of the relations
    ``relations[slot_off[a]:slot_off[a + 1]]`` (ascending; a relation an arc does not
    list scores −inf). A tree y, word d with head y_d and relation l_d, scores

    .. math::

        s_i(y) = \\sum_{d=1}^{n_i} s(y_d \\to d, l_d).

    Encoded trees hold one code per word, ``l_d (n_i + 1) + y_d``
    (:func:`encode_tree`): the heads themselves when L = 1.

    Parameters
    ----------
    scores : ndarray
        Without ``slot_off``: the dense scores, of shape (sum_i (n_i + 1)^2 L,), the
        L relations of every arc in a row (−inf for a relation an arc may not take);
        with it, one score per entry.
    lengths : ndarray of int of shape (n_sentences,)
        n_i, the number of words of every sentence (at least 1).
    n_labels : int, default=1
        L, the number of relations.
    relations, slot_off : ndarray of int, optional
        The entries' relations and every arc's first entry (sum_i (n_i + 1)^2 + 1
        offsets), for scores given per entry.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0., 1., 2.],   # root -> 1, root -> 2
    ...               [0., 0., 5.],   # 1 -> 2
    ...               [0., 3., 0.]])  # 2 -> 1
    >>> p = ArcPotentials(S.ravel(), [2])
    >>> p.score([0, 1]), p.score([2, 0])
    (6.0, 5.0)
    """

    structure: ClassVar[str] = "dependency"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)  # losses over the words: Hamming, UAS
    #: the batch holds no factors over pairs of arcs
    second_order: ClassVar[bool] = False

    def __init__(self, scores, lengths, n_labels=1, relations=None, slot_off=None):
        self.n_words = np.asarray(lengths, dtype=np.int64).ravel()
        self.n_labels = int(n_labels)
        if self.n_labels < 1:
            raise ValueError(f"n_labels must be at least 1, got {n_labels}")
        self.arc_off = np.concatenate([[0], np.cumsum((self.n_words + 1) ** 2)]) \
            .astype(np.int64)
        self.head_off = np.concatenate([[0], np.cumsum(self.n_words)]).astype(np.int64)
        n_arcs = int(self.arc_off[-1])
        scores = np.asarray(scores, dtype=float).ravel()
        L = self.n_labels
        if slot_off is None:  # dense: L entries per arc
            if scores.size != n_arcs * L:
                raise ValueError(f"{scores.size} arc scores for sentences that need "
                                 f"{n_arcs * L} ((n + 1)² × {L} each)")
            slot_off = np.arange(0, n_arcs * L + 1, L, dtype=np.int64)
            relations = np.tile(np.arange(L, dtype=np.int64), n_arcs)
        else:
            slot_off = np.asarray(slot_off, dtype=np.int64).ravel()
            relations = np.asarray(relations, dtype=np.int64).ravel()
            if slot_off.size != n_arcs + 1 or slot_off[0] != 0 \
                    or slot_off[-1] != scores.size or relations.size != scores.size \
                    or np.any(np.diff(slot_off) < 1):
                raise ValueError(f"slot_off must rise from 0 to the {scores.size} "
                                 f"scores over the {n_arcs} arcs, with relations for "
                                 "every score")
            if relations.size and (relations.min() < 0 or relations.max() >= L):
                raise ValueError(f"relations outside 0 .. {L - 1}")
        self.scores, self.relations, self.slot_off = scores, relations, slot_off
        self._best = None

    def __len__(self):
        return self.n_words.size

    def lengths(self):
        """Number of words of every sentence of the batch."""
        return self.n_words

    @property
    def score_off(self):
        """Every sentence's first entry in ``scores`` (n_sentences + 1 offsets)."""
        return self.slot_off[self.arc_off]

    def matrix(self, i):
        """The (n_i + 1) × (n_i + 1) arc scores of sentence i (× L with relations,
        −inf for the relations an arc may not take), as a new array."""
        m = int(self.n_words[i]) + 1
        a0, a1 = int(self.arc_off[i]), int(self.arc_off[i + 1])
        lo, hi = int(self.slot_off[a0]), int(self.slot_off[a1])
        out = np.full((m * m, self.n_labels), -np.inf)
        arcs = np.repeat(np.arange(m * m), np.diff(self.slot_off[a0:a1 + 1]))
        out[arcs, self.relations[lo:hi]] = self.scores[lo:hi]
        return out.reshape(m, m) if self.n_labels == 1 else out.reshape(m, m, -1)

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sentence {i} out of range for a batch of {n}")
        i %= n
        a0, a1 = int(self.arc_off[i]), int(self.arc_off[i + 1])
        lo, hi = int(self.slot_off[a0]), int(self.slot_off[a1])
        return ArcPotentials(self.scores[lo:hi], self.n_words[i:i + 1], self.n_labels,
                             self.relations[lo:hi], self.slot_off[a0:a1 + 1] - lo)

    def best_relations(self):
        """The best relation of every arc and its score: ``(scores, relations)``, both
        of shape (sum_i (n_i + 1)^2,) in the layout of an unlabelled batch
        (max_l s(h → d, l), so that a tree's best relations are found arc by arc;
        computed once)."""
        if self._best is None:
            if self.scores.size == self.arc_off[-1]:  # one entry per arc
                self._best = (self.scores, self.relations)
            else:
                n_arcs = int(self.arc_off[-1])
                best, rel = np.empty(n_arcs), np.empty(n_arcs, dtype=np.int64)
                loops("structsvm.structures.dependency._arcs_jit").best_relations(
                    self.scores, self.relations, self.slot_off, best, rel)
                self._best = (best, rel)
        return self._best

    # ------------------------------------------------------------------ scores
    def _flat_codes(self, Y):
        """Heads and relation ids of one tree per sentence, concatenated and
        checked."""
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} trees for a batch of {len(self)} sentences")
        parts = [np.asarray(y, dtype=np.int64).reshape(-1) for y in Y]
        for i, y in enumerate(parts):
            n = int(self.n_words[i])
            if y.size != n:
                raise ValueError(f"Sample {i}: {y.size} heads for a sentence of {n} "
                                 "words")
            if y.size and (y.min() < 0 or y.max() >= (n + 1) * self.n_labels):
                raise ValueError(f"Sample {i}: a head outside 0 .. {n} or a relation "
                                 f"outside 0 .. {self.n_labels - 1}")
        codes = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        m = np.repeat(self.n_words + 1, self.n_words)
        return codes % m, codes // m

    def _arc_positions(self, heads, rels):
        """The entry of the arc heads[t] → (its word) with relation rels[t] of every
        word t (−1 where the arc does not list the relation), and its sentence."""
        seq = np.repeat(np.arange(len(self)), self.n_words)
        dep = np.arange(heads.size) - self.head_off[seq] + 1
        arc = self.arc_off[seq] + heads * (self.n_words[seq] + 1) + dep
        if self.scores.size == self.arc_off[-1]:  # one entry per arc
            pos = np.where(self.relations[arc] == rels, arc, -1)
        else:
            pos = np.empty(arc.size, dtype=np.int64)
            loops("structsvm.structures.dependency._arcs_jit").find_slots(
                self.relations, self.slot_off, arc, np.ascontiguousarray(rels), pos)
        return pos, seq

    def score(self, y):
        """Score of tree ``y`` (a batch of one), or an array of the scores of ``Y[i]``
        (−inf for a tree with a relation its arc may not take)."""
        if _is_single_tree(y):
            if len(self) != 1:
                raise ValueError("score(y) with one tree needs a batch of one sentence; "
                                 "pass a list of trees")
            return float(self._score_batch([y])[0])
        return self._score_batch(y)

    def _score_batch(self, Y):
        pos, seq = self._arc_positions(*self._flat_codes(Y))
        vals = np.where(pos >= 0, self.scores[pos], -np.inf)
        out = np.bincount(seq, weights=np.where(pos >= 0, vals, 0.0),
                          minlength=len(self))
        out[np.unique(seq[pos < 0])] = -np.inf
        return out

    # ------------------------------------------------------------------ the loss
    def augment(self, Y, loss):
        """Arc scores plus the loss of every word: ``part_cost(y_i)`` on every arc
        and relation into word d but the true one for a loss that counts wrong
        positions (Hamming: wrong heads, or wrong heads and relations when the arcs
        carry relations), else ``loss.part_losses(y_i, L (n_i + 1))[d - 1, c]`` on
        the arc and relation of code c (:func:`encode_tree`)."""
        check_decomposition(loss, self.augments, "a dependency batch")
        L = self.n_labels
        entries = np.diff(self.score_off)
        if type(loss).counts_wrong_parts:
            heads, rels = self._flat_codes(Y)
            costs = np.asarray(loss.part_costs(Y), dtype=float)
            out = self.scores + np.repeat(costs, entries)
            pos, seq = self._arc_positions(heads, rels)
            out[pos[pos >= 0]] -= costs[seq[pos >= 0]]
            return self._with_scores(out)
        self._flat_codes(Y)  # checked
        out = self.scores.copy()
        for i, y in enumerate(Y):
            n = int(self.n_words[i])
            m = n + 1
            table = np.asarray(loss.part_losses(np.asarray(y, dtype=np.intp), m * L),
                               dtype=float).reshape(-1, m * L)
            if table.shape[0] != n:
                raise ValueError(f"Sample {i}: loss table has {table.shape[0]} rows for "
                                 f"{n} words")
            a0, a1 = int(self.arc_off[i]), int(self.arc_off[i + 1])
            lo, hi = int(self.slot_off[a0]), int(self.slot_off[a1])
            arc = np.repeat(np.arange(m * m), np.diff(self.slot_off[a0:a1 + 1]))
            h, d = arc // m, arc % m
            real = (d > 0) & (h != d)
            # table[d - 1, l * m + h] on the entry (h, d, l)
            rel = self.relations[lo:hi]
            out[lo:hi][real] += table[d[real] - 1, rel[real] * m + h[real]]
        return self._with_scores(out)

    def _with_scores(self, scores):
        return ArcPotentials(scores, self.n_words, self.n_labels, self.relations,
                             self.slot_off)

    # ------------------------------------------------------------------ enumeration
    def output_space_sizes(self):
        """Number of labelled projective trees of every sentence, every relation
        allowed on every arc (Python ints, exact; at least the number of trees
        :meth:`enumerate` yields)."""
        return [count_projective_trees(int(n)) * self.n_labels ** int(n)
                for n in self.n_words]

    def enumerate(self):
        """Every projective tree of a batch of one, with every assignment of
        relations its arcs list (for tests on short sentences), encoded."""
        if len(self) != 1:
            raise ValueError("enumerate() needs a batch of one sentence")
        n = int(self.n_words[0])
        m = n + 1
        for heads in projective_trees(n):
            if self.n_labels == 1:
                yield heads
                continue
            allowed = [self.relations[self.slot_off[h * m + d]:self.slot_off[h * m + d + 1]]
                       for d, h in enumerate(heads, start=1)]
            for rels in itertools.product(*allowed):
                yield encode_tree(heads, rels)


def _is_single_tree(y):
    if isinstance(y, np.ndarray):
        return y.dtype != object and y.ndim == 1
    if isinstance(y, (list, tuple)):
        return len(y) == 0 or np.ndim(y[0]) == 0
    return False


# --------------------------------------------------------------------------- trees
def is_tree(heads):
    """Whether ``heads`` (``heads[d - 1]`` the head of word d, 0 the root) is a tree:
    every head in 0 .. n, no word its own head, and no cycle (every word reaches
    the root).

    Examples
    --------
    >>> is_tree([2, 0, 2]), is_tree([2, 1, 0])
    (True, False)
    """
    h = np.asarray(heads, dtype=np.int64).ravel()
    n = h.size
    if n and (h.min() < 0 or h.max() > n or np.any(h == np.arange(1, n + 1))):
        return False
    state = np.zeros(n + 1, dtype=np.int8)  # 0 unseen, 1 on the walk, 2 reaches root
    state[0] = 2
    for d in range(1, n + 1):
        path = []
        v = d
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = int(h[v - 1])
        if state[v] == 1:
            return False
        state[path] = 2
    return True


def is_projective(heads):
    """Whether the tree ``heads`` is projective: every word between a head and its
    dependent descends from that head (no crossing arcs, the root counted left of
    the sentence).

    Examples
    --------
    >>> is_projective([2, 0, 2]), is_projective([3, 4, 0, 3])
    (True, False)
    """
    h = np.asarray(heads, dtype=np.int64).ravel()
    arcs = [(min(int(a), d), max(int(a), d)) for d, a in enumerate(h, start=1)]
    for a, b in arcs:
        for c, e in arcs:
            if a < c < b < e:
                return False
    return True


def _projective_arcs(n):
    """Every projective tree over words 1..n as a list of arcs, by Eisner's unique
    derivation (complete and incomplete spans)."""
    @lru_cache(maxsize=None)
    def complete(s, t, right):
        if s == t:
            return ((),)
        out = []
        if right:  # head s; r is its rightmost dependent in the span
            for r in range(s + 1, t + 1):
                out += [a + b for a in incomplete(s, r, True) for b in complete(r, t, True)]
        else:      # head t; r is its leftmost dependent in the span
            for r in range(s, t):
                out += [a + b for a in complete(s, r, False) for b in incomplete(r, t, False)]
        return tuple(out)

    @lru_cache(maxsize=None)
    def incomplete(s, t, right):
        if not right and s == 0:
            return ()
        arc = ((s, t),) if right else ((t, s),)
        return tuple(a + b + arc for r in range(s, t)
                     for a in complete(s, r, True) for b in complete(r + 1, t, False))

    return complete(0, n, True)


def projective_trees(n):
    """Every projective tree of a sentence of n words, as head arrays.

    Examples
    --------
    >>> [t.tolist() for t in projective_trees(2)]
    [[0, 1], [2, 0], [0, 0]]
    """
    for arcs in _projective_arcs(n):
        heads = np.zeros(n, dtype=np.intp)
        for h, d in arcs:
            heads[d - 1] = h
        yield heads


@lru_cache(maxsize=None)
def count_projective_trees(n):
    """The number of projective trees of a sentence of n words (the root may take
    several dependents), counted by the spans of Eisner's algorithm.

    Examples
    --------
    >>> [count_projective_trees(n) for n in range(1, 6)]
    [1, 3, 12, 55, 273]
    """
    m = n + 1
    CR = [[0] * m for _ in range(m)]
    CL = [[0] * m for _ in range(m)]
    IR = [[0] * m for _ in range(m)]
    IL = [[0] * m for _ in range(m)]
    for s in range(m):
        CR[s][s] = CL[s][s] = 1
    for k in range(1, m):
        for s in range(m - k):
            t = s + k
            both = sum(CR[s][r] * CL[r + 1][t] for r in range(s, t))
            IR[s][t] = both
            IL[s][t] = both if s > 0 else 0
            CL[s][t] = sum(CL[s][r] * IL[r][t] for r in range(s, t))
            CR[s][t] = sum(IR[s][r] * CR[r][t] for r in range(s + 1, t + 1))
    return CR[0][n]
