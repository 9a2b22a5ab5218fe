"""Constrained chains: tags fixed, allowed or forbidden per token and allowed
transitions (BIO, IOB1, BIOES or a user's own), as scores of −inf on a chain
batch, so that every chain decoder stays exact under them."""
from __future__ import annotations

import numpy as np

from ..constraints import part_mask
from ._chain import ChainPotentials, OrderKChainPotentials

__all__ = ["transition_mask", "constrain_chains", "constrain_tagged"]


def transition_mask(tags, constraints):
    """The transitions ``constraints`` allow between the tags ``tags``: a (K + 1,
    K + 1) boolean array, ``[a, b]`` for tag a followed by tag b, row K the
    sentence's start and column K its end (entry [K, K] unused); None when they
    constrain no transition.

    Examples
    --------
    >>> from structsvm.structures.constraints import OutputConstraints
    >>> transition_mask(["B-NP", "I-NP", "O"],
    ...                 OutputConstraints(transitions="BIO")).astype(int).tolist()
    [[1, 1, 1, 1], [1, 1, 1, 1], [1, 0, 1, 1], [1, 0, 1, 1]]
    """
    if constraints is None or constraints.transitions is None:
        return None
    names = list(tags) + [None]
    K = len(tags)
    mask = np.ones((K + 1, K + 1), dtype=bool)
    for a, prev in enumerate(names):
        for b, tag in enumerate(names):
            if prev is None and tag is None:
                continue
            mask[a, b] = constraints.allows_transition(prev, tag)
    return mask


def constrain_chains(batch, allowed=None, transitions=None):
    """A chain batch with forbidden tags and transitions scored −inf.

    Parameters
    ----------
    batch : ChainPotentials or OrderKChainPotentials
    allowed : ndarray of bool of shape (n_tokens, n_states), optional
        The tags every token of the batch may take (rows as ``batch.unary``).
    transitions : ndarray of bool of shape (n_states + 1, n_states + 1), optional
        The allowed transitions (:func:`transition_mask`), shared by the batch's
        chains.

    Returns
    -------
    ChainPotentials or OrderKChainPotentials
        A new batch of the same kind; a path's score is unchanged when the path
        obeys the constraints and −inf otherwise (at any order: every pair of
        consecutive tags, and the first and the last tag, pass through the
        first-order table the mask restricts).

    Examples
    --------
    >>> import numpy as np
    >>> p = ChainPotentials(np.zeros((2, 2)), [0, 2], np.zeros((2, 2)), np.zeros(2),
    ...                     np.zeros(2))
    >>> q = constrain_chains(p, allowed=np.array([[True, False], [True, True]]))
    >>> q.score(np.array([0, 1])), q.score(np.array([1, 1]))
    (0.0, -inf)
    """
    unary = np.array(batch.unary, dtype=float)
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if allowed.shape != unary.shape:
            raise ValueError(f"allowed has shape {allowed.shape}, the batch's unary "
                             f"scores {unary.shape}")
        unary[~allowed] = -np.inf
    trans = np.array(batch.transition, dtype=float)
    start = np.array(batch.start, dtype=float)
    end = np.array(batch.end, dtype=float)
    if transitions is not None:
        K = unary.shape[1]
        transitions = np.asarray(transitions, dtype=bool)
        if transitions.shape != (K + 1, K + 1):
            raise ValueError(f"transitions must have shape {(K + 1, K + 1)}, got "
                             f"{transitions.shape}")
        trans[~transitions[:K, :K]] = -np.inf
        start[~transitions[K, :K]] = -np.inf
        end[~transitions[:K, K]] = -np.inf
    if type(batch).higher_order:
        return OrderKChainPotentials(unary, batch.offsets, trans, start, end, batch.order,
                                     batch.ngrams, batch.ngram_weights, batch.pair,
                                     batch.beam)
    return ChainPotentials(unary, batch.offsets, trans, start, end)


def constrain_tagged(tags, index, batch, constraints):
    """:func:`constrain_chains` from :class:`OutputConstraints` that name tags.

    Parameters
    ----------
    tags : sequence
        The tag of every state (a fitted map's ``tags_``).
    index : dict
        Tag -> state.
    batch : ChainPotentials or OrderKChainPotentials
    constraints : list of OutputConstraints or None
        One per chain of the batch; those with ``transitions`` must all allow the
        same transitions (the batch's transition scores are shared).

    Raises
    ------
    ValueError
        A tag not in ``tags``, a token beyond a sentence's end, chains of one batch
        with different transitions, or a scheme that does not fit the tags.
    """
    if len(constraints) != len(batch):
        raise ValueError(f"{len(constraints)} constraints for a batch of {len(batch)} "
                         "chains")
    K = len(tags)

    def encode(tag, part):
        try:
            return index[tag]
        except (KeyError, TypeError):
            raise ValueError(f"constraints: tag {tag!r} (token {part}) was not seen in "
                             f"training; the tag set is {list(tags)}") from None

    allowed = None
    trans = None
    for i, c in enumerate(constraints):
        lo, hi = int(batch.offsets[i]), int(batch.offsets[i + 1])
        try:
            mask = part_mask(c, hi - lo, K, encode, i, "token")
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("Sample") else
                             f"Sample {i}: {msg}") from None
        if mask is not None:
            if allowed is None:
                allowed = np.ones((batch.unary.shape[0], K), dtype=bool)
            allowed[lo:hi] = mask
        t = transition_mask(tags, c)
        if i == 0:
            trans = t
        elif not (t is None and trans is None) and (
                t is None or trans is None or not np.array_equal(t, trans)):
            raise ValueError(f"Sample {i}: its transitions differ from those of sample 0 "
                             "of the batch (a batch shares one transition table)")
    return constrain_chains(batch, allowed, trans)
