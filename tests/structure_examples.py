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


class HashedTagger(structsvm.Structure):
    """Sequence labelling with hashed features: x an int array of word codes, y a
    tuple of tags (one per word: outputs of different lengths for different x);
    Φ(x, y) counts the (word, tag) and (previous tag, tag) pairs hashed into
    2**n_bits columns (one length for every x); Viterbi in numpy; Hamming loss
    (a count)."""

    def __init__(self, n_tags=3, n_bits=8):
        self.n_tags = n_tags
        self.n_bits = n_bits

    def _hash(self, keys):
        return (np.asarray(keys) * 2_654_435_761) % 2 ** 32 >> (32 - self.n_bits)

    def _cols(self, x, y):
        x, y = np.asarray(x), np.asarray(y)
        prev = np.concatenate([[self.n_tags], y[:-1]])  # n_tags: the start
        return self._hash(np.concatenate([x * 31 + y, 10_007 + prev * 37 + y]))

    def joint_feature(self, x, y):
        counts = np.bincount(self._cols(x, y), minlength=2 ** self.n_bits)
        return sp.csr_matrix(counts.astype(float).reshape(1, -1))

    def _scores(self, x, w):
        """unary[t, k] and trans[j, k] (j = n_tags: the start)."""
        tags = np.arange(self.n_tags)
        unary = w[self._hash(np.asarray(x)[:, None] * 31 + tags[None, :])]
        prev = np.arange(self.n_tags + 1)
        return unary, w[self._hash(10_007 + prev[:, None] * 37 + tags[None, :])]

    def _viterbi(self, unary, trans):
        T, K = unary.shape
        score = trans[K] + unary[0]
        back = np.zeros((T, K), dtype=int)
        for t in range(1, T):
            cand = score[:, None] + trans[:K]
            back[t] = cand.argmax(axis=0)
            score = cand.max(axis=0) + unary[t]
        path = [int(score.argmax())]
        for t in range(T - 1, 0, -1):
            path.append(int(back[t, path[-1]]))
        return tuple(path[::-1])

    def argmax(self, x, w):
        return self._viterbi(*self._scores(x, w))

    def loss(self, y_true, y_pred):
        return float(np.sum(np.asarray(y_true) != np.asarray(y_pred)))

    def loss_augmented_argmax(self, x, y, w):
        unary, trans = self._scores(x, w)
        unary = unary + (np.arange(self.n_tags)[None, :] != np.asarray(y)[:, None])
        return self._viterbi(unary, trans)


def tagger_data(n=10, n_tags=3, seed=0):
    """Sentences of 1-6 words whose tag is the word's code modulo n_tags (a few
    flipped)."""
    rng = np.random.default_rng(seed)
    X = [rng.integers(0, 20, size=int(rng.integers(1, 7))) for _ in range(n)]
    Y = [tuple(int(v) % n_tags if rng.random() > 0.2 else int(rng.integers(n_tags))
               for v in x) for x in X]
    return X, Y
