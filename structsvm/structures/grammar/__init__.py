"""Parse trees: CFG rule and span features of binarised trees; decoded by ``cky``
(beam-pruned) and ``cky_exact``; labelled-span loss; bracket scores.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import GrammarFeatures
    from ._encoding import Grammar, GrammarPotentials
    from .outputs import EncodedTree
    from ._trees import binarize, clean_tree, unbinarize
    from .cky import cky, cky_exact, kbest_cky
    from .losses import SpanLoss
    from .metrics import BracketScores, bracket_scores

__all__ = ["GrammarFeatures", "GrammarPotentials", "Grammar", "EncodedTree",
           "clean_tree", "binarize", "unbinarize", "cky", "cky_exact", "kbest_cky",
           "SpanLoss",
           "bracket_scores", "BracketScores"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "grammar", f"{__name__}.features:GrammarFeatures")
register("decoder", "cky", f"{__name__}.cky:CKY")
register("decoder", "cky_exact", f"{__name__}.cky:CKY_EXACT")
register("loss", "spans", f"{__name__}.losses:SpanLoss")
