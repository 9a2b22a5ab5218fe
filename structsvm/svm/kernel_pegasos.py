r"""Dual (kernel) Pegasos: binary and multiclass with joint kernels.

By the representer theorem every Pegasos iterate is a combination of training
points, :math:`w_t = \sum_j \beta_j \phi(x_j)`, so the algorithm runs on the Gram
matrix alone. Without projection or averaging, hinge-loss Pegasos gives exactly
the lecture's dual form

.. math::

    w_{t+1} = \frac{nC}{t} \sum_j \alpha_j y_j \phi(x_j),

where :math:`\alpha_j` counts the steps on which example j violated the margin
(``alpha_``): the shrink factors :math:`\prod_\tau (1 - 1/\tau) = 1/t` are shared
by all terms.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._compiled import loops
from .kernels import gamma_to_sigma, median_sigma, pairwise_kernel
from ._pegasos_utils import check_params, check_xy, kernel_to_support, pegasos_order
from ._pegasos_losses import _CLASSIFICATION_LOSSES, _LOSS_AT_ZERO

# the compiled loops (compiled at installation where they can be)
_jit = loops("structsvm.svm._pegasos_jit")

__all__ = ["KernelPegasosClassifier"]


class KernelPegasosClassifier(ClassifierMixin, BaseEstimator):
    r"""Kernel SVM trained by dual Pegasos; multiclass through a joint kernel.

    Binary problems minimise :math:`\tfrac12\lVert w\rVert^2 + C\sum_i
    \ell(y_i f(x_i))` with :math:`f(x) = \sum_j \beta_j k(x_j, x) + b` (the same
    steps, projection and averaging as :class:`structsvm.svm.PegasosClassifier`,
    run on the Gram matrix; with a linear kernel both give the same model).
    With more than two classes, or with ``attributes``, it minimises the
    Crammer–Singer objective :math:`\tfrac12\lVert w\rVert^2 + C\sum_i \max_y
    (\Delta(y_i, y) + w^\top\Phi(x_i, y) - w^\top\Phi(x_i, y_i))` with the joint
    kernel :math:`k(x, x')\Lambda(y)^\top\Lambda(y')` (hinge loss, no bias).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf", "precomputed"} or callable, default="rbf"
    sigma, gamma : float, optional
        RBF width σ or γ = 1/(2σ²) (one of them; default: the median heuristic).
        ``gamma`` is also the polynomial kernel's scale (default 1).
    degree : int, default=3
    coef0 : float, default=1.0
    C : float, default=1.0
    max_iter : int, default=20
        Epochs: ``max_iter * n_samples`` stochastic steps.
    loss : {"hinge", "log", "exp"}, default="hinge"
        Binary problems only (multiclass uses the hinge).
    fit_intercept : bool, default=True
        Binary problems only.
    average, projection, sampling, objective_every, step, random_state
        As in :class:`structsvm.svm.PegasosClassifier` (multiclass: no projection,
        explicit steps).
    attributes : ndarray of shape (n_classes, n_attributes), optional
        Class embedding Λ for the multiclass joint kernel, rows in the order of
        ``classes_`` (default: one-hot; see :func:`structsvm.svm.kernels.taxonomy_embedding`).

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Training indices with a nonzero coefficient.
    support_vectors_ : ndarray or sparse matrix
        Those training inputs (not kept for ``kernel="precomputed"``).
    dual_coef_ : ndarray of shape (n_support,) or (n_support, n_attributes)
        β of the support vectors: f(x) = Σ_j β_j k(x_j, x) + b, or, multiclass,
        score(x, y) = Σ_j k(x_j, x) β_jᵀΛ(y).
    alpha_ : ndarray of shape (n_samples,) or (n_samples, n_classes)
        Update counts: steps on which example i (and, multiclass, output y) was the
        violated constraint — the notes' α_i for the hinge loss.
    intercept_ : float
    gamma_ : float or None
        The γ used by the RBF kernel.
    objective_, objective_curve_, t_
        As in :class:`structsvm.svm.PegasosClassifier`.

    References
    ----------
    S. Shalev-Shwartz, Y. Singer, N. Srebro, A. Cotter. Pegasos: primal estimated
    sub-gradient solver for SVM. Mathematical Programming 127(1), 2011 (Sec. 4).
    K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
    kernel-based vector machines. JMLR 2, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])   # XOR
    >>> clf = KernelPegasosClassifier(sigma=0.5, C=10, max_iter=50, random_state=0)
    >>> clf.fit(X, [1, 1, -1, -1]).predict(X).tolist()
    [1, 1, -1, -1]
    """

    def __init__(self, kernel="rbf", sigma=None, gamma=None, degree=3, coef0=1.0, C=1.0,
                 max_iter=20, loss="hinge", fit_intercept=True, average=True,
                 projection=True, sampling="permutation", objective_every=None,
                 step="auto", attributes=None, random_state=None):
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.max_iter = max_iter
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.average = average
        self.projection = projection
        self.sampling = sampling
        self.objective_every = objective_every
        self.step = step
        self.attributes = attributes
        self.random_state = random_state

    # ----------------------------------------------------------------- kernels
    def _gram(self, X, Y):
        return pairwise_kernel(X, Y, self.kernel, gamma=self.gamma_, degree=self.degree,
                               coef0=self.coef0)

    def fit(self, X, y):
        """Train on inputs X (or, precomputed, the Gram matrix) and labels y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.loss not in _CLASSIFICATION_LOSSES:
            raise ValueError(f"loss must be one of {sorted(_CLASSIFICATION_LOSSES)}, "
                             f"got {self.loss!r}")
        X, y = check_xy(X, y, self)
        self.gamma_ = None
        if self.kernel == "rbf":
            if self.sigma is not None and self.gamma is not None:
                raise ValueError("give sigma or gamma, not both")
            sigma = self.sigma if self.sigma is not None else (
                None if self.gamma is not None else median_sigma(X))
            if sigma is not None and not (isinstance(sigma, numbers.Real) and sigma > 0):
                raise ValueError(f"sigma must be a number > 0, got {sigma!r}")
            self.gamma_ = 1.0 / (2.0 * sigma ** 2) if sigma is not None else float(self.gamma)
        elif self.kernel == "poly":
            self.gamma_ = 1.0 if self.gamma is None else float(self.gamma)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed': X must be the square training Gram "
                             f"matrix, got shape {X.shape}")
        K = np.ascontiguousarray(self._gram(X, None))
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"y must hold at least two classes, got "
                             f"{self.classes_.tolist()}")
        self._multiclass = len(self.classes_) > 2 or self.attributes is not None
        if self._multiclass:
            coef = self._fit_multiclass(K, yi)
        else:
            coef = self._fit_binary(K, 2.0 * yi - 1.0)
        rows = np.flatnonzero(np.any(np.atleast_2d(coef.T).T != 0, axis=1)
                              if coef.ndim == 2 else coef != 0)
        self.support_ = rows
        self.dual_coef_ = coef[rows]
        self.support_vectors_ = None if self.kernel == "precomputed" else X[rows]
        self.n_features_in_ = X.shape[1]
        self.sigma_ = gamma_to_sigma(self.gamma_) if self.kernel == "rbf" else None
        return self

    def _fit_binary(self, K, ys):
        n = len(ys)
        T, avg_start, every = check_params(self, n)
        if self.step not in ("auto", "explicit", "implicit"):
            raise ValueError(f"step must be 'auto', 'explicit' or 'implicit', got "
                             f"{self.step!r}")
        implicit = self.step == "implicit" or (self.step == "auto" and self.loss == "exp")
        order = pegasos_order(n, T // n, self.sampling, self.random_state)
        radius = math.sqrt(2.0 * n * self.C * _LOSS_AT_ZERO[self.loss])
        n_pos = float(np.sum(ys > 0))
        b_bound = (radius * math.sqrt(max(float(np.max(np.diag(K))), 0.0)) + 1.0
                   + abs(math.log(n_pos / (n - n_pos))))
        if not self.projection:
            radius, b_bound = np.inf, np.inf
        if not self.fit_intercept:
            b_bound = 0.0
        curve = np.zeros(T // every if every else 0)
        dummy_i, dummy_f = np.zeros(1, dtype=np.int64), np.zeros(1)
        loss = _CLASSIFICATION_LOSSES[self.loss]
        w, b, w_avg, b_avg, n_curve, status, updates = _jit.run(
            True, loss, order, ys, float(self.C), 0.0, bool(self.fit_intercept),
            float(radius), float(b_bound), avg_start, every, dummy_i, dummy_i, dummy_f,
            K, n, curve, implicit)
        if status == _jit.STATUS_OVERFLOW:
            raise FloatingPointError(f"loss={self.loss!r}: a step overflowed with "
                                     "projection=False; use projection=True")
        averaged = avg_start <= T
        coef = w_avg if averaged else w
        self.intercept_ = float(b_avg if averaged else b)
        self.alpha_ = updates
        self.objective_curve_ = curve[:n_curve].copy()
        self.objective_ = float(_jit.objective(True, loss, coef, self.intercept_, ys,
                                               float(self.C), 0.0, dummy_i, dummy_i,
                                               dummy_f, K))
        self.t_ = T
        return coef

    def _embedding(self):
        if self.attributes is None:
            return np.eye(len(self.classes_))
        Lam = np.asarray(self.attributes, dtype=float)
        if Lam.ndim != 2 or Lam.shape[0] != len(self.classes_):
            raise ValueError(f"attributes must have one row per class ({len(self.classes_)}"
                             f" classes, sorted), got shape {Lam.shape}")
        return Lam

    def _fit_multiclass(self, K, yi):
        if self.loss != "hinge":
            raise ValueError(f"multiclass dual Pegasos supports loss='hinge' only, got "
                             f"{self.loss!r}")
        n = len(yi)
        T, avg_start, every = check_params(self, n)
        order = pegasos_order(n, T // n, self.sampling, self.random_state)
        Lam = self._embedding()
        self._lambda = Lam
        n_cls = Lam.shape[0]
        beta = np.zeros((n, Lam.shape[1]))
        B = np.zeros_like(beta)
        base = np.zeros_like(beta)
        alpha = np.zeros((n, n_cls))
        a, S, count, nC = 1.0, 0.0, 0, n * float(self.C)
        curve = []
        for step, i in enumerate(order):
            t = step + 1
            scores = a * (Lam @ (K[i] @ beta))
            aug = scores + 1.0
            aug[yi[i]] = scores[yi[i]]
            y_hat = int(np.argmax(aug))
            if t == 1:
                base += S * beta - B
                beta[:], B[:], S, a = 0.0, 0.0, 0.0, 1.0
            else:
                a *= 1.0 - 1.0 / t
            if y_hat != yi[i] and aug[y_hat] > scores[yi[i]]:
                delta = (nC / t / a) * (Lam[yi[i]] - Lam[y_hat])
                beta[i] += delta
                B[i] += S * delta
                alpha[i, y_hat] += 1.0
            if t >= avg_start:
                S += a
                count += 1
            if every and t % every == 0:
                cur = (base + S * beta - B) / count if count else a * beta
                curve.append(self._cs_objective(K, yi, cur, Lam))
        coef = (base + S * beta - B) / count if count else a * beta
        self.intercept_ = 0.0
        self.alpha_ = alpha
        self.objective_curve_ = np.asarray(curve)
        self.objective_ = self._cs_objective(K, yi, coef, Lam)
        self.t_ = T
        return coef

    def _cs_objective(self, K, yi, beta, Lam):
        KB = K @ beta
        scores = KB @ Lam.T
        true = scores[np.arange(len(yi)), yi]
        aug = scores + 1.0
        aug[np.arange(len(yi)), yi] = true
        xi = np.maximum(aug.max(axis=1) - true, 0.0)
        return 0.5 * float(np.sum(beta * KB)) + float(self.C) * float(xi.sum())

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X):
        """f(x) (binary, shape (n,)) or class scores (multiclass, shape (n, n_classes)).

        With ``kernel="precomputed"``, X is k(X_test, X_train) of shape
        (n_samples, n_train).
        """
        check_is_fitted(self, "dual_coef_")
        Kt = kernel_to_support(self, X)
        if self._multiclass:
            return (Kt @ self.dual_coef_) @ self._lambda.T
        return Kt @ self.dual_coef_ + self.intercept_

    def predict(self, X):
        """Predicted class of every sample."""
        f = self.decision_function(X)
        if self._multiclass:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(np.intp)]
