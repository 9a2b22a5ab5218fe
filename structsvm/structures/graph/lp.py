"""MAP decoding of pairwise graphs by the LP relaxation over the local polytope (cvxpy)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...protocols import Decoder
from .max_product import GraphLabelings, check_graph_batch, exclude_labellings

__all__ = ["lp", "lp_relaxation", "LP"]

_INTEGRAL_TOL = 1e-6
_OPTIONS = {"SCIPY": {"scipy_options": {"method": "highs-ds"}}}  # dual simplex: vertices


def _constraints(N, K, edges):
    """Equality system A x = b of the local polytope, x = (μ_nodes, μ_edges) ≥ 0."""
    E = len(edges)
    n_node, n_edge = N * K, E * K * K
    # Σ_k μ_v(k) = 1
    r0 = np.repeat(np.arange(N), K)
    c0 = np.arange(n_node)
    # Σ_b μ_e(a, b) = μ_u(a)  and  Σ_a μ_e(a, b) = μ_v(b)
    e, a, b = np.meshgrid(np.arange(E), np.arange(K), np.arange(K), indexing="ij")
    e, a, b = e.ravel(), a.ravel(), b.ravel()
    col_e = n_node + (e * K + a) * K + b
    row_u = N + e * K + a
    row_v = N + E * K + e * K + b
    ue = np.arange(E * K)
    rows = np.concatenate([r0, row_u, row_v, N + ue, N + E * K + ue])
    cols = np.concatenate([c0, col_e, col_e, edges[ue // K, 0] * K + ue % K,
                           edges[ue // K, 1] * K + ue % K])
    data = np.concatenate([np.ones(n_node + 2 * col_e.size), -np.ones(2 * E * K)])
    A = sp.csr_matrix((data, (rows, cols)), shape=(N + 2 * E * K, n_node + n_edge))
    rhs = np.concatenate([np.ones(N), np.zeros(2 * E * K)])
    return A, rhs


def lp_relaxation(batch, solver="SCIPY"):
    """Solve the local-polytope LP of every graph of ``batch`` (one cvxpy problem each).

    Parameters
    ----------
    batch : GraphPotentials
    solver : str, default="SCIPY"
        cvxpy solver name. "SCIPY" runs SciPy's bundled HiGHS dual simplex, which
        returns vertex solutions (so integrality can be read off) and prints nothing.

    Returns
    -------
    mu_nodes : ndarray of shape (n_nodes, n_states)
        Node marginals μ_v.
    mu_edges : ndarray of shape (n_edges, n_states, n_states)
        Edge marginals μ_e.
    bound : ndarray of shape (n_graphs,)
        The LP optimum per graph, an upper bound on the best labelling's score.
    status : list of str
        The solver's status per graph.
    """
    unary, node_offsets, edges, edge_offsets, tables, edge_table = check_graph_batch(
        batch, "lp")
    N, K = unary.shape
    E = len(edges)
    G = len(node_offsets) - 1
    mu_nodes, mu_edges = np.zeros((N, K)), np.zeros((E, K, K))
    bound, status = np.zeros(G), []
    for g in range(G):  # graphs are separate LPs (one big LP solves slower)
        nlo, nhi = node_offsets[g], node_offsets[g + 1]
        elo, ehi = edge_offsets[g], edge_offsets[g + 1]
        c = np.concatenate([unary[nlo:nhi].ravel(),
                            tables[edge_table[elo:ehi]].ravel()])
        x, st = _solve(c, *_constraints(nhi - nlo, K, edges[elo:ehi] - nlo), solver, g)
        mu_nodes[nlo:nhi] = x[:(nhi - nlo) * K].reshape(-1, K)
        mu_edges[elo:ehi] = x[(nhi - nlo) * K:].reshape(-1, K, K)
        bound[g] = float(c @ x)
        status.append(st)
    return mu_nodes, mu_edges, bound, status


def _solve(c, A, rhs, solver, g):
    import cvxpy as cp

    x = cp.Variable(c.size)
    prob = cp.Problem(cp.Maximize(c @ x), [A @ x == rhs, x >= 0])
    try:
        prob.solve(solver=solver, **_OPTIONS.get(solver.upper(), {}))
    except cp.error.SolverError as exc:
        raise RuntimeError(f"lp decoder, graph {g}: solver {solver} failed ({exc})") \
            from None
    if prob.status not in ("optimal", "optimal_inaccurate") or x.value is None:
        raise RuntimeError(f"lp decoder, graph {g}: solver {solver} returned status "
                           f"{prob.status!r}")
    return np.clip(np.asarray(x.value, dtype=float), 0.0, 1.0), prob.status


def _lp_flat(batch, solver):
    mu_nodes, mu_edges, bound, status = lp_relaxation(batch, solver)
    labels = np.argmax(mu_nodes, axis=1).astype(np.int64)
    G = len(batch)
    frac_node = np.abs(mu_nodes - np.round(mu_nodes)).max(axis=1) > _INTEGRAL_TOL \
        if mu_nodes.size else np.zeros(0, bool)
    frac_edge = np.abs(mu_edges - np.round(mu_edges)).reshape(len(mu_edges), -1) \
        .max(axis=1) > _INTEGRAL_TOL if mu_edges.size else np.zeros(0, bool)
    g_node = np.repeat(np.arange(G), np.diff(batch.node_offsets))
    g_edge = np.repeat(np.arange(G), np.diff(batch.edge_offsets))
    fractional = np.bincount(g_node, weights=frac_node, minlength=G) + \
        np.bincount(g_edge, weights=frac_edge, minlength=G)
    return labels, fractional == 0, bound, np.array([s == "optimal" for s in status])


def lp(batch, exclude=None, *, solver="SCIPY"):
    """Best labelling of every graph by the LP relaxation over the local polytope.

    MAP inference as an integer program, relaxed to the local polytope
    (Wainwright & Jordan 2008; Taskar et al. 2004): with node marginals μ_v ∈ Δ_K
    and edge marginals μ_e ∈ R^{K×K}_{≥0},

    .. math::

        \\max_{\\mu} \\sum_v \\langle u_v, \\mu_v \\rangle
                 + \\sum_{e=(u,v)} \\langle \\theta_e, \\mu_e \\rangle
        \\quad \\text{s.t.} \\quad \\sum_k \\mu_v(k) = 1,\\;
        \\sum_b \\mu_e(a, b) = \\mu_u(a),\\; \\sum_a \\mu_e(a, b) = \\mu_v(b).

    The optimum bounds the best labelling's score from above; it equals it, and the
    solution is a labelling, on trees and whenever the solution is integral. A
    fractional solution is rounded by y_v = argmax_k μ_v(k). All graphs of a batch
    are solved one after the other, each as one cvxpy problem.

    Parameters
    ----------
    batch : GraphPotentials
    exclude : list of ndarray of int, optional
        ``exclude[i]`` is a labelling to skip for graph i (searched by clamping each
        node to each other label, as in :func:`~structsvm.structures.graph.max_product.
        max_product`).
    solver : str, default="SCIPY"
        cvxpy LP solver (SciPy's HiGHS dual simplex by default).

    Returns
    -------
    GraphLabelings
        One label array per graph; ``exact`` marks graphs whose LP solution was
        integral (the labelling is then a certified MAP labelling), ``bound`` holds
        the LP optimum per graph, ``exact_fraction`` the fraction of integral
        solutions.

    Raises
    ------
    RuntimeError
        When the solver fails (the message names the solver and status).

    References
    ----------
    M. Wainwright, M. Jordan. Graphical models, exponential families, and
    variational inference. Found. Trends Mach. Learn. 1(1-2), 2008 (Sec. 8.4).
    B. Taskar, V. Chatalbashev, D. Koller. Learning associative Markov networks.
    ICML 2004.
    T. Finley, T. Joachims. Training structural SVMs when exact inference is
    intractable. ICML 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures.graph.features import GraphPotentials
    >>> p = GraphPotentials(np.array([[1., 0.], [0., .4]]), [0, 2], np.array([[0, 1]]),
    ...                     [0, 1], np.array([[[1., 0.], [0., 1.]]]), np.array([0]))
    >>> out = lp(p)
    >>> out[0].tolist(), out.exact.tolist(), round(float(out.bound[0]), 6)
    ([0, 0], [True], 2.0)
    """
    labels, exact, bound, optimal = _lp_flat(batch, solver)
    offsets = np.asarray(batch.node_offsets, dtype=np.int64)
    out = [labels[offsets[i]:offsets[i + 1]].astype(np.intp) for i in range(len(batch))]
    if exclude is not None:
        out = exclude_labellings(batch, out, exclude, lambda b: _lp_flat(b, solver)[0])
    return GraphLabelings(out, exact, optimal, bound=bound)


LP = Decoder(name="lp", structure="graph", func=lp)
