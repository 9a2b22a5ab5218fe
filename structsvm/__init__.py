"""structsvm: structural SVMs for sequences, taxonomies, rankings, trees and graphs.

>>> import structsvm
>>> print(structsvm.StructuredSVM().get_params()["learner"])  # chosen per structure
None
"""
from . import features  # noqa: F401  (registers the maps' losses and decoders)
from .estimator import StructuredSVM, fit
from .io import load

__version__ = "0.1.0"
__all__ = ["StructuredSVM", "fit", "load", "__version__"]
