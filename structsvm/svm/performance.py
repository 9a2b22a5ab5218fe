r"""A linear classifier trained for a performance measure of the whole data set:
F1, precision at k, the precision-recall break-even point, ROC area or the error
rate (Joachims 2005; SVM-perf), in scikit-learn's interface.

Each binary problem is one :class:`~structsvm.StructuredSVM` over the binary
structure (:class:`~structsvm.structures.binary.BinaryFeatures`): the labelling of
all n training examples is one output, the loss is 1 − the measure, and the 1-slack
cutting plane trains it with the loss's exact most violated labelling (Joachims
2006: time linear in n).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted
from threadpoolctl import threadpool_limits

from .._version import __version__
from ..estimator import StructuredSVM
from ..io import (MAX_BYTES, ModelFileError, ValueDecoder, ValueEncoder, check_writable,
                  class_key, read_model_file, refusing_inconsistent, write_model_file)
from ..protocols import capability, plugin_name
from ..registry import registered
from ..structures.binary import BinaryFeatures
from ..structures.losses import get_loss

__all__ = ["PerformanceSVC"]

#: the measures by name, and the parameters of theirs the classifier sets
_MEASURE_PARAMS = {"f1": ("beta",), "precision_at_k": ("k",), "recall_at_k": ("k",),
                   "prbep": (), "roc_auc": (), "error_rate": ()}


class PerformanceSVC(ClassifierMixin, BaseEstimator):
    r"""Linear SVM trained for F1, precision at k, PRBEP, ROC area or error rate.

    The multivariate SVM of Joachims (2005): the labelling Ȳ of the whole training
    set is one structured output, and training minimises

    .. math::

        \tfrac12 \lVert w \rVert^2 + C\,\xi \quad\text{s.t.}\quad
        w\cdot\bigl(\Phi(\bar X, Y) - \Phi(\bar X, \bar Y)\bigr) \ge
        \Delta(Y, \bar Y) - \xi \;\; \text{for every labelling } \bar Y,

    with Δ = 1 − the measure and Φ(X̄, Ȳ) = Σ_i ȳ_i x_i / (2nR)
    (:class:`~structsvm.structures.binary.BinaryFeatures`), by the 1-slack cutting
    plane, whose oracle finds the most violated labelling exactly from sorted
    scores (:mod:`structsvm.structures.binary.losses`). The model is linear,
    f(x) = w·x + b, as scikit-learn's ``LinearSVC``.

    Parameters
    ----------
    loss : str or loss, default="f1"
        The measure trained for: ``"f1"`` (F_β, see ``beta``), ``"precision_at_k"``
        and ``"recall_at_k"`` (see ``k``), ``"prbep"``, ``"roc_auc"``,
        ``"error_rate"``, or a loss object of :mod:`structsvm.structures.binary`
        (``FBetaLoss(beta=2)``) or any loss over a data set's labelling
        (``decomposition = "dataset"``).
    C : float or None, default=None
        Weight of the slack: the objective ½‖w‖² + C ξ above, ξ in the measure's
        units (SVM-perf's ``-c`` times 100). None: the loss's ``default_C``
        (:mod:`structsvm.structures.binary.losses`: 10⁴ × n / ((1 + β²) P + 1) for
        F_β, 3 P N / n for ROC area, the binary map's 10⁴ for the others). With
        ``loss="error_rate"`` the model is ``LinearSVC(C=C / (n R²),
        loss="hinge")`` with ``intercept_scaling`` as the bias, n training
        examples of root mean square norm R (bias included).
    k : int, float or None, default=None
        For precision and recall at k: an int is k itself, a float in (0, 1) a
        fraction of the examples; None: half the positives (precision) or twice
        them (recall).
    beta : float, default=1.0
        For F_β: the weight of recall.
    tol : float or None, default=None
        Relative duality gap at which training stops (None: the loss's
        ``default_tol``, 0.1 for the measures of a ranking, else the binary map's,
        0.2).
    max_iter : int or None, default=None
        Cutting-plane rounds at most (None: the learner's cap).
    fit_intercept : bool, default=True
        Learn an intercept b: for F_β and the error rate a bias feature of value
        ``intercept_scaling`` (regularised, as LinearSVC's); for the measures of a
        ranking (precision and recall at k, PRBEP, ROC area), which do not depend
        on it, the threshold that labels as many training examples positive as the
        measure's labellings have (k, or the number of positives).
    intercept_scaling : float, default=1.0
        The bias feature's value.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray
        The class labels (binary or multiclass y), or the label indices
        0..L−1 (multilabel y).
    coef_ : ndarray of shape (1, n_features) or (n_problems, n_features)
        w: one row for two classes, one per class (one-vs-rest) or per label
        (multilabel).
    intercept_ : ndarray of shape (1,) or (n_problems,)
    C_ : float
        The C used (of the last binary problem: a default may depend on its
        labels).
    n_iter_ : ndarray of int, shape (n_problems,)
        Cutting-plane rounds of each binary problem.
    objective_ : ndarray of shape (n_problems,)
        ½‖w‖² + C ξ at the returned weights (in the map's scale).
    converged_ : ndarray of bool, shape (n_problems,)

    Notes
    -----
    Classes follow scikit-learn's conventions: with two classes ``classes_[1]`` is
    the positive one; with more, one binary problem per class (one-vs-rest,
    ``predict`` takes the highest decision value, as LinearSVC); a 2-D indicator
    matrix y is multilabel (one problem per column, ``predict`` returns the
    indicator matrix). ``OneVsRestClassifier(PerformanceSVC(...))`` works as well.

    ``score(X, y)`` is the trained measure (macro-averaged over the binary
    problems), not the accuracy: ``GridSearchCV`` then tunes for it.

    A column of a multilabel y with one value only gets a constant model (w = 0,
    b = ±1) and a warning, as ``OneVsRestClassifier`` does. ``fit`` runs BLAS in
    one thread (``threadpoolctl``): its products are of single vectors, where
    threads cost more than they give.

    References
    ----------
    T. Joachims. A support vector method for multivariate performance measures.
    ICML 2005.
    T. Joachims. Training linear SVMs in linear time. KDD 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.svm import PerformanceSVC
    >>> X = np.array([[0., 1.], [1., 0.], [2., 0.], [3., 1.], [4., 0.], [5., 1.]])
    >>> y = np.array([0, 0, 0, 0, 1, 1])
    >>> clf = PerformanceSVC(loss="f1", C=1e4).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 0, 0, 1, 1]
    >>> clf.score(X, y)   # F1
    1.0
    """

    def __init__(self, loss="f1", C=None, k=None, beta=1.0, tol=None, max_iter=None,
                 fit_intercept=True, intercept_scaling=1.0, verbose=0):
        self.loss = loss
        self.C = C
        self.k = k
        self.beta = beta
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.verbose = verbose

    # ------------------------------------------------------------------ the loss
    def _loss(self):
        """The loss object the parameters stand for."""
        loss = self.loss
        if isinstance(loss, str):
            if loss not in _MEASURE_PARAMS:
                raise ValueError(f"loss must be one of {sorted(_MEASURE_PARAMS)} or a "
                                 f"loss object, got {loss!r}")
            obj = get_loss(loss)
            for name in _MEASURE_PARAMS[loss]:
                setattr(obj, name, getattr(self, name))
            return obj
        obj = get_loss(loss)
        if type(obj).decomposition != "dataset":
            raise ValueError(f"loss {plugin_name(obj)!r} decomposes over "
                             f"{type(obj).decomposition}; PerformanceSVC trains losses "
                             "over the whole data set's labelling (decomposition "
                             "'dataset')")
        if self.k is not None or self.beta != 1.0:
            raise ValueError("k and beta configure a loss given by name; set them on "
                             f"the loss object instead ({obj!r})")
        return obj

    def _check_params(self):
        C = self.C
        if C is not None and (isinstance(C, bool) or not isinstance(C, numbers.Real)
                              or not np.isfinite(C) or C <= 0):
            raise ValueError(f"C must be a finite number > 0 or None, got {C!r}")
        s = self.intercept_scaling
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not np.isfinite(s) \
                or s <= 0:
            raise ValueError(f"intercept_scaling must be a finite number > 0, got {s!r}")

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y):
        """Train one binary problem (two classes), one per class (more classes), or
        one per column (a multilabel indicator matrix y).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is used as CSR (e.g. tf-idf vectors with 10⁵ features).
        y : array-like of shape (n_samples,) or (n_samples, n_labels)

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters, fewer than two classes, NaN or infinite features (the
            message names the sample).
        """
        self._check_params()
        loss = self._loss()
        X = _check_X(X)
        y = np.asarray(y) if not sp.issparse(y) else y.toarray()
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")
        kind = type_of_target(y)
        if kind == "multilabel-indicator":
            problems = [y[:, j] > 0 for j in range(y.shape[1])]
            self.classes_ = np.arange(y.shape[1])
        elif kind in ("binary", "multiclass"):
            if y.ndim != 1:
                y = y.ravel()
            self.classes_, yi = np.unique(y, return_inverse=True)
            if len(self.classes_) < 2:
                raise ValueError(f"y must hold at least two classes, got "
                                 f"{self.classes_.tolist()}")
            problems = [yi == 1] if len(self.classes_) == 2 else \
                [yi == c for c in range(len(self.classes_))]
        else:
            raise ValueError(f"y must be binary, multiclass or a multilabel indicator "
                             f"matrix, got a {kind!r} target")
        self._kind = kind
        self.n_features_in_ = X.shape[1]
        # the products of a round are of vectors (n or d long): BLAS threads would
        # only wait for each other, and for other processes on a busy machine
        with threadpool_limits(limits=1, user_api="blas"):
            rows = [self._fit_binary(X, positive, loss, j) for j, positive in
                    enumerate(problems)]
        self.coef_ = np.array([r[0] for r in rows])
        self.intercept_ = np.array([r[1] for r in rows])
        self.n_iter_ = np.array([r[2] for r in rows], dtype=int)
        self.objective_ = np.array([r[3] for r in rows])
        self.converged_ = np.array([r[4] for r in rows], dtype=bool)
        self.C_ = float(rows[0][5]) if rows else float("nan")
        return self

    def _fit_binary(self, X, positive, loss, j):
        """(coef, intercept, n_iter, objective, converged, C) of one binary problem."""
        d = X.shape[1]
        if positive.all() or not positive.any():  # one value only: a constant model
            sign = 1.0 if positive.all() else -1.0
            warnings.warn(f"Label {j} is {'present in all' if sign > 0 else 'absent from'} "
                          "the training examples: it is predicted constantly",
                          UserWarning, stacklevel=3)
            return np.zeros(d), sign, 0, 0.0, True, \
                float(self.C) if self.C is not None else float("nan")
        ranks = bool(capability(loss, "ranks"))
        bias = float(self.intercept_scaling) if self.fit_intercept and not ranks else 0.0
        y = np.where(positive, 1, -1).astype(np.int8)
        model = StructuredSVM(feature_map=BinaryFeatures(bias=bias, positive_class=1),
                              loss=loss, C=self.C, tol=self.tol, max_iter=self.max_iter,
                              verbose=self.verbose).fit(X, y)
        fm, w = model.feature_map_, model.coef_
        # the scores the map sorts are w·x / R: the model in the data's units
        coef = w[:d] / fm.scale_
        intercept = float(w[d] * bias / fm.scale_) if bias > 0 else 0.0
        if ranks and self.fit_intercept:
            intercept = _threshold(X @ coef, loss.positives(y))
        return (coef, intercept, model.n_iter_, model.objective_, model.converged_,
                model.C_)

    # ------------------------------------------------------------------ fitted
    def decision_function(self, X):
        """f(x) = w·x + b of every sample (one column per problem beyond two
        classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_problems)
        """
        check_is_fitted(self, "coef_")
        X = _check_X(X, self.n_features_in_)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if self.coef_.shape[0] == 1 and \
            self._kind != "multilabel-indicator" else scores

    def predict(self, X):
        """Class labels: ``classes_[1]`` where f(x) > 0 (two classes), the class of
        the highest f (more), or the indicator matrix of f > 0 (multilabel)."""
        f = self.decision_function(X)
        if self._kind == "multilabel-indicator":
            return (f > 0).astype(int)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(np.intp)]

    def score(self, X, y):
        """The measure trained for, on X and y (averaged over the binary problems
        beyond two classes): F_β and the error rate (as 1 − error) of the
        labelling f(x) > 0, the measures of a ranking of the decision values."""
        check_is_fitted(self, "coef_")
        loss = self._loss()
        f = self.decision_function(X)
        y = np.asarray(y) if not sp.issparse(y) else y.toarray()
        if y.shape[0] != f.shape[0]:
            raise ValueError(f"X has {f.shape[0]} samples but y has {y.shape[0]}")
        if self._kind == "multilabel-indicator":
            truths = [y[:, j] > 0 for j in range(y.shape[1])]
        else:
            y = y.ravel()
            truths = [y == self.classes_[1]] if len(self.classes_) == 2 else \
                [y == c for c in self.classes_]
        f = f.reshape(len(y), -1)
        values = [1.0 - loss(np.where(t, 1, -1), f[:, j]) for j, t in enumerate(truths)]
        return float(np.mean(values))

    # ------------------------------------------------------------------ model files
    def save(self, path):
        """Write the fitted classifier to ``path`` (npz + JSON, never pickle; see
        :mod:`structsvm.io`); :meth:`load` reads it back.

        Returns
        -------
        path
        """
        check_is_fitted(self, "coef_")
        check_writable(path)
        enc = ValueEncoder(_allowed())
        params = self.get_params(deep=False)
        header = {
            "estimator": class_key(type(self)),
            "params": {k: enc(v, k) for k, v in params.items()},
            "fitted": {k: enc(getattr(self, k), k) for k in _FITTED},
            "kind": self._kind,
            "structsvm_version": __version__,
        }
        write_model_file(path, header, enc.arrays)
        return path

    @classmethod
    def load(cls, path, *, max_bytes=MAX_BYTES):
        """A classifier saved with :meth:`save`; it predicts as the saved one did.

        Raises
        ------
        FileNotFoundError
        structsvm.io.ModelFileError
            A damaged, edited or foreign file (the message names it and why).
        """
        meta, arrays = read_model_file(path, max_bytes=max_bytes)
        with refusing_inconsistent(path):
            if meta.get("estimator") != class_key(cls):
                raise ModelFileError(f"it holds a {meta.get('estimator')!r}, not a "
                                     f"{cls.__name__}")
            decode = ValueDecoder(arrays, _allowed(), lambda name: None)
            params = {k: decode(v, k) for k, v in meta["params"].items()}
            model = cls(**params)
            model._check_params()
            model._loss()
            fitted = {k: decode(meta["fitted"][k], k) for k in _FITTED}
            kind = meta["kind"]
            if kind not in ("binary", "multiclass", "multilabel-indicator"):
                raise ModelFileError(f"unknown target kind {kind!r}")
            coef = np.array(fitted["coef_"], dtype=float)
            intercept = np.array(fitted["intercept_"], dtype=float)
            if coef.ndim != 2 or intercept.shape != (coef.shape[0],) or \
                    int(fitted["n_features_in_"]) != coef.shape[1]:
                raise ModelFileError(f"coef_ {coef.shape}, intercept_ {intercept.shape} "
                                     "and n_features_in_ do not fit together")
            if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
                raise ModelFileError("the weights hold non-finite values")
            for k, v in fitted.items():
                setattr(model, k, v)
            model.coef_, model.intercept_ = coef, intercept
            model.classes_ = np.asarray(fitted["classes_"])
            model.n_features_in_ = int(fitted["n_features_in_"])
            model._kind = kind
            n_problems = 1 if kind == "binary" else len(model.classes_)
            if coef.shape[0] != n_problems:
                raise ModelFileError(f"{coef.shape[0]} weight vectors for "
                                     f"{len(model.classes_)} classes")
        return model


#: the fitted attributes a model file stores
_FITTED = ("classes_", "coef_", "intercept_", "n_features_in_", "C_", "n_iter_",
           "objective_", "converged_")


def _allowed():
    """The classes a PerformanceSVC model file may name: itself and the losses."""
    out = {class_key(PerformanceSVC): PerformanceSVC}
    for cls in registered("loss").values():
        out[class_key(cls)] = cls
    return out


def _check_X(X, n_features=None):
    """X as CSR (float64; a copy only when needed) or a 2-D float array, finite;
    the message names a bad sample."""
    X = check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False)
    data = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(data)):
        if sp.issparse(X):
            bad = int(np.searchsorted(X.indptr, np.flatnonzero(~np.isfinite(X.data))[0],
                                      side="right") - 1)
        else:
            bad = int(np.flatnonzero(~np.all(np.isfinite(X), axis=1))[0])
        raise ValueError(f"Sample {bad}: X contains NaN or infinite values")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, the classifier was fitted with "
                         f"{n_features}")
    return X


def _threshold(scores, k):
    """−t such that f = s − t labels the k highest training scores positive: t
    halfway between the k-th and the (k+1)-th highest (below the lowest for k = n)."""
    s = np.sort(np.asarray(scores, dtype=float))[::-1]
    if k <= 0:
        return -(s[0] + 1.0)
    if k >= s.size:
        return -(s[-1] - 1.0)
    return -0.5 * (s[k - 1] + s[k])
