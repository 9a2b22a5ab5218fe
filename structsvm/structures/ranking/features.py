"""Ranking joint feature map: Φ(q, c) = Σ_{(a,b)∈P} c_ab (φ(q, d_a) − φ(q, d_b))."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .outputs import PairLabelling, Preferences, as_preferences, output_coef
from ...protocols import FeatureMapBase, as_sequence, check_decomposition
from ..._compiled import loops
from .._names import FeatureNamesMixin, input_feature_names
from ._pairs import FlatTargets
from .._input_columns import compact_columns, kept_columns
from .._state import StateReader, read_input_columns
from .._validation import check_finite

__all__ = ["RankingFeatures", "RankingPotentials", "RankingInputs"]


class RankingInputs:
    """All documents of a list of queries, stacked: query q owns rows
    ``offsets[q]:offsets[q + 1]`` of ``X`` (dense or CSR)."""

    __slots__ = ("X", "offsets", "_flat")

    def __init__(self, X, offsets):
        self.X = X
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self._flat = None   # FlatTargets of the last Ye seen by the aggregated oracle

    def __len__(self):
        return len(self.offsets) - 1

    def n_docs(self, q):
        """Number of documents of query ``q``."""
        return int(self.offsets[q + 1] - self.offsets[q])

    def rows(self, idx):
        """Row indices of the documents of queries ``idx`` and their local offsets."""
        if idx is None:
            return None, self.offsets
        idx = np.asarray(idx, dtype=np.intp)
        lens = self.offsets[idx + 1] - self.offsets[idx]
        starts = np.repeat(self.offsets[idx] - np.concatenate([[0], np.cumsum(lens)[:-1]]),
                           lens)
        rows = np.arange(int(lens.sum())) + starts
        return rows, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


class RankingPotentials:
    """Document scores s_a = w·φ(q, d_a) of a batch of queries.

    Parameters
    ----------
    scores : ndarray of shape (n_docs_total,)
    offsets : ndarray of int, shape (n_queries + 1,)
    targets : list of Preferences, optional
        Set by :meth:`augment`: the true preferences of each query.
    margins : ndarray of shape (n_queries,), optional
        Loss of one swapped pair per query (set by :meth:`augment`).
    """

    structure: ClassVar[str] = "ranking"
    enumerable: ClassVar[bool] = False
    augments: ClassVar[tuple] = ("pair",)  # the loss decompositions augment adds

    def __init__(self, scores, offsets, targets=None, margins=None):
        self.scores = np.asarray(scores, dtype=float)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.targets = targets
        self.margins = None if margins is None else np.asarray(margins, dtype=float)

    def __len__(self):
        return len(self.offsets) - 1

    def query_scores(self, i):
        """Scores of the documents of query ``i``."""
        return self.scores[self.offsets[i]:self.offsets[i + 1]]

    def __getitem__(self, i):
        s = self.query_scores(i)
        if self.targets is None:
            return RankingPotentials(s, [0, s.size])
        return RankingPotentials(s, [0, s.size], [self.targets[i]], self.margins[i:i + 1])

    def score(self, y):
        """w·Φ(q, y) of one query (encoded y), or of ``Y[i]`` for every query."""
        if isinstance(y, (Preferences, PairLabelling)) or \
                (isinstance(y, np.ndarray) and y.dtype.kind in "iu"):
            if len(self) != 1:
                raise ValueError("score(y) with one output needs a batch of one query")
            return float(output_coef(y) @ self.scores)
        if len(y) != len(self):
            raise ValueError(f"score: {len(self)} queries but {len(y)} outputs")
        if len(self) == 0:
            return np.zeros(0)
        coef = np.concatenate([output_coef(yi) for yi in y])
        if coef.size != self.scores.size:
            raise ValueError("score: an output does not match its query's number of "
                             "documents")
        return _segment_sums(coef * self.scores, self.offsets)

    def enumerate(self):
        """Not available (raises TypeError): n! orderings; the sort decoder is exact."""
        raise TypeError("ranking outputs are not enumerated (n! orderings); the sort "
                        "decoder is exact")

    def augment(self, Y, loss):
        """Attach the true preferences and the per-pair loss (margin rescaling).

        Loss-augmented decoding then labels each pair (a, b) as swapped exactly when
        s_a − s_b < Δ_pair, which maximises Δ − w·δΦ pair by pair.
        """
        check_decomposition(loss, self.augments, "a ranking batch (e.g. "
                            "loss='swapped_pairs')")
        if len(Y) != len(self):
            raise ValueError(f"augment: {len(self)} queries but {len(Y)} outputs")
        for i, y in enumerate(Y):
            if not isinstance(y, Preferences) or y.n_docs != self.offsets[i + 1] - self.offsets[i]:
                raise ValueError(f"Sample {i}: the true output does not match the query's "
                                 "documents")
        margins = np.asarray(loss.part_costs(Y), dtype=float)
        return RankingPotentials(self.scores, self.offsets, list(Y), margins)


def _segment_sums(v, offsets):
    """Σ of v over each query's rows (0 for a query without documents)."""
    n = len(offsets) - 1
    return np.bincount(np.repeat(np.arange(n), np.diff(offsets)), weights=v, minlength=n)


class RankingFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    r"""Joint feature map of the ranking SVM over queries (Joachims 2002, 2006).

    An input is a query: an array of shape (n_docs, d) whose row a is φ(q, d_a)
    (dense or sparse). Its target is a preference set P: relevance grades (a ≻ b iff
    rel_a > rel_b within the query, svm_rank semantics) or explicit (better, worse)
    pairs, e.g. from :func:`structsvm.corpora.clicks.preferences_from_clicks`. Outputs are
    labellings c ∈ {0,1}^P of those pairs,

    .. math::

        \Phi(q, c) = \sum_{(a,b) \in P} c_{ab}\,(\phi(q, d_a) - \phi(q, d_b)),
        \qquad \Delta(P, c) = \sum_{(a,b) \in P} (1 - c_{ab}),

    so that ½‖w‖² + C Σ_q ξ_q = ½‖w‖² + C Σ_{(a,b)} max(0, 1 − w·(φ_a − φ_b)).
    ``decoder="sort"`` ranks documents by w·φ(q, d) (prediction: document indices,
    best first) and, loss-augmented, finds the most violated labelling in
    O(n log n) per query.

    Attributes
    ----------
    n_features_in_ : int
        Number of document feature columns (the width of the queries in training).
    input_columns_ : ndarray of int or None
        With sparse queries, the columns that hold a value in some training document:
        w covers only those, so a feature number sizes nothing by itself (None:
        every column).
    n_features_ : int
        d, the columns w covers (w scores single documents).

    References
    ----------
    T. Joachims. Optimizing search engines using clickthrough data. KDD 2002.
    T. Joachims. Training linear SVMs in linear time. KDD 2006.

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1., 0.], [0., 1.], [0., 0.]])
    >>> fm = RankingFeatures().fit([q], [[2, 1, 0]])
    >>> fm.joint_feature(q, [2, 1, 0]).tolist()   # (φ0−φ1) + (φ0−φ2) + (φ1−φ2)
    [2.0, 0.0]
    """

    structure: ClassVar[str] = "ranking"
    default_decoder: ClassVar[str] = "sort"
    default_loss: ClassVar[str] = "swapped_pairs"
    default_C: ClassVar[float] = 1.0
    default_tol: ClassVar[float] = 1e-3
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("one_slack", {}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.ranking._jit:aggregate_kernel",)
    has_difference_sum: ClassVar[bool] = True
    has_aggregate_oracle: ClassVar[bool] = True

    def __init__(self):
        pass

    def fit(self, X, Y):
        """Learn the document feature dimension (and check the targets)."""
        Xe = self._stack(X, None)
        self.n_features_in_ = int(Xe.X.shape[1])
        self.input_columns_ = kept_columns(Xe.X)
        self.n_features_ = self.n_features_in_ if self.input_columns_ is None \
            else int(self.input_columns_.size)
        self.encode_outputs(Y, X)
        return self

    def _stack(self, X, d):
        X = as_sequence(X, "X")
        if len(X) == 0:
            raise ValueError("X is empty: at least one query is needed")
        mats, any_sparse = [], False
        for i, q in enumerate(X):
            if sp.issparse(q):
                any_sparse = True
                m = sp.csr_matrix(q, dtype=float)
                check_finite(m.data, f"Sample {i}: the query's feature matrix")
            else:
                try:
                    m = np.asarray(q, dtype=float)
                except (TypeError, ValueError):
                    raise TypeError(f"Sample {i}: a query must be a numeric array of shape "
                                    f"(n_docs, n_features), got {type(q).__name__}") from None
                check_finite(m, f"Sample {i}: the query's feature matrix")
            if m.ndim != 2:
                raise ValueError(f"Sample {i}: a query must be 2-D (n_docs, n_features), "
                                 f"got shape {m.shape}")
            if d is not None and m.shape[1] != d:
                raise ValueError(f"Sample {i}: documents have {m.shape[1]} features, the "
                                 f"feature map was fitted with {d}")
            if mats and m.shape[1] != mats[0].shape[1]:
                raise ValueError(f"Sample {i}: documents have {m.shape[1]} features, "
                                 f"sample 0 has {mats[0].shape[1]}")
            mats.append(m)
        offsets = np.concatenate([[0], np.cumsum([m.shape[0] for m in mats])])
        Xall = sp.vstack(mats, format="csr") if any_sparse else np.vstack(mats)
        return RankingInputs(Xall, offsets)

    def encode_inputs(self, X):
        """Stack all queries' documents (:class:`RankingInputs`), over the columns the
        weights cover."""
        Xe = self._stack(X, self.n_features_in_)
        kept = self.input_columns_
        return Xe if kept is None else RankingInputs(compact_columns(Xe.X, kept),
                                                     Xe.offsets)

    def encode_outputs(self, Y, X=None):
        """Targets to :class:`Preferences` (X gives each query's number of documents)."""
        Y = as_sequence(Y, "Y")
        if X is None:
            raise ValueError("RankingFeatures.encode_outputs needs X (documents per query)")
        X = as_sequence(X, "X")
        if len(X) != len(Y):
            raise ValueError(f"X has {len(X)} queries but Y has {len(Y)} targets")
        return [as_preferences(y, q.shape[0], i) for i, (y, q) in enumerate(zip(Y, X))]

    def decode_outputs(self, Ye):
        """Orderings stay orderings (document indices, best first)."""
        return [np.asarray(y) if not isinstance(y, (Preferences, PairLabelling)) else y
                for y in Ye]

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(q_i, y_i) = Σ_a coef_a(y_i) φ(q_i, d_a)."""
        rows, offsets = Xe.rows(idx)
        n = len(offsets) - 1
        if len(Ye) != n:
            raise ValueError(f"{n} queries but {len(Ye)} outputs")
        coef = np.concatenate([output_coef(y) for y in Ye]) if n else np.zeros(0)
        if coef.size != offsets[-1]:
            raise ValueError("an output does not match its query's number of documents")
        qid = np.repeat(np.arange(n), np.diff(offsets))
        C = sp.csr_matrix((coef, (qid, np.arange(coef.size))), shape=(n, coef.size))
        X = Xe.X if rows is None else Xe.X[rows]
        return sp.csr_matrix(C @ X)

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Σ_q ω_q (Φ(q, y_q) − Φ(q, ŷ_q)) = (per-document coefficients) @ X, dense."""
        rows, offsets = Xe.rows(idx)
        n = len(offsets) - 1
        if len(Ye) != n or len(Ye_hat) != n:
            raise ValueError(f"{n} queries but {len(Ye)} true and {len(Ye_hat)} "
                             "predicted outputs")
        if n == 0:
            return np.zeros(self.n_features_)
        coef = (np.concatenate([output_coef(a) for a in Ye])
                - np.concatenate([output_coef(b) for b in Ye_hat]))
        if coef.size != offsets[-1]:
            raise ValueError("an output does not match its query's number of documents")
        if weights is not None:
            coef *= np.repeat(np.asarray(weights, dtype=float), np.diff(offsets))
        X = Xe.X if rows is None else Xe.X[rows]
        return np.asarray(X.T @ coef).ravel()

    def aggregate_violation(self, Xe, Ye, w, loss):
        r"""The margin-rescaled 1-slack oracle over all queries in one compiled pass.

        Parameters
        ----------
        Xe : RankingInputs
        Ye : list of Preferences
            The encoded targets of every query of ``Xe``.
        w : ndarray of shape (n_features,)
        loss : SwappedPairsLoss

        Returns
        -------
        loss_sum : float
            Σ_q Δ(y_q, ŷ_q) for the most violated labellings ŷ_q.
        psi_sum : ndarray of shape (n_features,)
            Σ_q (Φ(q, y_q) − Φ(q, ŷ_q)) = Xᵀ c with c_d the violated pairs document d
            wins minus those it loses.
        slack : ndarray of shape (n_queries,)
            ξ_q = Σ_{(a,b)∈P_q, s_a < s_b + m_q} (m_q − (s_a − s_b)), m_q the loss of
            one swapped pair.

        Raises
        ------
        TypeError
            When ``loss`` does not count swapped pairs (``decomposition = "pair"``).
        ValueError
            When ``w`` or ``Ye`` do not match the feature map and ``Xe``.

        Notes
        -----
        The same result as loss-augmented ``sort`` decoding of every query followed
        by ``joint_feature_difference_sum`` (tested), without per-query Python work:
        the query-constant arrays (grade ranks, explicit pairs) are flattened once and
        kept on ``Xe`` for as long as the same Preferences objects are passed.
        Graded queries cost O(n log n), explicit-pair queries O(|P|) (Joachims 2006).

        Examples
        --------
        >>> import numpy as np
        >>> from structsvm.structures.ranking import SwappedPairsLoss
        >>> q = np.array([[1., 0.], [0., 1.], [0., 0.]])
        >>> fm = RankingFeatures().fit([q], [[2, 1, 0]])
        >>> Xe, Ye = fm.encode_inputs([q]), fm.encode_outputs([[2, 1, 0]], [q])
        >>> loss, psi, slack = fm.aggregate_violation(Xe, Ye, np.array([2., 0.5]),
        ...                                           SwappedPairsLoss())
        >>> loss, psi.tolist(), slack.tolist()   # only (1, 2) violated: 1 − 0.5
        (1.0, [0.0, 1.0], [0.5])
        """
        check_decomposition(loss, RankingPotentials.augments, "the ranking oracle (e.g. "
                            "loss='swapped_pairs')")
        w = self._check_w(w)
        flat = Xe._flat
        if flat is None or not flat.matches(Ye):
            flat = FlatTargets(Ye, Xe.offsets)
            Xe._flat = flat
        s = np.ascontiguousarray(np.asarray(Xe.X @ w, dtype=float).ravel())
        margins = np.asarray(loss.part_costs(Ye), dtype=float)
        coef = np.empty(s.size)
        n_viol = np.empty(len(margins), dtype=np.int64)
        slack = np.empty(len(margins))
        loops("structsvm.structures.ranking._jit").aggregate_kernel(s, Xe.offsets, flat.ranks, flat.max_rank, flat.method,
                                      flat.perm, flat.lower, flat.pair_off, flat.pair_a,
                                      flat.pair_b, margins, coef, n_viol, slack)
        psi = np.asarray(Xe.X.T @ coef, dtype=float).ravel()
        return float(n_viol @ margins), psi, slack

    def _check_w(self, w):
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        return w

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`RankingPotentials` of the queries ``idx`` (all by default): scores ``X @ w``."""
        w = self._check_w(w)
        rows, offsets = Xe.rows(idx)
        X = Xe.X if rows is None else Xe.X[rows]
        return RankingPotentials(np.asarray(X @ w).ravel(), offsets)

    def joint_feature(self, x, y):
        """Φ(q, y) as a dense vector (raw query x and raw target y)."""
        return self.joint_features(self.encode_inputs([x]),
                                   self.encode_outputs([y], [x])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`RankingPotentials` of one raw query."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    def _feature_names_key(self):
        return self.input_columns_  # None: the names follow n_features_

    def _build_feature_names(self):
        """``x<j>``: w scores single documents (j among the columns the weights
        cover)."""
        return input_feature_names(self.n_features_, 0, self.input_columns_)

    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (the number of features and the
        columns w covers)."""
        state = {"n_features_": self.n_features_, "n_features_in_": self.n_features_in_}
        if self.input_columns_ is not None:
            state["input_columns_"] = self.input_columns_
        return state

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self (a
        count that is no non-negative integer, or input columns outside the width,
        are a :class:`~structsvm.io.ModelFileError`)."""
        r = StateReader(state, type(self).__name__)
        d = r.integer("n_features_")
        self.n_features_in_, self.input_columns_ = read_input_columns(r, d)
        self.n_features_ = d
        return self
