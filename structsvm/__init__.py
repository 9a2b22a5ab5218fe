"""structsvm: structural SVMs for sequences, taxonomies, rankings, trees and graphs.

>>> import structsvm
>>> print(structsvm.StructuredSVM().get_params()["learner"])  # chosen per structure
None
"""
from . import features  # noqa: F401  (registers the maps' losses and decoders)
from ._version import __version__
from .estimator import StructuredSVM, fit, load
from .structure import Structure

__all__ = ["StructuredSVM", "Structure", "fit", "load", "__version__"]
