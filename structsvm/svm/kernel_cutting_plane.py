r"""Kernelised n-slack cutting plane for the joint map Φ(x, y) = φ(x) ⊗ Λ(y).

The structural SVM (margin rescaling, Tsochantaridis et al. 2005)

.. math::

    \min_{w,\xi}\ \tfrac12\lVert w\rVert^2 + C\sum_i \xi_i \quad\text{s.t.}\quad
    w^\top\bigl(\Phi(x_i, y_i) - \Phi(x_i, y)\bigr) \ge \Delta(y_i, y) - \xi_i
    \quad \forall i, y

is solved in the dual over a working set W of pairs (i, ȳ):

.. math::

    \max_{\alpha \ge 0}\ \sum_{c \in W}\alpha_c\Delta_c - \tfrac12\sum_{c,d\in W}
    \alpha_c\alpha_d G_{cd}, \qquad \sum_{\bar y}\alpha_{i\bar y} \le C,

with the joint-kernel Gram matrix :math:`G_{cd} = k(x_i, x_j)\,(\Lambda_{y_i} -
\Lambda_{\bar y})^\top(\Lambda_{y_j} - \Lambda_{\bar y'})` for c = (i, ȳ),
d = (j, ȳ'). The model is :math:`w = \sum_i \phi(x_i)\otimes\beta_i` with
:math:`\beta_i = \sum_{\bar y}\alpha_{i\bar y}(\Lambda_{y_i} - \Lambda_{\bar y})`, so
:math:`\mathrm{score}(x, y) = \sum_i k(x_i, x)\,\beta_i^\top\Lambda_y`; only the
support vectors (β_i ≠ 0) are kept.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_array, check_is_fitted

from .kernels import median_sigma, pairwise_kernel, taxonomy_embedding
from ..learners._qp import solve_dual_qp
from ._pegasos_utils import kernel_to_support

__all__ = ["KernelCuttingPlaneSVM"]


class KernelCuttingPlaneSVM(ClassifierMixin, BaseEstimator):
    r"""Multiclass / class-attribute / taxonomy SVM with a joint kernel, by cutting plane.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "precomputed"} or callable, default="rbf"
    sigma, gamma, degree, coef0
        Kernel parameters (see :func:`structsvm.svm.kernels.pairwise_kernel`); for "rbf"
        with neither σ nor γ, σ is the median pairwise distance.
    C : float, default=1.0
        Weight of Σ ξ_i in ½‖w‖² + C Σ ξ_i.
    attributes : None, "taxonomy" or ndarray of shape (n_classes, n_attributes)
        Λ: one-hot (None), the taxonomy-path indicators of the labels split at
        ``sep`` (:func:`structsvm.svm.kernels.taxonomy_embedding`), or given class
        attributes (rows in the order of ``classes_``, i.e. sorted labels).
    sep : str, default="."
        Level separator of taxonomy labels.
    loss_matrix : ndarray of shape (n_classes, n_classes), optional
        Δ(y, ȳ) (zero diagonal); default 0/1.
    tol : float, default=1e-6
        A constraint enters the working set when it is violated by more than tol
        beyond the example's current slack.
    max_iter : int, default=200
        Cutting-plane rounds.
    solver : {"CLARABEL", "OSQP", "SCS"}, default="CLARABEL"

    Attributes
    ----------
    classes_ : ndarray
    lambda_ : ndarray of shape (n_classes, n_attributes)
    support_ : ndarray of int
    support_vectors_ : ndarray or sparse matrix (None for "precomputed")
    dual_coef_ : ndarray of shape (n_support, n_attributes)
        β_i of the support vectors.
    constraints_ : ndarray of shape (n_constraints, 2)
        Working set (example, output index); ``alpha_`` their dual variables.
    objective_ : float
        Primal ½‖w‖² + C Σ ξ_i with exact slacks.
    dual_objective_, duality_gap_ : float
    n_iter_ : int

    References
    ----------
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005.
    L. Cai, T. Hofmann. Hierarchical document categorization with support vector
    machines. CIKM 2004.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0., 0.], [0.1, 0.], [3., 0.], [3.1, 0.], [0., 3.], [0., 3.1]])
    >>> clf = KernelCuttingPlaneSVM(kernel="linear", C=10).fit(X, [0, 0, 1, 1, 2, 2])
    >>> clf.predict([[2.9, 0.2], [0.1, 2.8]]).tolist()
    [1, 2]
    """

    def __init__(self, kernel="rbf", sigma=None, gamma=None, degree=3, coef0=1.0, C=1.0,
                 attributes=None, sep=".", loss_matrix=None, tol=1e-6, max_iter=200,
                 solver="CLARABEL"):
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.attributes = attributes
        self.sep = sep
        self.loss_matrix = loss_matrix
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver

    def _gram(self, X, Y):
        return pairwise_kernel(X, Y, self.kernel, gamma=self.gamma_, degree=self.degree,
                               coef0=self.coef0)

    def _setup(self, X, y):
        C = self.C
        if not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a finite number > 0, got {C!r}")
        if not (isinstance(self.max_iter, numbers.Integral) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        self.gamma_ = None
        if self.kernel == "rbf":
            if self.sigma is not None and self.gamma is not None:
                raise ValueError("give sigma or gamma, not both")
            if self.gamma is not None:
                self.gamma_ = float(self.gamma)
            else:
                sigma = self.sigma if self.sigma is not None else median_sigma(X)
                self.gamma_ = 1.0 / (2.0 * float(sigma) ** 2)
        elif self.kernel == "poly":
            self.gamma_ = 1.0 if self.gamma is None else float(self.gamma)
        self.classes_, yi = np.unique(y, return_inverse=True)
        n_cls = len(self.classes_)
        if n_cls < 2:
            raise ValueError(f"y must hold at least two classes, got {self.classes_.tolist()}")
        attrs = self.attributes
        if attrs is None:
            Lam = np.eye(n_cls)
        elif isinstance(attrs, str):
            if attrs != "taxonomy":
                raise ValueError(f"attributes must be None, 'taxonomy' or an array, got "
                                 f"{attrs!r}")
            _, Lam, _ = taxonomy_embedding(list(self.classes_), sep=self.sep)
        else:
            Lam = np.asarray(attrs, dtype=float)
            if Lam.ndim != 2 or Lam.shape[0] != n_cls:
                raise ValueError(f"attributes must have one row per class ({n_cls} "
                                 f"classes, sorted), got shape {Lam.shape}")
        if self.loss_matrix is None:
            D = 1.0 - np.eye(n_cls)
        else:
            D = np.asarray(self.loss_matrix, dtype=float)
            if D.shape != (n_cls, n_cls) or np.any(np.diag(D) != 0) or np.any(D < 0):
                raise ValueError(f"loss_matrix must be ({n_cls}, {n_cls}), >= 0, with a "
                                 f"zero diagonal; got shape {D.shape}")
        self.lambda_ = Lam
        return yi, D

    def fit(self, X, y):
        """Train on X (or the training Gram matrix when precomputed) and labels y.

        Returns
        -------
        self
        """
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has shape {y.shape}")
        yi, D = self._setup(X, y)
        K = self._gram(X, None)
        n, Lam = len(yi), self.lambda_
        L = Lam @ Lam.T
        rows, outs = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
        in_set = set()
        G = np.zeros((0, 0))
        alpha = np.zeros(0)
        beta = np.zeros((n, Lam.shape[1]))
        dual = 0.0
        C = float(self.C)
        ar = np.arange(n)
        converged = False
        for it in range(1, int(self.max_iter) + 1):
            scores = (K @ beta) @ Lam.T
            H = D[yi] + scores - scores[ar, yi][:, None]
            y_hat = np.argmax(H, axis=1)
            xi = np.maximum(H[ar, y_hat], 0.0)
            xi_w = np.zeros(n)
            if len(rows):
                np.maximum.at(xi_w, rows, H[rows, outs])
            new = [i for i in np.flatnonzero(H[ar, y_hat] > xi_w + self.tol)
                   if (i, y_hat[i]) not in in_set]
            self.objective_ = 0.5 * float(np.sum(beta * (K @ beta))) + C * float(xi.sum())
            if not new:
                converged = True
                break
            new = np.asarray(new, dtype=np.intp)
            in_set.update(zip(new.tolist(), y_hat[new].tolist()))
            r2, o2 = np.concatenate([rows, new]), np.concatenate([outs, y_hat[new]])
            G = self._grow(G, K, L, yi, rows, outs, r2, o2)
            rows, outs = r2, o2
            alpha0 = np.concatenate([alpha, np.zeros(len(new))])
            alpha, dual = solve_dual_qp(G, D[yi[rows], outs], rows, C, solver=self.solver,
                                        round_=it, alpha0=alpha0)
            beta = np.zeros_like(beta)
            np.add.at(beta, rows, alpha[:, None] * (Lam[yi[rows]] - Lam[outs]))
        if not converged:
            warnings.warn(f"KernelCuttingPlaneSVM did not converge in {self.max_iter} "
                          "rounds; increase max_iter", ConvergenceWarning, stacklevel=2)
        self.n_iter_ = it
        self.dual_objective_ = float(dual)
        self.duality_gap_ = float(self.objective_ - dual)
        self.constraints_ = np.column_stack([rows, outs])
        self.alpha_ = alpha
        support = np.flatnonzero(np.any(beta != 0, axis=1))
        self.support_ = support
        self.dual_coef_ = beta[support]
        self.support_vectors_ = None if self.kernel == "precomputed" else X[support]
        self.n_features_in_ = X.shape[1]
        return self

    @staticmethod
    def _grow(G, K, L, yi, rows, outs, r2, o2):
        """Extend the joint-kernel Gram matrix of the working set by the new pairs."""
        m, m2 = len(rows), len(r2)
        out = np.zeros((m2, m2))
        out[:m, :m] = G
        nr, no = r2[m:], o2[m:]
        a_true, a_out = yi[r2], o2
        b_true, b_out = yi[nr], no
        lab = (L[np.ix_(a_true, b_true)] - L[np.ix_(a_true, b_out)]
               - L[np.ix_(a_out, b_true)] + L[np.ix_(a_out, b_out)])
        block = K[np.ix_(r2, nr)] * lab
        out[:, m:] = block
        out[m:, :] = block.T
        return out

    def decision_function(self, X):
        """Class scores of shape (n_samples, n_classes) (X: k(X_test, X_train) if precomputed)."""
        check_is_fitted(self, "dual_coef_")
        Kt = kernel_to_support(self, X)
        return (Kt @ self.dual_coef_) @ self.lambda_.T

    def predict(self, X):
        """The highest-scoring class of every sample."""
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]
