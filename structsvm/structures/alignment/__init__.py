"""Sequence alignment: substitution and affine gap features; decoded by
``needleman_wunsch`` (global) and ``smith_waterman`` (local); missed-gold-pairs loss;
Q score and precision.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import AlignmentFeatures
    from ._encoding import AlignmentPotentials
    from .needleman_wunsch import needleman_wunsch, smith_waterman
    from .losses import AlignmentLoss
    from .metrics import alignment_scores

__all__ = ["AlignmentFeatures", "AlignmentPotentials", "needleman_wunsch",
           "smith_waterman", "AlignmentLoss", "alignment_scores"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "alignment", f"{__name__}.features:AlignmentFeatures")
register("decoder", "needleman_wunsch", f"{__name__}.needleman_wunsch:NEEDLEMAN_WUNSCH")
register("decoder", "smith_waterman", f"{__name__}.needleman_wunsch:SMITH_WATERMAN")
register("loss", "alignment", f"{__name__}.losses:AlignmentLoss")
