"""Arc-factored joint features of dependency trees (McDonald, Crammer & Pereira 2005)."""
from __future__ import annotations

from collections import Counter
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..._compiled import loops, warmup
from ...limits import check_weights
from ...protocols import FeatureMapBase, as_sequence
from .._ragged import consecutive_run, gather_rows
from ._arcs import ArcPotentials
from ._inputs import check_heads, words_and_tags

__all__ = ["DependencyFeatures", "EncodedSentences"]

# ids every vocabulary reserves: unknown, the root token, before and after a sentence
UNK, ROOT, BOS, EOS = 0, 1, 2, 3
_FIRST_ID = 4
#: a word longer than this also has its prefix of this length as a feature value
PREFIX = 5


class EncodedSentences:
    """Token ids of a batch of sentences, each preceded by its root token.

    Sentence s owns rows ``off[s]:off[s + 1]``: the root, then its words.

    Parameters
    ----------
    word, prefix, tag, long : ndarray of int64 of shape (n_rows,)
        Word id, 5-prefix id, tag id, and 1 where the word is longer than 5
        characters (the root's ids are ``ROOT``).
    off : ndarray of int64 of shape (n_sentences + 1,)
    """

    def __init__(self, word, prefix, tag, long, off):
        self.word, self.prefix, self.tag, self.long = word, prefix, tag, long
        self.off = np.asarray(off, dtype=np.int64)

    def __len__(self):
        return len(self.off) - 1

    def lengths(self):
        """Number of words of every sentence (the root not counted)."""
        return np.diff(self.off) - 1

    def select(self, idx=None):
        """The sentences ``idx`` (all, without copy, for None) as a new instance."""
        if idx is None:
            return self
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            a, b = self.off[run[0]], self.off[run[1]]
            return EncodedSentences(self.word[a:b], self.prefix[a:b], self.tag[a:b],
                                    self.long[a:b], self.off[run[0]:run[1] + 1] - a)
        rows, off = gather_rows(self.off, idx)
        return EncodedSentences(self.word[rows], self.prefix[rows], self.tag[rows],
                                self.long[rows], off)

    def arrays(self):
        """The token arrays and offsets, as the compiled loops take them."""
        return self.word, self.prefix, self.tag, self.long, self.off


class DependencyFeatures(FeatureMapBase, BaseEstimator):
    r"""Arc-factored joint features of dependency trees: Φ(x, y) = Σ_{(h→d) ∈ y} f(x, h, d).

    A sentence x of n words w_1..w_n with part-of-speech tags t_1..t_n gets a root
    node 0; a tree y gives every word d its head y_d ∈ {0, .., n}. The score of a
    tree is the sum of the scores of its arcs,

    .. math::

        w \cdot \Phi(x, y) = \sum_{d=1}^{n} w \cdot f(x, y_d, d),

    so that Eisner's (projective) and Chu-Liu-Edmonds' (non-projective) algorithms
    find the best tree exactly. f(x, h, d) holds the first-order templates of
    McDonald, Crammer & Pereira (2005, Table 1):

    - the head's and the dependent's word and tag, alone and together (six);
    - the seven pairs of (head word, head tag) with (dependent word, dependent
      tag): all four, three of them, the two words, the two tags;
    - the tags beside head and dependent (four templates of four tags) and
      (head tag, tag, dependent tag) for every word between the two;
    - the same unigram and pair templates over the 5-prefixes of words longer than
      five characters (a back-off to stems),

    each once as it is and once conjoined with the arc's direction and distance
    (1, 2, 3, 4, 5, 6-10, more than 10 words). Every template value is hashed to a
    column b of the ``n_hash``; its conjunction with direction/distance class c
    (1 .. 14) is column b + c, so both are one hash and a cache line or two apart,
    while two features share a column with probability 1 / ``n_hash`` as with a
    hash per feature.

    Parameters
    ----------
    n_hash : int, default=4194304
        Number of feature columns (the length of w) the template values are hashed
        into.
    min_count : int, default=1
        Words (and prefixes) seen fewer times in training count as unknown.
    tag_key : str, default="xpos"
        Where a token dict (CoNLL-U fields) holds its tag; when absent, ``"upos"``
        and the other keys of ``TAG_KEYS`` are tried.

    Attributes
    ----------
    words_, prefixes_, tags_ : ndarray of str
        The vocabularies (id = position + 4; 0 is unknown, 1 the root, 2 and 3 the
        positions before and after the sentence).
    n_features_ : int
        ``n_hash``.

    Notes
    -----
    X is a list of sentences: lists of ``(word, tag)`` pairs, of token dicts
    (``{"form": ..., "xpos": ...}``, as :func:`read_conllu` gives them) or
    ``nltk.DependencyGraph`` objects. Y is a list of head lists (``y[d - 1]`` the
    head of word d, 0 for the root); every one must be a tree.

    The scores of all arcs of a batch come from one compiled pass: the templates of
    one word are summed once per word (and direction and distance), the others per
    arc, so a sentence of n words costs O(n²) hashed look-ups plus one per word
    between each head and dependent.

    References
    ----------
    R. McDonald, K. Crammer, F. Pereira. Online large-margin training of dependency
    parsers. ACL 2005.
    R. McDonald, F. Pereira, K. Ribarov, J. Hajič. Non-projective dependency parsing
    using spanning tree algorithms. HLT/EMNLP 2005.
    K. Weinberger, A. Dasgupta, J. Langford, A. Smola, J. Attenberg. Feature hashing
    for large scale multitask learning. ICML 2009.

    Examples
    --------
    >>> X = [[("John", "NNP"), ("sleeps", "VBZ")]]
    >>> fm = DependencyFeatures(n_hash=2**16).fit(X, [[2, 0]])
    >>> fm.tags_.tolist(), fm.n_features_
    (['NNP', 'VBZ'], 65536)
    >>> int(fm.joint_feature(X[0], [2, 0]).sum())   # the columns of 2 arcs
    102
    """

    structure: ClassVar[str] = "dependency"
    default_decoder: ClassVar[str] = "eisner"
    default_loss: ClassVar[str] = "hamming"
    #: C for slacks that sum attachment losses (~24 words a sentence) over ~3400
    #: treebank sentences: chosen on the treebank's file split (docs/learners.md)
    default_C: ClassVar[float] = 0.03
    #: certified relative duality gap: held-out UAS has levelled off there
    #: (docs/learners.md)
    default_tol: ClassVar[float] = 0.1
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {"n_batches": 16,
                                                      "inner_passes": 0}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.dependency._arcs_jit:arc_scores",
        "structsvm.structures.dependency._decoders_jit:eisner_batch",
        "structsvm.structures.dependency._arcs_jit:arc_feature_rows")
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, n_hash=2 ** 22, min_count=1, tag_key="xpos"):
        self.n_hash = n_hash
        self.min_count = min_count
        self.tag_key = tag_key

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        for name, low, high in (("n_hash", 16, 2 ** 32 - 1), ("min_count", 1, None)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low \
                    or (high is not None and v > high):
                raise ValueError(f"{name} must be an int from {low}"
                                 f"{'' if high is None else f' to {high}'}, got {v!r}")
        if not isinstance(self.tag_key, str):
            raise ValueError(f"tag_key must be a str, got {self.tag_key!r}")

    def fit(self, X, Y):
        """Learn the word, prefix and tag vocabularies; check that every y is a tree."""
        self._fit(X, Y)
        return self

    def fit_encode(self, X, Y):
        """:meth:`fit`, and :meth:`encode_inputs` of the same sentences (read once).

        Returns
        -------
        EncodedSentences
            Equal to ``self.fit(X, Y).encode_inputs(X)``.
        """
        return self._fit(X, Y)

    def _fit(self, X, Y):
        self._check_params()
        sents = words_and_tags(X, self.tag_key)
        check_heads(Y, [len(s) for s in sents])
        words = Counter(w for s in sents for w, _ in s)
        prefixes = Counter(w[:PREFIX] for s in sents for w, _ in s if len(w) > PREFIX)
        keep = int(self.min_count)
        self.words_ = _str_array(sorted(w for w, c in words.items() if c >= keep))
        self.prefixes_ = _str_array(sorted(p for p, c in prefixes.items() if c >= keep))
        self.tags_ = _str_array(sorted({t for s in sents for _, t in s}))
        self._index()
        self.n_features_ = int(self.n_hash)
        check_weights(self.n_features_, f"{self.n_features_} hashed arc features")
        return self._encode(sents)

    def _index(self):
        self._word_id = {w: k + _FIRST_ID for k, w in enumerate(self.words_)}
        self._prefix_id = {p: k + _FIRST_ID for k, p in enumerate(self.prefixes_)}
        self._tag_id = {t: k + _FIRST_ID for k, t in enumerate(self.tags_)}

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedSentences` (token ids, a root token first) of raw sentences."""
        return self._encode(words_and_tags(X, self.tag_key))

    def _encode(self, sents):
        lengths = np.fromiter((len(s) + 1 for s in sents), dtype=np.int64,
                              count=len(sents))
        off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        wid, pid, tid = self._word_id.get, self._prefix_id.get, self._tag_id.get
        word, prefix, tag, long_ = [], [], [], []
        for s in sents:
            word.append(ROOT)
            prefix.append(ROOT)
            tag.append(ROOT)
            long_.append(0)
            for w, t in s:
                word.append(wid(w, UNK))
                tag.append(tid(t, UNK))
                if len(w) > PREFIX:
                    prefix.append(pid(w[:PREFIX], UNK))
                    long_.append(1)
                else:
                    prefix.append(UNK)
                    long_.append(0)
        arr = [np.asarray(a, dtype=np.int64) for a in (word, prefix, tag, long_)]
        return EncodedSentences(*arr, off)

    def encode_outputs(self, Y, X=None):
        """Head lists to int64 arrays, each checked to be a tree over its sentence."""
        Y = as_sequence(Y, "Y")
        if X is None:
            lengths = [len(np.ravel(y)) if not isinstance(y, (str, bytes)) else -1
                       for y in Y]
        else:
            lengths = [len(s) for s in words_and_tags(X, self.tag_key)]
        return check_heads(Y, lengths)

    def decode_outputs(self, Ye):
        """Head arrays back to lists of ints."""
        return [np.asarray(y, dtype=np.int64).tolist() for y in Ye]

    # ------------------------------------------------------------------ features
    def _arcs(self, Xs, parts):
        """(head, dependent, sentence) of the arcs of one tree per sentence of ``Xs``
        (``parts``: head arrays), checked against the sentences' lengths."""
        n = Xs.lengths()
        if len(parts) != len(n):
            raise ValueError(f"{len(n)} sentences but {len(parts)} trees")
        heads = [np.asarray(y, dtype=np.int64).reshape(-1) for y in parts]
        sizes = np.fromiter((h.size for h in heads), dtype=np.int64, count=len(heads))
        if np.any(sizes != n):
            s = int(np.flatnonzero(sizes != n)[0])
            raise ValueError(f"Sample {s}: {sizes[s]} heads for a sentence of {n[s]} "
                             "words")
        h = np.concatenate(heads) if heads else np.zeros(0, np.int64)
        sent = np.repeat(np.arange(len(n), dtype=np.int64), n)
        first = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64)
        dep = np.arange(h.size, dtype=np.int64) - first[sent] + 1
        if h.size and (h.min() < 0 or np.any(h > n[sent]) or np.any(h == dep)):
            s = int(sent[np.flatnonzero((h < 0) | (h > n[sent]) | (h == dep))[0]])
            raise ValueError(f"Sample {s}: a head outside 0 .. n or a word its own head")
        return h, dep, sent

    def _rows(self, Xs, h, dep, sent, row_of_arc, data, n_rows):
        """CSR rows: row ``row_of_arc[a]`` adds ``data[a]`` on every column of arc a."""
        jit = loops("structsvm.structures.dependency._arcs_jit")
        ptr = np.empty(h.size + 1, dtype=np.int64)
        warmup.wait(jit.arc_feature_rows)
        cols = jit.arc_feature_rows(*Xs.arrays(), h, dep, sent, BOS, EOS,
                                    self.n_features_, ptr)
        counts = np.diff(ptr)
        rows = np.repeat(row_of_arc, counts)
        vals = np.repeat(data, counts)
        out = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, self.n_features_))
        out.sum_duplicates()
        out.eliminate_zeros()
        return out

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs = Xe.select(idx)
        h, dep, sent = self._arcs(Xs, Ye)
        return self._rows(Xs, h, dep, sent, sent, np.ones(h.size), len(Xs))

    def _difference_arcs(self, Xs, Ye, Ye_hat):
        """The true arcs (+1) and predicted arcs (−1) of the words whose heads differ."""
        h, dep, sent = self._arcs(Xs, Ye)
        g, _, _ = self._arcs(Xs, Ye_hat)
        diff = np.flatnonzero(h != g)
        return (np.concatenate([h[diff], g[diff]]), np.tile(dep[diff], 2),
                np.tile(sent[diff], 2),
                np.concatenate([np.ones(diff.size), -np.ones(diff.size)]))

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is Φ(x_i, y_i) − Φ(x_i, ŷ_i), from the words whose heads
        differ only."""
        Xs = Xe.select(idx)
        h, dep, sent, sign = self._difference_arcs(Xs, Ye, Ye_hat)
        return self._rows(Xs, h, dep, sent, sent, sign, len(Xs))

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Dense Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)), scattered by a compiled pass
        over the words whose heads differ.

        Parameters
        ----------
        Xe : EncodedSentences
        Ye, Ye_hat : list of ndarray of int
            True and decoded heads of the sentences ``idx``.
        idx : array-like of int, optional
        weights : ndarray of shape (n_sentences,), optional
            ω_i (ones by default).

        Returns
        -------
        ndarray of shape (n_features,)
        """
        Xs = Xe.select(idx)
        weights = np.ones(len(Xs)) if weights is None else \
            np.asarray(weights, dtype=float).ravel()
        h, dep, sent, sign = self._difference_arcs(Xs, Ye, Ye_hat)
        out = np.zeros(self.n_features_)
        jit = loops("structsvm.structures.dependency._arcs_jit")
        jit.scatter_arcs(*Xs.arrays(), h, dep, sent,
                         np.ascontiguousarray(sign * weights[sent]), BOS, EOS,
                         self.n_features_, out)
        return out

    def example_costs(self, Xe):
        """Relative cost of every sentence (its number of arcs, (n + 1)²): the parallel
        oracle balances its chunks by it."""
        return (Xe.lengths() + 1.0) ** 2

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`ArcPotentials` of the sentences ``idx``: every arc's score by one
        compiled pass."""
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        Xs = Xe.select(idx)
        n = Xs.lengths()
        score_off = np.concatenate([[0], np.cumsum((n + 1) ** 2)]).astype(np.int64)
        out = np.empty(int(score_off[-1]))
        jit = loops("structsvm.structures.dependency._arcs_jit")
        warmup.wait(jit.arc_scores)
        jit.arc_scores(*Xs.arrays(), score_off, np.ascontiguousarray(w), BOS, EOS,
                       self.n_features_, out)
        return ArcPotentials(out, n)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw sentence ``x`` and head list ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`ArcPotentials` of one raw sentence (score encoded trees)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        return {"words_": self.words_, "prefixes_": self.prefixes_, "tags_": self.tags_,
                "n_features_": int(self.n_features_)}

    def load_fitted_state(self, state):
        """Restore the vocabularies written by :meth:`fitted_state`; return self."""
        self._check_params()
        self.words_ = _str_array([str(v) for v in state["words_"]])
        self.prefixes_ = _str_array([str(v) for v in state["prefixes_"]])
        self.tags_ = _str_array([str(v) for v in state["tags_"]])
        self._index()
        self.n_features_ = int(self.n_hash)
        if self.n_features_ != int(state["n_features_"]):
            raise ValueError(f"inconsistent dependency state: n_hash = {self.n_hash}, "
                             f"the file says {state['n_features_']} features")
        return self


def _str_array(items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr
