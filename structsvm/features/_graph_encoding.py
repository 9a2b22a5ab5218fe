"""Graph batches: parsed and encoded graphs, and the potentials graph decoders consume."""
from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..losses import HammingLoss
from ._ragged import gather_rows

__all__ = ["GraphPotentials", "EncodedGraphs", "parse_graph", "DEFAULT_EDGE_TYPE",
           "feature_entries", "flat_labels"]

DEFAULT_EDGE_TYPE = "edge"
_MAX_ENUMERATION_BITS = 24  # enumerate at most 2^24 labellings


# --------------------------------------------------------------------------- parsing
def _node_matrix(x, i):
    if sp.issparse(x):
        M = sp.csr_matrix(x, dtype=float)
    else:
        try:
            M = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"Graph {i}: node features must be a numeric (n_nodes, d) "
                            f"array or sparse matrix, got {type(x).__name__}") from None
        if M.ndim != 2:
            raise ValueError(f"Graph {i}: node features must have shape (n_nodes, d), got "
                             f"shape {M.shape}")
    data = M.data if sp.issparse(M) else M
    if not np.all(np.isfinite(data)):
        raise ValueError(f"Graph {i}: node features contain NaN or infinite values")
    if M.shape[0] == 0:
        raise ValueError(f"Graph {i} has no nodes: every graph needs at least one")
    return M


def _edge_array(e, i, n, etype):
    try:
        a = np.asarray(e)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype == object:
        raise TypeError(f"Graph {i}: edges of type {etype!r} must be an (n_edges, 2) "
                        f"integer array")
    if a.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"Graph {i}: edges of type {etype!r} must have shape (n_edges, 2), "
                         f"got {a.shape}")
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise TypeError(f"Graph {i}: edges of type {etype!r} must hold integer node "
                            f"indices, got dtype {a.dtype}")
    a = a.astype(np.int64)
    bad = np.flatnonzero((a < 0).any(axis=1) | (a >= n).any(axis=1))
    if bad.size:
        e0 = a[bad[0]].tolist()
        raise ValueError(f"Graph {i}: edge {bad[0]} of type {etype!r} names node(s) "
                         f"{e0} but the graph has nodes 0..{n - 1} ({n} nodes)")
    loops = np.flatnonzero(a[:, 0] == a[:, 1])
    if loops.size:
        raise ValueError(f"Graph {i}: edge {loops[0]} of type {etype!r} is a self-loop on "
                         f"node {a[loops[0], 0]}; self-loops are not allowed")
    return a


def _edge_features(f, i, m, etype):
    if f is None:
        return None
    if sp.issparse(f):
        F = sp.csr_matrix(f, dtype=float)
    else:
        try:
            F = np.asarray(f, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"Graph {i}: edge features of type {etype!r} must be numeric") \
                from None
        if F.ndim == 1 and m == F.shape[0]:
            F = F[:, None]
    if F.ndim != 2 or F.shape[0] != m:
        raise ValueError(f"Graph {i}: edge features of type {etype!r} must have shape "
                         f"(n_edges={m}, d_edge), got {F.shape}")
    data = F.data if sp.issparse(F) else F
    if not np.all(np.isfinite(data)):
        raise ValueError(f"Graph {i}: edge features of type {etype!r} contain NaN or "
                         "infinite values")
    return F


def _from_networkx(g, i):
    nodes = list(g.nodes)
    index = {v: k for k, v in enumerate(nodes)}
    rows = []
    for v in nodes:
        if "x" not in g.nodes[v]:
            raise ValueError(f"Graph {i}: node {v!r} has no attribute 'x' (its feature "
                             "vector)")
        x = g.nodes[v]["x"]
        rows.append(sp.csr_matrix(x, dtype=float) if sp.issparse(x)
                    else np.asarray(x, dtype=float).reshape(1, -1))
    if not rows:
        raise ValueError(f"Graph {i} has no nodes: every graph needs at least one")
    if len({r.shape[1] for r in rows}) != 1:
        raise ValueError(f"Graph {i}: nodes' 'x' vectors have different lengths")
    X = sp.vstack(rows, format="csr") if any(sp.issparse(r) for r in rows) else \
        np.vstack(rows)
    edges, feats = {}, {}
    for u, v, data in g.edges(data=True):
        t = data.get("type", DEFAULT_EDGE_TYPE)
        edges.setdefault(t, []).append((index[u], index[v]))
        feats.setdefault(t, []).append(data.get("x"))
    F = {}
    for t, fs in feats.items():
        given = [f is not None for f in fs]
        if any(given) and not all(given):
            raise ValueError(f"Graph {i}: some edges of type {t!r} have an 'x' attribute "
                             "and some do not")
        if all(given):
            F[t] = np.vstack([np.asarray(f, dtype=float).reshape(1, -1) for f in fs])
    return X, edges, F


def parse_graph(g, i):
    """One input graph as ``(node matrix, {type: edges}, {type: edge features})``.

    Accepts ``(node_features, edges)``, ``(node_features, edges, edge_features)`` and
    ``networkx.Graph``/``DiGraph`` (node attribute ``"x"``, edge attributes ``"x"``
    and ``"type"``). ``edges`` is an (m, 2) integer array (type ``"edge"``) or a dict
    type -> array; ``edge_features`` likewise an array or a dict type -> array.
    """
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover
        nx = None
    if nx is not None and isinstance(g, nx.Graph):
        if isinstance(g, (nx.MultiGraph,)):
            raise TypeError(f"Graph {i}: multigraphs are not supported; give parallel "
                            "edges different 'type' attributes in a tuple input instead")
        X, edges, F = _from_networkx(g, i)
    elif isinstance(g, tuple) and len(g) in (2, 3):
        X, edges = g[0], g[1]
        F = g[2] if len(g) == 3 else None
        if not isinstance(edges, dict):
            edges = {DEFAULT_EDGE_TYPE: edges}
        if F is not None and not isinstance(F, dict):
            if len(edges) != 1:
                raise TypeError(f"Graph {i}: with several edge types, edge features must "
                                "be a dict type -> array")
            F = {next(iter(edges)): F}
        F = F or {}
    else:
        raise TypeError(f"Graph {i}: expected a tuple (node_features, edges[, "
                        f"edge_features]) or a networkx.Graph, got {type(g).__name__}")
    X = _node_matrix(X, i)
    n = X.shape[0]
    out_e, out_f = {}, {}
    for t, e in edges.items():
        if not isinstance(t, str):
            raise TypeError(f"Graph {i}: edge type names must be strings, got {t!r}")
        out_e[t] = _edge_array(e, i, n, t)
    for t, f in F.items():
        if t not in out_e:
            raise ValueError(f"Graph {i}: edge features for type {t!r}, which has no edges")
        out_f[t] = _edge_features(f, i, len(out_e[t]), t)
    return X, out_e, out_f


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
        """Unaries plus the per-node loss table ``loss.part_losses(y_i, n_states)``."""
        if not type(loss).decomposable:
            raise TypeError(f"{type(loss).__name__} does not decompose over nodes; a graph "
                            "batch can only be augmented by a decomposable loss")
        y = self._flat(Y)
        sizes, K = self.n_nodes(), self.n_states
        if isinstance(loss, HammingLoss):
            scale = 1.0 / np.repeat(np.maximum(sizes, 1), sizes) if loss.normalize else \
                np.ones(y.size)
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
