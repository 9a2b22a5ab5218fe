"""Max-product (max-sum) decoding of pairwise graphs: exact on forests, loopy otherwise."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops
from ...protocols import Decoder

# the loops, imported (with numba) when a decode first runs
_max_product_jit = loops("structsvm.structures.graph._max_product_jit")

__all__ = ["max_product", "max_product_flat", "GraphLabelings", "check_graph_batch",
           "exclude_labellings", "MAX_PRODUCT"]


class GraphLabelings(list):
    """The labellings a graph decoder returns (a list, one int array per graph), plus
    per-graph diagnostics as attributes.

    Attributes
    ----------
    exact : ndarray of bool of shape (n_graphs,)
        The labelling is certified to be a MAP labelling (max-product: every connected
        component is a tree; LP: the relaxation's solution is integral).
    converged : ndarray of bool of shape (n_graphs,)
        Max-product: loopy message passing met its tolerance on every cyclic
        component (True on forests). LP: the solver reported an optimal solution.
    bound : ndarray of shape (n_graphs,)
        An upper bound on the best score (the LP relaxation's optimum; ``nan`` where
        the decoder has none).
    n_iter : ndarray of int of shape (n_graphs,)
        Loopy sweeps run (0 on forests; 0 for the LP).
    """

    def __init__(self, labels, exact, converged, bound=None, n_iter=None):
        super().__init__(labels)
        n = len(labels)
        self.exact = np.asarray(exact, dtype=bool).reshape(n)
        self.converged = np.asarray(converged, dtype=bool).reshape(n)
        self.bound = np.full(n, np.nan) if bound is None else \
            np.asarray(bound, dtype=float).reshape(n)
        self.n_iter = np.zeros(n, dtype=np.int64) if n_iter is None else \
            np.asarray(n_iter, dtype=np.int64).reshape(n)

    @property
    def exact_fraction(self):
        """Fraction of graphs whose labelling is certified optimal."""
        return float(self.exact.mean()) if len(self) else 1.0


def check_graph_batch(batch, decoder):
    """Contiguous, validated arrays of a graph potentials batch (public-boundary check)."""
    if getattr(type(batch), "structure", None) != "graph":
        raise TypeError(f"{decoder} decodes graph potentials, got {type(batch).__name__}")
    unary = np.ascontiguousarray(batch.unary, dtype=np.float64)
    if unary.ndim != 2 or unary.shape[1] < 1:
        raise ValueError(f"unary must have shape (n_nodes, n_states >= 1), got "
                         f"{unary.shape}")
    N, K = unary.shape
    node_offsets = np.ascontiguousarray(batch.node_offsets, dtype=np.int64)
    edge_offsets = np.ascontiguousarray(batch.edge_offsets, dtype=np.int64)
    edges = np.ascontiguousarray(batch.edges, dtype=np.int64).reshape(-1, 2)
    tables = np.ascontiguousarray(batch.tables, dtype=np.float64)
    edge_table = np.ascontiguousarray(batch.edge_table, dtype=np.int64)
    E = edges.shape[0]
    for name, off, total in (("node_offsets", node_offsets, N),
                             ("edge_offsets", edge_offsets, E)):
        if (off.ndim != 1 or len(off) < 1 or off[0] != 0 or off[-1] != total
                or np.any(np.diff(off) < 0)):
            raise ValueError(f"{name} must rise from 0 to {total}")
    if len(node_offsets) != len(edge_offsets):
        raise ValueError(f"{len(node_offsets) - 1} graphs of nodes but "
                         f"{len(edge_offsets) - 1} of edges")
    if tables.ndim != 3 or tables.shape[1:] != (K, K):
        raise ValueError(f"tables must have shape (n_tables, {K}, {K}), got {tables.shape}")
    if edge_table.shape != (E,) or (E and (edge_table.min() < 0
                                           or edge_table.max() >= tables.shape[0])):
        raise ValueError("edge_table must give each edge a table index in range")
    if E:
        g_edge = np.repeat(np.arange(len(edge_offsets) - 1), np.diff(edge_offsets))
        lo, hi = node_offsets[g_edge], node_offsets[g_edge + 1]
        bad = np.flatnonzero((edges < lo[:, None]).any(1) | (edges >= hi[:, None]).any(1)
                             | (edges[:, 0] == edges[:, 1]))
        if bad.size:
            g = int(g_edge[bad[0]])
            raise ValueError(f"Graph {g}: edge {bad[0] - edge_offsets[g]} "
                             f"{(edges[bad[0]] - node_offsets[g]).tolist()} is a self-loop "
                             "or names a node outside the graph")
    for name, arr in (("unary", unary), ("tables", tables)):
        if np.isnan(arr).any() or np.isinf(arr).any():
            raise ValueError(f"{name} scores contain NaN or infinite values")
    return unary, node_offsets, edges, edge_offsets, tables, edge_table


def _split(y, node_offsets):
    y = y.astype(np.intp, copy=False)
    return [y[node_offsets[i]:node_offsets[i + 1]] for i in range(len(node_offsets) - 1)]


def max_product_flat(batch, *, max_iter=100, damping=0.5, tol=1e-6):
    """Labels of all graphs of ``batch`` concatenated, with the diagnostics arrays.

    Returns
    -------
    labels : ndarray of int64 of shape (n_nodes,)
    exact, converged : ndarray of bool of shape (n_graphs,)
    n_iter : ndarray of int of shape (n_graphs,)
    """
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be an int >= 1, got {max_iter!r}")
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping!r}")
    unary, node_offsets, edges, _, tables, edge_table = check_graph_batch(batch,
                                                                          "max_product")
    N = unary.shape[0]
    G = len(node_offsets) - 1
    ptr, half = _max_product_jit.adjacency(edges, N)
    labels = np.zeros(N, dtype=np.int64)
    exact = np.zeros(G, dtype=np.int64)
    converged = np.zeros(G, dtype=np.int64)
    n_iter = np.zeros(G, dtype=np.int64)
    _max_product_jit.max_product_batch(unary, node_offsets, edges, tables, edge_table, ptr,
                                       half, int(max_iter), float(damping), float(tol),
                                       labels, converged, exact, n_iter)
    return labels, exact.astype(bool), converged.astype(bool), n_iter


def max_product(batch, exclude=None, *, max_iter=100, damping=0.5, tol=1e-6):
    """Best labelling of every graph of a batch by max-product message passing.

    Every connected component of every graph is decoded on its own. A tree
    (|E| = |V| − 1) is decoded exactly: rooted at its lowest node, messages

    .. math::

        m_{v \\to p}(y_p) = \\max_{y_v} \\Big( u_v(y_v) + \\theta_{vp}(y_v, y_p)
                          + \\sum_{c \\in \\mathrm{ch}(v)} m_{c \\to v}(y_v) \\Big)

    flow from the leaves to the root, the root takes the argmax of its belief and
    every other node the stored argmax given its parent's label (O(|E| K²)). A
    component with a cycle runs loopy max-product: sequential sweeps in breadth-first
    order, messages normalised (max 0) and damped,
    m ← (1 − λ) m_new + λ m_old, until the largest change is below ``tol`` or
    ``max_iter`` sweeps; each sweep decodes y_v = argmax of the belief, and the
    best-scoring of these labellings, improved by iterated conditional modes
    (moving single nodes to their best label given their neighbours' while the
    score rises), is returned. Loopy max-product has no
    optimality guarantee (its fixed points are only locally optimal: Weiss & Freeman
    2001); ``exact`` and ``converged`` in the result say where it applied.

    Loss-augmented decoding needs nothing special: the batch's ``augment`` adds the
    per-node loss (Hamming: 1 for every wrong label) to the unaries.

    Parameters
    ----------
    batch : GraphPotentials
        Unaries of all graphs (``unary``, ``node_offsets``), edges as batch rows
        (``edges``, ``edge_offsets``), pairwise ``tables`` and ``edge_table``.
    exclude : list of ndarray of int, optional
        ``exclude[i]`` is a labelling to skip for graph i: where the best labelling
        equals it, the best one differing in at least one node is searched by
        clamping each node in turn to each other label (exact on forests).
    max_iter : int, default=100
        Sweeps of loopy max-product per cyclic component.
    damping : float, default=0.5
        λ in [0, 1).
    tol : float, default=1e-6
        Convergence threshold on the largest message change.

    Returns
    -------
    GraphLabelings
        One label array per graph, with ``exact``, ``converged`` and ``n_iter``.

    References
    ----------
    J. Pearl. Probabilistic Reasoning in Intelligent Systems. Morgan Kaufmann, 1988.
    K. Murphy, Y. Weiss, M. Jordan. Loopy belief propagation for approximate
    inference: an empirical study. UAI 1999.
    J. Besag. On the statistical analysis of dirty pictures. J. R. Stat. Soc. B 48(3),
    1986.
    Y. Weiss, W. Freeman. On the optimality of solutions of the max-product belief
    propagation algorithm in arbitrary graphs. IEEE Trans. Inf. Theory 47(2), 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.graph.features import GraphPotentials
    >>> p = GraphPotentials(np.array([[1., 0.], [0., .4]]), [0, 2], np.array([[0, 1]]),
    ...                     [0, 1], np.array([[[1., 0.], [0., 1.]]]), np.array([0]))
    >>> out = max_product(p)
    >>> out[0].tolist(), out.exact.tolist()
    ([0, 0], [True])
    """
    labels, exact, converged, n_iter = max_product_flat(batch, max_iter=max_iter,
                                                        damping=damping, tol=tol)
    offsets = np.asarray(batch.node_offsets, dtype=np.int64)
    out = _split(labels, offsets)
    if exclude is not None:
        out = exclude_labellings(batch, out, exclude, lambda b: max_product_flat(
            b, max_iter=max_iter, damping=damping, tol=tol)[0])
    return GraphLabelings(out, exact, converged, n_iter=n_iter)


def exclude_labellings(batch, out, exclude, decode_flat):
    """Replace labellings equal to ``exclude[i]`` by the best labelling differing from it.

    The best y ≠ y* differs from y* at some node v: it is the best of the labellings
    decoded (by ``decode_flat``, batch -> concatenated labels) with node v clamped to
    a label k ≠ y*_v, over all (v, k). Exact when ``decode_flat`` is.
    """
    if len(exclude) != len(out):
        raise ValueError(f"exclude has {len(exclude)} labellings for {len(out)} graphs")
    for i, (y, ex) in enumerate(zip(out, exclude)):
        ex = np.asarray(ex, dtype=np.intp).reshape(-1)
        if ex.size != y.size:
            raise ValueError(f"Graph {i}: exclude has {ex.size} labels for {y.size} nodes")
        if not np.array_equal(y, ex):
            continue
        pot = batch[i]
        K, n = pot.n_states, y.size
        if K < 2:
            raise ValueError(f"Graph {i}: no labelling other than the excluded one (1 state)")
        # one clamped copy per (node, other label): the best y ≠ ex differs somewhere
        reps = n * (K - 1)
        node = np.repeat(np.arange(n), K - 1)
        lab = (ex[node] + 1 + np.tile(np.arange(K - 1), n)) % K
        unary = np.tile(pot.unary, (reps, 1))
        rows = np.arange(reps) * n + node
        span = np.abs(pot.unary).sum() + np.abs(pot.tables).sum() + 1.0
        unary[rows] -= 4.0 * span
        unary[rows, lab] += 4.0 * span
        clamped = type(pot)(unary, np.arange(reps + 1) * n,
                            (pot.edges[None] + (np.arange(reps) * n)[:, None, None])
                            .reshape(-1, 2), np.arange(reps + 1) * len(pot.edges),
                            pot.tables, np.tile(pot.edge_table, reps))
        lab_all = decode_flat(clamped)
        cand = lab_all.reshape(reps, n)
        # a candidate honouring its clamp scores as under the original potentials
        scores = clamped.score_flat(lab_all)
        best = int(np.argmax(scores))
        out[i] = cand[best].astype(np.intp)
    return out


MAX_PRODUCT = Decoder(name="max_product", structure="graph", func=max_product)
