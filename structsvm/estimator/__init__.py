"""The estimator: :class:`StructuredSVM` (scikit-learn compatible), the shorthand
:func:`fit`, and model files (``StructuredSVM.save``, :func:`load`,
:func:`read_checkpoint_info`, :func:`allowed_classes`).

Its parts: the estimator and how its parameters resolve into plugins
(``_estimator``, ``_resolution``), what a fitted model does (``_fitted``), the
training run (``_training``, with ``_progress``, ``_checkpoints`` and ``_labels``),
its model files' contents (``_saved_state``) and the defaults page of the
documentation (``_defaults``).
"""
from ._estimator import StructuredSVM, allowed_classes, fit, load, read_checkpoint_info

__all__ = ["StructuredSVM", "fit", "load", "read_checkpoint_info", "allowed_classes"]
