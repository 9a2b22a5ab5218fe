"""Raw input graphs checked and parsed: tuples ``(node_features, edges[,
edge_features])`` and networkx graphs, into node matrices and edges by type; and the
edge layout a training set declares."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["DEFAULT_EDGE_TYPE", "parse_graph", "training_layout"]

DEFAULT_EDGE_TYPE = "edge"


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


def training_layout(parsed):
    """The layout the parsed training graphs declare, checked consistent across them.

    Returns
    -------
    n_node_features : int
        d, the width of every graph's node features (without a bias column).
    edge_types : list of str
        The edge types, sorted.
    widths : dict
        Edge type -> number of edge features (None for a type without them).
    """
    widths = {Xn.shape[1] for Xn, _, _ in parsed}
    if len(widths) != 1:
        i = next(i for i, p in enumerate(parsed) if p[0].shape[1] != parsed[0][0].shape[1])
        raise ValueError(f"Graph {i}: has {parsed[i][0].shape[1]} node features, graph 0 "
                         f"has {parsed[0][0].shape[1]}")
    types = {}
    for i, (_, edges, F) in enumerate(parsed):
        for t in edges:
            w = F[t].shape[1] if t in F else None
            if t in types and types[t] != w:
                raise ValueError(f"Graph {i}: edges of type {t!r} have "
                                 f"{'no features' if w is None else f'{w} features'}, "
                                 f"earlier graphs "
                                 f"{'none' if types[t] is None else types[t]}")
            types[t] = w
    return widths.pop(), sorted(types), types
