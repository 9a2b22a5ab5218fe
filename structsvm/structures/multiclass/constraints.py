"""Constrained classes: the classes an example may or may not take, as class
scores of −inf, so that the argmax and its k best stay exact under them."""
from __future__ import annotations

import numpy as np

from ..constraints import part_mask
from ._potentials import MulticlassPotentials

__all__ = ["constrain_classes"]


def constrain_classes(classes, index, batch, constraints):
    """A multiclass batch with the classes ``constraints`` forbid scored −inf.

    An example's one part is its class, part 0: ``OutputConstraints(allowed={0:
    ["cat", "dog"]})`` or ``forbidden={0: ["cat"]}``.

    Parameters
    ----------
    classes : sequence
        The label of every class (a fitted map's ``classes_``).
    index : dict
        Label -> class.
    batch : MulticlassPotentials
    constraints : list of OutputConstraints or None
        One per example.

    Returns
    -------
    MulticlassPotentials

    Raises
    ------
    ValueError
        A label not in ``classes``, a part other than 0, or transitions.

    Examples
    --------
    >>> from structsvm.structures.constraints import OutputConstraints
    >>> p = MulticlassPotentials(np.array([[0., 2., 1.]]))
    >>> q = constrain_classes(["a", "b", "c"], {"a": 0, "b": 1, "c": 2}, p,
    ...                       [OutputConstraints(forbidden={0: ["b"]})])
    >>> q.scores.tolist()
    [[0.0, -inf, 1.0]]
    """
    if len(constraints) != len(batch):
        raise ValueError(f"{len(constraints)} constraints for a batch of {len(batch)} "
                         "examples")
    K = len(classes)

    def encode(label, part):
        try:
            return index[label]
        except (KeyError, TypeError):
            raise ValueError(f"constraints: unknown label {label!r}; the output space "
                             f"is {list(classes)}") from None

    scores = np.array(batch.scores, dtype=float)
    for i, c in enumerate(constraints):
        if c is not None and c.transitions is not None:
            raise ValueError(f"Sample {i}: transitions constrain sequences; a class "
                             "label has none")
        try:
            mask = part_mask(c, 1, K, encode, i, "part")
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("Sample") else
                             f"Sample {i}: {msg}") from None
        if mask is not None:
            scores[i, ~mask[0]] = -np.inf
    return MulticlassPotentials(scores, batch.loss_tables)
