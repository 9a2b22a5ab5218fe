"""The multi-label feature map Φ(x, y) = Σ_l y_l (x ⊗ e_l) and its potentials."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...protocols import FeatureMapBase, as_sequence, check_decomposition

__all__ = ["MultiLabelFeatures", "LabelScores"]


class LabelScores:
    """Scores of a batch: ``scores[i, l] = w_l · x_i``, the gain of switching label l
    of example i on. An output is a 0/1 vector of the labels."""

    structure: ClassVar[str] = "multilabel"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)  # a loss over the labels: Hamming

    def __init__(self, scores):
        self.scores = np.asarray(scores, dtype=float)

    def __len__(self):
        return self.scores.shape[0]

    def __getitem__(self, i):
        return LabelScores(self.scores[i:i + 1])

    def score(self, Y):
        """w·Φ(x_i, y_i): of one output (a batch of one) or of every example's."""
        Y = np.asarray(Y, dtype=float)
        if Y.ndim == 1:
            return float(self.scores[0] @ Y)
        return np.einsum("il,il->i", self.scores, Y)

    def output_space_sizes(self):
        return [2 ** self.scores.shape[1]] * len(self)

    def enumerate(self):
        """Every 0/1 vector of the labels (a batch of one; small label sets)."""
        L = self.scores.shape[1]
        for k in range(2 ** L):
            yield np.array([(k >> j) & 1 for j in range(L)], dtype=np.intp)

    def augment(self, Y, loss):
        """Scores plus Δ: a loss over the labels adds ``part_losses(y_i, 2)`` (the
        loss of labelling l off and on) to switching l on, minus switching it off."""
        check_decomposition(loss, self.augments, "a multi-label batch")
        out = self.scores.copy()
        for i, y in enumerate(Y):
            table = np.asarray(loss.part_losses(np.asarray(y, dtype=np.intp), 2))
            out[i] += table[:, 1] - table[:, 0]
        return LabelScores(out)


class MultiLabelFeatures(FeatureMapBase, BaseEstimator):
    """Φ(x, y) = Σ_l y_l (x ⊗ e_l): a weight vector per label, decided independently.

    Outputs are sets of labels (any iterable of hashable labels per example).

    Examples
    --------
    >>> import numpy as np
    >>> fm = MultiLabelFeatures().fit([np.ones(2)], [{"a", "b"}])
    >>> fm.joint_feature(np.array([1.0, 2.0]), {"b"}).tolist()
    [0.0, 0.0, 1.0, 2.0]
    """

    structure: ClassVar[str] = "multilabel"
    default_decoder: ClassVar[str] = "independent"
    default_loss: ClassVar[str] = "hamming"
    default_C: ClassVar[float] = 1.0
    default_tol: ClassVar[float] = 1e-3
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)

    def fit(self, X, Y):
        X, Y = as_sequence(X, "X"), as_sequence(Y, "Y")
        self.labels_ = sorted({label for y in Y for label in y})
        self.n_input_features_ = len(np.ravel(X[0]))
        self.n_features_ = len(self.labels_) * self.n_input_features_
        return self

    def encode_inputs(self, X):
        return np.array([np.ravel(x) for x in as_sequence(X, "X")], dtype=float)

    def encode_outputs(self, Y, X=None):
        index = {label: k for k, label in enumerate(self.labels_)}
        out = []
        for i, y in enumerate(as_sequence(Y, "Y")):
            vec = np.zeros(len(self.labels_), dtype=np.intp)
            for label in y:
                if label not in index:
                    raise ValueError(f"Sample {i}: unknown label {label!r}")
                vec[index[label]] = 1
            out.append(vec)
        return out

    def decode_outputs(self, Ye):
        return [{self.labels_[k] for k in np.flatnonzero(y)} for y in Ye]

    def joint_features(self, Xe, Ye, idx=None):
        idx = np.arange(len(Xe)) if idx is None else np.asarray(idx)
        Y = np.asarray([np.asarray(y) for y in Ye], dtype=float).reshape(len(idx), -1)
        rows = (Y[:, :, None] * Xe[idx][:, None, :]).reshape(len(idx), -1)
        return sp.csr_matrix(rows)

    def batch_potentials(self, Xe, w, idx=None):
        idx = np.arange(len(Xe)) if idx is None else np.asarray(idx)
        W = np.asarray(w, dtype=float).reshape(len(self.labels_), -1)
        return LabelScores(Xe[idx] @ W.T)

    def joint_feature(self, x, y):
        return self.joint_features(self.encode_inputs([x]),
                                   self.encode_outputs([y])).toarray().ravel()

    def potentials(self, x, w):
        return self.batch_potentials(self.encode_inputs([x]), w)

    def fitted_state(self):
        return {"labels_": list(self.labels_), "n_input_features_": self.n_input_features_}

    def load_fitted_state(self, state):
        self.labels_ = list(state["labels_"])
        self.n_input_features_ = int(state["n_input_features_"])
        self.n_features_ = len(self.labels_) * self.n_input_features_
        return self
