"""Chains with hidden states: each tag splits into k hidden states, and tokens whose
tag is unknown (None) train with their tag hidden too."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ...limits import check_weights
from ...protocols import FeatureMapBase, as_sequence, check_decomposition, plugin_name
from .._names import FeatureNamesMixin
from .._state import StateReader
from .._validation import as_label_array, label_index, sorted_unique
from ..losses import BaseLoss
from ._encoding import EncodedSequences
from ._inputs import check_pairs
from .features import SequenceFeatures
from .viterbi import viterbi

__all__ = ["LatentSequenceFeatures", "HiddenStateLoss", "constrained_viterbi"]

_INNER = "states:"      # the prefix of the state chain's entries in the fitted state
_CHUNK = 2048           # sentences per batch when completing the training outputs


class LatentSequenceFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """A first-order chain over hidden states: each tag splits into ``n_hidden``
    states, and a token whose tag is unknown (None in the training output) keeps
    its tag hidden as well.

    With observation features φ(x, t) and a state path z = (z_1..z_T) over the K·k
    states (state c·k + j is hidden state j of tag c),

    .. math::

        \\Phi(x, z) = \\Big( \\sum_t \\phi(x, t) \\otimes e_{z_t},\\;
                       \\sum_{t \\ge 2} e_{z_{t-1}} \\otimes e_{z_t},\\;
                       e_{z_1},\\; e_{z_T} \\Big),

    the features of :class:`SequenceFeatures` over states; the tags are y_t =
    c(z_t) = z_t // k. Prediction is Viterbi over states, read as tags. Training
    gives the tags of some tokens: the complete output z is hidden where the tag is
    unknown and, with k > 1, in its hidden state everywhere. The best completion
    for the given tags (the latent argmax) is Viterbi restricted to the states of
    each known tag (:func:`constrained_viterbi`), and
    :class:`structsvm.learners.CCCP` (the default learner) trains on the
    completions. The loss counts the wrong tags among the known ones (Hamming by
    default).

    Parameters
    ----------
    features : {"pos", "chunk", "word"} or callable, default="pos"
        Observation features (as :class:`SequenceFeatures`).
    min_count : int, default=1
        Keep only observation strings seen at least this often in training.
    n_hash : int or None, default=None
        Hash the observation strings into this many columns.
    n_hidden : int, default=1
        Hidden states per tag (k). With 1 and fully tagged data the model is
        :class:`SequenceFeatures`' and trains to the same weights.

    Attributes
    ----------
    tags_ : ndarray of object
        The tag set (the known tags of the training data).
    states_ : SequenceFeatures
        The fitted chain over the K·k states, named ``"<tag>#<j>"``; w is laid out
        as its w (``states_.split_weights(w)``).
    n_features_ : int
        d·S + S² + 2S with S = K·k.

    Notes
    -----
    Encoded outputs are state paths. A training output is encoded with the first
    hidden state of each known tag, and −1 − s at a token of unknown tag (s its
    state, 0 until completed): negative entries mark the tokens the loss does not
    read. The first completions (``init="guess"``) cluster each tag's tokens into k
    hidden states by k-means of their feature rows, then fill the unknown tags by
    Viterbi under a count-based chain model (multinomial emissions and bigram
    transitions of the known tokens, add-one smoothed).

    References
    ----------
    C.-N. J. Yu, T. Joachims. Learning structural SVMs with latent variables.
    ICML 2009.
    S. Petrov, L. Barrett, R. Thibaux, D. Klein. Learning accurate, compact, and
    interpretable tree annotation. ACL 2006 (tags split into hidden sub-states).
    Y. Tsuboi, H. Kashima, S. Mori, H. Oda, Y. Matsumoto. Training conditional
    random fields using incomplete annotations. COLING 2008.

    Examples
    --------
    >>> fm = LatentSequenceFeatures(features="word", n_hidden=2)
    >>> fm = fm.fit([["the", "dog"], ["a", "cat"]], [["D", "N"], ["D", None]])
    >>> fm.tags_.tolist(), fm.states_.tags_.tolist()
    (['D', 'N'], ['D#0', 'D#1', 'N#0', 'N#1'])
    >>> [z.tolist() for z in fm.encode_outputs([["D", None]])]
    [[0, -1]]
    """

    structure: ClassVar[str] = "sequence"
    default_loss: ClassVar[str] = "hamming"
    default_decoder: ClassVar[str] = "viterbi"
    default_C: ClassVar[float] = SequenceFeatures.default_C
    default_tol: ClassVar[float] = SequenceFeatures.default_tol
    default_learners: ClassVar[tuple] = (("cccp", {}),)
    convex_learners: ClassVar[tuple] = SequenceFeatures.default_learners
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.sequence._jit:shared_unaries",
        "structsvm.structures.sequence._viterbi_jit:viterbi_batch")
    latent: ClassVar[bool] = True
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, features="pos", min_count=1, n_hash=None, n_hidden=1):
        self.features = features
        self.min_count = min_count
        self.n_hash = n_hash
        self.n_hidden = n_hidden

    # ------------------------------------------------------------------ fitting
    def _k(self):
        k = self.n_hidden
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_hidden must be an int >= 1, got {k!r}")
        return int(k)

    def fit(self, X, Y):
        """Learn the tag set (the known tags) and the observation columns."""
        self.fit_encode(X, Y)
        return self

    def fit_encode(self, X, Y):
        """:meth:`fit`, and the encoded sentences (built once).

        Raises
        ------
        ValueError
            No token has a known tag.
        """
        k = self._k()
        Y = as_sequence(Y, "Y")
        known = [t for y in Y for t in _tags(y) if t is not None]
        if not known:
            raise ValueError("every tag of Y is None: at least one token needs a known "
                             "tag")
        self.tags_ = sorted_unique(known)
        self._index = label_index(self.tags_)
        first = self.tags_[0]
        filled = [[first if t is None else t for t in _tags(y)] for y in Y]
        chain = SequenceFeatures(self.features, self.min_count, self.n_hash)
        Xe = chain.fit_encode(X, filled)
        # the same chain over the K·k states "<tag>#<j>" (its observation columns kept)
        names = [f"{t}#{j}" for t in self.tags_.tolist() for j in range(k)]
        S, d = len(names), chain.n_input_features_
        chain.tags_ = as_label_array(names)
        chain._index = label_index(chain.tags_)
        chain.n_features_ = int(d * S + S * S + 2 * S)
        check_weights(chain.n_features_, f"{d} features x {S} hidden states")
        self.states_ = chain
        self.n_features_ = chain.n_features_
        return Xe

    @property
    def n_states_(self):
        """Number of hidden states K·k."""
        return len(self.tags_) * self._k()

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """The sentences' observation rows (as :class:`SequenceFeatures`)."""
        return self.states_.encode_inputs(X)

    def encode_outputs(self, Y, X=None):
        """Tag lists to state paths: c·k for a known tag c, −1 for None.

        Raises
        ------
        ValueError
            A tag not seen in training (naming the sentence and the token), or a
            tag list whose length differs from its sentence's.
        """
        Y = as_sequence(Y, "Y")
        if X is not None:
            Y = check_pairs(as_sequence(X, "X"), Y)
        k, out = self._k(), []
        for i, y in enumerate(Y):
            tags = _tags(y, i)
            z = np.empty(len(tags), dtype=np.intp)
            for t, tag in enumerate(tags):
                if tag is None:
                    z[t] = -1
                    continue
                try:
                    z[t] = self._index[tag] * k
                except (KeyError, TypeError):
                    raise ValueError(f"Sentence {i}, token {t}: tag {tag!r} was not seen "
                                     f"in training; the tag set is "
                                     f"{self.tags_.tolist()}") from None
            out.append(z)
        return out

    def decode_outputs(self, Ye):
        """State paths to tag lists (None where a training output's tag is unknown)."""
        k = self._k()
        return [[None if s < 0 else self.tags_[s // k] for s in np.asarray(z).tolist()]
                for z in Ye]

    def decode_latent(self, Ye):
        """State paths to lists of (tag, hidden state) pairs."""
        k, out = self._k(), []
        for z in Ye:
            s = _states(z)
            out.append([(self.tags_[v // k], v % k) for v in s.tolist()])
        return out

    # ------------------------------------------------------------------ features
    def split_weights(self, w):
        """W_em (d, S), transition (S, S), start (S,) and end (S,) views of ``w``."""
        return self.states_.split_weights(w)

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, z_i)."""
        return self.states_.joint_features(Xe, [_states(z) for z in Ye], idx)

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR rows Φ(x_i, z_i) − Φ(x_i, ẑ_i), from the differing tokens."""
        return self.states_.joint_feature_differences(
            Xe, [_states(z) for z in Ye], [_states(z) for z in Ye_hat], idx)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Σ_i ω_i (Φ(x_i, z_i) − Φ(x_i, ẑ_i)) as a dense vector."""
        return self.states_.joint_feature_difference_sum(
            Xe, [_states(z) for z in Ye], [_states(z) for z in Ye_hat], idx, weights)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`ChainPotentials` over the hidden states."""
        return self.states_.batch_potentials(Xe, w, idx)

    def example_costs(self, Xe):
        """Decoding cost of every sentence (its number of tokens)."""
        return np.diff(Xe.offsets)

    def joint_feature(self, x, y):
        """Φ(x, z) of a raw sentence and a list of (tag, hidden state) pairs."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, [self._encode_pairs(y)]).toarray().ravel()

    def potentials(self, x, w):
        """The chain potentials of one raw sentence (over the hidden states)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    def _encode_pairs(self, y, i=0):
        k, z = self._k(), []
        for t, pair in enumerate(y):
            try:
                tag, j = pair
                c = self._index[tag]
            except (TypeError, ValueError, KeyError):
                raise ValueError(f"Sentence {i}, token {t}: expected a (tag, hidden "
                                 f"state) pair of a known tag, got {pair!r}") from None
            if isinstance(j, bool) or not isinstance(j, (int, np.integer)) \
                    or not 0 <= j < k:
                raise ValueError(f"Sentence {i}, token {t}: hidden state {j!r} is not "
                                 f"an int in [0, {k})")
            z.append(c * k + int(j))
        return np.asarray(z, dtype=np.intp)

    # ------------------------------------------------------------------ latent
    def latent_loss(self, loss):
        """The loss on the known tags of a training output: :class:`HiddenStateLoss`.

        Raises
        ------
        TypeError
            A loss that does not decompose over positions.
        """
        check_decomposition(loss, ("position",), "a chain with hidden states")
        return HiddenStateLoss(loss, self._k(), len(self.tags_))

    def impute(self, Xe, Ye, w):
        """Completions: the best state path of every sentence among those that
        agree with its known tags (:func:`constrained_viterbi`)."""
        out = []
        for start in range(0, len(Ye), _CHUNK):
            idx = np.arange(start, min(len(Ye), start + _CHUNK))
            batch = self.batch_potentials(Xe, w, idx)
            Y = [Ye[i] for i in idx]
            paths = constrained_viterbi(batch, Y, self._k())
            out.extend(np.where(np.asarray(z) < 0, -1 - p, p) for z, p in zip(Y, paths))
        return out

    def init_latent(self, Xe, Ye, init, random_state):
        """The first completions: the map's own guess (``"guess"``, see Notes),
        uniform random hidden states and unknown tags (``"random"``), or given (one
        list of (tag, hidden state) pairs per sentence, agreeing with the known
        tags)."""
        k, K = self._k(), len(self.tags_)
        if not isinstance(init, str):
            H = list(as_sequence(init, "init"))
            if len(H) != len(Ye):
                raise ValueError(f"init has {len(H)} sentences for {len(Ye)} examples")
            out = []
            for i, (z, h) in enumerate(zip(Ye, H)):
                s = self._encode_pairs(h, i)
                z = np.asarray(z)
                if s.size != z.size:
                    raise ValueError(f"Sentence {i}: init has {s.size} pairs for "
                                     f"{z.size} tokens")
                bad = np.flatnonzero((z >= 0) & (s // k != z // k))
                if bad.size:
                    raise ValueError(f"Sentence {i}, token {int(bad[0])}: init's tag "
                                     "differs from the known tag")
                out.append(np.where(z < 0, -1 - s, s))
            return out
        rng = check_random_state(random_state)
        if init == "random":
            out = []
            for z in Ye:
                z = np.asarray(z)
                tag = np.where(z < 0, rng.randint(K, size=z.size), z // k)
                s = tag * k + rng.randint(k, size=z.size)
                out.append(np.where(z < 0, -1 - s, s))
            return out
        return self._guess(Xe, Ye, rng)

    def _guess(self, Xe, Ye, rng):
        """k-means hidden states of the known tokens, then Viterbi under the
        count-based chain model of those states (unknown tags and all hidden states
        chosen together, the known tags kept)."""
        k = self._k()
        z = np.concatenate([np.asarray(a, dtype=np.intp) for a in Ye])
        if k == 1 and np.all(z >= 0):
            return [np.asarray(a, dtype=np.intp).copy() for a in Ye]
        X = Xe.X
        known = np.flatnonzero(z >= 0)
        state = np.full(z.size, -1, dtype=np.intp)
        state[known] = z[known]
        if k > 1:
            state[known] += _kmeans_states(X, z[known] // k, known, k, rng)
        w = _count_chain(self.states_, X, Xe.offsets, state, self.n_states_)
        return self.impute(Xe, Ye, w)

    def select_inputs(self, Xe, idx):
        """The encoded sentences ``idx``."""
        idx = np.asarray(idx, dtype=np.int64).ravel()
        rows, offsets = Xe.rows(idx)
        shared = None
        if Xe.shared is not None:
            table, type_rows = Xe.shared
            shared = (table, type_rows[rows])
        return EncodedSequences(Xe.take(rows), offsets, shared)

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self.states_

    def _build_feature_names(self):
        """The state chain's names (``emission:<observation>:<tag>#<j>``, ...)."""
        return list(self.states_.feature_names_)

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """The tag set and the state chain's fitted attributes."""
        state = {"tags_": self.tags_}
        state.update({_INNER + key: v for key, v in self.states_.fitted_state().items()})
        return state

    def load_fitted_state(self, state):
        """Restore :meth:`fitted_state`; return self (checked: the state chain has
        the K·k states of the tags)."""
        r = StateReader(state, type(self).__name__)
        tags = as_label_array(r.labels("tags_"))
        k = self._k()
        inner = {key[len(_INNER):]: v for key, v in state.items()
                 if key.startswith(_INNER)}
        chain = SequenceFeatures(self.features, self.min_count, self.n_hash)
        chain.load_fitted_state(inner)
        names = [f"{t}#{j}" for t in tags.tolist() for j in range(k)]
        if chain.tags_.tolist() != names:
            r.fail(_INNER + "tags_", f"are not the {k} hidden states of each of the "
                                     f"{len(tags)} tags")
        self.tags_, self._index = tags, label_index(tags)
        self.states_ = chain
        self.n_features_ = int(chain.n_features_)
        return self


class HiddenStateLoss(BaseLoss):
    """A loss on tags read on state paths, counting known tokens only.

    For a training output z (a state path, −1 − s at a token of unknown tag) and a
    predicted path ẑ, Δ(z, ẑ) is the tag loss of the known tokens:
    ``loss(y_known, c(ẑ)_known)`` with c(s) = s // k. It decomposes over positions:
    the table of token t and state s is the tag loss's table at (t, c(s)), zero at
    a token of unknown tag.

    Parameters
    ----------
    loss : Loss
        A loss on tag indices that decomposes over positions (Hamming).
    n_hidden : int
        Hidden states per tag (k).
    n_tags : int
        K.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures import HammingLoss
    >>> lo = HiddenStateLoss(HammingLoss(), 2, 2)
    >>> lo(np.array([0, -1, 2]), np.array([1, 3, 0]))   # token 1 is unknown
    1.0
    """

    decomposition: ClassVar[str] = "position"

    def __init__(self, loss, n_hidden, n_tags):
        self.loss = loss
        self.n_hidden = int(n_hidden)
        self.n_tags = int(n_tags)
        self.name = plugin_name(loss)

    def _known(self, y_true):
        z = np.asarray(y_true, dtype=np.intp).reshape(-1)
        known = z >= 0
        return known, z[known] // self.n_hidden

    def __call__(self, y_true, y_pred):
        known, tags = self._known(y_true)
        pred = np.asarray(y_pred, dtype=np.intp).reshape(-1)
        if pred.size != known.size:
            raise ValueError(f"loss: outputs of lengths {known.size} and {pred.size}")
        if not tags.size:
            return 0.0
        return float(self.loss(tags, pred[known] // self.n_hidden))

    def max_loss(self, y_true):
        """The tag loss's largest value on the known tokens (0 with none)."""
        known, tags = self._known(y_true)
        return float(self.loss.max_loss(tags)) if tags.size else 0.0

    def part_losses(self, y_true, n_states):
        """The table of shape (n_tokens, n_states): the tag loss of each state's tag
        at a known token, 0 at an unknown one."""
        known, tags = self._known(y_true)
        out = np.zeros((known.size, int(n_states)))
        if tags.size:
            table = np.asarray(self.loss.part_losses(tags, self.n_tags), dtype=float)
            table = table.reshape(tags.size, self.n_tags)
            out[known] = np.repeat(table, self.n_hidden, axis=1)[:, :n_states]
        return out

    def __repr__(self):
        return f"HiddenStateLoss({self.loss!r}, {self.n_hidden}, {self.n_tags})"


def constrained_viterbi(batch, Y, n_hidden):
    """The best state path of every sentence among those that agree with its known
    tags: Viterbi with every state of another tag forbidden (score −∞) at a
    token of known tag.

    Parameters
    ----------
    batch : ChainPotentials
        Potentials over the K·k hidden states.
    Y : list of ndarray of int
        Training outputs: state c·k + j at a token of known tag c (j is ignored),
        a negative entry at a token of unknown tag.
    n_hidden : int
        k.

    Returns
    -------
    list of ndarray of int
        One state path per sentence.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.sequence import ChainPotentials
    >>> p = ChainPotentials(np.array([[0., 1., 5., 0.], [2., 0., 0., 0.]]), [0, 2],
    ...                     np.zeros((4, 4)), np.zeros(4), np.zeros(4))
    >>> constrained_viterbi(p, [np.array([0, -1])], 2)[0].tolist()   # tag 0, then ?
    [1, 0]
    """
    z = np.concatenate([np.asarray(a, dtype=np.intp).reshape(-1) for a in Y]) \
        if len(Y) else np.zeros(0, dtype=np.intp)
    unary = np.array(batch.unary, dtype=float)
    if z.size != unary.shape[0]:
        raise ValueError(f"{z.size} tags for {unary.shape[0]} tokens")
    S = unary.shape[1]
    known = np.flatnonzero(z >= 0)
    tag_of_state = np.arange(S) // int(n_hidden)
    forbid = tag_of_state[None, :] != (z[known] // int(n_hidden))[:, None]
    rows = unary[known]
    rows[forbid] = -np.inf
    unary[known] = rows
    return viterbi(type(batch)(unary, batch.offsets, batch.transition, batch.start,
                               batch.end))


# --------------------------------------------------------------------------- guesses
def _tags(y, i=None):
    """A training output's tags as a list (None: unknown)."""
    try:
        if isinstance(y, (str, bytes)):
            raise TypeError
        return list(y)
    except TypeError:
        where = "" if i is None else f"Sentence {i}: "
        raise TypeError(f"{where}expected a list of tags, got {type(y).__name__}") \
            from None


def _states(z):
    """The state path of an encoded output (−1 − s marks an unknown tag's state s)."""
    z = np.asarray(z, dtype=np.intp).reshape(-1)
    return np.where(z < 0, -1 - z, z)


def _kmeans_states(X, tag, rows, k, rng):
    """Hidden state (0..k−1) of each known token: its k-means cluster among the
    feature rows of its tag's tokens (a tag with k or fewer tokens numbers them)."""
    from sklearn.cluster import KMeans

    out = np.zeros(rows.size, dtype=np.intp)
    for c in np.unique(tag):
        mine = np.flatnonzero(tag == c)
        if mine.size <= k:
            out[mine] = np.arange(mine.size)
            continue
        km = KMeans(n_clusters=k, n_init=1, random_state=rng.randint(2 ** 31 - 1))
        out[mine] = km.fit_predict(X[rows[mine]])
    return out


def _count_chain(chain, X, offsets, state, S):
    """Weights of a count-based chain model of the tokens with a state (state ≥ 0):
    emissions log θ_{j,s} (multinomial over the feature columns, add-one smoothed)
    plus log P(s), transitions and start/end log frequencies (add-one smoothed)."""
    w = np.zeros(chain.n_features_)
    W, A, start, end = chain.split_weights(w)
    have = np.flatnonzero(state >= 0)
    Xk = X[have]
    E = np.zeros((S, X.shape[1]))
    ind = np.zeros((have.size, S))
    ind[np.arange(have.size), state[have]] = 1.0
    E[:] = np.asarray((Xk.T @ ind).T) if Xk.nnz else 0.0
    E = np.abs(E) + 1.0
    W[:] = np.log(E / E.sum(axis=1, keepdims=True)).T
    n_s = np.bincount(state[have], minlength=S) + 1.0
    first = offsets[:-1][np.diff(offsets) > 0]
    last = offsets[1:][np.diff(offsets) > 0] - 1
    prev = np.arange(1, state.size)
    prev = prev[~np.isin(prev, first)]
    a, b = state[prev - 1], state[prev]
    ok = (a >= 0) & (b >= 0)
    T = np.ones((S, S))
    np.add.at(T, (a[ok], b[ok]), 1.0)
    A[:] = np.log(T / T.sum(axis=1, keepdims=True))
    s0 = state[first]
    start[:] = np.log((np.bincount(s0[s0 >= 0], minlength=S) + 1.0)
                      / (np.sum(s0 >= 0) + S))
    sT = state[last]
    end[:] = np.log((np.bincount(sT[sT >= 0], minlength=S) + 1.0) / n_s)
    return w
