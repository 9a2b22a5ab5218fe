"""Taxonomies: a class is a root-to-leaf path in a tree, Λ(y) stacks the indicators of
the path's nodes; decoded top-down (``tree``); tree-distance loss and metric.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import TaxonomyFeatures, TreePotentials
    from ._tree import Tree, build_tree, tree_from_parents
    from .decoder import path_scores, tree_decode
    from .losses import TreeDistanceLoss, common_depth
    from .metrics import tree_distance

__all__ = ["TaxonomyFeatures", "TreePotentials", "Tree", "build_tree",
           "tree_from_parents", "tree_decode", "path_scores", "TreeDistanceLoss",
           "common_depth", "tree_distance"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "taxonomy", f"{__name__}.features:TaxonomyFeatures")
register("decoder", "tree", f"{__name__}.decoder:TREE")
register("loss", "tree_distance", f"{__name__}.losses:TreeDistanceLoss")
