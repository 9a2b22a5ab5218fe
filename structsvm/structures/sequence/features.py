"""HMM-style joint features of label sequences: observations ⊗ labels, and transitions."""
from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..._compiled import loops, warmup
from ...limits import check_weights
from ...protocols import FeatureMapBase, as_sequence
from .._input_columns import compact_columns, kept_columns
from .._state import StateReader, read_input_columns
from .._names import FeatureNamesMixin
from ._chain import ChainPotentials, OrderKChainPotentials
from ._encoding import EncodedSequences
from ._inputs import (check_order_params, check_pairs, check_params, check_sentences,
                      fit_columns, saved_columns, stack_matrices, states_to_tags,
                      tags_to_states)
from ._observations import FEATURE_SETS
from ._oracle import (aggregate_chain_violation, aggregate_order_k_violation,
                      fused_chain_oracle, fused_order_k_oracle)
from ._summaries import merge_summaries, summarize
from ._rows import (column_names, difference_rows, difference_sum, feature_rows,
                    observation_names, order_k_difference_rows, order_k_feature_rows,
                    weight_blocks)
from ._tag_windows import keys_of_named, named_windows, ngram_names, seen_ngrams
from .._validation import as_label_array, label_index, sorted_unique

__all__ = ["SequenceFeatures", "ChainPotentials", "OrderKChainPotentials",
           "EncodedSequences"]

# the decode counts of every map are updated under this lock (oracle threads)
_COUNTS = threading.Lock()


class SequenceFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """Joint features of a chain of order k (HMM-style), for tagging and chunking.

    For a sentence x = (x_1..x_T) with observation features φ(x, t) ∈ R^d (word,
    affixes, shape, neighbours, ...) and a tag sequence y = (y_1..y_T) over K tags,

    .. math::

        \\Phi(x, y) = \\Big( \\sum_t \\phi(x, t) \\otimes e_{y_t},\\;
                       \\sum_{t \\ge 2} e_{y_{t-1}} \\otimes e_{y_t},\\;
                       e_{y_1},\\; e_{y_T} \\Big)

    (label-observation, label-label, start and end blocks), so that
    w·Φ(x, y) = Σ_t u_t(y_t) + Σ_t A[y_{t-1}, y_t] + s[y_1] + e[y_T] with the
    unaries u_t = W_emᵀ φ(x, t) computed for all tokens of a batch by one sparse
    product; the Viterbi decoder maximises it exactly.

    With ``order=k`` > 1 the transitions span k + 1 tags: the path padded to
    ỹ = (P^k, y_1, .., y_T, P) with a padding symbol P adds, for every order
    m = 2..k, one feature per tag (m+1)-gram ỹ_{t-m} .. ỹ_t seen in training (the
    T + 1 windows that end at a token or at the final pad; an n-gram never seen in
    training has no feature), on top of the first-order blocks above. With
    ``emission_order=1`` every token's observation features are also conjoined with
    (y_{t-1}, y_t) (y_0 = P): a block φ(x, t) ⊗ e_{y_{t-1}} ⊗ e_{y_t} of d·(K+1)·K
    weights (svm_hmm's ``--e 1``). Decoding then runs over tag k-grams
    (:func:`~structsvm.structures.sequence.pruned_viterbi`: exact unless ``beam``
    caps the tags per position).

    Parameters
    ----------
    features : {"pos", "chunk", "word"} or callable, default="pos"
        Observation features. ``"pos"`` (for part-of-speech tagging; tokens are
        strings): word, lower case, prefixes and suffixes of length 1-4, shape flags
        (capitalised, all upper, digit, hyphen), the lower-cased words at ±1 and ±2
        and the 3-suffixes at ±1, plus a bias. ``"chunk"`` (tokens are
        ``(word, pos_tag)`` pairs, as in CoNLL-2000): word, lower case, POS tag,
        2/3-suffixes, shape flags, and words and POS tags at ±1, ±2. ``"word"``:
        word identity and a bias. A callable ``f(sentence, t)`` returning an
        iterable of feature strings is also accepted (it makes the model
        unsaveable: model files store the *name* of the feature set). Inputs that
        are already matrices (one ``(T, d)`` array or sparse matrix per sentence)
        are used as they are, and ``features`` is ignored.
    min_count : int, default=1
        Keep only observation strings seen at least this often in training.
    n_hash : int or None, default=None
        Hash the strings into this many columns (MurmurHash3) instead of learning a
        vocabulary; ``min_count`` is then ignored.
    order : {1, 2, 3}, default=1
        Tags a transition feature spans, minus one (svm_hmm's ``--t``). Order 1 is
        the first-order chain above, unchanged.
    emission_order : {0, 1}, default=0
        1 conjoins every observation feature with the previous tag (svm_hmm's
        ``--e 1``): d·(K+1)·K more weights.
    beam : int or None, default=None
        With ``order`` > 1 or ``emission_order=1``: keep at most this many tags per
        position when decoding (a bound on the time for large tag sets); an answer
        the decoder cannot certify exact then is counted in
        ``n_uncertified_decodes_``. None keeps as many as exactness needs.

    Attributes
    ----------
    tags_ : ndarray of object
        The tag set; encoded state k is ``tags_[k]``.
    vocabulary_ : ndarray of str or None
        Observation strings in column order (``None`` when hashing or with matrix
        inputs).
    n_features_in_ : int or None
        With matrix inputs, their number of columns (None for token lists).
    input_columns_ : ndarray of int or None
        With sparse matrix inputs, the columns that hold a value in some training
        token: the emission weights cover only those, so a feature number sizes
        nothing by itself (None: every column).
    n_input_features_ : int
        d, the number of observation features (the columns covered).
    n_features_ : int
        d·K + K² + 2K (order 1), plus the seen tag n-grams and, with
        ``emission_order=1``, d·(K+1)·K.
    tag_ngrams_ : ndarray of int64
        With ``order`` > 1: the keys of the tag n-grams of orders 2..k seen in
        training, sorted (their features follow the first-order blocks, in this
        order; :mod:`structsvm.structures.sequence._tag_windows` defines the keys).
    n_decodes_, n_uncertified_decodes_ : int
        Sentences decoded by the map's oracle since ``fit`` (order > 1 or
        ``emission_order=1``; the oracle of a fit with worker processes counts in
        the workers), and how many of those answers were not certified exact (always
        0 with ``beam=None``).

    Notes
    -----
    Layout of w: ``w[:d*K].reshape(d, K)`` is W_em (row j = feature j's score per
    tag), then ``transition`` (K×K, row = previous tag), ``start`` (K) and ``end``
    (K); :meth:`split_weights` returns the four blocks, :meth:`order_k_weights` the
    weights of the seen n-grams and the pair block (d, K+1, K) that follow them.

    Unseen words have no word-identity feature but keep their affix, shape and
    context features (observation strings absent from the vocabulary are
    dropped). The predicted tags are always tags seen in training; encoding a
    tag unseen in training (e.g. scoring a model on data with new tags) raises a
    ``ValueError`` naming the sentence and position.

    References
    ----------
    Y. Altun, I. Tsochantaridis, T. Hofmann. Hidden Markov support vector machines.
    ICML 2003.
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005 (Sec. 4.3).
    T. Brants. TnT -- a statistical part-of-speech tagger. ANLP 2000.
    T. Müller, H. Schmid, H. Schütze. Efficient higher-order CRFs for morphological
    tagging. EMNLP 2013.

    Examples
    --------
    >>> fm = SequenceFeatures(features="word").fit([["the", "dog"]], [["D", "N"]])
    >>> fm.tags_.tolist(), fm.n_input_features_, fm.n_features_
    (['D', 'N'], 3, 14)
    >>> W, A, s, e = fm.split_weights(fm.joint_feature(["the", "dog"], ["D", "N"]))
    >>> W.tolist(), A.tolist(), s.tolist(), e.tolist()  # features: b, w=the, w=dog
    ([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]], [1.0, 0.0], [0.0, 1.0])
    >>> fm2 = SequenceFeatures(features="word", order=2).fit([["the", "dog"]], [["D", "N"]])
    >>> fm2.n_features_ - fm.n_features_, fm2.feature_names_[-3:].tolist()
    (3, ['transition:D->N-></s>', 'transition:<s>->D->N', 'transition:<s>-><s>->D'])
    """

    structure: ClassVar[str] = "sequence"
    default_loss: ClassVar[str] = "hamming"
    default_decoder: ClassVar[str] = "viterbi"
    #: C suited to this map's scale (summed Hamming losses of ~3000 treebank sentences:
    #: chosen on the treebank POS task, see docs/sequences.md)
    default_C: ClassVar[float] = 0.1
    #: certified relative duality gap, chosen on CoNLL-2000 chunking and treebank POS
    #: tagging with the default learner (measurements: docs/learners.md)
    default_tol: ClassVar[float] = 0.05
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {"n_batches": 16, "inner_passes": 0}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.sequence._oracle_jit:chain_oracle",
        "structsvm.structures.sequence._jit:shared_unaries",
        "structsvm.structures.sequence._viterbi_jit:viterbi_batch")
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True
    has_aggregate_oracle: ClassVar[bool] = True
    #: aggregate_violation takes ``idx`` (chunks of the parallel oracle, sparse sums)
    has_chunked_aggregate: ClassVar[bool] = True
    #: fused_oracle: a chunk's whole oracle in one GIL-free compiled call
    has_fused_oracle: ClassVar[bool] = True

    def __init__(self, features="pos", min_count=1, n_hash=None, order=1,
                 emission_order=0, beam=None):
        self.features = features
        self.min_count = min_count
        self.n_hash = n_hash
        self.order = order
        self.emission_order = emission_order
        self.beam = beam

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the tag set and the observation vocabulary from training data."""
        self._fit(X, Y)
        return self

    def fit_encode(self, X, Y):
        """:meth:`fit`, and :meth:`encode_inputs` of the same sentences (their feature
        strings built once, not twice): what training needs.

        Returns
        -------
        EncodedSequences
            Equal to ``self.fit(X, Y).encode_inputs(X)``.
        """
        Xe = self._fit(X, Y, encode=True)
        return self.encode_inputs(X) if Xe is None else Xe

    def fit_summary(self, X, Y):
        """What fitting needs from one partition of the training data, computed where
        it lives: its tags and observation strings with their counts (or, for matrix
        inputs, the columns it uses). :meth:`fit_from_summaries` fits the map from the
        summaries of all partitions; an order-k map adds the tag windows the
        partition's sentences hold."""
        check_order_params(self.order, self.emission_order, self.beam)
        summary = summarize(self.features, self.min_count, self.n_hash, X, Y)
        if self.order >= 2:
            X, _ = check_sentences(X)
            summary["tag_windows"] = named_windows(check_pairs(X, Y), int(self.order))
        return summary

    def fit_from_summaries(self, summaries):
        """Fit from the :meth:`fit_summary` of every partition, in order: the same
        tags, vocabulary and weights layout as :meth:`fit` on all of them at once (the
        vocabulary's columns in the order the partitions first meet the strings)."""
        check_params(self.features, self.min_count, self.n_hash)
        check_order_params(self.order, self.emission_order, self.beam)
        summaries = list(summaries)
        kind, tags, vocabulary, width, columns = merge_summaries(summaries,
                                                                 self.min_count)
        self.input_kind_ = kind
        self.tags_ = sorted_unique(tags)
        self._index = label_index(self.tags_)
        self.input_columns_ = None
        if kind == "matrix":
            self.vocabulary_, self.n_input_features_ = None, width
            self.n_features_in_ = width
            if columns is not None:
                self.input_columns_ = columns
                self.n_input_features_ = int(columns.size)
        else:
            self._featurizer = saved_columns(self.features, self.n_hash, None)
            self._featurizer.vocabulary = vocabulary
            self.vocabulary_ = None if vocabulary is None else \
                as_label_array(list(vocabulary))
            self.n_input_features_ = self._featurizer.n_columns
            self.n_features_in_ = None
        K = len(self.tags_)
        self.n_features_ = int(self.n_input_features_ * K + K * K + 2 * K)
        self.n_decodes_ = self.n_uncertified_decodes_ = 0
        if self._order_k:
            windows = [w for s in summaries if s is not None
                       for w in s.get("tag_windows", ())]
            self._check_window_keys(K)
            self.tag_ngrams_ = keys_of_named(windows, self._index, K)
            self.n_features_ = self._order_k_size(self.n_input_features_, K,
                                                  self.tag_ngrams_.size)
        check_weights(self.n_features_, f"{self.n_input_features_} features x {K} tags"
                      + (f", order {self.order}" if self._order_k else ""))
        return self

    def _fit(self, X, Y, encode=False):
        check_params(self.features, self.min_count, self.n_hash)
        check_order_params(self.order, self.emission_order, self.beam)
        X, kind = check_sentences(X)
        Y = check_pairs(X, Y)
        self.input_kind_ = kind
        self.tags_ = sorted_unique([t for y in Y for t in y])
        self._index = label_index(self.tags_)
        self.vocabulary_, self.n_input_features_, fz, encoded = fit_columns(
            X, kind, self.features, self.min_count, self.n_hash, encode)
        if fz is not None:
            self._featurizer = fz
        self.n_features_in_ = self.n_input_features_ if kind == "matrix" else None
        self.input_columns_ = None
        if kind == "matrix" and any(sp.issparse(x) for x in X):
            M, offsets = stack_matrices(X, self.n_features_in_)
            self.input_columns_ = kept_columns(M)
            if self.input_columns_ is not None:
                self.n_input_features_ = int(self.input_columns_.size)
            if encode:
                encoded = (compact_columns(M, self.input_columns_), offsets)
        K = len(self.tags_)
        self.n_features_ = int(self.n_input_features_ * K + K * K + 2 * K)
        self.n_decodes_ = self.n_uncertified_decodes_ = 0
        if self._order_k:
            self._fit_windows(Y, K)
        check_weights(self.n_features_, f"{self.n_input_features_} features x {K} tags"
                      + (f", order {self.order}" if self._order_k else ""))
        return None if encoded is None else EncodedSequences(*encoded)

    def _check_window_keys(self, K):
        if self.order == 3 and (K + 1) ** 4 + (K + 1) ** 3 >= 2 ** 63:
            raise ValueError(f"order=3 over {K} tags: the keys of its tag 4-grams "
                             "overflow 64 bits")

    def _fit_windows(self, Y, K):
        """The tag n-grams seen in ``Y`` and the size of the order-k layout."""
        self._check_window_keys(K)
        Ys = tags_to_states(Y, self._index, self.tags_)
        lengths = np.fromiter((len(y) for y in Ys), dtype=np.int64, count=len(Ys))
        y = np.concatenate(Ys).astype(np.int64)
        self.tag_ngrams_ = seen_ngrams(y, np.concatenate([[0], np.cumsum(lengths)]), K,
                                       int(self.order))
        self.n_features_ = self._order_k_size(self.n_input_features_, K,
                                              self.tag_ngrams_.size)

    def _order_k_size(self, d, K, n_ngrams):
        return int(d * K + K * K + 2 * K + n_ngrams
                   + (d * (K + 1) * K if self.emission_order else 0))

    @property
    def _order_k(self):
        """Whether the map has more than first-order parts (its order-k paths)."""
        return self.order != 1 or self.emission_order != 0

    def _block_starts(self):
        """First columns of the n-gram block and of the pair block."""
        K, d = self.n_states_, self.n_input_features_
        b_ng = d * K + K * K + 2 * K
        return b_ng, b_ng + self.tag_ngrams_.size

    def _cap(self):
        """Tags per position at most when decoding."""
        return self.n_states_ if self.beam is None else min(int(self.beam), self.n_states_)

    def _count_decodes(self, n, n_uncertified):
        with _COUNTS:
            self.n_decodes_ += int(n)
            self.n_uncertified_decodes_ += int(n_uncertified)

    @property
    def n_states_(self):
        """Number of tags K seen in training."""
        return len(self.tags_)

    @property
    def _layout(self):
        """(K, d, D): tags, observation features, features (the blocks of w)."""
        return self.n_states_, self.n_input_features_, self.n_features_

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedSequences` (token feature rows + offsets) of raw sentences."""
        X, _ = check_sentences(X, self.input_kind_)
        if self.input_kind_ == "matrix":
            M, offsets = stack_matrices(X, self.n_features_in_)
            return EncodedSequences(compact_columns(M, self.input_columns_), offsets)
        return EncodedSequences(*self._featurizer.transform_shared(X))

    def encode_outputs(self, Y, X=None):
        """Tag lists to state arrays; unseen tags raise a ValueError naming them."""
        Y = as_sequence(Y, "Y")
        if X is not None:
            Y = check_pairs(as_sequence(X, "X"), Y)
        return tags_to_states(Y, self._index, self.tags_)

    def decode_outputs(self, Ye):
        """State arrays back to tag lists."""
        return states_to_tags(Ye, self.tags_)

    # ------------------------------------------------------------------ features
    def feature_support(self, Xe, idx=None):
        """Columns of w in which Φ(x_i, y) can be non-zero for some tag sequence y,
        over the sentences ``idx`` (all by default): every tag's emission weight of
        each observation feature the sentences hold, and all transition, start and
        end weights.

        Returns
        -------
        ndarray of int
            Sorted column indices.
        """
        K, d, D = self._layout
        X, _ = Xe.select(idx)
        feats = np.unique(X.indices).astype(np.int64)
        emission = (feats[:, None] * K + np.arange(K)).ravel()
        return np.concatenate([emission, np.arange(d * K, D, dtype=np.int64)])

    def split_weights(self, w):
        """W_em (d, K), transition (K, K), start (K,) and end (K,) views of ``w``."""
        return weight_blocks(w, self._layout)

    def order_k_weights(self, w):
        """The weights of the seen tag n-grams (``len(tag_ngrams_)``,) and the pair
        block (d, K+1, K) (None without ``emission_order``), views of ``w``."""
        K, d, D = self._layout
        w = np.asarray(w, dtype=float).ravel()
        if w.size != D:
            raise ValueError(f"w has {w.size} entries, the feature map has {D} features")
        ngrams = vars(self).get("tag_ngrams_", np.zeros(0, np.int64))  # a fitted map's
        b_ng = d * K + K * K + 2 * K
        b_pair = b_ng + ngrams.size
        pair = w[b_pair:].reshape(d, K + 1, K) if self.emission_order else None
        return w[b_ng:b_pair], pair

    def _windows(self):
        return (int(self.order), int(self.emission_order), self.tag_ngrams_,
                *self._block_starts())

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        if self._order_k:
            return order_k_feature_rows(Xe, Ye, idx, self._layout, self._windows())
        return feature_rows(Xe, Ye, idx, self._layout)

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i), from differing tokens only.

        Equal to ``joint_features(Xe, Ye, idx) - joint_features(Xe, Ye_hat, idx)``
        but touches only the tokens where ŷ differs from y (and the transitions
        next to them), which late in training is a few percent of the corpus.
        """
        if self._order_k:
            return order_k_difference_rows(Xe, Ye, Ye_hat, idx, self._layout,
                                           self._windows())
        return difference_rows(Xe, Ye, Ye_hat, idx, self._layout)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Dense Σ_i ω_i δΦ_i (the 1-slack oracle's aggregated constraint).

        Parameters
        ----------
        Xe : EncodedSequences
        Ye, Ye_hat : list of ndarray of int
            True and decoded state sequences of the sentences ``idx``.
        idx : array-like of int, optional
            Sentences of ``Xe`` (all by default).
        weights : ndarray of shape (n_sequences,), optional
            ω_i (ones by default).

        Returns
        -------
        ndarray of shape (n_features,)
            Equal to ``weights @ joint_feature_differences(Xe, Ye, Ye_hat, idx)``,
            accumulated by one compiled pass over the tokens where ŷ differs.
        """
        if self._order_k:
            rows = self.joint_feature_differences(Xe, Ye, Ye_hat, idx)
            om = np.ones(rows.shape[0]) if weights is None else \
                np.asarray(weights, dtype=float).reshape(-1)
            if om.size != rows.shape[0]:
                raise ValueError(f"{om.size} weights for {rows.shape[0]} sentences")
            return np.asarray(rows.T @ om, dtype=float).ravel()
        return difference_sum(Xe, Ye, Ye_hat, idx, weights, self._layout)

    def aggregate_violation(self, Xe, Ye, w, loss, idx=None):
        """The margin-rescaled 1-slack oracle of all sentences in one batched pass.

        Loss-augmented Viterbi of every sentence (Hamming augmentation added to the
        unaries in place), the slacks ξ_i = max(0, Δ_i − w·δΦ_i) from the path
        scores, and Σ_i δΦ_i by one compiled pass over the differing tokens.

        Parameters
        ----------
        Xe : EncodedSequences
        Ye : list of ndarray of int
            True state sequences of all sentences of ``Xe``.
        w : ndarray of shape (n_features,)
        loss : Loss
        idx : array-like of int, optional
            Only these sentences (a chunk of the parallel oracle); all by default.

        Returns
        -------
        loss_sum : float
            Σ_i Δ(y_i, ŷ_i).
        psi_sum : ndarray of shape (n_features,), or csr_matrix of shape (1, n_features)
            Σ_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)): dense for all sentences, a sparse row
            (built in time proportional to the chunk, not to n_features) for ``idx``.
        slack : ndarray of shape (n_sequences,) or (len(idx),)
        """
        if self._order_k:
            return aggregate_order_k_violation(self, Xe, Ye, w, loss, idx)
        return aggregate_chain_violation(self, Xe, Ye, w, loss, idx)

    def fused_oracle(self, Xe, Ye, w, loss, decoder, idx, augment=True):
        """Most violated outputs of the sentences ``idx`` in one compiled call, or None.

        For the Hamming loss and the Viterbi decoder (margin rescaling): the unaries,
        the loss augmentation, decoding, Δ_i, the rows δΦ_i and the margins w·δΦ_i
        without holding the GIL, so chunks of an oracle call run at once on
        threads. The same answers as ``batch_potentials`` → ``augment`` → decoder →
        ``joint_feature_differences`` → ``loss.batch``.

        Parameters
        ----------
        Xe : EncodedSequences
        Ye : list of ndarray of int
            True state sequences of ALL sentences of ``Xe``.
        w : ndarray of shape (n_features,)
        loss : Loss
        decoder : Decoder
        idx : array-like of int
            The sentences to decode.
        augment : bool, default=True
            False decodes without the loss (plain prediction).

        Returns
        -------
        tuple or None
            ``(y_hat, loss, psi, margin)``: list of decoded paths, Δ_i, CSR rows
            δΦ_i and w·δΦ_i; None when the loss or decoder is another one.
        """
        if self._order_k:
            return fused_order_k_oracle(self, Xe, Ye, w, loss, decoder, idx, augment)
        return fused_chain_oracle(self, Xe, Ye, w, loss, decoder, idx, augment)

    def example_costs(self, Xe):
        """Decoding cost of every sentence, relative (its number of tokens): the
        parallel oracle balances its chunks by it."""
        return np.diff(Xe.offsets)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`ChainPotentials` of the sentences ``idx``: unaries by one product
        (:class:`OrderKChainPotentials` for ``order`` > 1 or ``emission_order=1``)."""
        if not self._order_k:
            return self._chain_potentials(Xe, w, idx)
        first = self._chain_potentials(Xe, w, idx)
        ngw, Wp = self.order_k_weights(w)
        pair = None
        if Wp is not None:
            Xs, _ = Xe.select(idx)
            K, d = self.n_states_, self.n_input_features_
            pair = np.asarray(Xs @ Wp.reshape(d, -1)).reshape(-1, K + 1, K)
        return OrderKChainPotentials(first.unary, first.offsets, first.transition,
                                     first.start, first.end, self.order,
                                     self.tag_ngrams_, ngw, pair, self.beam)

    def constrain_potentials(self, batch, constraints):
        """The batch with the tags and transitions ``constraints`` forbid scored −inf
        (one :class:`~structsvm.structures.constraints.OutputConstraints` or None per
        sentence; parts are tokens; see
        :func:`structsvm.structures.sequence.constraints.constrain_tagged`)."""
        from .constraints import constrain_tagged

        return constrain_tagged(self.tags_, self._index, batch, constraints)

    def _chain_potentials(self, Xe, w, idx):
        W, trans, start, end = self.split_weights(w)
        if Xe.shared is None:
            Xs, offsets = Xe.select(idx)
            return ChainPotentials(np.asarray(Xs @ W), offsets, trans, start, end)
        # tokens of one type share their first columns: those sums once per type
        rows, offsets = (slice(None), Xe.offsets) if idx is None else Xe.rows(idx)
        Xs = Xe.X if idx is None else Xe.take(rows)
        table, type_rows = Xe.shared
        shared_unaries = loops("structsvm.structures.sequence._jit").shared_unaries
        warmup.wait(shared_unaries)
        unary = shared_unaries(table, type_rows[rows], Xs.indptr, Xs.indices, W)
        return ChainPotentials(unary, offsets, trans, start, end)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw sentence ``x`` and tag list ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`ChainPotentials` of one raw sentence (score encoded paths)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ model files
    def _feature_names_key(self):
        return self.tags_

    def _build_feature_names(self):
        """``emission:<observation>:<tag>``, ``transition:<tag>-><tag>``,
        ``start:<tag>``, ``end:<tag>`` in the order of :meth:`split_weights`; then
        ``transition:<a>-><b>-><c>`` per seen n-gram (``<s>``, ``</s>``: the pads)
        and ``emission:<observation>:<previous>-><tag>`` per pair."""
        names = column_names(self.tags_, self.vocabulary_, self.n_input_features_,
                             self.input_kind_, self.input_columns_)
        if not self._order_k:
            return names
        names = names + ngram_names(self.tag_ngrams_, self.tags_, int(self.order))
        if self.emission_order:
            obs = observation_names(self.vocabulary_, self.n_input_features_,
                                    self.input_kind_, self.input_columns_)
            prev = [str(t) for t in self.tags_] + ["<s>"]
            names += [f"emission:{o}:{a}->{b}" for o in obs for a in prev
                      for b in map(str, self.tags_)]
        return names

    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        if callable(self.features) and self.input_kind_ == "tokens":
            raise TypeError("a SequenceFeatures with a user feature function cannot be "
                            "saved (model files hold no code); use a named feature set "
                            f"{sorted(FEATURE_SETS)} or precomputed matrices")
        state = {"tags_": self.tags_, "input_kind_": self.input_kind_,
                 "n_input_features_": int(self.n_input_features_),
                 "n_features_": int(self.n_features_)}
        if self._order_k:
            state["tag_ngrams_"] = self.tag_ngrams_
            state["n_decodes_"] = int(self.n_decodes_)
            state["n_uncertified_decodes_"] = int(self.n_uncertified_decodes_)
        if self.vocabulary_ is not None:
            state["vocabulary_"] = self.vocabulary_
        if self.input_kind_ == "matrix":
            state["n_features_in_"] = int(self.n_features_in_)
            if self.input_columns_ is not None:
                state["input_columns_"] = self.input_columns_
        return state

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self.

        The tag set, the input kind, the observation vocabulary (or hashing width)
        and the dimensions are checked against each other before anything uses them:
        every observation column must index a row of the emission weights (a
        :class:`~structsvm.io.ModelFileError` names the value that does not fit).
        """
        r = StateReader(state, type(self).__name__)
        check_order_params(self.order, self.emission_order, self.beam)
        tags = r.labels("tags_")
        K = len(tags)
        kind = r.choice("input_kind_", ("tokens", "matrix"))
        d = r.integer("n_input_features_")
        ngrams = np.zeros(0, np.int64)
        if self._order_k:
            top = 0 if self.order < 2 else (K + 1) ** 3 + (
                (K + 1) ** 4 if self.order == 3 else 0)
            ngrams = r.indices("tag_ngrams_", 0, top, what="tag n-gram keys")
            if np.any(np.diff(ngrams) <= 0):
                r.fail("tag_ngrams_", "must increase")
            r.count("n_features_", self._order_k_size(d, K, ngrams.size),
                    f"{d} observation features, {K} tags and {ngrams.size} tag n-grams"
                    f"{' (emission order 1)' if self.emission_order else ''}")
            decodes = r.integer("n_decodes_")
            uncertified = r.integer("n_uncertified_decodes_", 0, decodes)
        else:
            r.count("n_features_", d * K + K * K + 2 * K,
                    f"{d} observation features and {K} tags (d·K + K² + 2K)")
        vocab = r.labels("vocabulary_", strings=True) if r.has("vocabulary_") and \
            state["vocabulary_"] is not None else None
        if kind == "tokens":
            check_params(self.features, self.min_count, self.n_hash)
            fz = saved_columns(self.features, self.n_hash,
                               None if vocab is None else as_label_array(vocab))
            if fz.n_columns != d:
                r.fail("n_input_features_", f"is {d}, but the observation columns "
                                            f"(vocabulary or n_hash) number {fz.n_columns}")
            self._featurizer = fz
            width, kept = None, None
        else:
            width, kept = read_input_columns(r, d)
        self.tags_ = as_label_array(tags)
        self._index = label_index(self.tags_)
        self.input_kind_ = kind
        self.n_input_features_ = d
        self.n_features_ = d * K + K * K + 2 * K
        self.n_decodes_ = self.n_uncertified_decodes_ = 0
        if self._order_k:
            self.tag_ngrams_ = ngrams
            self.n_features_ = self._order_k_size(d, K, ngrams.size)
            self.n_decodes_, self.n_uncertified_decodes_ = decodes, uncertified
        self.vocabulary_ = None if vocab is None else as_label_array(vocab)
        self.n_features_in_, self.input_columns_ = width, kept
        return self
