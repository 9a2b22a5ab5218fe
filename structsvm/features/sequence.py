"""HMM-style joint features of label sequences: observations ⊗ labels, and transitions."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .. import _jit_warmup
from ..limits import check_weights
from ..protocols import FeatureMapBase, as_sequence
from ._sequence_chain import ChainPotentials
from ._sequence_encoding import EncodedSequences
from ._sequence_oracle import aggregate_chain_violation, fused_chain_oracle
from ._sequence_observations import FEATURE_SETS, TokenFeaturizer
from ._sequence_jit import scatter_differences, shared_unaries
from ._sequence_rows import difference_entries
from ._names import FeatureNamesMixin
from ._validation import label_index
from .multiclass import _as_label_array, _sorted_unique

__all__ = ["SequenceFeatures", "ChainPotentials", "EncodedSequences"]


class SequenceFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """Joint features of a first-order chain (HMM-style), for tagging and chunking.

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

    Attributes
    ----------
    tags_ : ndarray of object
        The tag set; encoded state k is ``tags_[k]``.
    vocabulary_ : ndarray of str or None
        Observation strings in column order (``None`` when hashing or with matrix
        inputs).
    n_input_features_ : int
        d, the number of observation features.
    n_features_ : int
        d·K + K² + 2K.

    Notes
    -----
    Layout of w: ``w[:d*K].reshape(d, K)`` is W_em (row j = feature j's score per
    tag), then ``transition`` (K×K, row = previous tag), ``start`` (K) and ``end``
    (K); :meth:`split_weights` returns the four blocks.

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

    Examples
    --------
    >>> fm = SequenceFeatures(features="word").fit([["the", "dog"]], [["D", "N"]])
    >>> fm.tags_.tolist(), fm.n_input_features_, fm.n_features_
    (['D', 'N'], 3, 14)
    >>> W, A, s, e = fm.split_weights(fm.joint_feature(["the", "dog"], ["D", "N"]))
    >>> W.tolist(), A.tolist(), s.tolist(), e.tolist()  # features: b, w=the, w=dog
    ([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]], [1.0, 0.0], [0.0, 1.0])
    """

    structure: ClassVar[str] = "chain"
    default_loss: ClassVar[str] = "hamming"
    default_decoder: ClassVar[str] = "viterbi"
    #: C suited to this map's scale (summed Hamming losses of ~3000 treebank sentences:
    #: chosen on the treebank POS task, see docs/sequences.md)
    default_C: ClassVar[float] = 0.1
    #: certified relative duality gap, chosen on CoNLL-2000 chunking and treebank POS
    #: tagging with the default learner (measurements: docs/learners.md)
    default_tol: ClassVar[float] = 0.05
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True
    has_aggregate_oracle: ClassVar[bool] = True
    #: aggregate_violation takes ``idx`` (chunks of the parallel oracle, sparse sums)
    has_chunked_aggregate: ClassVar[bool] = True
    #: fused_oracle: a chunk's whole oracle in one GIL-free compiled call
    has_fused_oracle: ClassVar[bool] = True

    def __init__(self, features="pos", min_count=1, n_hash=None):
        self.features = features
        self.min_count = min_count
        self.n_hash = n_hash

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        if not (callable(self.features) or self.features in FEATURE_SETS):
            raise ValueError(f"features must be one of {sorted(FEATURE_SETS)} or a callable "
                             f"f(sentence, t), got {self.features!r}")
        if not (isinstance(self.min_count, (int, np.integer)) and self.min_count >= 1):
            raise ValueError(f"min_count must be an int >= 1, got {self.min_count!r}")
        if self.n_hash is not None and not (isinstance(self.n_hash, (int, np.integer))
                                            and self.n_hash >= 1):
            raise ValueError(f"n_hash must be None or an int >= 1, got {self.n_hash!r}")

    @staticmethod
    def _kind(X):
        x0 = X[0]
        return "matrix" if sp.issparse(x0) or (isinstance(x0, np.ndarray)
                                               and x0.ndim == 2) else "tokens"

    def _check_inputs(self, X, kind=None):
        X = as_sequence(X, "X")
        if len(X) == 0:
            raise ValueError("X is empty: at least one sentence is needed")
        kind = kind or self._kind(X)
        for i, x in enumerate(X):
            if kind == "matrix":
                if not (sp.issparse(x) or (isinstance(x, np.ndarray) and x.ndim == 2)):
                    raise TypeError(f"Sentence {i}: expected a (T, d) matrix like "
                                    f"sentence 0, got {type(x).__name__}")
                n = x.shape[0]
            else:
                if isinstance(x, (str, bytes)) or sp.issparse(x) or not hasattr(x, "__len__"):
                    raise TypeError(f"Sentence {i}: expected a list of tokens, got "
                                    f"{type(x).__name__} {x!r:.40}")
                n = len(x)
            if n == 0:
                raise ValueError(f"Sentence {i} is empty: every sentence needs a token")
        return X, kind

    def _check_pairs(self, X, Y):
        Y = as_sequence(Y, "Y")
        if len(Y) != len(X):
            raise ValueError(f"X has {len(X)} sentences but Y has {len(Y)}")
        for i, (x, y) in enumerate(zip(X, Y)):
            n = x.shape[0] if self._kind([x]) == "matrix" else len(x)
            if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
                raise TypeError(f"Sentence {i}: expected a list of tags, got "
                                f"{type(y).__name__}")
            if len(y) != n:
                raise ValueError(f"Sentence {i}: x has {n} tokens but y has {len(y)} tags")
        return Y

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

    def _fit(self, X, Y, encode=False):
        self._check_params()
        X, kind = self._check_inputs(X)
        Y = self._check_pairs(X, Y)
        self.input_kind_ = kind
        self.tags_ = _sorted_unique([t for y in Y for t in y])
        self._index = label_index(self.tags_)
        if kind == "matrix":
            widths = {x.shape[1] for x in X}
            if len(widths) != 1:
                raise ValueError(f"sentences have different feature widths {sorted(widths)}")
            self.vocabulary_ = None
            self.n_input_features_ = widths.pop()
        Xe = None
        if kind != "matrix":
            fz = TokenFeaturizer(self.features, self.n_hash)
            if encode:
                Xe = EncodedSequences(*fz.fit_transform(X, self.min_count))
            else:
                fz.fit(X, self.min_count)
            self.vocabulary_ = None if self.n_hash is not None else \
                _as_label_array(list(fz.vocabulary))
            self._featurizer = fz
            self.n_input_features_ = fz.n_columns
        K = len(self.tags_)
        self.n_features_ = int(self.n_input_features_ * K + K * K + 2 * K)
        check_weights(self.n_features_, f"{self.n_input_features_} features x {K} tags")
        return Xe

    @property
    def n_states_(self):
        """Number of tags K seen in training."""
        return len(self.tags_)

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedSequences` (token feature rows + offsets) of raw sentences."""
        X, _ = self._check_inputs(X, self.input_kind_)
        if self.input_kind_ == "matrix":
            for i, x in enumerate(X):
                if x.shape[1] != self.n_input_features_:
                    raise ValueError(f"Sentence {i}: has {x.shape[1]} features per token, "
                                     f"the map was fitted with {self.n_input_features_}")
            M = sp.vstack([sp.csr_matrix(x, dtype=float) for x in X], format="csr")
            if not np.all(np.isfinite(M.data)):
                raise ValueError("X contains NaN or infinite feature values")
            offsets = np.concatenate([[0], np.cumsum([x.shape[0] for x in X])])
            return EncodedSequences(M, offsets)
        return EncodedSequences(*self._featurizer.transform_shared(X))

    def encode_outputs(self, Y, X=None):
        """Tag lists to state arrays; unseen tags raise a ValueError naming them."""
        Y = as_sequence(Y, "Y")
        if X is not None:
            Y = self._check_pairs(as_sequence(X, "X"), Y)
        out = []
        for i, y in enumerate(Y):
            try:
                out.append(np.fromiter((self._index[t] for t in y), dtype=np.intp,
                                       count=len(y)))
            except (KeyError, TypeError):
                t = next(t for t, tag in enumerate(y) if _unknown(self._index, tag))
                raise ValueError(f"Sentence {i}, token {t}: tag {y[t]!r} was not seen in "
                                 f"training; the tag set is {self.tags_.tolist()}") from None
        return out

    def decode_outputs(self, Ye):
        """State arrays back to tag lists."""
        if len(Ye) < 2:
            return [self.tags_[np.asarray(y, dtype=np.intp)].tolist() for y in Ye]
        parts = [np.asarray(y, dtype=np.intp).reshape(-1) for y in Ye]
        tags = self.tags_[np.concatenate(parts)].tolist()  # one conversion for all
        ends = np.cumsum([p.size for p in parts]).tolist()
        return [tags[a:b] for a, b in zip([0] + ends[:-1], ends)]

    # ------------------------------------------------------------------ features
    def split_weights(self, w):
        """W_em (d, K), transition (K, K), start (K,) and end (K,) views of ``w``."""
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        d, K = self.n_input_features_, self.n_states_
        b = d * K
        return (w[:b].reshape(d, K), w[b:b + K * K].reshape(K, K),
                w[b + K * K:b + K * K + K], w[b + K * K + K:])

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs, offsets = Xe.select(idx)
        n_seq, K = len(offsets) - 1, self.n_states_
        if len(Ye) != n_seq:
            raise ValueError(f"{n_seq} inputs but {len(Ye)} outputs")
        lengths = np.diff(offsets)
        y = np.concatenate([np.asarray(yi, dtype=np.int64).reshape(-1) for yi in Ye]) \
            if n_seq else np.zeros(0, np.int64)
        if y.size != Xs.shape[0]:
            bad = next(i for i, yi in enumerate(Ye) if np.size(yi) != lengths[i])
            raise ValueError(f"Sentence {bad}: output has {np.size(Ye[bad])} states for "
                             f"{lengths[bad]} tokens")
        seq = np.repeat(np.arange(n_seq), lengths)
        nnz = np.diff(Xs.indptr)
        base = self.n_input_features_ * K
        inner = np.ones(y.size, dtype=bool)
        inner[offsets[:-1]] = False
        rows = np.concatenate([np.repeat(seq, nnz), seq[inner], np.arange(n_seq),
                               np.arange(n_seq)])
        cols = np.concatenate([Xs.indices * K + np.repeat(y, nnz),
                               base + y[np.flatnonzero(inner) - 1] * K + y[inner],
                               base + K * K + y[offsets[:-1]],
                               base + K * K + K + y[offsets[1:] - 1]])
        data = np.concatenate([Xs.data, np.ones(rows.size - Xs.data.size)])
        return sp.csr_matrix((data, (rows, cols)), shape=(n_seq, self.n_features_))

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i), from differing tokens only.

        Equal to ``joint_features(Xe, Ye, idx) - joint_features(Xe, Ye_hat, idx)``
        but touches only the tokens where ŷ differs from y (and the transitions
        next to them), which late in training is a few percent of the corpus.
        """
        Xs, offsets = Xe.select(idx)
        n_seq = len(offsets) - 1
        if len(Ye) != n_seq or len(Ye_hat) != n_seq:
            raise ValueError(f"{n_seq} inputs but {len(Ye)} and {len(Ye_hat)} outputs")
        y, yh = (_flat(Y, Xs.shape[0]) for Y in (Ye, Ye_hat))
        rows, cols, data = difference_entries(Xs, offsets, y, yh, self.n_states_,
                                              self.n_input_features_ * self.n_states_)
        out = sp.csr_matrix((data, (rows, cols)), shape=(n_seq, self.n_features_))
        out.eliminate_zeros()
        return out

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
        Xs, offsets = Xe.select(idx)
        n_seq = len(offsets) - 1
        if len(Ye) != n_seq or len(Ye_hat) != n_seq:
            raise ValueError(f"{n_seq} inputs but {len(Ye)} and {len(Ye_hat)} outputs")
        y, yh = (_flat(Y, Xs.shape[0]) for Y in (Ye, Ye_hat))
        om = np.ones(n_seq) if weights is None else \
            np.asarray(weights, dtype=float).reshape(-1)
        if om.size != n_seq:
            raise ValueError(f"{om.size} weights for {n_seq} sentences")
        return self._scatter(Xs, offsets, y, yh, np.repeat(om, np.diff(offsets)))

    def _scatter(self, Xs, offsets, y, yh, tok_weight):
        out = np.zeros(self.n_features_)
        scatter_differences(Xs.indptr, Xs.indices, np.asarray(Xs.data, dtype=float), y, yh,
                            tok_weight, offsets, self.n_states_,
                            self.n_input_features_ * self.n_states_, out)
        return out

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
        return fused_chain_oracle(self, Xe, Ye, w, loss, decoder, idx, augment)

    def example_costs(self, Xe):
        """Decoding cost of every sentence, relative (its number of tokens): the
        parallel oracle balances its chunks by it."""
        return np.diff(Xe.offsets)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`ChainPotentials` of the sentences ``idx``: unaries by one product."""
        W, trans, start, end = self.split_weights(w)
        if Xe.shared is None:
            Xs, offsets = Xe.select(idx)
            return ChainPotentials(np.asarray(Xs @ W), offsets, trans, start, end)
        # tokens of one type share their first columns: those sums once per type
        rows, offsets = (slice(None), Xe.offsets) if idx is None else Xe.rows(idx)
        Xs = Xe.X if idx is None else Xe.take(rows)
        table, type_rows = Xe.shared
        _jit_warmup.wait(shared_unaries)
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
        ``start:<tag>``, ``end:<tag>`` in the order of :meth:`split_weights`."""
        tags = [str(t) for t in self.tags_]
        d = self.n_input_features_
        if self.vocabulary_ is not None:
            obs = [str(s) for s in self.vocabulary_]
        else:
            obs = [f"{'hash' if self.input_kind_ != 'matrix' else 'x'}{j}" for j in range(d)]
        return ([f"emission:{o}:{t}" for o in obs for t in tags]
                + [f"transition:{a}->{b}" for a in tags for b in tags]
                + [f"start:{t}" for t in tags] + [f"end:{t}" for t in tags])

    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        if callable(self.features) and self.input_kind_ == "tokens":
            raise TypeError("a SequenceFeatures with a user feature function cannot be "
                            "saved (model files hold no code); use a named feature set "
                            f"{sorted(FEATURE_SETS)} or precomputed matrices")
        state = {"tags_": self.tags_, "input_kind_": self.input_kind_,
                 "n_input_features_": int(self.n_input_features_),
                 "n_features_": int(self.n_features_)}
        if self.vocabulary_ is not None:
            state["vocabulary_"] = self.vocabulary_
        return state

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self."""
        self.tags_ = _as_label_array(list(state["tags_"]))
        self._index = label_index(self.tags_)
        self.input_kind_ = str(state["input_kind_"])
        self.n_input_features_ = int(state["n_input_features_"])
        self.n_features_ = int(state["n_features_"])
        vocab = state.get("vocabulary_")
        self.vocabulary_ = None if vocab is None else _as_label_array(list(vocab))
        if self.input_kind_ == "tokens":
            self._featurizer = TokenFeaturizer(
                self.features, self.n_hash,
                None if vocab is None else {s: j for j, s in enumerate(self.vocabulary_)})
        return self


def _flat(Y, n_tokens):
    """Concatenated int64 states of a list of paths (checked against the token count)."""
    y = np.concatenate([np.asarray(a, dtype=np.int64).reshape(-1) for a in Y]) if len(Y) \
        else np.zeros(0, np.int64)
    if y.size != n_tokens:
        raise ValueError(f"outputs have {y.size} states for {n_tokens} tokens")
    return y


def _unknown(index, tag):
    try:
        return tag not in index
    except TypeError:
        return True
