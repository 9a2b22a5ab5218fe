"""Multiclass classification (Crammer-Singer), optionally with classes described by
attributes: Φ(x, y) = φ(x) ⊗ Λ(y), with Λ(y) = e_y or the class's attribute vector;
decoded by ``argmax`` over the classes; zero-one loss (shared). Classes with hidden
sub-classes: :class:`LatentMulticlassFeatures`.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...io import register_model_class
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import MulticlassFeatures
    from ._potentials import MulticlassPotentials
    from .argmax import argmax, class_max_marginals, top_k
    from .constraints import constrain_classes
    from .latent import LatentMulticlassFeatures, SubclassLoss

__all__ = ["MulticlassFeatures", "MulticlassPotentials", "argmax",
           "class_max_marginals", "top_k", "constrain_classes",
           "LatentMulticlassFeatures", "SubclassLoss"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "multiclass", f"{__name__}.features:MulticlassFeatures")
register("decoder", "argmax", f"{__name__}.argmax:ARGMAX")
# a second feature map of this structure, which model files may name
register_model_class(f"{__name__}.latent:LatentMulticlassFeatures")
