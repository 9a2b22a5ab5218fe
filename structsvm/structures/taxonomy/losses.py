"""Tree distance between classes of a taxonomy (encoded as root-to-leaf paths).

An encoded taxonomy output is the tuple of node indices from the root's child down
to the leaf (see :class:`structsvm.structures.taxonomy.features.TaxonomyFeatures`). Node indices are
unique, so two paths share exactly their common prefix, and the distance needs no
tree: it is the length of the path between the two leaves through their deepest
common ancestor.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..losses import BaseLoss

__all__ = ["TreeDistanceLoss", "common_depth"]


def common_depth(a, b):
    """Number of leading nodes two encoded paths share (depth of their deepest common
    ancestor, the root having depth 0)."""
    n = 0
    for u, v in zip(a, b):
        if u != v:
            break
        n += 1
    return n


def _path(y, what):
    try:
        return tuple(int(v) for v in np.atleast_1d(np.asarray(y)).ravel())
    except (TypeError, ValueError):
        raise TypeError(f"tree distance: {what} must be an encoded path (node indices), "
                        f"got {y!r}") from None


class TreeDistanceLoss(BaseLoss):
    r"""Path length between two leaves via their deepest common ancestor.

    .. math::

        \Delta(y, \hat y) = |y| + |\hat y| - 2\,\mathrm{depth}(\mathrm{lca}(y, \hat y)),

    where :math:`|y|` is the depth of leaf :math:`y`. This is the number of nodes in
    the symmetric difference of the two root paths, i.e. the Hamming distance of
    their indicator vectors Λ(y), Λ(ŷ) (Cai & Hofmann 2004).

    Parameters
    ----------
    normalize : bool, default=False
        Divide by :math:`|y| + |\hat y|`, so that Δ ∈ [0, 1]: 0 for the same leaf,
        1 when the two paths share no node below the root.

    Notes
    -----
    A function of whole paths (``decomposition = "whole"``): loss-augmented decoding
    adds Δ(y_i, ℓ) to the score of every leaf ℓ, which the tree decoder handles
    exactly (each path ends in one leaf). Without ``normalize`` Δ also decomposes
    over nodes: +1 for every node of ŷ off the path of y, −1 for every node on it,
    plus |y| (see :meth:`part_losses`).

    ``max_loss(y)`` is 2|y| (a leaf of the same depth under another top-level node),
    exact for balanced trees; in an unbalanced tree deeper leaves can be farther.

    References
    ----------
    L. Cai, T. Hofmann. Hierarchical document categorization with support vector
    machines. CIKM 2004.

    Examples
    --------
    >>> TreeDistanceLoss()((0, 3, 7), (0, 4))   # siblings' subtrees under node 0
    3.0
    >>> TreeDistanceLoss(normalize=True)((0, 3), (1, 5))
    1.0
    """

    name = "tree_distance"

    def __init__(self, normalize=False):
        self.normalize = normalize

    def __call__(self, y_true, y_pred):
        a, b = _path(y_true, "y_true"), _path(y_pred, "y_pred")
        d = float(len(a) + len(b) - 2 * common_depth(a, b))
        if self.normalize:
            return d / (len(a) + len(b))
        return d

    def max_loss(self, y_true):
        """Twice the length of ``y_true``'s path (1 when normalised)."""
        return 1.0 if self.normalize else 2.0 * len(_path(y_true, "y_true"))

    def part_losses(self, y_true, n_states):
        """Per-node costs ``t`` with Δ(y, ŷ) = Σ_{v ∈ ŷ} t[v] + |y| (unnormalised).

        Parameters
        ----------
        y_true : tuple of int
            Encoded path.
        n_states : int
            Number of tree nodes.
        """
        if self.normalize:
            raise TypeError("the normalised tree distance does not decompose over "
                            "nodes; the tree decoder augments leaf scores instead")
        t = np.ones(int(n_states))
        t[list(_path(y_true, "y_true"))] = -1.0
        return t

    def __repr__(self):
        return f"TreeDistanceLoss(normalize={self.normalize})"
