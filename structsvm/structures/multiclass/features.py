"""Multiclass joint feature map Φ(x, y) = φ(x) ⊗ Λ(y), one-hot or class attributes."""
from __future__ import annotations

import weakref
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...limits import check_weights
from ...protocols import ClassBlocks, FeatureMapBase, as_sequence
from ._potentials import MulticlassPotentials
from ._rows import csr_rows, difference_rows, sparse_class_scores
from .._names import FeatureNamesMixin, input_feature_names
from .._input_columns import kept_columns
from .._state import StateReader, read_input_columns
from .._validation import check_training_inputs, inputs_with_bias, label_index
# the label-set helpers under the names other maps import from this module
from .._validation import as_label_array as _as_label_array
from .._validation import sorted_unique as _sorted_unique

__all__ = ["MulticlassFeatures", "MulticlassPotentials"]


class MulticlassFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """Φ(x, y) = φ(x) ⊗ Λ(y): one weight vector per class, or per class attribute.

    With ``attributes=None``, Λ(y) is the one-hot vector of y and the structural SVM
    is Crammer & Singer's multiclass SVM. With an attribute matrix (one row per
    class, e.g. TF vectors of class descriptions), classes share weights through
    their attributes, w·Φ(x, y) = Λ(y)ᵀ W φ(x), and a class with attributes but no
    training example can still be predicted (zero-shot).

    Parameters
    ----------
    attributes : ndarray of shape (n_classes, n_attributes), dict or None, default=None
        Class descriptions Λ. A dict maps each class to its attribute vector (its keys
        are the output space, which may include classes unseen in training); an array
        needs ``classes`` (row order) unless it has one row per training class in
        sorted order.
    classes : sequence, optional
        The output space in the order of ``attributes``' rows (default: the sorted
        training labels).
    bias : float, default=0.0
        When > 0, a constant feature of this value is appended to φ(x) (a per-class
        intercept, regularised like LinearSVC's ``intercept_scaling``).

    Attributes
    ----------
    classes_ : ndarray
        The output space (encoded output k is ``classes_[k]``).
    n_features_in_ : int
        Number of input columns (the width of X in training).
    input_columns_ : ndarray of int or None
        With sparse inputs, the columns of X that hold a value in some training
        example: the weights cover only those, so a feature number sizes nothing by
        itself (None: every column).
    n_input_features_ : int
        Dimension of φ(x): the columns covered (with the bias column).
    n_features_ : int
        Dimension of Φ(x, y) = n_input_features_ × n_attributes.
    feature_names_ : ndarray of str
        ``"<class>:x<j>"`` (``"<class>:bias"``), or ``"attr<a>:x<j>"`` with attributes;
        ``feature_index("b:*")`` is class b's weight vector.

    Notes
    -----
    Flattening: ``w.reshape(n_attributes, n_input_features_)`` is W, the matrix with
    Λ(y)ᵀ W φ(x) = w·Φ(x, y); with one-hot Λ row k of W is class k's weight vector
    (``StructuredSVM.coef_`` reshaped).

    The oracle's rows δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i) = φ(x_i) ⊗ (Λ(y_i) − Λ(ŷ_i))
    are built directly (:meth:`joint_feature_differences`, one compiled pass), and
    the class scores Λ W φ(x_i) of a batch by a compiled product that reads each
    weight the batch needs once.

    References
    ----------
    K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
    kernel-based vector machines. JMLR 2, 2001.
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005 (Sec. 4.1).

    Examples
    --------
    >>> import numpy as np
    >>> fm = MulticlassFeatures().fit([np.array([1., 2.]), np.array([0., 1.])], ["a", "b"])
    >>> fm.joint_feature(np.array([1., 2.]), "b").tolist()
    [0.0, 0.0, 1.0, 2.0]
    """

    structure: ClassVar[str] = "multiclass"
    default_decoder: ClassVar[str] = "argmax"
    default_loss: ClassVar[str] = "zero_one"
    default_C: ClassVar[float] = 1.0
    # relative duality gap: the returned objective is certified within 0.05% of the
    # optimum, so it matches liblinear's Crammer-Singer objective to 1e-3 with margin
    default_tol: ClassVar[float] = 5e-4
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("multiclass_cd", {}),
                                         ("dual_cd", {"n_batches": 2}))
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = tuple(
        "structsvm.structures.multiclass._jit:" + f
        for f in ("class_scores", "attribute_differences", "dense_rows_to_csr"))
    has_difference_sum: ClassVar[bool] = True
    has_feature_differences: ClassVar[bool] = True
    has_class_blocks: ClassVar[bool] = True

    def __init__(self, attributes=None, classes=None, bias=0.0):
        self.attributes = attributes
        self.classes = classes
        self.bias = bias

    def __getstate__(self):
        # the Δ-table cache holds weak references: a copy (or a worker process)
        # rebuilds it on first use
        state = dict(super().__getstate__())
        state.pop("_loss_tables", None)
        return state

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the output space and the input dimension from training data."""
        Xm, Y = check_training_inputs(X, Y, self.bias)
        self.classes_, self.lambda_ = self._output_space(Y)
        self.n_features_in_ = int(Xm.shape[1])
        self.input_columns_ = kept_columns(Xm)
        kept = Xm.shape[1] if self.input_columns_ is None else self.input_columns_.size
        self.n_input_features_ = kept + (1 if self.bias > 0 else 0)
        n_attr = len(self.classes_) if self.lambda_ is None else self.lambda_.shape[1]
        self.n_features_ = int(self.n_input_features_ * n_attr)
        check_weights(self.n_features_,
                      f"{self.n_input_features_} features x {n_attr} classes")
        self._index = label_index(self.classes_)
        return self

    def _output_space(self, Y):
        attrs = self.attributes
        seen = _sorted_unique(Y)
        if attrs is None:
            classes = seen if self.classes is None else np.asarray(self.classes, dtype=object)
            return _as_label_array(classes), None
        if isinstance(attrs, dict):
            classes = list(attrs) if self.classes is None else list(self.classes)
            lam = np.array([np.asarray(attrs[c], dtype=float).ravel() for c in classes])
        else:
            lam = np.asarray(attrs, dtype=float)
            classes = seen if self.classes is None else list(self.classes)
            if lam.ndim != 2 or lam.shape[0] != len(classes):
                raise ValueError(f"attributes must have one row per class ({len(classes)}"
                                 f" classes), got shape {lam.shape}")
        if not np.all(np.isfinite(lam)):
            raise ValueError("attributes contain NaN or infinite values")
        classes = _as_label_array(classes)
        known = set(classes.tolist())
        for i, y in enumerate(Y):
            if y not in known:
                raise ValueError(f"Sample {i}: label {y!r} has no attribute vector")
        return classes, lam

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """φ(x) for every sample: CSR if any input is sparse, else a dense array.

        A CSR result has sorted, unique column indices per row (a canonical copy is
        made when the input's are not), as the compiled loops expect.
        """
        Xm = inputs_with_bias(X, self.n_input_features_, self.bias,
                              *self._input_width())
        if sp.issparse(Xm) and not Xm.has_canonical_format:
            Xm = Xm.copy()  # never reorder the caller's arrays
            Xm.sum_duplicates()
        return Xm

    def _input_width(self):
        """(columns inputs have, the columns the weights cover or None for all)."""
        return self.n_features_in_, self.input_columns_

    def encode_outputs(self, Y, X=None):
        """Labels to class indices; an unknown label raises a ValueError naming the sample."""
        Y = as_sequence(Y, "Y")
        out = np.empty(len(Y), dtype=np.intp)
        for i, y in enumerate(Y):
            try:
                out[i] = self._index[y]
            except (KeyError, TypeError):
                raise ValueError(f"Sample {i}: unknown label {y!r}; the output space is "
                                 f"{self.classes_.tolist()}") from None
        return list(out)

    def decode_outputs(self, Ye):
        """Class indices back to labels."""
        return [self.classes_[int(k)] for k in Ye]

    # ------------------------------------------------------------------ features
    def _rows(self, Xe, idx):
        return Xe if idx is None else Xe[np.asarray(idx, dtype=np.intp)]

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) = Λ(y_i) ⊗ φ(x_i)."""
        Xs = sp.csr_matrix(self._rows(Xe, idx))
        y = np.asarray(Ye, dtype=np.intp).reshape(-1)
        n, d = Xs.shape
        if len(y) != n:
            raise ValueError(f"{n} inputs but {len(y)} outputs")
        if self.lambda_ is None:
            # one-hot Λ: shift every row's columns into its class block
            counts = np.diff(Xs.indptr)
            cols = Xs.indices + np.repeat(y * d, counts)
            return sp.csr_matrix((Xs.data, cols, Xs.indptr), shape=(n, self.n_features_))
        lam = self.lambda_[y]
        blocks = [sp.diags(lam[:, a]) @ Xs for a in range(lam.shape[1])]
        return sp.hstack(blocks, format="csr")

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i), built directly.

        Parameters
        ----------
        Xe : ndarray or csr_matrix
            Encoded inputs (:meth:`encode_inputs`).
        Ye, Ye_hat : array-like of int
            True and predicted class indices of the examples ``idx``.
        idx : array-like of int, optional
            Rows of ``Xe`` (all by default).

        Returns
        -------
        csr_matrix of shape (len(idx), n_features_)
            Sorted column indices, no stored zeros: with one-hot Λ row i holds x_i in
            block y_i and −x_i in block ŷ_i (empty when ŷ_i = y_i); with attributes,
            (Λ(y_i)_a − Λ(ŷ_i)_a) x_i in block a. Equal, entry for entry, to
            ``joint_features(Xe, Ye, idx) − joint_features(Xe, Ye_hat, idx)`` with
            zeros eliminated (one compiled pass, no sparse arithmetic).

        Raises
        ------
        ValueError
            When ``Ye`` or ``Ye_hat`` does not have one entry per example.
        """
        Xs, rows = csr_rows(Xe, idx)
        y = np.asarray(Ye, dtype=np.intp).reshape(-1)
        yh = np.asarray(Ye_hat, dtype=np.intp).reshape(-1)
        if len(y) != len(rows) or len(yh) != len(rows):
            raise ValueError(f"{len(rows)} inputs but {len(y)} and {len(yh)} outputs")
        K = len(self.classes_)
        for name, v in (("Ye", y), ("Ye_hat", yh)):
            if v.size and (v.min() < 0 or v.max() >= K):
                raise ValueError(f"{name} holds a class index outside [0, {K})")
        return difference_rows(Xs, rows, y, yh, self.lambda_, self.n_input_features_,
                               self.n_features_)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) as a dense vector (one sparse product).

        With one-hot Λ this is vec((E_y − E_ŷ)ᵀ diag(ω) X), E the indicator matrices.
        """
        X = self._rows(Xe, idx)
        y = np.asarray(Ye, dtype=np.intp).reshape(-1)
        yh = np.asarray(Ye_hat, dtype=np.intp).reshape(-1)
        n = X.shape[0]
        om = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        K = len(self.classes_)
        rows = np.concatenate([np.arange(n), np.arange(n)])
        E = sp.csr_matrix((np.concatenate([om, -om]), (rows, np.concatenate([y, yh]))),
                          shape=(n, K))
        if self.lambda_ is not None:
            E = sp.csr_matrix(E @ self.lambda_)
        total = E.T @ X
        return (total.toarray() if sp.issparse(total) else np.asarray(total)).ravel()

    def _weights(self, w):
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        return w.reshape(-1, self.n_input_features_)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`MulticlassPotentials` of the examples ``idx`` (all by default): one product."""
        W = self._weights(w)
        if sp.issparse(Xe):  # compiled: scipy would copy W.T (all of w) on every call
            scores = sparse_class_scores(Xe, W, idx)
        else:
            scores = np.asarray(self._rows(Xe, idx) @ W.T)
        if self.lambda_ is not None:
            scores = scores @ self.lambda_.T
        tables = self.__dict__.get("_loss_tables")
        if tables is None:  # Δ tables of the losses this fitted map has augmented with
            tables = self._loss_tables = weakref.WeakKeyDictionary()
        return MulticlassPotentials(scores, tables)

    def constrain_potentials(self, batch, constraints):
        """The batch with the classes ``constraints`` forbid scored −inf (one
        :class:`~structsvm.structures.constraints.OutputConstraints` or None per
        example; the class is part 0; see
        :func:`structsvm.structures.multiclass.constraints.constrain_classes`)."""
        from .constraints import constrain_classes

        return constrain_classes(self.classes_, self._index, batch, constraints)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector of length ``n_features_`` (raw x and label y)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`MulticlassPotentials` of one raw input (``.score(k)`` for class k)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    def class_blocks(self, Xe, loss):
        """This fitted map as one-hot class blocks, Φ(x, k) = x ⊗ e_k, for learners
        that solve such problems directly (the multiclass dual method).

        Parameters
        ----------
        Xe : encoded inputs or None
        loss : Loss

        Returns
        -------
        structsvm.protocols.ClassBlocks or None
            The inputs ``Xe`` and the table Δ(c, k); None with class ``attributes``
            (Φ is then no one-hot block).
        """
        if self.lambda_ is not None:
            return None
        K = len(self.classes_)
        table = MulticlassPotentials(np.zeros((K, K))).augment(np.arange(K), loss).scores
        return ClassBlocks(inputs=Xe, loss_table=np.array(table, dtype=float))

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self.classes_

    def _build_feature_names(self):
        inputs = input_feature_names(self.n_input_features_ - (self.bias > 0), self.bias,
                                     self._input_width()[1])
        blocks = ([str(c) for c in self.classes_] if self.lambda_ is None
                  else [f"attr{a}" for a in range(self.lambda_.shape[1])])
        return [f"{b}:{x}" for b in blocks for x in inputs]

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        state = {"classes_": self.classes_, "n_input_features_": self.n_input_features_,
                 "n_features_": self.n_features_,
                 "n_features_in_": int(self._input_width()[0])}
        if self.lambda_ is not None:
            state["lambda_"] = self.lambda_
        if self._input_width()[1] is not None:
            state["input_columns_"] = self.input_columns_
        return state

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self.

        The class set, the attribute matrix and the dimensions are checked against
        each other before anything uses them (a
        :class:`~structsvm.io.ModelFileError` names the value that does not fit).
        """
        r = StateReader(state, type(self).__name__)
        classes = r.labels("classes_")
        K = len(classes)
        lam = r.array("lambda_", "f", ndim=2, shape=(K, None)) if r.has("lambda_") \
            else None
        d = r.integer("n_input_features_", 1 if self.bias > 0 else 0)
        n_attr = K if lam is None else lam.shape[1]
        r.count("n_features_", d * n_attr,
                f"{d} input features x {n_attr} {'classes' if lam is None else 'attributes'}")
        width, kept = read_input_columns(r, d - (1 if self.bias > 0 else 0))
        self.classes_ = _as_label_array(classes)
        self.lambda_ = lam
        self.n_input_features_ = d
        self.n_features_in_, self.input_columns_ = width, kept
        self.n_features_ = d * n_attr
        self._index = label_index(self.classes_)
        return self
