"""Multi-label classification: a set of labels per example, Φ(x, y) = Σ_l y_l (x ⊗ e_l);
decoded label by label (``independent``); Hamming loss (shared).
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import LabelScores, MultiLabelFeatures
    from .decoder import independent
    from .metrics import subset_accuracy

__all__ = ["MultiLabelFeatures", "LabelScores", "independent", "subset_accuracy"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "multilabel", f"{__name__}.features:MultiLabelFeatures")
register("decoder", "independent", f"{__name__}.decoder:INDEPENDENT")
