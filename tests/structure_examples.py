"""A user structure the tests train, check, save and load: multi-label classification
(an importable module, as a user's structure lives in one)."""
import numpy as np
import scipy.sparse as sp

import structsvm


class MultiLabel(structsvm.Structure):
    """y: a tuple of 0/1 labels; Φ(x, y) = (y_1 x̃, ..., y_L x̃) with x̃ = (x, bias);
    normalised Hamming loss."""

    def __init__(self, n_labels=3, bias=1.0):
        self.n_labels = n_labels
        self.bias = bias

    def joint_feature(self, x, y):
        return np.concatenate([np.append(x, self.bias) * y_k for y_k in y])

    def argmax(self, x, w):
        scores = w.reshape(self.n_labels, -1) @ np.append(x, self.bias)
        return tuple(int(s > 0) for s in scores)

    def loss(self, y_true, y_pred):
        return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))

    def loss_augmented_argmax(self, x, y, w):
        scores = w.reshape(self.n_labels, -1) @ np.append(x, self.bias)
        return tuple(int(s + (1 - 2 * y_k) / self.n_labels > 0)
                     for s, y_k in zip(scores, y))


class Enumerated(MultiLabel):
    """The same structure without loss_augmented_argmax: training enumerates outputs."""

    loss_augmented_argmax = structsvm.Structure.loss_augmented_argmax

    def outputs(self, x):
        n = self.n_labels
        return [tuple((k >> j) & 1 for j in range(n)) for k in range(2 ** n)]


def multilabel_data(n=60, d=4, n_labels=3, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_labels, d))
    X = [rng.normal(size=d) for _ in range(n)]
    Y = [tuple(int(v > 0) for v in A @ x) for x in X]
    return X, Y


class SparseMultiLabel(MultiLabel):
    """The same Φ as 1 x d sparse rows."""

    def joint_feature(self, x, y):
        return sp.csr_matrix(super().joint_feature(x, y).reshape(1, -1))


class ArrayParam(MultiLabel):
    """A parameter a model file cannot hold (an array)."""

    def __init__(self, n_labels=3, bias=1.0, scale=None):
        super().__init__(n_labels, bias)
        self.scale = scale
