"""Decoders of dependency trees: Eisner (projective) and Chu-Liu-Edmonds
(non-projective) over arc scores, exact; over second-order scores, McDonald &
Pereira's sibling search and the grandparent search (exact over the kept arcs), and
the rearrangement search for non-projective trees (approximate). Batched and
compiled; loss-augmented by the batch."""
from __future__ import annotations

import itertools

import numpy as np

from ... import protocols
from ..._compiled import loops, warmup
from ...limits import check_array_size
from ...protocols import Decoder, EnumerationError
from ._arcs import ArcPotentials, encode_tree, is_tree
from ._second_order import SecondOrderPotentials
from .spans import eisner_max_marginals, kbest_eisner

__all__ = ["eisner", "chu_liu_edmonds", "all_trees_nbest", "EISNER", "CHU_LIU_EDMONDS", "EISNER_ONE_ROOT",
           "CHU_LIU_EDMONDS_ONE_ROOT"]

# the loops, imported (with numba) when a decode first runs
_jit = loops("structsvm.structures.dependency._decoders_jit")
_jit2 = loops("structsvm.structures.dependency._second_order_jit")


def _check(batch, exclude, name):
    if not isinstance(batch, (ArcPotentials, SecondOrderPotentials)):
        raise TypeError(f"{name} decodes dependency potentials (ArcPotentials or "
                        f"SecondOrderPotentials), got {type(batch).__name__}")
    if exclude is not None:
        raise ValueError(f"{name} cannot exclude a tree (no second-best search); use "
                         "loss-augmented decoding (the default for every learner)")
    arcs = batch.arcs if type(batch).second_order else batch
    n = np.asarray(arcs.lengths(), dtype=np.int64)
    if np.any(n < 1):
        raise ValueError(f"Sample {int(np.flatnonzero(n < 1)[0])}: empty sentence")
    # a relation may score -inf (not allowed on that arc); with second-order factors
    # every arc needs a finite best relation, first order an arc may be forbidden
    # (all its relations -inf: see _penalised)
    first = not type(batch).second_order
    for scores, off in ((arcs.scores, arcs.score_off),
                        (arcs.best_relations()[0], arcs.arc_off)):
        bad = np.isnan(scores) | (scores == np.inf) if (scores is arcs.scores or first) \
            else ~np.isfinite(scores)
        if bad.any():
            i = int(np.searchsorted(off, np.flatnonzero(bad)[0], side="right") - 1)
            raise ValueError(f"Sample {i}: arc scores contain NaN or infinite values "
                             "(an arc's relations may score -inf, not all of them)"
                             if not first else
                             f"Sample {i}: arc scores contain NaN or +inf")
    return arcs


def _penalised(scores, arcs):
    """Arc scores with every forbidden arc (−inf) replaced by a finite score low
    enough that any tree through one scores below every tree without: the lowest
    finite arc of its sentence minus 1 + n (highest − lowest finite arc). The
    decoders then find the best allowed tree whenever one exists, exactly (as the
    single-root penalty of Gabow & Tarjan lowers root arcs)."""
    forbidden = scores == -np.inf
    if not forbidden.any():
        return scores
    out = scores.copy()
    n = arcs.n_words
    for i in np.unique(np.searchsorted(arcs.arc_off, np.flatnonzero(forbidden),
                                       side="right") - 1):
        lo, hi = int(arcs.arc_off[i]), int(arcs.arc_off[i + 1])
        m = int(n[i]) + 1
        h, d = np.divmod(np.arange(m * m), m)
        real = (d > 0) & (h != d)
        block = out[lo:hi]
        finite = block[real & ~forbidden[lo:hi]]
        top, low = (finite.max(), finite.min()) if finite.size else (0.0, 0.0)
        block[forbidden[lo:hi]] = low - 1.0 - (m - 1) * (top - low)
    return out


def _codes(heads, rels, arcs):
    """Encoded trees (:func:`encode_tree`) from the decoded heads and the best
    relation of every arc, one array per sentence."""
    n = arcs.n_words
    if arcs.n_labels > 1:
        seq = np.repeat(np.arange(n.size), n)
        m = n[seq] + 1
        dep = np.arange(heads.size) - arcs.head_off[seq] + 1
        heads = rels[arcs.arc_off[seq] + heads * m + dep] * m + heads
    off = arcs.head_off
    return [heads[off[i]:off[i + 1]] for i in range(n.size)]


def _decode(func, batch, exclude, single_root, name, projective):
    arcs = _check(batch, exclude, name)
    if type(batch).second_order:
        return _decode_second_order(batch, single_root, projective)
    scores, rels = arcs.best_relations()
    scores = np.ascontiguousarray(_penalised(scores, arcs), dtype=np.float64)
    heads = np.empty(int(arcs.head_off[-1]), dtype=np.int64)
    best = np.empty(len(arcs))
    warmup.wait(func)
    func(scores, arcs.arc_off, arcs.head_off, bool(single_root), heads, best)
    return _codes(heads, rels, arcs)


def _decode_second_order(batch, single_root, projective):
    scores, rels, kept, sib, sib_off, grand, grand_off = batch.tables()
    m = batch.n_words + 1
    # the search's tables for the largest sentence: spans by the slots of every
    # word's kept heads (with grandparents) or m x m (siblings)
    per_arc = np.add.reduceat(kept.astype(np.int64), batch.arc_off[:-1])
    cells = (per_arc + 1) * m if batch.grandparents else m * m
    check_array_size((int(cells.max()) * 7 + int((m * m).max()) * 6,), 8,
                     "the second-order search of the longest sentence "
                     f"({int(m.max()) - 1} words)")
    heads = np.empty(int(batch.head_off[-1]), dtype=np.int64)
    best = np.empty(len(batch))
    _jit2.second_order_batch(
        scores, kept, sib if batch.siblings else np.zeros(0),
        grand if batch.grandparents else np.zeros(0), batch.arc_off, sib_off, grand_off,
        batch.head_off, batch.grandparents, bool(single_root), projective, heads, best)
    return _codes(heads, rels, batch.arcs)


def eisner(batch, exclude=None, *, single_root=False):
    """The highest-scoring projective tree of every sentence (Eisner's algorithm).

    Dynamic programming over spans [s, t] of the nodes 0 (root) .. n: a *complete*
    span is a head with all its descendants on one side, an *incomplete* one a head
    and a dependent at its two ends, joined by their arc:

    .. math::

        I(s, t) &= \\max_{s \\le r < t} C_\\rightarrow(s, r) + C_\\leftarrow(r + 1, t)
                   + \\sigma(s \\to t) \\text{ (or } \\sigma(t \\to s)),\\\\
        C_\\rightarrow(s, t) &= \\max_{s < r \\le t} I_\\rightarrow(s, r)
                               + C_\\rightarrow(r, t), \\qquad
        C_\\leftarrow(s, t) = \\max_{s \\le r < t} C_\\leftarrow(s, r)
                             + I_\\leftarrow(r, t),

    and the best tree scores C→(0, n), found in O(n³) time and O(n²) space and
    recovered by back-pointers. Every projective tree has exactly one derivation.
    With relations, σ(h → d) = max_l σ(h → d, l) and every arc of the tree takes
    its best relation: the best labelled tree, exactly.

    On :class:`SecondOrderPotentials`, the second-order search over the arcs the
    batch keeps, exact over their projective trees: McDonald & Pereira's (2006)
    sibling spans, O(n³), or with grandparent factors spans that also fix the head
    of their head (Carreras 2007; Koo & Collins 2010), O(n⁴) over all arcs.
    All sentences of a batch are decoded by one compiled call.

    Loss-augmented decoding needs nothing special: the batch's ``augment`` adds the
    attachment loss (of heads, or of heads and relations) to the arc scores. An arc
    whose relations all score −inf is forbidden (as output constraints set them,
    :mod:`structsvm.structures.dependency.constraints`): it is searched with a score
    below every allowed tree's, so the best allowed tree is found exactly, and a
    sentence no allowed tree fits gets a tree of score −inf.

    Parameters
    ----------
    batch : ArcPotentials or SecondOrderPotentials
    exclude : None
        Not supported (raises).
    single_root : bool, default=False
        The root takes exactly one dependent (as in Universal Dependencies); by
        default it may take several.

    Returns
    -------
    list of ndarray of int
        One encoded tree per sentence (``y[d - 1]`` the head of word d, 0 the root;
        with relations ``relation * (n + 1) + head``, see :func:`encode_tree`).
        Ties go to the first maximum found.

    Raises
    ------
    ValueError
        On an empty sentence, NaN or +inf scores, ``exclude``, or (second-order
        potentials) an arc whose relations all score −inf.

    References
    ----------
    J. Eisner. Three new probabilistic models for dependency parsing: an
    exploration. COLING 1996.
    R. McDonald, K. Crammer, F. Pereira. Online large-margin training of dependency
    parsers. ACL 2005.
    R. McDonald, F. Pereira. Online learning of approximate dependency parsing
    algorithms. EACL 2006.
    X. Carreras. Experiments with a higher-order projective dependency parser.
    EMNLP-CoNLL 2007.
    T. Koo, M. Collins. Efficient third-order dependency parsers. ACL 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((4, 4)); S[0, 2] = 5; S[2, 1] = S[2, 3] = 2; S[1, 3] = 3
    >>> eisner(ArcPotentials(S.ravel(), [3]))[0].tolist()
    [2, 0, 2]
    """
    return _decode(_jit.eisner_batch, batch, exclude, single_root, "eisner", True)


def chu_liu_edmonds(batch, exclude=None, *, single_root=False):
    """The highest-scoring tree of every sentence, projective or not
    (Chu-Liu-Edmonds maximum spanning arborescence).

    Every word takes its best head; while these arcs close a cycle C, C is
    contracted into one node c, an arc u → c scoring
    max_{v ∈ C} σ(u → v) − σ(head(v) → v) (entering C at v breaks v's cycle arc) and
    an arc c → v scoring max_{u ∈ C} σ(u → v); the best tree of the contracted graph
    is then expanded, keeping every arc of C but the one into the node where the
    tree enters it. O(n³) per sentence, one compiled call per batch. With relations,
    every arc takes its best relation, exactly as :func:`eisner`; an arc whose
    relations all score −inf is forbidden, as there.

    On :class:`SecondOrderPotentials` (where the best tree is NP-hard to find),
    McDonald & Pereira's (2006) approximation: from the best projective tree
    (:func:`eisner`), give one word another kept head, the change that raises the
    score most and keeps a tree, until no change raises it.

    Parameters
    ----------
    batch : ArcPotentials or SecondOrderPotentials
    exclude : None
        Not supported (raises).
    single_root : bool, default=False
        The root takes exactly one dependent: every root arc is lowered by more than
        any two trees' scores can differ, so the best tree has one root arc
        (Gabow & Tarjan 1984).

    Returns
    -------
    list of ndarray of int
        One encoded tree per sentence.

    Raises
    ------
    ValueError
        On an empty sentence, NaN or +inf scores, ``exclude``, or (second-order
        potentials) an arc whose relations all score −inf.

    References
    ----------
    R. McDonald, F. Pereira. Online learning of approximate dependency parsing
    algorithms. EACL 2006.
    Y. J. Chu, T. H. Liu. On the shortest arborescence of a directed graph.
    Science Sinica 14, 1965. J. Edmonds. Optimum branchings. J. Research of the
    National Bureau of Standards 71B, 1967. R. McDonald, F. Pereira, K. Ribarov,
    J. Hajič. Non-projective dependency parsing using spanning tree algorithms.
    HLT/EMNLP 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((5, 5)); S[0, 3] = 5; S[3, 1] = S[4, 2] = S[1, 4] = 2
    >>> chu_liu_edmonds(ArcPotentials(S.ravel(), [4]))[0].tolist()  # crossing arcs
    [3, 4, 0, 1]
    """
    return _decode(_jit.chu_liu_edmonds_batch, batch, exclude, single_root,
                   "chu_liu_edmonds", False)


def _eisner_one_root(batch, exclude=None):
    return eisner(batch, exclude, single_root=True)


def _chu_liu_edmonds_one_root(batch, exclude=None):
    return chu_liu_edmonds(batch, exclude, single_root=True)


def all_trees_nbest(batch, k, *, single_root=False):
    """The ``k`` best trees, projective or not, of every sentence, by scoring every
    tree: the k best outputs of :func:`chu_liu_edmonds` for short sentences (a
    sentence of n words has up to (n + 1)^(n - 1) trees). With relations, each tree
    contributes its k best relation assignments (every word's relations are
    independent given the heads: the k best sums of the words' sorted scores).

    Parameters
    ----------
    batch : ArcPotentials
    k : int
        Trees per sentence (>= 1).
    single_root : bool, default=False
        Only trees whose root takes exactly one dependent.

    Returns
    -------
    list of (list of ndarray of int, ndarray of float)
        Every sentence's encoded trees, best first, and their scores (trees of score
        −inf left out; ties in the order of enumeration).

    Raises
    ------
    structsvm.protocols.EnumerationError
        A sentence has more head assignments ((n + 1)^n) than
        :data:`structsvm.protocols.MAX_ENUMERATED_OUTPUTS`.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((4, 4)); S[0, 2] = 5; S[2, 1] = 2.5; S[1, 3] = 2; S[2, 3] = 0.5
    >>> [(y.tolist(), float(s)) for y, s in zip(*all_trees_nbest(
    ...     ArcPotentials(S.ravel(), [3]), 2)[0])]
    [([2, 0, 1], 9.5), ([2, 0, 2], 8.0)]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if not isinstance(batch, ArcPotentials):
        raise TypeError(f"all_trees_nbest takes first-order dependency potentials "
                        f"(ArcPotentials), got {type(batch).__name__}")
    k = int(k)
    limit = protocols.MAX_ENUMERATED_OUTPUTS
    L = batch.n_labels
    out = []
    for i in range(len(batch)):
        n = int(batch.n_words[i])
        if (n + 1) ** n > limit:
            raise EnumerationError(
                f"the k best non-projective trees are found by enumeration, but sample "
                f"{i} has {n} words: {n + 1}^{n} head assignments, more than "
                f"MAX_ENUMERATED_OUTPUTS = {limit}. Use decoder='eisner' (k-best "
                "projective trees).")
        m = n + 1
        full = batch.matrix(i).reshape(m, m, L)          # [head, dependent, relation]
        order = np.argsort(-full, axis=2, kind="stable")[:, :, :k]
        top = np.take_along_axis(full, order, axis=2)
        found = []                                       # (score, code)
        for heads in itertools.product(range(m), repeat=n):
            if not is_tree(heads) or (single_root and heads.count(0) != 1):
                continue
            best = [(0.0, ())]                           # k best relation choices
            for d, h in enumerate(heads, start=1):
                best = sorted(((s + top[h, d, j], rels + (int(order[h, d, j]),))
                               for s, rels in best for j in range(top.shape[2])
                               if top[h, d, j] > -np.inf),
                              key=lambda t: -t[0])[:k]
            found += [(s, encode_tree(heads, rels if L > 1 else None))
                      for s, rels in best if s > -np.inf]
        found.sort(key=lambda t: -t[0])
        out.append(([c for _, c in found[:k]],
                    np.array([s for s, _ in found[:k]], dtype=float)))
    return out


def _all_trees_one_root(batch, k):
    return all_trees_nbest(batch, k, single_root=True)


def _max_marginals_one_root(batch):
    return eisner_max_marginals(batch, single_root=True)


def _kbest_one_root(batch, k):
    return kbest_eisner(batch, k, single_root=True)


EISNER = Decoder(name="eisner", structure="dependency", func=eisner,
                 max_marginals=eisner_max_marginals, nbest=kbest_eisner)
CHU_LIU_EDMONDS = Decoder(name="chu_liu_edmonds", structure="dependency",
                          func=chu_liu_edmonds, nbest=all_trees_nbest)
EISNER_ONE_ROOT = Decoder(name="eisner_one_root", structure="dependency",
                          func=_eisner_one_root, max_marginals=_max_marginals_one_root,
                          nbest=_kbest_one_root)
CHU_LIU_EDMONDS_ONE_ROOT = Decoder(name="chu_liu_edmonds_one_root",
                                   structure="dependency",
                                   func=_chu_liu_edmonds_one_root,
                                   nbest=_all_trees_one_root)
