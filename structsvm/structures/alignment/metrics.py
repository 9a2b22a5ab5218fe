"""Alignment metric: Q and precision of predicted pairwise alignments."""
from __future__ import annotations

from .losses import as_pairs, common_pairs

__all__ = ["alignment_scores"]


def alignment_scores(Y_true, Y_pred):
    """Q and precision of predicted pairwise alignments, pooled over all examples.

    An alignment is an integer array of shape (k, 2) of aligned index pairs (i, j).
    Q (Joachims, Galor & Elber 2005) is the fraction of the gold pairs that the
    predictions recover, Σ_n |y_n ∩ ŷ_n| / Σ_n |y_n|; precision the fraction of the
    predicted pairs that are gold, Σ_n |y_n ∩ ŷ_n| / Σ_n |ŷ_n| (each 1.0 when its
    denominator is 0).

    Parameters
    ----------
    Y_true, Y_pred : sequences of array-like of int of shape (k, 2)

    Returns
    -------
    dict
        ``{"Q": float, "precision": float}``.

    Raises
    ------
    ValueError
        Different numbers of alignments, or an alignment that is not of shape (k, 2)
        (the message names the example).

    Examples
    --------
    >>> alignment_scores([[(0, 0), (1, 1), (2, 3)]], [[(0, 0), (2, 3)]])
    {'Q': 0.6666666666666666, 'precision': 1.0}
    """
    Y_true, Y_pred = list(Y_true), list(Y_pred)
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} alignments but Y_pred has "
                         f"{len(Y_pred)}")
    hit = gold = pred = 0
    for n, (a, b) in enumerate(zip(Y_true, Y_pred)):
        try:
            a, b = as_pairs(a), as_pairs(b)
        except ValueError as exc:
            raise ValueError(f"Example {n}: {exc}") from None
        hit += common_pairs(a, b)
        gold += len(a)
        pred += len(b)
    return {"Q": hit / gold if gold else 1.0, "precision": hit / pred if pred else 1.0}
