"""Second-order potentials: arc scores plus sibling and grandparent factors, the arcs
a search keeps (pruning by first-order max-marginals), a tree's score, loss
augmentation."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._compiled import loops
from ...limits import check_array_size
from ._arcs import ArcPotentials, _is_single_tree

__all__ = ["SecondOrderPotentials", "DenseFactors", "sibling_factors",
           "grandparent_factors"]

_jit = loops("structsvm.structures.dependency._second_order_jit")


def sibling_factors(heads):
    """The sibling factors (h, s, d) of a tree: d's head h and the previous
    dependent s of h between h and d, or s = h when there is none.

    Examples
    --------
    >>> sibling_factors([0, 1, 1, 3])
    [(0, 0, 1), (1, 1, 2), (1, 2, 3), (3, 3, 4)]
    """
    h = [int(v) for v in np.asarray(heads).ravel()]
    out = []
    for d in range(1, len(h) + 1):
        head = h[d - 1]
        step = -1 if d > head else 1
        prev = head
        for q in range(d + step, head, step):
            if h[q - 1] == head:
                prev = q
                break
        out.append((head, prev, d))
    return out


def grandparent_factors(heads):
    """The grandparent factors (g, h, d) of a tree: d's head h ≥ 1 and h's head g.

    Examples
    --------
    >>> grandparent_factors([0, 1, 1, 3])
    [(0, 1, 2), (0, 1, 3), (1, 3, 4)]
    """
    h = [int(v) for v in np.asarray(heads).ravel()]
    return [(h[head - 1], head, d) for d, head in enumerate(h, start=1) if head > 0]


class DenseFactors:
    """Second-order scores given as arrays: for sentence i, ``siblings[i][h, s, d]``
    scores the sibling factor (h, s, d) (s = h for d's closest) and
    ``grandparents[i][g, h, d]`` the grandparent factor (g, h, d), each an
    (n_i + 1)³ array (or None for no such factors)."""

    def __init__(self, siblings=None, grandparents=None):
        self.siblings = None if siblings is None else \
            [np.asarray(a, dtype=float) for a in siblings]
        self.grandparents = None if grandparents is None else \
            [np.asarray(a, dtype=float) for a in grandparents]

    def tables(self, batch, kept, sib_off, grand_off):
        """The scores of the kept factors, in the decoder's compact layout."""
        sib = np.zeros(int(sib_off[-1]) if self.siblings is not None else 0)
        grand = np.zeros(int(grand_off[-1]) if self.grandparents is not None else 0)
        for i in range(len(batch)):
            m = int(batch.n_words[i]) + 1
            K = kept[batch.arc_off[i]:batch.arc_off[i + 1]].reshape(m, m)
            deps = [np.flatnonzero(K[h]) for h in range(m)]
            heads_of = [np.flatnonzero(K[:, h]) for h in range(m)]
            if self.siblings is not None:
                T, pos = self.siblings[i], int(sib_off[i])
                for h in range(m):
                    kh = deps[h].size
                    block = np.zeros((kh + 1, kh))
                    for c, d in enumerate(deps[h]):
                        block[0, c] = T[h, h, d]
                        for r, s in enumerate(deps[h]):
                            if min(h, d) < s < max(h, d):
                                block[r + 1, c] = T[h, s, d]
                    sib[pos:pos + block.size] = block.ravel()
                    pos += block.size
            if self.grandparents is not None:
                T, pos = self.grandparents[i], int(grand_off[i])
                for h in range(1, m):
                    for d in deps[h]:
                        g = heads_of[h]
                        grand[pos:pos + g.size] = T[g, h, d]
                        pos += g.size
        return sib, grand

    def tree_scores(self, batch, heads):
        """Σ of the second-order scores of one tree (heads) per sentence."""
        out = np.zeros(len(batch))
        for i, h in enumerate(heads):
            if self.siblings is not None:
                out[i] += sum(self.siblings[i][f] for f in sibling_factors(h))
            if self.grandparents is not None:
                out[i] += sum(self.grandparents[i][f] for f in grandparent_factors(h))
        return out

    def select(self, i):
        """The factors of sentence i, as a batch of one."""
        return DenseFactors(None if self.siblings is None else [self.siblings[i]],
                            None if self.grandparents is None else
                            [self.grandparents[i]])


class SecondOrderPotentials:
    """Scores of a batch of sentences with arc, sibling and grandparent factors.

    A tree y scores its arcs (with their relations, as :class:`ArcPotentials`)
    plus, for every word d with head h = y_d,

    .. math::

        \\mathrm{sib}(h, s, d) + \\mathrm{grand}(y_h, h, d),

    s the previous dependent of h between h and d (s = h when d is the closest;
    McDonald & Pereira 2006) and y_h the head of h (none when h is the root;
    Carreras 2007). The decoders search the arcs the batch *keeps*: with
    ``max_heads``, for every word the heads of its ``max_heads`` best arcs by
    first-order max-marginal (the best score of a projective tree through the arc
    under the arc scores alone), the arcs of the best first-order tree, and the
    true arcs of a loss-augmented batch; all arcs otherwise. ``prune_margin``
    keeps of those only the heads within that margin of the word's best
    max-marginal.

    Parameters
    ----------
    arcs : ArcPotentials
        The arc scores.
    factors : DenseFactors or a feature map's factor scorer
        Where the sibling and grandparent scores come from: ``tables(batch, kept,
        sib_off, grand_off)`` (the kept factors, compact) and ``tree_scores(batch,
        heads)`` (the second-order score of one tree per sentence).
    siblings, grandparents : bool
        Which factors the batch has.
    max_heads : int or None, default=None
        Heads kept per word, at most (None: every arc).
    prune_margin : float, default=inf
        With ``max_heads``: only the heads whose arcs' max-marginals are within this
        of the word's best.
    include : list of ndarray of int, optional
        A tree per sentence whose arcs are always kept.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.zeros((3, 3)); A[0, 1] = A[1, 2] = 1.0; A[0, 2] = 1.5
    >>> sib = np.zeros((3, 3, 3)); sib[0, 1, 2] = 1.0   # 1 and 2 both under the root
    >>> p = SecondOrderPotentials(ArcPotentials(A.ravel(), [2]), DenseFactors([sib]),
    ...                           siblings=True, grandparents=False)
    >>> p.score([0, 1]), p.score([0, 0])
    (2.0, 3.5)
    """

    structure: ClassVar[str] = "dependency"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)
    #: the batch holds factors over pairs of arcs
    second_order: ClassVar[bool] = True

    def __init__(self, arcs, factors, *, siblings, grandparents, max_heads=None,
                 prune_margin=np.inf, include=None):
        if not isinstance(arcs, ArcPotentials):
            raise TypeError(f"arcs must be ArcPotentials, got {type(arcs).__name__}")
        self.arcs = arcs
        self.factors = factors
        self.siblings = bool(siblings)
        self.grandparents = bool(grandparents)
        self.max_heads = max_heads
        self.prune_margin = float(prune_margin)
        self.include = include
        self._tables = None

    @property
    def n_words(self):
        """Number of words of every sentence (the arc part's)."""
        return self.arcs.n_words

    @property
    def n_labels(self):
        """The number of relations L (the arc part's)."""
        return self.arcs.n_labels

    @property
    def arc_off(self):
        """Every sentence's first arc (the arc part's layout)."""
        return self.arcs.arc_off

    @property
    def head_off(self):
        """Every sentence's first word (the arc part's layout)."""
        return self.arcs.head_off

    def __len__(self):
        return len(self.arcs)

    def lengths(self):
        """Number of words of every sentence of the batch."""
        return self.arcs.lengths()

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sentence {i} out of range for a batch of {n}")
        i %= n
        return SecondOrderPotentials(
            self.arcs[i], self.factors.select(i), siblings=self.siblings,
            grandparents=self.grandparents, max_heads=self.max_heads,
            prune_margin=self.prune_margin,
            include=None if self.include is None else [self.include[i]])

    def _with(self, arcs, include):
        return SecondOrderPotentials(arcs, self.factors, siblings=self.siblings,
                                     grandparents=self.grandparents,
                                     max_heads=self.max_heads,
                                     prune_margin=self.prune_margin, include=include)

    # ------------------------------------------------------------------ the search
    def kept(self):
        """Which arcs the search keeps: a bool array in the layout of an unlabelled
        batch's scores."""
        return self.tables()[2]

    def tables(self):
        """What a decoder reads: ``(arc scores, relations, kept, sib, sib_off, grand,
        grand_off)``, the best relation of every arc and its score, the kept arcs,
        and the kept factors' scores in the compact layout of
        :mod:`structsvm.structures.dependency._second_order_jit` (computed once)."""
        if self._tables is None:
            scores, rels = self.arcs.best_relations()
            scores = np.ascontiguousarray(scores, dtype=np.float64)
            n = self.n_words
            include = np.full(int(self.head_off[-1]), -1, dtype=np.int64)
            if self.include is not None:
                heads = [np.asarray(y, dtype=np.int64).ravel() % (k + 1)
                         for y, k in zip(self.include, n)]
                include[:] = np.concatenate(heads) if heads else include
            kept = np.empty(scores.size, dtype=np.bool_)
            scratch = np.empty(int(self.head_off[-1]), dtype=np.int64)
            _jit.prune_batch(scores, self.arc_off, self.head_off, include,
                             int(self.max_heads or 0), self.prune_margin, scratch, kept)
            sib_off = np.empty(len(self) + 1, dtype=np.int64)
            grand_off = np.empty(len(self) + 1, dtype=np.int64)
            _jit.layout_sizes(kept, self.arc_off, self.head_off, sib_off, grand_off)
            check_array_size((int(sib_off[-1]) * self.siblings
                              + int(grand_off[-1]) * self.grandparents,), 8,
                             f"the second-order factor scores of {len(self)} sentences")
            sib, grand = self.factors.tables(self, kept, sib_off, grand_off)
            self._tables = (scores, rels, kept, sib, sib_off, grand, grand_off)
        return self._tables

    # ------------------------------------------------------------------ scores
    def score(self, y):
        """Score of tree ``y`` (a batch of one), or an array of the scores of ``Y[i]``."""
        if _is_single_tree(y):
            if len(self) != 1:
                raise ValueError("score(y) with one tree needs a batch of one sentence; "
                                 "pass a list of trees")
            return float(self._score_batch([y])[0])
        return self._score_batch(y)

    def _score_batch(self, Y):
        first = self.arcs._score_batch(Y)  # checks the trees
        heads = [np.asarray(y, dtype=np.int64).ravel() % (n + 1)
                 for y, n in zip(Y, self.n_words)]
        return first + self.factors.tree_scores(self, heads)

    # ------------------------------------------------------------------ the loss
    def augment(self, Y, loss):
        """The loss added to the arc scores (it counts words, as
        :meth:`ArcPotentials.augment`), and the true trees' arcs kept."""
        return self._with(self.arcs.augment(Y, loss), list(Y))

    # ------------------------------------------------------------------ enumeration
    def output_space_sizes(self):
        """Number of labelled projective trees of every sentence."""
        return self.arcs.output_space_sizes()

    def enumerate(self):
        """Every labelled projective tree of a batch of one (the pruning ignored)."""
        return self.arcs.enumerate()
