"""The lecture notes' flat SVMs, under names a scikit-learn user knows.

- :class:`PegasosClassifier`: binary linear SVM trained by Pegasos with the hinge,
  logistic or exponential loss;
- :class:`PegasosRegressor`: linear SVR (ε-insensitive loss) trained by Pegasos;
- :class:`KernelPegasosClassifier`: dual (kernel) Pegasos, α_i counting margin
  violations;
- :class:`KernelCuttingPlaneSVM`: multiclass / class-attribute / taxonomy SVM with a
  joint kernel k(x, x')·Λ(y)ᵀΛ(y'), cutting plane on the dual QP;
- :class:`PerformanceSVC`: linear SVM trained for F1, precision at k, PRBEP, ROC
  area or the error rate of the whole data set (Joachims 2005, SVM-perf).

Kernel functions and joint kernels are in :mod:`structsvm.svm.kernels`; C, σ and ε are
chosen with :mod:`structsvm.model_selection`.

>>> import numpy as np
>>> from structsvm.svm import PegasosClassifier
>>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([0, 0, 1, 1])
>>> PegasosClassifier(C=10.0, max_iter=50, random_state=0).fit(X, y).predict(X).tolist()
[0, 0, 1, 1]
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .kernel_cutting_plane import KernelCuttingPlaneSVM
    from .kernel_pegasos import KernelPegasosClassifier
    from .pegasos import PegasosClassifier, PegasosRegressor
    from .performance import PerformanceSVC

__all__ = ["PegasosClassifier", "PegasosRegressor", "KernelPegasosClassifier",
           "KernelCuttingPlaneSVM", "PerformanceSVC"]

__getattr__, __dir__ = attach(__name__, globals())
