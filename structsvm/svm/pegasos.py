r"""Flat linear SVMs trained with Pegasos: hinge, logistic and exponential losses; SVR.

Both estimators minimise the primal objective in scikit-learn's ``LinearSVC``
convention,

.. math::

    F(w, b) = \tfrac12 \lVert w\rVert^2 + C \sum_{i=1}^{n} \ell\bigl(y_i, f(x_i)\bigr),
    \qquad f(x) = w^\top x + b,

by Pegasos (primal estimated sub-gradient solver): with :math:`\lambda = 1/(nC)`
and step size :math:`\eta_t = 1/(\lambda t)`, step t draws one example and sets

.. math::

    w_{t+1} = (1 - \tfrac1t)\, w_t - \eta_t\, \partial_f \ell(y_i, f(x_i))\, x_i,
    \qquad b_{t+1} = b_t - \eta_t\, \partial_f \ell(y_i, f(x_i))

(the bias is not shrunk: it is not regularised), followed by the projection onto
the set :math:`\lVert w\rVert \le R`, :math:`\lvert b\rvert \le B` that provably
contains the optimum (``projection=True``; see Notes of
:class:`PegasosClassifier`).
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets

from .._compiled import loops
from ._pegasos_losses import _CLASSIFICATION_LOSSES, _LOSS_AT_ZERO
from ._pegasos_solver import _PegasosBase
from ._pegasos_utils import check_xy, max_row_norm, pegasos_order

# the compiled loops (compiled at installation where they can be)
_jit = loops("structsvm.svm._pegasos_jit")

__all__ = ["PegasosClassifier", "PegasosRegressor", "pegasos_order"]


class PegasosClassifier(ClassifierMixin, _PegasosBase):
    r"""Linear SVM (or logistic / exponential-loss model) trained by Pegasos.

    Minimises :math:`\tfrac12\lVert w\rVert^2 + C\sum_i \ell(y_i f(x_i))` with
    :math:`f(x) = w^\top x + b` and

    * ``"hinge"``: :math:`\ell(z) = \max(0, 1 - z)` (the soft-margin SVM),
    * ``"log"``: :math:`\ell(z) = \log(1 + e^{-z})` (logistic regression),
    * ``"exp"``: :math:`\ell(z) = e^{-z}` (the exponential loss of boosting).

    With more than two classes, one binary model per class (one-vs-rest).

    Parameters
    ----------
    loss : {"hinge", "log", "exp"}, default="hinge"
    C : float, default=1.0
        Weight of the summed losses (``LinearSVC``'s C); Pegasos' λ is 1/(nC).
    max_iter : int, default=1000
        Most epochs (``max_iter * n_samples`` stochastic steps); with ``tol=None``
        exactly this many.
    fit_intercept : bool, default=True
        Learn an unregularised bias b (updated with step η_t, never shrunk).
    average : bool or int, default=True
        Return the average of the iterates: ``True`` averages the second half of the
        steps (suffix averaging; a run stopped early by ``tol`` averages its last
        50-60%), an int k averages from step k on, ``False`` returns the last iterate.
    projection : bool, default=True
        Project onto ‖w‖ ≤ R, |b| ≤ B after each step (see Notes). Needed for the
        exponential loss, whose gradient is unbounded.
    sampling : {"permutation", "replacement", "cyclic"}, default="permutation"
        Order of the examples (see :func:`pegasos_order`).
    objective_every : int or None, default=None
        Record the objective every k steps in ``objective_curve_`` (None: once per
        epoch; 0: never). Each record costs one pass over X.
    step : {"auto", "explicit", "implicit"}, default="auto"
        "explicit" is Pegasos' sub-gradient step (the loss derivative at w_t);
        "implicit" the proximal step (the derivative at the new point, see Notes);
        "auto" is implicit for ``loss="exp"`` and explicit otherwise.
    random_state : int, RandomState instance or None, default=None
    tol : float or None, default=5e-5
        Stop when the objective F of the model that would be returned has changed by
        at most ``tol`` (relative) over the last ``n_iter_no_change`` epochs (its
        values at the last ``n_iter_no_change + 1`` epoch ends lie within
        ``tol * min`` of each other; on a decreasing curve: no improvement by tol, as
        SGDClassifier's ``tol``). F is evaluated at the end of each epoch in one
        compiled pass over X. None runs ``max_iter`` epochs.
        At the defaults the spam data (C = 0.1) ends within 1% of the optimum
        (docs/learners_cutting_plane.md has the measurements).
    n_iter_no_change : int, default=5
        Epochs without improvement before stopping.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        With two classes, ``classes_[1]`` is the positive class (y = +1).
    coef_ : ndarray of shape (n_features,) or (n_classes, n_features)
    intercept_ : float or ndarray of shape (n_classes,)
    objective_ : float or ndarray of shape (n_classes,)
        F(coef_, intercept_) on the training data (per one-vs-rest problem).
    objective_curve_ : ndarray
        F at the returned model (the running average once averaging has started)
        every ``objective_every`` steps; beyond two classes one row per class (NaN
        after the epoch where ``tol`` stopped that class).
    n_iter_ : int
        Epochs run (the most over the one-vs-rest problems).
    t_ : int
        Number of steps taken (the most over the one-vs-rest problems).

    Notes
    -----
    Projection. Since :math:`F(w^*, b^*) \le F(0, 0) = nC\,\ell(0)`, the optimum has
    :math:`\lVert w^*\rVert \le R = \sqrt{2nC\,\ell(0)}`; minimising over b for fixed
    w bounds :math:`\lvert b^*\rvert \le B = R\max_i\lVert x_i\rVert + 1 +
    \lvert\log(n_+/n_-)\rvert` for all three losses. Projecting onto this box is the
    projected-subgradient form of Pegasos (Shalev-Shwartz et al., Sec. 2); it is what
    keeps the exponential loss finite. When :math:`\eta_t e^{-z}` is too large for
    floating point, the projected step is evaluated in the log domain (its limit is
    exact), so no example is ever skipped.

    Implicit step. The explicit step multiplies x_i by :math:`\eta_t e^{-z}` for
    the exponential loss; early on (:math:`\eta_t = nC/t` is large and the bias is
    not shrunk) that overflows, which the lecture's lab avoided by skipping
    examples. The implicit step solves :math:`c = -\ell'(z + \eta_t q\,c)`,
    :math:`q = \lVert x_i\rVert^2 + 1`, instead: for the exponential loss
    :math:`c = W(\eta_t q\, e^{-z}) / (\eta_t q)` (Lambert W, evaluated in the
    log domain), for the hinge :math:`c = \min(1, (1 - z)/(\eta_t q))`. The step
    is the proximal operator of the loss, bounded for every loss, and equal to the
    explicit one as :math:`\eta_t \to 0` (Kulis & Bartlett 2010).

    The lecture notes write the step as :math:`w - \eta_t (w - C y_i x_i)` with
    :math:`\eta_t = 1/t`: that is this class with C replaced by C/n (their C weighs
    the mean loss, here the sum).

    References
    ----------
    S. Shalev-Shwartz, Y. Singer, N. Srebro, A. Cotter. Pegasos: primal estimated
    sub-gradient solver for SVM. Mathematical Programming 127(1), 2011.
    B. Kulis, P. L. Bartlett. Implicit online learning. ICML 2010.
    A. Rakhlin, O. Shamir, K. Sridharan. Making gradient descent optimal for strongly
    convex stochastic optimization. ICML 2012 (suffix averaging).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[2., 1.], [-1., -2.], [1., 2.], [-2., -1.]])
    >>> clf = PegasosClassifier(C=1.0, random_state=0).fit(X, [1, -1, 1, -1])
    >>> clf.predict([[3., 3.], [-3., -2.]]).tolist()
    [1, -1]
    """

    def __init__(self, loss="hinge", C=1.0, max_iter=1000, fit_intercept=True, average=True,
                 projection=True, sampling="permutation", objective_every=None,
                 step="auto", random_state=None, tol=5e-5,
                 n_iter_no_change=5):
        self.loss = loss
        self.C = C
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.average = average
        self.projection = projection
        self.sampling = sampling
        self.objective_every = objective_every
        self.step = step
        self.random_state = random_state
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change

    def fit(self, X, y):
        """Train on X (dense or sparse) and binary labels y (any two values).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.loss not in _CLASSIFICATION_LOSSES:
            raise ValueError(f"loss must be one of {sorted(_CLASSIFICATION_LOSSES)}, "
                             f"got {self.loss!r}")
        X, y = check_xy(X, y, self)
        check_classification_targets(y)
        classes, yi = np.unique(y, return_inverse=True)
        k = len(classes)
        if k < 2:
            raise ValueError(f"y must hold at least two classes, got {k} class: "
                             f"{classes.tolist()}")
        self._loss_name = self.loss
        radius = math.sqrt(2.0 * len(yi) * self.C * _LOSS_AT_ZERO[self.loss]) \
            if isinstance(self.C, numbers.Real) and self.C > 0 else 0.0
        row_norm = max_row_norm(X)
        parts = []
        for c in ([1] if k == 2 else range(k)):   # one-vs-rest beyond two classes
            ys = np.where(yi == c, 1.0, -1.0)
            n_pos = float(np.sum(ys > 0))
            b_bound = radius * row_norm + 1.0 + abs(math.log(n_pos / (len(ys) - n_pos)))
            self._run(X, ys, _CLASSIFICATION_LOSSES[self.loss], 0.0, radius, b_bound)
            parts.append((self.coef_, self.intercept_, self.objective_,
                          self.objective_curve_, self.n_iter_, self.t_))
        self.classes_ = classes
        if k > 2:
            self.coef_ = np.array([p[0] for p in parts])
            self.intercept_ = np.array([p[1] for p in parts])
            self.objective_ = np.array([p[2] for p in parts])
            width = max(len(p[3]) for p in parts)   # tol may stop classes apart
            self.objective_curve_ = np.array([np.pad(p[3], (0, width - len(p[3])),
                                                     constant_values=np.nan)
                                              for p in parts])
            self.n_iter_ = max(p[4] for p in parts)
            self.t_ = max(p[5] for p in parts)
        return self

    def decision_function(self, X):
        """f(x) = wᵀx + b for every row of X (one column per class beyond two).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._decision(X)

    def predict(self, X):
        """Class labels: ``classes_[1]`` where f(x) > 0 (binary), else the argmax."""
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(np.intp)]


class PegasosRegressor(RegressorMixin, _PegasosBase):
    r"""Linear support vector regression (ε-insensitive loss) trained by Pegasos.

    Minimises :math:`\tfrac12\lVert w\rVert^2 + C\sum_i \max(0, \lvert y_i -
    f(x_i)\rvert - \varepsilon)` with :math:`f(x) = w^\top x + b`.

    Parameters
    ----------
    epsilon : float, default=0.0
        Half-width of the insensitive tube (see
        :func:`structsvm.model_selection.epsilon_from_residuals` for choosing it).
    C, max_iter, fit_intercept, average, projection, sampling, objective_every, step, random_state, tol, n_iter_no_change
        As in :class:`PegasosClassifier` ("auto" step: explicit).

    Attributes
    ----------
    coef_, intercept_, objective_, objective_curve_, n_iter_, t_
        As in :class:`PegasosClassifier`.

    Notes
    -----
    The projection radii are :math:`R = \sqrt{2F(0,0)}` with
    :math:`F(0,0) = C\sum_i\max(0, \lvert y_i\rvert - \varepsilon)` and
    :math:`B = \max_i\lvert y_i\rvert + R\max_i\lVert x_i\rVert + \varepsilon`.

    References
    ----------
    A. J. Smola, B. Schölkopf. A tutorial on support vector regression. Statistics
    and Computing 14, 2004.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-1, 1, 40).reshape(-1, 1)
    >>> reg = PegasosRegressor(C=10.0, max_iter=50, random_state=0).fit(X, 2 * X.ravel() + 1)
    >>> bool(abs(reg.coef_[0] - 2) < 0.1 and abs(reg.intercept_ - 1) < 0.1)
    True
    """

    _loss_name = "epsilon_insensitive"

    def __init__(self, epsilon=0.0, C=1.0, max_iter=1000, fit_intercept=True, average=True,
                 projection=True, sampling="permutation", objective_every=None,
                 step="auto", random_state=None, tol=5e-5,
                 n_iter_no_change=5):
        self.epsilon = epsilon
        self.C = C
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.average = average
        self.projection = projection
        self.sampling = sampling
        self.objective_every = objective_every
        self.step = step
        self.random_state = random_state
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change

    def fit(self, X, y):
        """Train on X (dense or sparse) and real targets y.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        eps = self.epsilon
        if not (isinstance(eps, numbers.Real) and np.isfinite(eps) and eps >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {eps!r}")
        X, y = check_xy(X, y, self)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"y contains NaN or infinite values (first at sample "
                             f"{int(np.flatnonzero(~np.isfinite(y))[0])})")
        C = self.C if isinstance(self.C, numbers.Real) and self.C > 0 else 0.0
        radius = math.sqrt(2.0 * C * float(np.maximum(np.abs(y) - eps, 0.0).sum()))
        b_bound = float(np.max(np.abs(y))) + radius * max_row_norm(X) + eps
        return self._run(X, y, _jit.EPS_INSENSITIVE, eps, radius, b_bound)

    def predict(self, X):
        """Predicted targets f(x) = wᵀx + b.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._decision(X)
