"""Taxonomy joint feature map Φ(x, y) = φ(x) ⊗ Λ(y), Λ(y) = indicators of y's path."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...limits import MemoryLimitError, check_weights
from . import losses as _tree_losses  # noqa: F401  (registers loss "tree_distance")
from ...protocols import FeatureMapBase, as_sequence
from .._names import FeatureNamesMixin, input_feature_names
from .._input_columns import kept_columns
from .._state import StateReader, read_input_columns
from ._tree import Tree, build_tree
from .._validation import check_training_inputs, inputs_with_bias

__all__ = ["TaxonomyFeatures", "TreePotentials", "Tree", "build_tree"]


class TreePotentials:
    """Node scores of a batch: ``node_scores[i, v] = w_v · φ(x_i)``.

    The score of a class (an encoded root-to-leaf path, a tuple of node indices) is
    the sum of its nodes' scores.

    Parameters
    ----------
    node_scores : ndarray of shape (n_samples, n_nodes)
    tree : Tree
    """

    structure: ClassVar[str] = "taxonomy"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position", "whole")  # the loss decompositions augment adds

    def __init__(self, node_scores, tree):
        self.node_scores = np.asarray(node_scores, dtype=float)
        self.tree = tree
        if self.node_scores.ndim != 2 or self.node_scores.shape[1] != tree.n_nodes:
            raise ValueError(f"node_scores must have shape (n_samples, {tree.n_nodes}), "
                             f"got {self.node_scores.shape}")

    def __len__(self):
        return self.node_scores.shape[0]

    def __getitem__(self, i):
        return TreePotentials(self.node_scores[i:i + 1], self.tree)

    def score(self, y):
        """Score of path ``y`` (one example) or of ``Y[i]`` for every example."""
        if len(y) and np.ndim(y[0]) == 0:
            if len(self) != 1:
                raise ValueError("score(y) with one path needs a batch of one example")
            return float(self.node_scores[0, list(y)].sum())
        return np.array([self.node_scores[i, list(p)].sum() for i, p in enumerate(y)])

    def output_space_sizes(self):
        """Number of root-to-leaf paths (classes), for every example."""
        return [len(self.tree.leaf_paths)] * len(self)

    def enumerate(self):
        """Every encoded root-to-leaf path of the tree."""
        return iter(self.tree.leaf_paths)

    def augment(self, Y, loss):
        """Scores plus Δ(y_i, ℓ) added to every leaf ℓ (exact for any loss).

        Every root-to-leaf path ends in exactly one leaf, so adding the loss of the
        path to its leaf's score makes the tree decoder loss-augmented. Rows are
        computed once per distinct true path and cached on the tree.
        """
        if len(Y) != len(self):
            raise ValueError(f"augment: {len(self)} examples but {len(Y)} outputs")
        out = self.node_scores.copy()
        leaves = self.tree.leaves
        for i, y in enumerate(Y):
            out[i, leaves] += self.tree.loss_rows(loss, tuple(int(v) for v in y))
        return TreePotentials(out, self.tree)


class TaxonomyFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    r"""Φ(x, y) = φ(x) ⊗ Λ(y) for classes that are root-to-leaf paths of a tree.

    Λ(y) stacks the indicators of every node on the path of y (the root excluded: it
    is on every path), so w·Φ(x, y) = Σ_{v ∈ path(y)} w_vᵀ φ(x): classes that share
    ancestors share those weight blocks, and mistakes tend to stay in the subtree.

    Parameters
    ----------
    tree : networkx.DiGraph, dict, sequence of paths or None, default=None
        The taxonomy: edges parent → child; or ``{parent: [children]}``; or
        root-to-leaf paths (tuples of node names, or strings split on ``sep``). Any
        depth, unbalanced trees allowed. None builds the tree from the training
        labels, which must then be paths (or ``sep``-separated strings).
    sep : str, optional
        Separator of string paths, e.g. ``"."`` for ``"comp.sys.mac.hardware"``.
    bias : float, default=0.0
        When > 0, a constant feature of this value is appended to φ(x).

    Attributes
    ----------
    tree_ : Tree
        The parsed tree (node arrays; see ``fitted_state``).
    n_features_in_ : int
        Number of input columns (the width of X in training).
    input_columns_ : ndarray of int or None
        With sparse inputs, the columns of X that hold a value in some training
        example: the weights cover only those (None: every column).
    n_input_features_ : int
        Dimension of φ(x): the columns covered (with the bias column).
    n_features_ : int
        ``n_input_features_ × n_nodes``.

    Notes
    -----
    A label may be given as its leaf (when leaf names are unique), as its path
    (tuple, with or without the root), or as a ``sep``-joined string. Predictions
    come back in the form of the training labels. The encoded output is the tuple of
    node indices along the path; ``decoder="tree"`` finds the best path by one
    top-down pass (O(nodes)). ``loss=None`` uses the map's ``default_loss``, the
    zero-one loss; ``loss="tree_distance"`` counts the edges between the true and
    the predicted leaf instead. Every default of the map (decoder, loss, C, tol,
    learner) is listed on the Defaults page (docs/defaults.md).

    References
    ----------
    L. Cai, T. Hofmann. Hierarchical document categorization with support vector
    machines. CIKM 2004.
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005 (Sec. 4.1).

    Examples
    --------
    >>> import numpy as np
    >>> fm = TaxonomyFeatures({"animal": ["cat", "dog"], "plant": ["oak"]})
    >>> fm = fm.fit([np.array([1., 2.])], ["dog"])
    >>> fm.joint_feature(np.array([1., 2.]), "dog").tolist()  # nodes animal plant cat dog oak
    [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]
    """

    structure: ClassVar[str] = "taxonomy"
    default_decoder: ClassVar[str] = "tree"
    # zero-one by default: on QC and newsgroups the tree-distance loss (at the same C)
    # gave lower accuracy AND larger mean tree distance (examples/taxonomy.py)
    default_loss: ClassVar[str] = "zero_one"
    default_C: ClassVar[float] = 1.0
    default_tol: ClassVar[float] = 1e-3
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {"n_batches": 2}),)

    def __init__(self, tree=None, sep=None, bias=0.0):
        self.tree = tree
        self.sep = sep
        self.bias = bias

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Parse the tree (or build it from the label paths) and the input dimension."""
        Xm, Y = check_training_inputs(X, Y, self.bias)
        if self.tree is None:
            if not Y:
                raise ValueError("tree=None needs training labels to build the tree from")
            self.tree_ = build_tree(sorted({self._label_path(y, i) for i, y in
                                            enumerate(Y)}), self.sep)
        else:
            self.tree_ = build_tree(self.tree, self.sep)
        self.label_form_ = self._form(Y[0]) if Y else "leaf"
        self.root_in_labels_ = bool(
            self.label_form_ != "leaf" and self.tree_.root is not None and
            self._label_path(Y[0], 0)[0] == self.tree_.root)
        self.n_features_in_ = int(Xm.shape[1])
        self.input_columns_ = kept_columns(Xm)
        kept = Xm.shape[1] if self.input_columns_ is None else self.input_columns_.size
        self.n_input_features_ = kept + (1 if self.bias > 0 else 0)
        self.n_features_ = int(self.n_input_features_ * self.tree_.n_nodes)
        check_weights(self.n_features_,
                      f"{self.n_input_features_} features x {self.tree_.n_nodes} nodes")
        self.encode_outputs(Y)  # every training label must be a leaf of the tree
        return self

    def _form(self, y):
        if isinstance(y, str) and self.sep is not None:
            return "sep"
        if isinstance(y, (tuple, list)):
            return "path"
        return "leaf"

    def _label_path(self, y, i):
        if isinstance(y, str) and self.sep is not None:
            return tuple(y.split(self.sep))
        if isinstance(y, (tuple, list)):
            return tuple(y)
        raise ValueError(f"Sample {i}: with tree=None labels must be paths (tuples) or "
                         f"sep-separated strings, got {y!r}")

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """φ(x) for every sample: CSR if any input is sparse, else a dense array."""
        return inputs_with_bias(X, self.n_input_features_, self.bias,
                                *self._input_width())

    def _input_width(self):
        """(columns inputs have, the columns the weights cover or None for all)."""
        return self.n_features_in_, self.input_columns_

    def _encode_one(self, y, i):
        return self.tree_.encode(y, self.sep, i)

    def encode_outputs(self, Y, X=None):
        """Encoded paths: tuples of node indices from the root's child to the leaf."""
        return [self._encode_one(y, i) for i, y in enumerate(as_sequence(Y, "Y"))]

    def decode_outputs(self, Ye):
        """Encoded paths back to labels in the form of the training labels."""
        out = []
        for p in Ye:
            names = self.tree_.path_names(tuple(int(v) for v in p))
            if self.label_form_ == "leaf":
                out.append(names[-1])
                continue
            if self.root_in_labels_:
                names = (self.tree_.root,) + names
            out.append(self.sep.join(map(str, names)) if self.label_form_ == "sep"
                       else names)
        return out

    # ------------------------------------------------------------------ features
    def _rows(self, Xe, idx):
        return Xe if idx is None else Xe[np.asarray(idx, dtype=np.intp)]

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) = Λ(y_i) ⊗ φ(x_i)."""
        Xs = sp.csr_matrix(self._rows(Xe, idx))
        n, d = Xs.shape
        if len(Ye) != n:
            raise ValueError(f"{n} inputs but {len(Ye)} outputs")
        lengths = np.array([len(p) for p in Ye], dtype=np.intp)
        nodes = np.fromiter((v for p in Ye for v in p), dtype=np.intp, count=lengths.sum())
        R = Xs[np.repeat(np.arange(n), lengths)]
        cols = R.indices + np.repeat(nodes * d, np.diff(R.indptr))
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return sp.csr_matrix((R.data, cols, R.indptr[bounds]), shape=(n, self.n_features_))

    def _weights(self, w):
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        return w.reshape(self.tree_.n_nodes, self.n_input_features_)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`TreePotentials` of the examples ``idx`` (all by default): a score per node."""
        W = self._weights(w)
        return TreePotentials(np.asarray(self._rows(Xe, idx) @ W.T), self.tree_)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector of length ``n_features_`` (raw x and label y)."""
        return self.joint_features(self.encode_inputs([x]),
                                   self.encode_outputs([y])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`TreePotentials` of one raw input (``.score(path)`` per class)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ model files
    def _feature_names_key(self):
        return self.tree_

    def _build_feature_names(self):
        """``"<node path joined by />:x<j>"``, node-major like w's reshape."""
        inputs = input_feature_names(self.n_input_features_ - (self.bias > 0), self.bias,
                                     self._input_width()[1])
        t = self.tree_
        nodes = []  # parents come first: each node's path extends its parent's
        for p, name in zip(t.parent.tolist(), t.names):
            nodes.append(str(name) if p < 0 else f"{nodes[p]}/{name}")
        return [f"{v}:{x}" for v in nodes for x in inputs]

    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io`: parent indices and node names."""
        return {"parent_": self.tree_.parent.copy(), "node_names_": self.tree_.names.copy(),
                "root_": self.tree_.root, "label_form_": self.label_form_,
                "root_in_labels_": self.root_in_labels_,
                "n_input_features_": self.n_input_features_,
                "n_features_": self.n_features_,
                "n_features_in_": int(self._input_width()[0]),
                **({} if self._input_width()[1] is None else
                   {"input_columns_": self.input_columns_})}

    def load_fitted_state(self, state):
        """Restore the attributes written by :meth:`fitted_state`; return self.

        The tree is checked before it is built (every parent index names an earlier
        node or the root, names are hashable and distinct among siblings, the paths
        fit the memory budget) and the dimensions against it (a
        :class:`~structsvm.io.ModelFileError` names the value that does not fit).
        """
        r = StateReader(state, type(self).__name__)
        parent = r.array("parent_", "i")
        n = parent.size
        if n and not np.all((parent >= -1) & (parent < np.arange(n))):
            v = int(np.flatnonzero((parent < -1) | (parent >= np.arange(n)))[0])
            r.fail("parent_", f"holds {int(parent[v])} at position {v}; a node's parent "
                              f"must be -1 (the root) or an earlier node (< {v})")
        names = self._names(r, n)
        root = state.get("root_")
        try:
            hash(root)
        except TypeError:
            r.fail("root_", f"is {root!r:.40}, which is not hashable")
        form = r.choice("label_form_", ("leaf", "path", "sep"))
        in_labels = r.flag("root_in_labels_")
        d = r.integer("n_input_features_", 1 if self.bias > 0 else 0)
        r.count("n_features_", d * n, f"{d} input features x {n} nodes")
        width, kept = read_input_columns(r, d - (1 if self.bias > 0 else 0))
        try:
            tree = Tree(parent, names, root)
        except MemoryLimitError:
            raise
        except ValueError as exc:
            r.fail("node_names_", f"do not describe a tree ({exc})")
        self.tree_ = tree
        self.label_form_ = form
        self.root_in_labels_ = in_labels
        self.n_input_features_ = d
        self.n_features_ = d * n
        self.n_features_in_, self.input_columns_ = width, kept
        return self

    @staticmethod
    def _names(r, n):
        """The node names of a saved tree: n hashable labels (siblings' distinct)."""
        v = r.state.get("node_names_")
        if not isinstance(v, (np.ndarray, list, tuple)) or np.ndim(v) != 1 or len(v) != n:
            r.fail("node_names_", f"must hold one name per node ({n})")
        names = list(v.tolist() if isinstance(v, np.ndarray) else v)
        for name in names:
            try:
                hash(name)
            except TypeError:
                r.fail("node_names_", f"holds {name!r:.40}, which is not hashable")
        return names
