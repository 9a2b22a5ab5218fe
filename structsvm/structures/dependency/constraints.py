"""Constrained trees: heads (and relations) fixed, allowed or forbidden per word,
as arc scores of −inf, so that the tree decoders stay exact under them."""
from __future__ import annotations

import numpy as np

from ..constraints import part_mask
from ._arcs import ArcPotentials

__all__ = ["constrain_arcs", "constrain_heads"]


def constrain_arcs(batch, masks):
    """An arc batch with the codes ``masks`` forbid scored −inf.

    Parameters
    ----------
    batch : ArcPotentials
    masks : list of ndarray of bool of shape (n_i, (n_i + 1) L) or None
        Per sentence, the codes (:func:`encode_tree`) every word may take; None: all.

    Returns
    -------
    ArcPotentials
        A tree's score is unchanged when every word takes an allowed code, −inf
        otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> p = ArcPotentials(np.zeros(9), [2])
    >>> q = constrain_arcs(p, [np.array([[True, False, True], [True, False, False]])])
    >>> q.score([2, 0]), q.score([0, 1])          # word 2 may hang on the root only
    (0.0, -inf)
    """
    if len(masks) != len(batch):
        raise ValueError(f"{len(masks)} masks for a batch of {len(batch)} sentences")
    scores = np.array(batch.scores, dtype=float)
    L = batch.n_labels
    for i, mask in enumerate(masks):
        if mask is None:
            continue
        n = int(batch.n_words[i])
        m = n + 1
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (n, m * L):
            raise ValueError(f"Sample {i}: the mask has shape {mask.shape}, the sentence "
                             f"needs {(n, m * L)}")
        a0, a1 = int(batch.arc_off[i]), int(batch.arc_off[i + 1])
        lo, hi = int(batch.slot_off[a0]), int(batch.slot_off[a1])
        arc = np.repeat(np.arange(m * m), np.diff(batch.slot_off[a0:a1 + 1]))
        h, d = arc // m, arc % m
        real = (d > 0) & (h != d)
        code = batch.relations[lo:hi] * m + h
        bad = np.zeros(hi - lo, dtype=bool)
        bad[real] = ~mask[d[real] - 1, code[real]]
        scores[lo:hi][bad] = -np.inf
    return ArcPotentials(scores, batch.n_words, L, batch.relations, batch.slot_off)


def constrain_heads(relations, index, batch, constraints):
    """:func:`constrain_arcs` from :class:`OutputConstraints` over words.

    Part i is word i + 1 (the i-th entry of a predicted head list); a label is a
    head (0 the root, 1 .. n the words: any relation) or, for a map with relations,
    a ``(head, relation)`` pair.

    Parameters
    ----------
    relations : sequence of str
        The relation of every relation id (a fitted map's ``relations_``; empty
        without relations).
    index : dict
        Relation -> id.
    batch : ArcPotentials
    constraints : list of OutputConstraints or None
        One per sentence.

    Raises
    ------
    ValueError
        A head outside 0 .. n, an unknown relation, a word beyond the sentence's end,
        or transitions.
    TypeError
        Second-order potentials (constraints apply to arc-factored scores).
    """
    if not isinstance(batch, ArcPotentials):
        raise TypeError(f"constraints on trees apply to first-order arc scores, not "
                        f"{type(batch).__name__} (a map with siblings or grandparents)")
    if len(constraints) != len(batch):
        raise ValueError(f"{len(constraints)} constraints for a batch of {len(batch)} "
                         "sentences")
    L = batch.n_labels
    masks = []
    for i, c in enumerate(constraints):
        if c is not None and c.transitions is not None:
            raise ValueError(f"Sample {i}: transitions constrain sequences; a tree has "
                             "none")
        n = int(batch.n_words[i])
        m = n + 1

        def encode(label, part):
            head, rel = label, None
            if isinstance(label, (tuple, list)):
                if len(label) != 2 or not relations:
                    raise ValueError(f"constraints: label {label!r} (word {part + 1}) "
                                     "is no head" + (" or (head, relation) pair"
                                                     if relations else ""))
                head, rel = label
            if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or \
                    not 0 <= head <= n:
                raise ValueError(f"constraints: head {head!r} (word {part + 1}) is not "
                                 f"a node 0 .. {n}")
            if rel is None:
                return np.arange(L) * m + int(head)
            try:
                return index[rel] * m + int(head)
            except (KeyError, TypeError):
                raise ValueError(f"constraints: relation {rel!r} (word {part + 1}) was "
                                 f"not seen in training; the relations are "
                                 f"{list(relations)}") from None

        try:
            masks.append(part_mask(c, n, m * L, encode, i, "part"))
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("Sample") else
                             f"Sample {i}: {msg}") from None
    return constrain_arcs(batch, masks)
