"""Deprecated: moved to :mod:`structsvm.svm` (this re-export warns)."""
import warnings

from ..svm.kernel_cutting_plane import KernelCuttingPlaneSVM  # noqa: F401

warnings.warn("structsvm.learners.kernel_cutting_plane is deprecated; import from structsvm.svm", DeprecationWarning, stacklevel=2)

__all__ = ["KernelCuttingPlaneSVM"]
