"""Joint features of labelled graphs: node features ⊗ labels and label pairs on edges."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...limits import check_weights
from ...protocols import FeatureMapBase, as_sequence
from ._encoding import (EncodedGraphs, GraphPotentials, difference_entries,
                              encode_graphs, feature_entries, flat_labels)
from ._inputs import parse_graph, training_layout
from .._names import FeatureNamesMixin, input_feature_names
from .._state import StateReader
from .._validation import as_label_array, label_index, sorted_unique

__all__ = ["GraphFeatures", "GraphPotentials", "EncodedGraphs"]


class GraphFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    """Joint features of pairwise graphs (collective classification, skip chains).

    An input graph has nodes v with feature vectors φ(x_v) ∈ R^d and typed edges
    e = (u, v) (type t_e, optional edge features ψ_e ∈ R^{d_t}); the output labels
    every node with one of K labels. With e_k the k-th unit vector,

    .. math::

        \\Phi(x, y) = \\Big( \\sum_v \\phi(x_v) \\otimes e_{y_v},\\;
            \\Big[ \\sum_{e: t_e = t} \\psi_e \\otimes e_{y_u} \\otimes e_{y_v}
            \\Big]_{t} \\Big)

    (ψ_e = 1 for types without edge features), so that
    w·Φ(x, y) = Σ_v u_v(y_v) + Σ_e θ_e(y_u, y_v) with unaries u_v = W_nodeᵀ φ(x_v)
    (one sparse product for a whole batch) and pairwise tables
    θ_e = Σ_j ψ_e[j] W_{t_e, j}. Every edge type has weights of its own (e.g. a
    skip-chain's "chain" and "skip" edges). For an undirected type the label pair
    is unordered: ``e_{min(a,b)} ⊗ e_{max(a,b)}``, so θ_e is symmetric.

    Parameters
    ----------
    bias : float, default=1.0
        Value of a constant node feature appended to φ(x_v) (0 for none): a per-label
        offset.
    directed : bool or collection of str, default=False
        Which edge types are directed (θ_e(a, b) ≠ θ_e(b, a) allowed): all (True),
        none (False) or the named types (e.g. ``("chain",)`` for a skip-chain model,
        where label transitions have a direction and skip edges do not).

    Attributes
    ----------
    classes_ : ndarray
        The labels; encoded label k is ``classes_[k]``.
    edge_types_ : list of str
        Edge type names in weight-block order (``"edge"`` for untyped edges).
    edge_feature_widths_ : ndarray of int
        d_t per type (1 for types without edge features).
    n_input_features_ : int
        d, node features including the bias column.
    n_features_ : int
        d·K + Σ_t d_t·K².
    feature_names_ : ndarray of str of shape (n_features_,)
        ``node:<feature>:<label>`` (features ``x0``, ``x1``, ..., ``bias``), then per
        edge type ``edge:<type>:<a>-><b>`` for directed types and
        ``edge:<type>:<a>-<b>`` for undirected ones (only pairs with a before b in
        ``classes_``, or a = b, are used there), with ``:x<j>`` after the type for
        types with edge features; in the order of :meth:`split_weights`.

    Notes
    -----
    Inputs. A graph is a tuple ``(node_features, edges)`` or ``(node_features, edges,
    edge_features)``: an (n_nodes, d) dense array or sparse matrix; an (n_edges, 2)
    integer array of node indices (or a dict edge type -> array); edge features an
    (n_edges, d_t) array (or a dict type -> array). Or a ``networkx.Graph`` whose
    nodes carry attribute ``"x"`` (feature vector) and whose edges may carry
    ``"x"`` (edge features) and ``"type"`` (a string); node order is
    ``list(G.nodes)`` and labels are given in that order. Outputs are arrays of one
    label per node.

    Layout of w: ``w[:d*K].reshape(d, K)`` is W_node, then per edge type t (in
    ``edge_types_`` order) a block ``(d_t, K, K)``; :meth:`split_weights` returns
    them.

    References
    ----------
    B. Taskar, C. Guestrin, D. Koller. Max-margin Markov networks. NIPS 2003.
    C. Sutton, A. McCallum. Collective segmentation and labeling of distant entities
    in information extraction. ICML workshop on statistical relational learning, 2004.
    T. Finley, T. Joachims. Training structural SVMs when exact inference is
    intractable. ICML 2008.

    Examples
    --------
    >>> import numpy as np
    >>> X = [(np.array([[1.0], [0.0], [1.0]]), np.array([[0, 1], [1, 2]]))]
    >>> fm = GraphFeatures().fit(X, [np.array(["a", "b", "a"])])
    >>> fm.classes_.tolist(), fm.edge_types_, fm.n_features_
    (['a', 'b'], ['edge'], 8)
    >>> W_node, (W_edge,) = fm.split_weights(fm.joint_feature(X[0], ["a", "b", "a"]))
    >>> W_node.tolist(), W_edge[0].tolist()  # rows: feature, bias; a-b twice
    ([[2.0, 0.0], [2.0, 1.0]], [[0.0, 2.0], [0.0, 0.0]])
    """

    structure: ClassVar[str] = "graph"
    default_loss: ClassVar[str] = "hamming"
    default_decoder: ClassVar[str] = "max_product"
    #: chosen on the planted-partition graphs of docs/graphs.md (slacks sum node
    #: Hamming losses over graphs of ~200 nodes, as for chains)
    default_C: ClassVar[float] = 0.1
    default_tol: ClassVar[float] = 0.1
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.graph._max_product_jit:max_product_batch",)
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, bias=1.0, directed=False):
        self.bias = bias
        self.directed = directed

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        if not (np.isscalar(self.bias) and np.isfinite(self.bias) and self.bias >= 0):
            raise ValueError(f"bias must be a finite number >= 0, got {self.bias!r}")
        d = self.directed
        if not (isinstance(d, (bool, np.bool_)) or (
                not isinstance(d, (str, bytes)) and all(isinstance(t, str) for t in d))):
            raise ValueError(f"directed must be a bool or a collection of edge type names, "
                             f"got {d!r}")

    def _is_directed(self, t):
        d = self.directed
        return bool(d) if isinstance(d, (bool, np.bool_)) else t in set(d)

    @staticmethod
    def _parse(X):
        X = as_sequence(X, "X")
        if len(X) == 0:
            raise ValueError("X is empty: at least one graph is needed")
        return [parse_graph(g, i) for i, g in enumerate(X)]

    @staticmethod
    def _check_labels(parsed, Y):
        Y = as_sequence(Y, "Y")
        if len(Y) != len(parsed):
            raise ValueError(f"X has {len(parsed)} graphs but Y has {len(Y)} label arrays")
        out = []
        for i, ((Xn, _, _), y) in enumerate(zip(parsed, Y)):
            if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
                raise TypeError(f"Graph {i}: expected an array of node labels, got "
                                f"{type(y).__name__}")
            y = list(np.asarray(y, dtype=object).reshape(-1)) if not isinstance(y, list) \
                else y
            if len(y) != Xn.shape[0]:
                raise ValueError(f"Graph {i}: has {Xn.shape[0]} nodes but its label array "
                                 f"has {len(y)} labels")
            out.append(y)
        return out

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the label set, edge types and feature widths from training graphs."""
        self._check_params()
        parsed = self._parse(X)
        Y = self._check_labels(parsed, Y)
        self.classes_ = sorted_unique([t for y in Y for t in y])
        self._index = label_index(self.classes_)
        d, self.edge_types_, widths = training_layout(parsed)
        self.edge_feature_widths_ = np.array([widths[t] or 1 for t in self.edge_types_],
                                             dtype=np.int64)
        self._set_layout(d + (1 if self.bias > 0 else 0),
                         [widths[t] is not None for t in self.edge_types_])
        check_weights(self.n_features_, f"{self.n_input_features_} features x "
                      f"{len(self.classes_)} labels, and edge weights")
        return self

    def _set_layout(self, n_input, has_features):
        K = len(self.classes_)
        self._index = label_index(self.classes_)
        self.n_input_features_ = int(n_input)
        self.edge_has_features_ = np.asarray(has_features, dtype=bool).reshape(-1)
        self._type_index = {t: k for k, t in enumerate(self.edge_types_)}
        self._col_start = np.concatenate([[0], np.cumsum(self.edge_feature_widths_)]) \
            .astype(np.int64)
        n_cols = int(self._col_start[-1])
        self._col_directed = np.repeat(
            np.array([self._is_directed(t) for t in self.edge_types_], dtype=bool),
            self.edge_feature_widths_) if n_cols else np.zeros(0, dtype=bool)
        self.n_features_ = int(self.n_input_features_ * K + n_cols * K * K)

    @property
    def n_states_(self):
        """Number of node labels (``len(classes_)``)."""
        return len(self.classes_)

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedGraphs` of raw graphs (node rows, edges, edge features)."""
        return encode_graphs(self, self._parse(X))

    def encode_outputs(self, Y, X=None):
        """Label arrays to int arrays; unseen labels raise a ValueError naming them."""
        if X is not None:
            Y = self._check_labels(self._parse(X), Y)
        Y = as_sequence(Y, "Y")
        out = []
        for i, y in enumerate(Y):
            y = list(np.asarray(y, dtype=object).reshape(-1)) if not isinstance(y, list) else y
            try:
                out.append(np.fromiter((self._index[t] for t in y), dtype=np.intp,
                                       count=len(y)))
            except (KeyError, TypeError):
                v = next(v for v, t in enumerate(y) if not _known(self._index, t))
                raise ValueError(f"Graph {i}, node {v}: label {y[v]!r} was not seen in "
                                 f"training; the labels are {self.classes_.tolist()}") \
                    from None
        return out

    def decode_outputs(self, Ye):
        """Int arrays back to arrays of labels."""
        return [np.asarray(self.classes_[np.asarray(y, dtype=np.intp)].tolist())
                for y in Ye]

    # ------------------------------------------------------------------ weights
    def split_weights(self, w):
        """W_node (d, K) and, per edge type, a (d_t, K, K) block of ``w`` (views)."""
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        d, K = self.n_input_features_, self.n_states_
        base = d * K
        blocks = [w[base + K * K * lo:base + K * K * hi].reshape(hi - lo, K, K)
                  for lo, hi in zip(self._col_start[:-1], self._col_start[1:])]
        return w[:base].reshape(d, K), blocks

    def _pair_weights(self, w):
        """(n_edge_columns, K, K) pairwise weights, symmetrised on undirected columns."""
        d, K = self.n_input_features_, self.n_states_
        Wp = np.array(w[d * K:], dtype=float).reshape(-1, K, K)
        und = ~self._col_directed
        if und.any():
            up = np.triu(Wp[und])
            Wp[und] = up + np.triu(Wp[und], 1).transpose(0, 2, 1)
        return Wp

    # ------------------------------------------------------------------ potentials
    def batch_potentials(self, Xe, w, idx=None):
        """:class:`GraphPotentials` of the graphs ``idx`` of ``Xe`` under ``w``."""
        w = np.asarray(w, dtype=float).ravel()
        W_node, _ = self.split_weights(w)
        Xs, n_of, edges, e_of, etype, F = Xe.select(idx)
        unary = np.asarray(Xs @ W_node)
        Wp = self._pair_weights(w)
        K = self.n_states_
        if not self.edge_has_features_.any():
            tables, edge_table = Wp, etype  # one column per type: a shared table per type
        else:
            tables = np.asarray(F @ Wp.reshape(len(Wp), K * K)).reshape(-1, K, K)
            edge_table = np.arange(len(edges), dtype=np.int64)
        return GraphPotentials(unary, n_of, edges, e_of, tables, edge_table)

    def potentials(self, x, w):
        """:class:`GraphPotentials` of one raw graph."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ features
    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs, n_of, edges, e_of, _, F = Xe.select(idx)
        y = flat_labels(Ye, n_of)
        rows, cols, data = feature_entries(Xs, F, edges, n_of, e_of, y, np.arange(y.size),
                                           np.arange(len(edges)), self.n_states_,
                                           self.n_input_features_, self._col_directed)
        return sp.csr_matrix((data, (rows, cols)), shape=(len(n_of) - 1, self.n_features_))

    def _difference_entries(self, Xe, Ye, Ye_hat, idx):
        return difference_entries(Xe, Ye, Ye_hat, idx, self.n_states_,
                                  self.n_input_features_, self._col_directed)

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is Φ(x_i, y_i) − Φ(x_i, ŷ_i), from the differing nodes (and
        the edges touching them) only."""
        G, rows, cols, data = self._difference_entries(Xe, Ye, Ye_hat, idx)
        out = sp.csr_matrix((data, (rows, cols)), shape=(G, self.n_features_))
        out.eliminate_zeros()
        return out

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Dense Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) (the 1-slack oracle's constraint)."""
        G, rows, cols, data = self._difference_entries(Xe, Ye, Ye_hat, idx)
        if weights is not None:
            data = data * np.asarray(weights, dtype=float)[rows]
        return np.bincount(cols, weights=data, minlength=self.n_features_)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw graph ``x`` and label array ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self._col_start

    def _build_feature_names(self):
        """Feature names in the order of :meth:`split_weights`."""
        labels = [str(c) for c in self.classes_]
        inputs = input_feature_names(self.n_input_features_ - (self.bias > 0), self.bias)
        names = [f"node:{x}:{k}" for x in inputs for k in labels]
        for t, width, feat in zip(self.edge_types_, self.edge_feature_widths_,
                                  self.edge_has_features_):
            arrow = "->" if self._is_directed(t) else "-"
            cols = [f":x{j}" for j in range(int(width))] if feat else [""]
            names += [f"edge:{t}{c}:{a}{arrow}{b}" for c in cols for a in labels
                      for b in labels]
        return names

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        return {"classes_": self.classes_, "edge_types_": list(self.edge_types_),
                "edge_feature_widths_": self.edge_feature_widths_,
                "edge_has_features_": self.edge_has_features_.astype(np.int64),
                "n_input_features_": int(self.n_input_features_),
                "n_features_": int(self.n_features_)}

    def load_fitted_state(self, state):
        """Restore the fitted label set and edge types from :meth:`fitted_state`.

        The labels, edge types, edge feature widths and dimensions are checked
        against each other before anything uses them (a
        :class:`~structsvm.io.ModelFileError` names the value that does not fit).
        """
        r = StateReader(state, type(self).__name__)
        classes = r.labels("classes_")
        types = r.labels("edge_types_", strings=True)
        T = len(types)
        widths = r.indices("edge_feature_widths_", 1, 2 ** 31, shape=(T,),
                           what="edge feature widths")
        has = r.indices("edge_has_features_", 0, 2, shape=(T,), what="flags")
        d = r.integer("n_input_features_", 1 if self.bias > 0 else 0)
        K = len(classes)
        r.count("n_features_", d * K + int(widths.sum()) * K * K,
                f"{d} input features, {K} labels and {int(widths.sum())} edge columns")
        self.classes_ = as_label_array(classes)
        self.edge_types_ = types
        self.edge_feature_widths_ = widths
        self._set_layout(d, has.astype(bool))
        return self


def _known(index, t):
    try:
        return t in index
    except TypeError:
        return False

