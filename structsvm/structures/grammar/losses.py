"""Labelled-span (bracket) loss between encoded parse trees.

An encoded parse tree (:class:`structsvm.structures.grammar.outputs.EncodedTree`) over n words has
exactly 2n − 1 anchored nodes (i, j, A): one per word and one per binary node, and
no span appears twice. The loss counts the predicted nodes that the true tree does
not have, which decomposes over the chart cells the CKY decoder fills.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .outputs import EncodedTree
from ..losses import BaseLoss

__all__ = ["SpanLoss", "node_keys"]


def node_keys(y):
    """int64 keys of the anchored labelled nodes (i, j, symbol) of an encoded tree."""
    nodes = y.nodes if isinstance(y, EncodedTree) else np.asarray(y, dtype=np.int64)
    nodes = nodes.reshape(-1, 5)
    return (nodes[:, 0] * 8192 + nodes[:, 1]) * (1 << 24) + nodes[:, 3]


class SpanLoss(BaseLoss):
    r"""Labelled-span loss: the number of predicted labelled spans not in the truth.

    .. math::

        \Delta(y, \hat y) = \sum_{(i, j, A) \in \hat y} c_y\,[(i, j, A) \notin y],

    over the anchored nodes of the binarised trees (words with their preterminal
    chain, binary nodes with their symbol, intermediate symbols included), with
    :math:`c_y = 1`, or :math:`1/(2n-1)` when ``normalize``. Both trees have
    2n − 1 nodes, so Δ is symmetric and equals :math:`c_y (2n - 1 - |y \cap \hat y|)`.

    Parameters
    ----------
    normalize : bool, default=False
        Divide by the number of nodes 2n − 1, so that Δ ∈ [0, 1].

    Notes
    -----
    Δ is a sum over the nodes of ŷ, so loss-augmented CKY adds :math:`c_y` to the
    score of every (span, symbol) of the chart and subtracts it again at the nodes
    of y (:meth:`part_cost`).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([[0, 2, 1, 5, 0], [0, 1, -1, 1, -1], [1, 2, -1, 2, -1]])
    >>> y_hat = np.array([[0, 2, 1, 6, 3], [0, 1, -1, 1, -1], [1, 2, -1, 2, -1]])
    >>> SpanLoss()(y, y_hat), SpanLoss(normalize=True)(y, y_hat)
    (1.0, 0.3333333333333333)
    """

    name = "spans"
    decomposition: ClassVar[str] = "span"
    counts_wrong_parts: ClassVar[bool] = True

    def __init__(self, normalize=False):
        self.normalize = normalize

    def __call__(self, y_true, y_pred):
        a, b = node_keys(y_true), node_keys(y_pred)
        if a.size != b.size:
            raise ValueError(f"span loss: trees over {(a.size + 1) // 2} and "
                             f"{(b.size + 1) // 2} words")
        d = float(b.size - np.isin(b, a).sum())
        return d / a.size if self.normalize and a.size else d

    def max_loss(self, y_true):
        return 1.0 if self.normalize else float(node_keys(y_true).size)

    def part_cost(self, y_true):
        """c_y: the cost of every predicted node that is not in ``y_true``."""
        m = node_keys(y_true).size
        return 1.0 / m if self.normalize and m else 1.0

    def __repr__(self):
        return f"SpanLoss(normalize={self.normalize})"
