"""How many examples got exactly their set of labels."""
from __future__ import annotations

__all__ = ["subset_accuracy"]


def subset_accuracy(Y_true, Y_pred):
    """The fraction of examples whose predicted label set equals the true one.

    >>> subset_accuracy([{"a"}, {"a", "b"}], [{"a"}, {"b"}])
    0.5
    """
    if len(Y_true) != len(Y_pred) or not len(Y_true):
        raise ValueError(f"{len(Y_true)} true and {len(Y_pred)} predicted label sets")
    return sum(set(a) == set(b) for a, b in zip(Y_true, Y_pred)) / len(Y_true)
