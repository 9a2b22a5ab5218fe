r"""The binary joint feature map over a whole data set: Φ(X̄, Ȳ) = (1/2n) Σ_i ȳ_i x_i."""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..._compiled import loops
from ...limits import check_weights
from ...protocols import FeatureMapBase, as_sequence
from ._potentials import BinaryPotentials
from .._names import FeatureNamesMixin, input_feature_names
from .._validation import as_label_array, check_training_inputs, inputs_with_bias

__all__ = ["BinaryFeatures", "BinaryPotentials"]


class BinaryFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    r"""Binary classification as one structured output: the labelling of a data set.

    The input is the whole data set X̄ = (x_1 .. x_n), the output a labelling
    Ȳ ∈ {−1, +1}ⁿ, and

    .. math::

        \Phi(\bar X, \bar Y) = \frac{1}{2nR} \sum_{i=1}^n \bar y_i\, x_i,

    Joachims' (2005) multivariate map Σ_i ȳ_i x_i, scaled. The factor 1/2n makes
    the labelling that flips one example differ from the truth by y_i x_i / (nR):
    with the error-rate loss (1/n per wrong example) every example asks for the
    margin y_i w·x_i / R ≥ 1 and the 1-slack objective is
    ½‖w‖² + (C/n) Σ_i max(0, 1 − y_i w·x_i / R) (a linear SVM with C/n, Joachims
    2006); the other losses — F_β, precision and recall at k, PRBEP, ROC area
    (:mod:`.losses`) — train at that scale of w. R, the root mean square norm of
    the training examples (``scale_``), makes the model the same for features
    multiplied by any constant (tf-idf vectors of norm 1, word counts), so one C
    suits both (SVM-light's default C, 1/R², has the same purpose). The prediction is the
    labelling with the highest score, sign(w·x_i) for every example (decoder
    ``"sign"``). Inputs may be scipy sparse matrices (CSR, e.g. 10⁵ tf-idf
    features) or dense arrays.

    Parameters
    ----------
    bias : float, default=1.0
        When > 0, a constant feature of this value is appended to every x (an
        intercept regularised like LinearSVC's, ``intercept_scaling``); 0 means
        none. The measures of a ranking (precision and recall at k, PRBEP, ROC area)
        do not depend on it.
    positive_class : label, optional
        The label that is +1. Default: the greater of the two (scikit-learn's
        ``classes_[1]``).
    normalize : bool, default=True
        Divide by R (above); False keeps R = 1, the map Σ_i ȳ_i x_i / 2n.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The negative and the positive label (encoded −1 and +1).
    scale_ : float
        R: the root mean square norm of the training examples (bias included), or 1.
    n_input_features_ : int
        Dimension of x (with the bias column).
    n_features_ : int
        Dimension of Φ (= ``n_input_features_``).
    feature_names_ : ndarray of str
        ``"x<j>"`` and ``"bias"``.

    Notes
    -----
    Defaults: the loss ``"error_rate"`` (the ordinary linear SVM, Joachims 2005,
    Theorem 1; pass ``loss="f1"``, ``"roc_auc"``, ... for the others, each with its
    own ``default_C`` where it declares one), the learner ``"one_slack"`` (the only
    one that trains a loss over the whole data set), C and tol below (the class
    attributes ``default_C``, ``default_tol``: the measures of a threshold, error
    rate and F_β, saturate long before a 20% duality gap closes; the measures of a
    ranking declare 0.1). With the error-rate loss, C is
    scikit-learn's ``LinearSVC`` C times n R² (SVM-perf's ``-c`` times 100, without
    the 1/R).

    The oracle's Σ δΦ = (1/2nR) Σ_i (y_i − ȳ_i) x_i is one product of the data with
    the coefficients of the most violated output (for ROC area, the per-example
    counts of swapped pairs: :class:`~.outputs.PairSwaps`), built from the rows
    whose coefficient changed.

    References
    ----------
    T. Joachims. A support vector method for multivariate performance measures.
    ICML 2005.
    T. Joachims. Training linear SVMs in linear time. KDD 2006.

    Examples
    --------
    >>> import numpy as np
    >>> fm = BinaryFeatures(normalize=False).fit(np.array([[1., 2.], [0., 1.]]),
    ...                                          ["spam", "ham"])
    >>> fm.classes_.tolist()
    ['ham', 'spam']
    >>> fm.joint_feature(np.array([1., 2.]), "spam").tolist()   # one example: 1/2
    [0.5, 1.0, 0.5]
    """

    structure: ClassVar[str] = "binary"
    default_decoder: ClassVar[str] = "sign"
    default_loss: ClassVar[str] = "error_rate"
    default_C: ClassVar[float] = 1e4
    default_tol: ClassVar[float] = 0.2
    default_learners: ClassVar[tuple] = (("one_slack", {}),)
    # the compiled loops its losses' most violated labellings call
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.binary._jit:squared_norm_sum",
        "structsvm.structures.binary._jit:concave_search",
        "structsvm.structures.binary._jit:below_k_search")
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, bias=1.0, positive_class=None, normalize=True):
        self.bias = bias
        self.positive_class = positive_class
        self.normalize = normalize

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the two labels and the input dimension."""
        Xm, Y = check_training_inputs(X, Y, self.bias)
        self.classes_ = self._classes(Y)
        self.n_input_features_ = Xm.shape[1] + (1 if self.bias > 0 else 0)
        self.n_features_ = int(self.n_input_features_)
        check_weights(self.n_features_, f"{self.n_features_} features")
        self.scale_ = _rms_norm(Xm, self.bias) if self.normalize else 1.0
        return self

    def _classes(self, Y):
        labels = _label_array(Y)
        uniq = list(dict.fromkeys(labels.tolist()))
        if len(uniq) != 2:
            raise ValueError(f"binary classification needs exactly two labels, got "
                             f"{len(uniq)}: {uniq[:5]!r}")
        pos = self.positive_class
        if pos is None:
            try:
                neg, pos = sorted(uniq)
            except TypeError:
                raise ValueError(f"the labels {uniq!r} cannot be ordered: name the "
                                 "positive one (positive_class=...)") from None
        elif pos not in uniq:
            raise ValueError(f"positive_class={pos!r} is not one of the labels {uniq!r}")
        else:
            neg = uniq[1] if uniq[0] == pos else uniq[0]
        return as_label_array([neg, pos])

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """x_i for every sample, with the bias column: CSR (float64) when the input
        is sparse, else a dense array (only sparse products read it: the column
        order within a row does not matter)."""
        return inputs_with_bias(X, self.n_input_features_, self.bias)

    def encode_outputs(self, Y, X=None):
        """Labels to −1 / +1 (int8); an unknown label raises a ValueError naming the
        sample."""
        labels = _label_array(Y)
        neg, pos = self.classes_.tolist()
        is_pos, is_neg = _equal(labels, pos), _equal(labels, neg)
        bad = np.flatnonzero(~(is_pos | is_neg))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"Sample {i}: unknown label {_plain(labels[i])!r}; the "
                             f"labels are {[neg, pos]!r}")
        return np.where(is_pos, 1, -1).astype(np.int8)

    def decode_outputs(self, Ye):
        """−1 / +1 back to the labels (a list)."""
        y = np.asarray(Ye, dtype=float).reshape(-1)
        return list(np.where(y > 0, self.classes_[1], self.classes_[0]))

    # ------------------------------------------------------------------ Φ
    def _scale(self, Xe):
        """κ = 1/(2nR) for a data set of n examples."""
        return 0.5 / (max(Xe.shape[0], 1) * self.scale_)

    @staticmethod
    def _rows(Xe, idx):
        if idx is None:
            return Xe
        idx = np.asarray(idx, dtype=np.intp).reshape(-1)
        if idx.size and idx[-1] - idx[0] == idx.size - 1 and np.all(np.diff(idx) == 1):
            if idx.size == Xe.shape[0]:
                return Xe  # all rows, in order
            return Xe[int(idx[0]):int(idx[-1]) + 1]  # a slice: no gather
        return Xe[idx]

    def _coef(self, Ye, n, what):
        c = np.asarray(Ye, dtype=float).reshape(-1)
        if c.size != n:
            raise ValueError(f"{n} examples but {c.size} {what}")
        return c

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is κ ȳ_i x_i (κ = 1/2nR, n the rows of ``Xe``): the
        terms of Φ(X̄, Ȳ)."""
        X = self._rows(Xe, idx)
        c = self._coef(Ye, X.shape[0], "outputs") * self._scale(Xe)
        if not sp.issparse(X):
            return sp.csr_matrix(c[:, None] * X)
        X = sp.csr_matrix(X)
        data = X.data * np.repeat(c, np.diff(X.indptr))  # row i scaled by c_i
        return sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) = κ Xᵀ (ω (y − ŷ)), from the rows whose
        label or coefficient differs: a 1 × D CSR row (sorted columns, no zeros) for
        sparse inputs, a dense vector for dense ones.

        The row's columns come from a boolean mask of the columns of the rows
        summed: no scan of a dense vector of D floats for its nonzeros.
        """
        X = self._rows(Xe, idx)
        n = X.shape[0]
        diff = self._coef(Ye, n, "true outputs") - self._coef(Ye_hat, n,
                                                              "predicted outputs")
        if weights is not None:
            diff = diff * np.asarray(weights, dtype=float).reshape(-1)
        diff *= self._scale(Xe)
        rows = np.flatnonzero(diff)
        if rows.size < n // 4:  # few differing rows: gather them (cheaper than all)
            X, diff = X[rows], diff[rows]
        if not sp.issparse(X):
            return np.asarray(X.T @ diff, dtype=float).ravel()
        X = sp.csr_matrix(X)
        dense = np.asarray(X.T @ diff, dtype=float).ravel()
        used = np.zeros(X.shape[1], dtype=bool)
        used[X.indices[:X.indptr[-1]]] = True  # a superset: zero sums are dropped below
        cols = np.flatnonzero(used)
        vals = dense[cols]
        keep = vals != 0.0
        cols, vals = cols[keep], vals[keep]
        row = sp.csr_matrix((vals, cols.astype(X.indices.dtype), np.array([0, cols.size])),
                            shape=(1, X.shape[1]))
        row.has_canonical_format = True
        return row

    def _check_w(self, w):
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        return w

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`BinaryPotentials` of the examples ``idx`` (all by default): the
        scores w·x_i and κ."""
        w = self._check_w(w)
        return BinaryPotentials(np.asarray(self._rows(Xe, idx) @ w).ravel(),
                                self._scale(Xe))

    def joint_feature(self, x, y):
        """Φ of the one-example data set (x, y): x y / 2R, with the bias (raw x and
        label y)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`BinaryPotentials` of one raw input."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self.classes_

    def _build_feature_names(self):
        return input_feature_names(self.n_input_features_ - (self.bias > 0), self.bias)

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io`."""
        return {"classes_": self.classes_, "scale_": self.scale_,
                "n_input_features_": self.n_input_features_,
                "n_features_": self.n_features_}

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self."""
        self.classes_ = as_label_array(state["classes_"])
        if len(self.classes_) != 2:
            raise ValueError(f"classes_ must hold two labels, got {len(self.classes_)}")
        self.scale_ = float(state["scale_"])
        if not (np.isfinite(self.scale_) and self.scale_ > 0):
            raise ValueError(f"scale_ must be a finite number > 0, got {self.scale_!r}")
        self.n_input_features_ = int(state["n_input_features_"])
        self.n_features_ = int(state["n_features_"])
        return self


def _rms_norm(X, bias):
    """R = √(mean_i ‖x_i‖²) of the rows with the bias column (1 when all are 0)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        # a row's entries of one column are summed before squaring, without
        # sorting the rows (a compiled pass)
        sq = loops("structsvm.structures.binary._jit").squared_norm_sum(
            X.indptr, X.indices, X.data, X.shape[1])
    else:
        sq = float(np.einsum("ij,ij->", X, X))
    mean = sq / X.shape[0] + float(bias) ** 2
    return math.sqrt(mean) if mean > 0 else 1.0


def _label_array(Y):
    """The labels as a 1-D array (numbers stay numeric: a vectorised comparison),
    refusing None and NaN with the sample's index."""
    if isinstance(Y, list) and Y and all(isinstance(v, (int, float, np.number))
                                         and not isinstance(v, bool) for v in Y[:1]):
        try:
            arr = np.asarray(Y)
        except (TypeError, ValueError):
            arr = None
        if arr is not None and arr.ndim == 1 and arr.dtype.kind in "iuf":
            Y = arr
    if isinstance(Y, np.ndarray) and Y.ndim == 1 and Y.dtype.kind in "biuf":
        if Y.dtype.kind == "f" and not np.all(np.isfinite(Y)):
            i = int(np.flatnonzero(~np.isfinite(Y))[0])
            raise ValueError(f"Sample {i}: label is {float(Y[i])}; every output needs "
                             "a finite label")
        return Y
    Y = as_sequence(Y, "Y")
    labels = as_label_array(Y)
    for i, v in enumerate(labels):
        if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)):
            raise ValueError(f"Sample {i}: label is {'None' if v is None else 'nan'}; "
                             "every output needs a label")
    return labels


def _plain(v):
    """A numpy scalar as the Python value it holds (for messages)."""
    return v.item() if isinstance(v, np.generic) else v


def _equal(labels, value):
    """labels == value, elementwise, for numeric and object arrays alike."""
    if labels.dtype.kind in "biuf":
        return labels == value
    return np.fromiter((v == value for v in labels), dtype=bool, count=labels.size)
