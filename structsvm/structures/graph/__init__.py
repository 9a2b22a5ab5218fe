"""Labelled graphs (collective classification, skip-chain models): node and edge
features; decoded by loopy ``max_product`` or the ``lp`` relaxation; Hamming loss
(shared).
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import GraphFeatures
    from ._encoding import GraphPotentials
    from .max_product import GraphLabelings, max_product
    from .lp import lp, lp_relaxation

__all__ = ["GraphFeatures", "GraphPotentials", "GraphLabelings", "max_product", "lp",
           "lp_relaxation"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "graph", f"{__name__}.features:GraphFeatures")
register("decoder", "max_product", f"{__name__}.max_product:MAX_PRODUCT")
register("decoder", "lp", f"{__name__}.lp:LP")
