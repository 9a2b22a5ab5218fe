"""Deprecated: moved to :mod:`structsvm.svm` (this re-export warns)."""
import warnings

from .svm.kernel_pegasos import KernelPegasosClassifier  # noqa: F401

warnings.warn("structsvm.kernel_pegasos is deprecated; import from structsvm.svm", DeprecationWarning, stacklevel=2)

__all__ = ["KernelPegasosClassifier"]
