"""Graph batches: encoded graphs, the entries of Φ over them, and the potentials graph
decoders consume."""
from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ...protocols import check_decomposition
from .._ragged import gather_rows

__all__ = ["GraphPotentials", "EncodedGraphs", "encode_graphs", "feature_entries",
           "difference_entries", "flat_labels"]

_MAX_ENUMERATION_BITS = 24  # enumerate at most 2^24 labellings


# --------------------------------------------------------------------------- encoded
class EncodedGraphs:
    """Encoded graphs of a data set: node rows, edges and edge-feature rows, by offsets.

    Parameters
    ----------
    X : csr_matrix of shape (n_nodes, n_node_features)
        Node features (bias column included) of all graphs stacked.
    node_offsets : ndarray of int of shape (n_graphs + 1,)
    edges : ndarray of int of shape (n_edges, 2)
        Endpoints as *local* node indices of their graph.
    edge_offsets : ndarray of int of shape (n_graphs + 1,)
    edge_type : ndarray of int of shape (n_edges,)
    F : csr_matrix of shape (n_edges, n_edge_columns)
        Edge features; type t's columns are a block of its own (one constant column
        when the type has no features).
    """

    def __init__(self, X, node_offsets, edges, edge_offsets, edge_type, F):
        self.X = X
        self.node_offsets = np.asarray(node_offsets, dtype=np.int64)
        self.edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self.edge_offsets = np.asarray(edge_offsets, dtype=np.int64)
        self.edge_type = np.asarray(edge_type, dtype=np.int64)
        self.F = F

    def __len__(self):
        return len(self.node_offsets) - 1

    def select(self, idx=None):
        """``(X, node_offsets, edges (batch rows), edge_offsets, edge_type, F)`` of ``idx``."""
        if idx is None:
            n_of = self.node_offsets
            shift = np.repeat(n_of[:-1], np.diff(self.edge_offsets))
            return (self.X, n_of, self.edges + shift[:, None], self.edge_offsets,
                    self.edge_type, self.F)
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        nrows, n_of = gather_rows(self.node_offsets, idx)
        erows, e_of = gather_rows(self.edge_offsets, idx)
        shift = np.repeat(n_of[:-1], np.diff(e_of))
        local = self.edges[erows]
        return (self.X[nrows], n_of, local + shift[:, None], e_of, self.edge_type[erows],
                self.F[erows])


def encode_graphs(fm, parsed):
    """:class:`EncodedGraphs` of parsed graphs (``parse_graph``) in the layout of the
    fitted map ``fm``; a graph unlike the training graphs (node feature width, edge
    types, edge features) is a ValueError naming it."""
    d = fm.n_input_features_ - (1 if fm.bias > 0 else 0)
    n_cols = int(fm._col_start[-1])
    node_blocks, edge_blocks, type_blocks, F_blocks = [], [], [], []
    n_nodes, n_edges = [], []
    for i, (Xn, edges, F) in enumerate(parsed):
        if Xn.shape[1] != d:
            raise ValueError(f"Graph {i}: has {Xn.shape[1]} node features, the map was "
                             f"fitted with {d}")
        Xn = sp.csr_matrix(Xn)
        if fm.bias > 0:
            Xn = sp.hstack([Xn, np.full((Xn.shape[0], 1), float(fm.bias))],
                           format="csr")
        node_blocks.append(Xn)
        n_nodes.append(Xn.shape[0])
        m = 0
        for t in edges:
            if t not in fm._type_index:
                raise ValueError(f"Graph {i}: edge type {t!r} was not seen in training; "
                                 f"the types are {fm.edge_types_}")
            k = fm._type_index[t]
            e = edges[t]
            if fm.edge_has_features_[k] != (t in F):
                raise ValueError(f"Graph {i}: edges of type {t!r} "
                                 f"{'lack' if t not in F else 'have'} edge features, "
                                 "unlike in training")
            lo = fm._col_start[k]
            if t in F:
                if F[t].shape[1] != fm.edge_feature_widths_[k]:
                    raise ValueError(f"Graph {i}: edges of type {t!r} have "
                                     f"{F[t].shape[1]} features, the map was fitted "
                                     f"with {fm.edge_feature_widths_[k]}")
                Fe = sp.csr_matrix(F[t])
                Fe = sp.csr_matrix((Fe.data, Fe.indices + lo, Fe.indptr),
                                   shape=(len(e), n_cols))
            else:
                Fe = sp.csr_matrix((np.ones(len(e)), np.full(len(e), lo),
                                    np.arange(len(e) + 1)), shape=(len(e), n_cols))
            edge_blocks.append(e)
            type_blocks.append(np.full(len(e), k, dtype=np.int64))
            F_blocks.append(Fe)
            m += len(e)
        n_edges.append(m)
    X_all = sp.vstack(node_blocks, format="csr")
    edges_all = np.concatenate(edge_blocks) if edge_blocks else np.zeros((0, 2), np.int64)
    F_all = sp.vstack(F_blocks, format="csr") if F_blocks else \
        sp.csr_matrix((0, n_cols))
    return EncodedGraphs(X_all, np.concatenate([[0], np.cumsum(n_nodes)]), edges_all,
                         np.concatenate([[0], np.cumsum(n_edges)]),
                         np.concatenate(type_blocks) if type_blocks else
                         np.zeros(0, np.int64), F_all)


# --------------------------------------------------------------------------- potentials
class GraphPotentials:
    """Factor scores of a batch of pairwise graphs, concatenated with offsets.

    Graph i owns rows ``node_offsets[i]:node_offsets[i + 1]`` of ``unary`` and edges
    ``edge_offsets[i]:edge_offsets[i + 1]``; a labelling y of graph i scores

    .. math::

        s_i(y) = \\sum_{v} \\mathrm{unary}[v, y_v]
                 + \\sum_{e = (u, v)} \\mathrm{tables}[t_e, y_u, y_v].

    Parameters
    ----------
    unary : ndarray of shape (n_nodes, n_states)
    node_offsets : ndarray of int of shape (n_graphs + 1,)
    edges : ndarray of int of shape (n_edges, 2)
        Endpoints as rows of ``unary`` (batch-global).
    edge_offsets : ndarray of int of shape (n_graphs + 1,)
    tables : ndarray of shape (n_tables, n_states, n_states)
    edge_table : ndarray of int of shape (n_edges,)
        ``t_e``: the table scoring edge e.

    Examples
    --------
    >>> import numpy as np
    >>> p = GraphPotentials(np.array([[1., 0.], [0., 2.]]), [0, 2], np.array([[0, 1]]),
    ...                     [0, 1], np.array([[[0., .5], [0., 0.]]]), np.array([0]))
    >>> p.score(np.array([0, 1]))
    3.5
    """

    structure: ClassVar[str] = "graph"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position",)  # the loss decompositions augment adds

    def __init__(self, unary, node_offsets, edges, edge_offsets, tables, edge_table):
        self.unary = np.asarray(unary, dtype=float)
        self.node_offsets = np.asarray(node_offsets, dtype=np.int64)
        self.edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self.edge_offsets = np.asarray(edge_offsets, dtype=np.int64)
        self.tables = np.asarray(tables, dtype=float)
        self.edge_table = np.asarray(edge_table, dtype=np.int64)

    @property
    def n_states(self):
        """Number of node labels K."""
        return self.unary.shape[1]

    def __len__(self):
        return len(self.node_offsets) - 1

    def n_nodes(self):
        """Number of nodes of each graph in the batch."""
        return np.diff(self.node_offsets)

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"graph {i} out of range for a batch of {n}")
        i %= n
        lo, hi = self.node_offsets[i], self.node_offsets[i + 1]
        elo, ehi = self.edge_offsets[i], self.edge_offsets[i + 1]
        return GraphPotentials(self.unary[lo:hi], np.array([0, hi - lo]),
                               self.edges[elo:ehi] - lo, np.array([0, ehi - elo]),
                               self.tables, self.edge_table[elo:ehi])

    # ------------------------------------------------------------------ scores
    def _flat(self, Y):
        sizes = self.n_nodes()
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} labellings for a batch of {len(self)} graphs")
        parts = [np.asarray(y, dtype=np.intp).reshape(-1) for y in Y]
        for i, p in enumerate(parts):
            if p.size != sizes[i]:
                raise ValueError(f"Graph {i}: labelling has {p.size} labels for "
                                 f"{sizes[i]} nodes")
        return np.concatenate(parts) if parts else np.zeros(0, np.intp)

    def score(self, y):
        """Score of labelling ``y`` (batch of one), or an array of ``Y[i]``'s scores."""
        if isinstance(y, np.ndarray) and y.dtype != object or (
                isinstance(y, (list, tuple)) and (len(y) == 0 or np.ndim(y[0]) == 0)):
            if len(self) != 1:
                raise ValueError("score(y) with one labelling needs a batch of one graph; "
                                 "pass a list of labellings")
            return float(self.score_flat(self._flat([y]))[0])
        return self.score_flat(self._flat(y))

    def score_flat(self, y):
        """Scores of the labellings concatenated in ``y`` (one label per row of unary)."""
        n = len(self)
        g_node = np.repeat(np.arange(n), self.n_nodes())
        g_edge = np.repeat(np.arange(n), np.diff(self.edge_offsets))
        out = np.bincount(g_node, weights=self.unary[np.arange(y.size), y], minlength=n)
        if self.edges.size:
            pair = self.tables[self.edge_table, y[self.edges[:, 0]], y[self.edges[:, 1]]]
            out += np.bincount(g_edge, weights=pair, minlength=n)
        return out

    def output_space_sizes(self):
        """Number of labellings of each graph: K^n (Python ints, exact)."""
        K = int(self.n_states)
        return [K ** int(n) for n in self.n_nodes()]

    def enumerate(self):
        """Every labelling of a batch of one (K^n of them: for tests on tiny graphs)."""
        if len(self) != 1:
            raise ValueError("enumerate() needs a batch of one graph")
        n, K = int(self.node_offsets[1]), self.n_states
        if n * np.log2(max(K, 1)) > _MAX_ENUMERATION_BITS:
            raise ValueError(f"a graph of {n} nodes with {K} labels has {K}^{n} "
                             "labellings: too many to enumerate (exhaustive decoding and "
                             "slack rescaling are for tiny graphs)")
        for y in itertools.product(range(K), repeat=n):
            yield np.array(y, dtype=np.intp)

    def augment(self, Y, loss):
        """Unaries plus the per-node loss: ``part_cost(y_i)`` on every wrong label for a
        loss that counts wrong nodes (Hamming), else the table
        ``loss.part_losses(y_i, n_states)``."""
        check_decomposition(loss, self.augments, "a graph batch")
        y = self._flat(Y)
        sizes, K = self.n_nodes(), self.n_states
        if type(loss).counts_wrong_parts:
            scale = np.repeat(np.asarray(loss.part_costs(Y), dtype=float), sizes)
            unary = self.unary + scale[:, None]
            unary[np.arange(y.size), y] -= scale
        else:
            tables = []
            for i in range(len(self)):
                yi = y[self.node_offsets[i]:self.node_offsets[i + 1]]
                tab = np.asarray(loss.part_losses(yi, K), dtype=float).reshape(-1, K)
                if tab.shape[0] != sizes[i]:
                    raise ValueError(f"Graph {i}: loss table has {tab.shape[0]} rows for "
                                     f"{sizes[i]} nodes")
                tables.append(tab)
            unary = self.unary + (np.concatenate(tables) if tables else 0.0)
        return GraphPotentials(unary, self.node_offsets, self.edges, self.edge_offsets,
                               self.tables, self.edge_table)


# --------------------------------------------------------------------------- Φ entries
def feature_entries(Xs, F, edges, n_of, e_of, y, node_sel, edge_sel, K, n_input,
                    col_directed):
    """COO (graph, column, value) entries of Φ for the selected nodes and edges.

    Node v adds x_v[j] at column j·K + y_v; edge e adds ψ_e[j] at column
    n_input·K + j·K² + a·K + b with (a, b) = (y_u, y_v), ordered (min, max) on the
    columns of undirected types (``col_directed[j]`` False).
    """
    G = len(n_of) - 1
    g_node = np.repeat(np.arange(G), np.diff(n_of))[node_sel]
    D = Xs[node_sel]
    nnz = np.diff(D.indptr)
    rows_n = np.repeat(g_node, nnz)
    cols_n = D.indices * K + np.repeat(y[node_sel], nnz)
    g_edge = np.repeat(np.arange(G), np.diff(e_of))[edge_sel]
    Fe = F[edge_sel]
    nnz_e = np.diff(Fe.indptr)
    a = np.repeat(y[edges[edge_sel, 0]], nnz_e)
    b = np.repeat(y[edges[edge_sel, 1]], nnz_e)
    j = Fe.indices
    directed = col_directed[j] if j.size else np.zeros(0, bool)
    lo = np.where(directed, a, np.minimum(a, b))
    hi = np.where(directed, b, np.maximum(a, b))
    cols_e = n_input * K + j * K * K + lo * K + hi
    return (np.concatenate([rows_n, np.repeat(g_edge, nnz_e)]),
            np.concatenate([cols_n, cols_e]), np.concatenate([D.data, Fe.data]))


def difference_entries(Xe, Ye, Ye_hat, idx, K, n_input, col_directed):
    """``(n_graphs, rows, cols, values)``: COO entries of Φ(x_i, y_i) − Φ(x_i, ŷ_i) for
    the graphs ``idx`` of ``Xe``, from the nodes whose labels differ and the edges
    touching them only (see :func:`feature_entries` for the columns)."""
    Xs, n_of, edges, e_of, _, F = Xe.select(idx)
    y, yh = flat_labels(Ye, n_of), flat_labels(Ye_hat, n_of)
    diff = y != yh
    nodes = np.flatnonzero(diff)
    touched = np.flatnonzero(diff[edges[:, 0]] | diff[edges[:, 1]]) if len(edges) \
        else np.zeros(0, np.int64)
    r1, c1, d1 = feature_entries(Xs, F, edges, n_of, e_of, y, nodes, touched, K, n_input,
                                 col_directed)
    r2, c2, d2 = feature_entries(Xs, F, edges, n_of, e_of, yh, nodes, touched, K, n_input,
                                 col_directed)
    return (len(n_of) - 1, np.concatenate([r1, r2]), np.concatenate([c1, c2]),
            np.concatenate([d1, -d2]))


def flat_labels(Ye, n_of):
    """Concatenated int64 labels of a list of labellings, checked against node counts."""
    sizes = np.diff(n_of)
    if len(Ye) != len(sizes):
        raise ValueError(f"{len(sizes)} graphs but {len(Ye)} labellings")
    parts = [np.asarray(y, dtype=np.int64).reshape(-1) for y in Ye]
    for i, p in enumerate(parts):
        if p.size != sizes[i]:
            raise ValueError(f"Graph {i}: labelling has {p.size} labels for "
                             f"{sizes[i]} nodes")
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)
