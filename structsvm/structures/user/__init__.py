"""Any structure a researcher writes in plain Python (:class:`Structure`, or plain
functions: :class:`FunctionStructure`), trained like a built-in one through its feature
map (:class:`StructureMap`), decoded by its own ``argmax`` (the decoder
``"structure"``) with its own loss.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...io import register_model_class
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .structure import (FunctionStructure, Structure, StructureMap, as_structure,
                            check_savable)
    from ._map import StructureLoss, StructurePotentials, same_output
    from .latent import LatentStructureLoss, LatentStructureMap

__all__ = ["Structure", "FunctionStructure", "StructureMap", "StructureLoss",
           "StructurePotentials", "as_structure", "check_savable", "same_output",
           "LatentStructureMap", "LatentStructureLoss"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "user", f"{__name__}.structure:StructureMap")
register("decoder", "structure", f"{__name__}._map:STRUCTURE_DECODER")
# the map of a structure with hidden variables, which model files may name
register_model_class(f"{__name__}.latent:LatentStructureMap")
