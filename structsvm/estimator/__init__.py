"""The estimator: :class:`StructuredSVM` (scikit-learn compatible), the shorthand
:func:`fit`, model files (``StructuredSVM.save``, :func:`load`,
:func:`read_checkpoint_info`, :func:`allowed_classes`) and an NLTK tagger backed by a
fitted sequence model (:class:`StructSVMTagger`); calibrated confidence
(:mod:`structsvm.estimator.calibration`: :class:`CalibratedStructuredSVM`,
:class:`MarginCalibrator`, :func:`reliability_curve`,
:func:`expected_calibration_error`).

Its parts: the estimator (``_estimator``), what it predicts beyond the best
output (``_predictions``: constraints, max-marginals, margins, k best), how its parameters resolve into plugins
(``_resolution``), the training run (``_training``, with ``_checkpoints`` and
``_labels``), its model files' contents (``_saved_state``) and the defaults page of
the documentation (``_defaults``). Names are imported on first use (the tagger's
NLTK only when the tagger is).
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from ._estimator import (StructuredSVM, allowed_classes, fit, load,
                             read_checkpoint_info)
    from ._training import NonFiniteError
    from .tagger import StructSVMTagger
    from .calibration import (CalibratedStructuredSVM, MarginCalibrator,
                              expected_calibration_error, reliability_curve)

__all__ = ["StructuredSVM", "fit", "load", "read_checkpoint_info", "allowed_classes",
           "StructSVMTagger", "NonFiniteError", "CalibratedStructuredSVM",
           "MarginCalibrator", "expected_calibration_error", "reliability_curve"]

__getattr__, __dir__ = attach(__name__, globals())
