"""Binary classification trained for a measure of the whole data set (Joachims 2005,
SVM-perf): the labelling of all examples is one output; losses error rate, F_β,
precision and recall at k, PRBEP and ROC area, each with its exact most violated
labelling; decoded by ``sign``.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import BinaryFeatures
    from ._potentials import BinaryPotentials
    from .outputs import PairSwaps
    from .sign import sign
    from .losses import (ErrorRateLoss, FBetaLoss, PrecisionAtKLoss, RecallAtKLoss,
                         PRBEPLoss, ROCAreaLoss)
    from .metrics import (error_rate, f_beta_score, precision_at_k, recall_at_k, prbep,
                          roc_auc)

__all__ = ["BinaryFeatures", "BinaryPotentials", "PairSwaps", "sign", "ErrorRateLoss",
           "FBetaLoss", "PrecisionAtKLoss", "RecallAtKLoss", "PRBEPLoss", "ROCAreaLoss",
           "error_rate", "f_beta_score", "precision_at_k", "recall_at_k", "prbep",
           "roc_auc"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "binary", f"{__name__}.features:BinaryFeatures")
register("decoder", "sign", f"{__name__}.sign:SIGN")
register("loss", "error_rate", f"{__name__}.losses:ErrorRateLoss")
register("loss", "f1", f"{__name__}.losses:FBetaLoss")
register("loss", "precision_at_k", f"{__name__}.losses:PrecisionAtKLoss")
register("loss", "recall_at_k", f"{__name__}.losses:RecallAtKLoss")
register("loss", "prbep", f"{__name__}.losses:PRBEPLoss")
register("loss", "roc_auc", f"{__name__}.losses:ROCAreaLoss")
