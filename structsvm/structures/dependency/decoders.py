"""Exact decoders of arc-factored dependency trees: Eisner (projective) and
Chu-Liu-Edmonds (non-projective), batched and compiled; loss-augmented by the batch."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops, warmup
from ...protocols import Decoder
from ._arcs import ArcPotentials

__all__ = ["eisner", "chu_liu_edmonds", "EISNER", "CHU_LIU_EDMONDS", "EISNER_ONE_ROOT",
           "CHU_LIU_EDMONDS_ONE_ROOT"]

# the loops, imported (with numba) when a decode first runs
_jit = loops("structsvm.structures.dependency._decoders_jit")


def _check(batch, exclude, name):
    if not isinstance(batch, ArcPotentials):
        raise TypeError(f"{name} decodes dependency potentials (ArcPotentials), got "
                        f"{type(batch).__name__}")
    if exclude is not None:
        raise ValueError(f"{name} cannot exclude a tree (no second-best search); use "
                         "loss-augmented decoding (the default for every learner)")
    scores = np.ascontiguousarray(batch.scores, dtype=np.float64)
    n = np.asarray(batch.lengths(), dtype=np.int64)
    score_off = np.concatenate([[0], np.cumsum((n + 1) ** 2)]).astype(np.int64)
    head_off = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
    if scores.size != score_off[-1]:
        raise ValueError(f"{scores.size} arc scores for sentences that need "
                         f"{int(score_off[-1])}")
    if np.any(n < 1):
        raise ValueError(f"Sample {int(np.flatnonzero(n < 1)[0])}: empty sentence")
    if not np.all(np.isfinite(scores)):
        bad = int(np.searchsorted(score_off, np.flatnonzero(~np.isfinite(scores))[0],
                                  side="right") - 1)
        raise ValueError(f"Sample {bad}: arc scores contain NaN or infinite values")
    return scores, score_off, head_off


def _decode(func, batch, exclude, single_root, name):
    scores, score_off, head_off = _check(batch, exclude, name)
    heads = np.empty(int(head_off[-1]), dtype=np.int64)
    best = np.empty(len(head_off) - 1)
    warmup.wait(func)
    func(scores, score_off, head_off, bool(single_root), heads, best)
    return [heads[head_off[i]:head_off[i + 1]] for i in range(len(head_off) - 1)]


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
    All sentences of a batch are decoded by one compiled call.

    Loss-augmented decoding needs nothing special: the batch's ``augment`` adds the
    attachment (Hamming) loss to the arc scores.

    Parameters
    ----------
    batch : ArcPotentials
    exclude : None
        Not supported (raises).
    single_root : bool, default=False
        The root takes exactly one dependent (as in Universal Dependencies); by
        default it may take several.

    Returns
    -------
    list of ndarray of int
        One head array per sentence (``heads[d - 1]`` the head of word d, 0 the
        root). Ties go to the first maximum found.

    Raises
    ------
    ValueError
        On an empty sentence, non-finite scores, or ``exclude``.

    References
    ----------
    J. Eisner. Three new probabilistic models for dependency parsing: an
    exploration. COLING 1996.
    R. McDonald, K. Crammer, F. Pereira. Online large-margin training of dependency
    parsers. ACL 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.dependency import ArcPotentials
    >>> S = np.zeros((4, 4)); S[0, 2] = 5; S[2, 1] = S[2, 3] = 2; S[1, 3] = 3
    >>> eisner(ArcPotentials(S.ravel(), [3]))[0].tolist()
    [2, 0, 2]
    """
    return _decode(_jit.eisner_batch, batch, exclude, single_root, "eisner")


def chu_liu_edmonds(batch, exclude=None, *, single_root=False):
    """The highest-scoring tree of every sentence, projective or not
    (Chu-Liu-Edmonds maximum spanning arborescence).

    Every word takes its best head; while these arcs close a cycle C, C is
    contracted into one node c, an arc u → c scoring
    max_{v ∈ C} σ(u → v) − σ(head(v) → v) (entering C at v breaks v's cycle arc) and
    an arc c → v scoring max_{u ∈ C} σ(u → v); the best tree of the contracted graph
    is then expanded, keeping every arc of C but the one into the node where the
    tree enters it. O(n³) per sentence, one compiled call per batch.

    Parameters
    ----------
    batch : ArcPotentials
    exclude : None
        Not supported (raises).
    single_root : bool, default=False
        The root takes exactly one dependent: every root arc is lowered by more than
        any two trees' scores can differ, so the best tree has one root arc
        (Gabow & Tarjan 1984).

    Returns
    -------
    list of ndarray of int
        One head array per sentence.

    Raises
    ------
    ValueError
        On an empty sentence, non-finite scores, or ``exclude``.

    References
    ----------
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
                   "chu_liu_edmonds")


def _eisner_one_root(batch, exclude=None):
    return eisner(batch, exclude, single_root=True)


def _chu_liu_edmonds_one_root(batch, exclude=None):
    return chu_liu_edmonds(batch, exclude, single_root=True)


EISNER = Decoder(name="eisner", structure="dependency", func=eisner)
CHU_LIU_EDMONDS = Decoder(name="chu_liu_edmonds", structure="dependency",
                          func=chu_liu_edmonds)
EISNER_ONE_ROOT = Decoder(name="eisner_one_root", structure="dependency",
                          func=_eisner_one_root)
CHU_LIU_EDMONDS_ONE_ROOT = Decoder(name="chu_liu_edmonds_one_root",
                                   structure="dependency",
                                   func=_chu_liu_edmonds_one_root)
