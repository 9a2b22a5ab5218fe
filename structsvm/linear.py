"""Deprecated: moved to :mod:`structsvm.svm` (this re-export warns)."""
import warnings

from .svm.pegasos import PegasosClassifier, PegasosRegressor, pegasos_order  # noqa: F401

warnings.warn("structsvm.linear is deprecated; import from structsvm.svm", DeprecationWarning, stacklevel=2)

__all__ = ["PegasosClassifier", "PegasosRegressor", "pegasos_order"]
