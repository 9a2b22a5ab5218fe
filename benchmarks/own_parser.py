"""A researcher's own structure, written as the guide's examples are
(docs/own_structure.md): first-order projective dependency parsing with hashed sparse
features and a numpy argmax (Eisner's algorithm).

x is a sentence, an array of shape (n + 1, 2) of integer codes (word, tag) whose row 0
is the artificial root; y is an integer array of the n heads (0 = the root,
otherwise the 1-based position of the head). The joint feature map is arc-factored,

    Φ(x, y) = Σ_{d=1..n} f(x, y_d, d),

f(x, h, d) the indicators of 12 feature templates over the words and tags of the
head h and the dependent d, their neighbours' tags, the direction and the distance
(McDonald, Crammer & Pereira 2005, in miniature), each hashed into ``n_features`` =
2^18 columns and scaled by 1/√12 (every arc's feature vector has length 1, as
features are usually normalised). The argmax scores every arc at once, s(h, d) =
Σ_k w[f_k(x, h, d)], and runs Eisner's O(n³) dynamic program, one numpy step per span
width; the loss is the number of words with a wrong head (the Hamming loss of
McDonald et al.; 1 − UAS is its sum over the total number of words), which
decomposes over the arcs, so the loss-augmented argmax is the same program with 1
added to every arc whose head is wrong.

References
----------
J. Eisner. Three new probabilistic models for dependency parsing: an exploration.
COLING 1996.
R. McDonald, K. Crammer, F. Pereira. Online large-margin training of dependency
parsers. ACL 2005.
"""
import zlib

import numpy as np
import scipy.sparse as sp

import structsvm

ROOT = 1  # the code of the root's word and tag (codes of real tokens are ≥ 2)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing's multiplier


def encode_sentence(words_and_tags):
    """A sentence's (word, tag) pairs as the structure's input: int64 codes, row 0
    the root (codes: CRC-32 of the lower-cased word and of the tag, plus 2)."""
    codes = [(ROOT, ROOT)] + [(zlib.crc32(w.lower().encode()) + 2,
                               zlib.crc32(t.encode()) + 2) for w, t in words_and_tags]
    return np.array(codes, dtype=np.int64)


class ArcParser(structsvm.Structure):
    """Projective dependency parsing: hashed arc features, Eisner's argmax.

    Parameters
    ----------
    n_bits : int, default=18
        Φ has 2**n_bits columns.
    """

    def __init__(self, n_bits=18):
        self.n_bits = n_bits

    @property
    def n_features(self):
        return 2 ** self.n_bits

    # ---------------------------------------------------------------- features
    def arc_features(self, x, heads, deps):
        """Column indices of the 12 templates of the arcs heads[k] → deps[k]:
        an int64 array of shape (len(heads), 12)."""
        word, tag = x[:, 0].astype(np.uint64), x[:, 1].astype(np.uint64)
        n1 = len(x)
        h, d = np.asarray(heads), np.asarray(deps)
        right = (h < d).astype(np.uint64)
        dist = np.minimum(np.abs(h - d), 5).astype(np.uint64)
        t_h_next = tag[np.minimum(h + 1, n1 - 1)]
        t_d_prev = tag[np.maximum(d - 1, 0)]
        hw, ht, dw, dt = word[h], tag[h], word[d], tag[d]
        parts = [(hw, ht), (hw,), (ht,), (dw, dt), (dw,), (dt,), (hw, ht, dw, dt),
                 (ht, dw, dt), (hw, dw), (ht, dt), (ht, dt, right, dist),
                 (ht, t_h_next, t_d_prev, dt, right)]
        cols = np.empty((len(h), len(parts)), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for k, values in enumerate(parts):
                key = np.full(len(h), np.uint64(k + 1))
                for v in values:  # a polynomial hash of the template's values
                    key = (key * _MIX) ^ v
                cols[:, k] = (key * _MIX) >> np.uint64(64 - self.n_bits)
        return cols.astype(np.int64)

    def joint_feature(self, x, y):
        n = len(x) - 1
        cols = self.arc_features(x, np.asarray(y), np.arange(1, n + 1))
        idx, counts = np.unique(cols, return_counts=True)
        return sp.csr_matrix((counts / np.sqrt(cols.shape[1]), idx, [0, idx.size]),
                             shape=(1, self.n_features))

    def arc_scores(self, x, w):
        """s[h, d] = w · f(x, h, d) for every head h and dependent d (0..n)."""
        n1 = len(x)
        h, d = np.divmod(np.arange(n1 * n1), n1)
        cols = self.arc_features(x, h, d)
        return (w[cols].sum(axis=1) / np.sqrt(cols.shape[1])).reshape(n1, n1)

    # ---------------------------------------------------------------- decoding
    def argmax(self, x, w):
        return eisner(self.arc_scores(x, w))

    def loss(self, y_true, y_pred):
        return float(np.sum(np.asarray(y_true) != np.asarray(y_pred)))

    def loss_augmented_argmax(self, x, y, w):
        s = self.arc_scores(x, w)
        n = len(x) - 1
        wrong = np.ones_like(s)
        wrong[np.asarray(y), np.arange(1, n + 1)] = 0.0  # the gold arcs
        return eisner(s + wrong)


def eisner(s):
    """The highest-scoring projective tree of arc scores ``s[h, d]`` (row and column
    0: the root): the heads of tokens 1..n, an int64 array.

    Spans [i, j] are built by increasing width; complete spans C and incomplete spans
    I, each headed at its left end (→) or right end (←):

        I→[i, j] = I←[i, j] − s[j, i] + s[i, j] = max_{i≤r<j} C→[i, r] + C←[r+1, j]  (+ arc)
        C→[i, j] = max_{i<r≤j} I→[i, r] + C→[r, j]
        C←[i, j] = max_{i≤r<j} C←[i, r] + I←[r, j]

    and one numpy step per width computes every span of that width.
    """
    N = s.shape[0]
    neg = -np.inf
    Cr = np.full((N, N), neg)  # C→[i, j]: head i
    Cl = np.full((N, N), neg)  # C←[i, j]: head j
    Ir = np.full((N, N), neg)
    Il = np.full((N, N), neg)
    idx = np.arange(N)
    Cr[idx, idx] = Cl[idx, idx] = 0.0
    bIr = np.zeros((N, N), dtype=np.int64)  # split points
    bIl = np.zeros((N, N), dtype=np.int64)
    bCr = np.zeros((N, N), dtype=np.int64)
    bCl = np.zeros((N, N), dtype=np.int64)
    for k in range(1, N):
        i = np.arange(N - k)
        j = i + k
        r = i[:, None] + np.arange(k)[None, :]          # i ≤ r < j
        inner = Cr[i[:, None], r] + Cl[r + 1, j[:, None]]
        best = inner.argmax(axis=1)
        top = inner[np.arange(N - k), best]
        Ir[i, j] = top + s[i, j]
        Il[i, j] = top + s[j, i]
        bIr[i, j] = bIl[i, j] = r[np.arange(N - k), best]
        left = Cl[i[:, None], r] + Il[r, j[:, None]]     # C←[i, j]: r in [i, j)
        best = left.argmax(axis=1)
        Cl[i, j] = left[np.arange(N - k), best]
        bCl[i, j] = r[np.arange(N - k), best]
        r1 = r + 1                                         # C→[i, j]: r in (i, j]
        right = Ir[i[:, None], r1] + Cr[r1, j[:, None]]
        best = right.argmax(axis=1)
        Cr[i, j] = right[np.arange(N - k), best]
        bCr[i, j] = r1[np.arange(N - k), best]
    heads = np.zeros(N, dtype=np.int64)
    stack = [(0, N - 1, "C>")]
    while stack:
        i, j, kind = stack.pop()
        if i == j:
            continue
        if kind == "C>":
            r = bCr[i, j]
            stack += [(i, r, "I>"), (r, j, "C>")]
        elif kind == "C<":
            r = bCl[i, j]
            stack += [(i, r, "C<"), (r, j, "I<")]
        elif kind == "I>":
            heads[j] = i
            r = bIr[i, j]
            stack += [(i, r, "C>"), (r + 1, j, "C<")]
        else:
            heads[i] = j
            r = bIl[i, j]
            stack += [(i, r, "C>"), (r + 1, j, "C<")]
    return heads[1:]


def load_parsing_data(n_train=600, n_test=200, path=None):
    """The dependency treebank sample (NLTK), first ``n_train`` sentences to train
    and the next ``n_test`` to test, encoded: X (inputs), Y (heads)."""
    from structsvm.corpora import dependency_treebank_sents

    sents = dependency_treebank_sents(path)[:n_train + n_test]
    X = [encode_sentence(s) for s, _ in sents]
    Y = [np.array(h, dtype=np.int64) for _, h in sents]
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
