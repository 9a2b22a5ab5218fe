"""Best root-to-leaf path in a taxonomy: one top-down pass over the tree."""
from __future__ import annotations

import numpy as np

from ...protocols import Decoder

__all__ = ["tree_decode", "path_scores", "TREE"]


def path_scores(node_scores, tree):
    """Score of every root-to-leaf path, for a batch: shape (n_samples, n_leaves).

    Dynamic programming top-down: ``S(v) = s(v) + S(parent(v))``, one vectorised
    step per depth level, O(n_nodes) per example.
    """
    cum = np.array(node_scores, dtype=float, copy=True)
    for level in tree.levels[1:]:
        cum[:, level] += cum[:, tree.parent[level]]
    return cum[:, tree.leaves]


def tree_decode(batch, exclude=None):
    """Highest-scoring root-to-leaf path of each example.

    Parameters
    ----------
    batch : TreePotentials
        Node scores of shape (n_samples, n_nodes) and the tree (loss-augmented
        batches carry the loss in their leaf scores).
    exclude : list of tuple, optional
        Path to skip per example ("argmax over y ≠ y_i").

    Returns
    -------
    list of tuple of int
        Encoded paths (node indices from the root's child to the leaf); ties go to
        the leaf first in breadth-first order.

    Notes
    -----
    With S(v) = Σ_{u on the path to v} s(u), the best path ends at
    argmax_{leaf ℓ} S(ℓ); S is filled parents-first, so the pass is O(n_nodes).

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.taxonomy.features import TreePotentials, build_tree
    >>> t = build_tree({"r": ["a", "b"], "a": ["a1", "a2"]})   # nodes a b a1 a2
    >>> tree_decode(TreePotentials(np.array([[1., 1.1, 0., 0.2]]), t))
    [(0, 3)]
    """
    tree = batch.tree
    scores = path_scores(batch.node_scores, tree)
    if not np.all(np.isfinite(scores)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(scores), axis=1))[0])
        raise ValueError(f"Sample {bad}: node scores contain NaN or infinite values")
    if exclude is not None:
        if len(exclude) != len(scores):
            raise ValueError(f"exclude has {len(exclude)} paths for {len(scores)} examples")
        if tree.leaves.size < 2:
            raise ValueError("no path left to choose from: the tree has one leaf")
        for i, p in enumerate(exclude):
            scores[i, tree.leaf_pos[int(p[-1])]] = -np.inf
    best = np.argmax(scores, axis=1)
    return [tree.leaf_paths[k] for k in best]


TREE = Decoder(name="tree", structure="taxonomy", func=tree_decode)
