"""structsvm: structural SVMs for sequences, taxonomies, rankings, trees, graphs and
alignments.

``import structsvm`` is light: the estimator, the feature maps, the decoders and the
libraries they need (scikit-learn, SciPy, numba, NLTK) are imported the first time a
name is used, so a script or the command line starts without paying for them.

>>> import structsvm
>>> print(structsvm.StructuredSVM().get_params()["learner"])  # chosen per structure
None
"""
from typing import TYPE_CHECKING

from ._lazy import attach
from ._version import __version__

if TYPE_CHECKING:  # what the names below resolve to (static tools read these)
    from .estimator import StructuredSVM, fit, load
    from .structures.user.structure import Structure

__all__ = ["StructuredSVM", "Structure", "fit", "load", "__version__"]

_SUBPACKAGES = ("cli", "corpora", "estimator", "io", "learners", "limits",
                "model_selection", "plotting", "protocols", "registry", "structures", "svm",
                "testing")

__getattr__, __dir__ = attach(__name__, globals(), submodules=_SUBPACKAGES)
