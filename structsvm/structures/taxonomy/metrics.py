"""Taxonomy metric: the tree distance between true and predicted classes."""
from __future__ import annotations

import numpy as np

__all__ = ["tree_distance"]


def tree_distance(Y_true, Y_pred, tree=None, sep=None, normalize=False):
    """Mean tree distance between true and predicted classes of a taxonomy.

    The distance of two leaves is the length of the path between them through their
    deepest common ancestor (0 for the same class, 2 for siblings).

    Parameters
    ----------
    Y_true, Y_pred : sequences of labels
        Leaf names, paths (tuples) or ``sep``-joined strings.
    tree : networkx.DiGraph, dict or list of paths, optional
        Needed when labels are leaf names; paths alone determine their distance.
    sep : str, optional
        Separator of string labels.
    normalize : bool, default=False
        Divide each distance by the sum of the two depths (Δ ∈ [0, 1]).

    Returns
    -------
    float

    Examples
    --------
    >>> tree_distance(["comp.sys.mac", "rec.autos"], ["comp.sys.ibm", "rec.autos"], sep=".")
    1.0
    """
    from .features import build_tree
    from .losses import TreeDistanceLoss

    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} labels but Y_pred has {len(Y_pred)}")
    if len(Y_true) == 0:
        raise ValueError("tree_distance of empty label lists is undefined")
    loss = TreeDistanceLoss(normalize=normalize)
    if tree is not None:
        t = build_tree(tree, sep)
        enc_t = [t.encode(y, sep, i) for i, y in enumerate(Y_true)]
        enc_p = [t.encode(y, sep, i) for i, y in enumerate(Y_pred)]
        return float(np.mean([loss(a, b) for a, b in zip(enc_t, enc_p)]))

    def names(y, i):
        if isinstance(y, str) and sep is not None:
            return tuple(y.split(sep))
        if isinstance(y, (tuple, list)):
            return tuple(y)
        raise ValueError(f"Sample {i}: label {y!r} is not a path; pass tree= to measure "
                         "distances between leaf names")

    vals = []
    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        a, b = names(a, i), names(b, i)
        common = 0
        for u, v in zip(a, b):
            if u != v:
                break
            common += 1
        d = len(a) + len(b) - 2 * common
        vals.append(d / (len(a) + len(b)) if normalize else float(d))
    return float(np.mean(vals))
