"""Compiled loops of max-product (max-sum) message passing on pairwise graphs, with a
plain Python reference.

Private module: no validation here (the public wrapper in
:mod:`structsvm.structures.graph.max_product` checks shapes, dtypes, finiteness and node
indices). A batch of graphs is stored flat:

* ``unary`` (n_nodes, K): node scores of all graphs, graph g owning rows
  ``node_offsets[g]:node_offsets[g + 1]``;
* ``edges`` (n_edges, 2): endpoints (u, v) as *batch* row indices, graph g owning
  edges ``edge_offsets[g]:edge_offsets[g + 1]``;
* ``tables`` (n_tables, K, K) and ``edge_table`` (n_edges,): edge e scores the label
  pair (a, b) of its endpoints (u, v) with ``tables[edge_table[e], a, b]``;
* the adjacency as half-edges: half-edge h < E runs u -> v along edge h, half-edge
  h >= E runs v -> u along edge h - E; ``adj_ptr``/``adj_half`` list, per node, the
  half-edges leaving it (CSR).

Score of a labelling y::

    s(y) = Σ_v unary[v, y_v] + Σ_e tables[edge_table[e], y_u, y_v]

Each connected component is decoded on its own: a tree (|E_c| = |V_c| - 1) by the
exact two-pass max-sum recursion rooted at its lowest node, a component with a cycle
by loopy max-sum with damping (Pearl 1988; Murphy, Weiss & Jordan 1999), keeping the
best-scoring labelling decoded across the iterations and improving it by iterated
conditional modes (single-node moves while the score rises; Besag 1986).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["max_product_batch", "max_product_reference", "adjacency"]

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "max_product_batch": (
        "f8:2 i8:1 i8:2 f8:3 i8:1 i8:1 i8:1 "
        "i8 f8 f8 i8:1 i8:1 i8:1 i8:1",
        "void"),
}


def adjacency(edges, n_nodes):
    """CSR of the half-edges leaving each node: ``(adj_ptr, adj_half)``."""
    E = edges.shape[0]
    src = np.concatenate([edges[:, 0], edges[:, 1]]).astype(np.int64)
    order = np.argsort(src, kind="stable").astype(np.int64)
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n_nodes), out=ptr[1:])
    return ptr, order if E else np.zeros(0, np.int64)


@numba.njit(cache=True, nogil=True)
def _message(h, E, edges, tables, edge_table, excl, out, back, use_back):
    # out(b) = max_a excl(a) + P(a -> b) along half-edge h; back[b] = argmax
    K = excl.shape[0]
    if h < E:
        P = tables[edge_table[h]]
        for b in range(K):
            best = excl[0] + P[0, b]
            arg = 0
            for a in range(1, K):
                v = excl[a] + P[a, b]
                if v > best:
                    best = v
                    arg = a
            out[b] = best
            if use_back:
                back[b] = arg
    else:
        P = tables[edge_table[h - E]]
        for b in range(K):  # b is the label of u (the target), a of v (the source)
            best = excl[0] + P[b, 0]
            arg = 0
            for a in range(1, K):
                v = excl[a] + P[b, a]
                if v > best:
                    best = v
                    arg = a
            out[b] = best
            if use_back:
                back[b] = arg


@numba.njit(cache=True, nogil=True)
def _target(h, E, edges):
    return edges[h, 1] if h < E else edges[h - E, 0]


@numba.njit(cache=True, nogil=True)
def _reverse(h, E):
    return h + E if h < E else h - E


@numba.njit(cache=True, nogil=True)
def _belief(v, unary, adj_ptr, adj_half, E, msg, bel):
    K = unary.shape[1]
    for k in range(K):
        bel[k] = unary[v, k]
    for j in range(adj_ptr[v], adj_ptr[v + 1]):
        r = _reverse(adj_half[j], E)  # the half-edge coming into v
        for k in range(K):
            bel[k] += msg[r, k]


@numba.njit(cache=True, nogil=True)
def _argmax(x):
    arg = 0
    for k in range(1, x.shape[0]):
        if x[k] > x[arg]:
            arg = k
    return arg


@numba.njit(cache=True, nogil=True)
def _component_score(nodes, n, y, unary, adj_ptr, adj_half, E, tables, edge_table, edges):
    s = 0.0
    for i in range(n):
        v = nodes[i]
        s += unary[v, y[v]]
        for j in range(adj_ptr[v], adj_ptr[v + 1]):
            h = adj_half[j]
            if h < E:
                s += tables[edge_table[h], y[edges[h, 0]], y[edges[h, 1]]]
    return s


@numba.njit(cache=True, nogil=True)
def _icm(nodes, n, y, unary, adj_ptr, adj_half, E, tables, edge_table, edges, max_sweeps,
         local):
    # iterated conditional modes: move single nodes to their best label given the
    # neighbours' while that strictly raises the score (a local optimum of flips)
    K = unary.shape[1]
    for _ in range(max_sweeps):
        changed = False
        for i in range(n):
            v = nodes[i]
            for k in range(K):
                local[k] = unary[v, k]
            for j in range(adj_ptr[v], adj_ptr[v + 1]):
                h = adj_half[j]
                if h < E:
                    P = tables[edge_table[h]]
                    t = y[edges[h, 1]]
                    for k in range(K):
                        local[k] += P[k, t]
                else:
                    P = tables[edge_table[h - E]]
                    t = y[edges[h - E, 0]]
                    for k in range(K):
                        local[k] += P[t, k]
            k = _argmax(local)
            if local[k] > local[y[v]] + 1e-12:
                y[v] = k
                changed = True
        if not changed:
            break


@numba.njit(cache=True, nogil=True)
def max_product_batch(unary, node_offsets, edges, tables, edge_table, adj_ptr, adj_half,
                      max_iter, damping, tol, labels, converged, exact, n_iter):
    """Decode every graph of a batch into ``labels`` (n_nodes,).

    Per graph g: ``exact[g]`` is 1 when every component is a tree (the labelling is
    then a MAP labelling), ``converged[g]`` is 1 when loopy message passing met
    ``tol`` on every cyclic component (always 1 for forests), ``n_iter[g]`` the
    largest number of loopy sweeps run.
    """
    N, K = unary.shape
    E = edges.shape[0]
    G = node_offsets.shape[0] - 1
    msg = np.zeros((2 * E, K))
    back = np.zeros((N, K), dtype=np.int64)
    comp = np.full(N, -1, dtype=np.int64)
    order = np.empty(N, dtype=np.int64)
    up = np.full(N, -1, dtype=np.int64)  # half-edge v -> parent in the rooted tree
    bel = np.empty(K)
    excl = np.empty(K)
    new = np.empty(K)
    tmp = np.empty(K, dtype=np.int64)
    best_y = np.empty(N, dtype=np.int64)
    n_comp = 0
    for g in range(G):
        converged[g] = 1
        exact[g] = 1
        n_iter[g] = 0
        for root in range(node_offsets[g], node_offsets[g + 1]):
            if comp[root] >= 0:
                continue
            # breadth-first order of the component; count its half-edges
            base = node_offsets[g]  # the component's BFS order goes in the graph's rows
            head = base
            tail = base
            order[tail] = root
            tail += 1
            comp[root] = n_comp
            n_half = 0
            while head < tail:
                v = order[head]
                head += 1
                for j in range(adj_ptr[v], adj_ptr[v + 1]):
                    h = adj_half[j]
                    n_half += 1
                    t = _target(h, E, edges)
                    if comp[t] < 0:
                        comp[t] = n_comp
                        up[t] = _reverse(h, E)
                        order[tail] = t
                        tail += 1
            n_comp += 1
            n_nodes = tail - base
            nodes = order[base:tail]
            if n_half // 2 == n_nodes - 1:
                # ---- tree: upward max-sum messages, then back-pointers downward
                for i in range(n_nodes - 1, 0, -1):
                    v = nodes[i]
                    _belief(v, unary, adj_ptr, adj_half, E, msg, bel)
                    _message(up[v], E, edges, tables, edge_table, bel, new, back[v], True)
                    for k in range(K):
                        msg[up[v], k] = new[k]
                _belief(root, unary, adj_ptr, adj_half, E, msg, bel)
                labels[root] = _argmax(bel)
                for i in range(1, n_nodes):
                    v = nodes[i]
                    labels[v] = back[v, labels[_target(up[v], E, edges)]]
                up[root] = -1
                continue
            # ---- cycles: loopy max-sum with damping, sequential sweeps in BFS order
            exact[g] = 0
            best = -np.inf
            done = False
            it = 0
            while it < max_iter and not done:
                it += 1
                delta = 0.0
                for i in range(n_nodes):
                    s = nodes[i]
                    _belief(s, unary, adj_ptr, adj_half, E, msg, bel)
                    for j in range(adj_ptr[s], adj_ptr[s + 1]):
                        h = adj_half[j]
                        r = _reverse(h, E)
                        for k in range(K):
                            excl[k] = bel[k] - msg[r, k]
                        _message(h, E, edges, tables, edge_table, excl, new, tmp, False)
                        top = new[_argmax(new)]
                        for k in range(K):
                            val = (1.0 - damping) * (new[k] - top) + damping * msg[h, k]
                            d = abs(val - msg[h, k])
                            if d > delta:
                                delta = d
                            msg[h, k] = val
                for i in range(n_nodes):
                    s = nodes[i]
                    _belief(s, unary, adj_ptr, adj_half, E, msg, bel)
                    labels[s] = _argmax(bel)
                sc = _component_score(nodes, n_nodes, labels, unary, adj_ptr, adj_half, E,
                                      tables, edge_table, edges)
                if sc > best:
                    best = sc
                    for i in range(n_nodes):
                        best_y[nodes[i]] = labels[nodes[i]]
                done = delta < tol
            for i in range(n_nodes):
                labels[nodes[i]] = best_y[nodes[i]]
            _icm(nodes, n_nodes, labels, unary, adj_ptr, adj_half, E, tables, edge_table,
                 edges, max_iter, bel)
            if not done:
                converged[g] = 0
            if it > n_iter[g]:
                n_iter[g] = it
            for i in range(n_nodes):
                up[nodes[i]] = -1


# --------------------------------------------------------------------------- reference
def max_product_reference(unary, edges, tables, edge_table, max_iter=100, damping=0.5,
                          tol=1e-6):
    """One graph, in plain Python: ``(labels, exact, converged, n_iter)``.

    The same algorithm as :func:`max_product_batch` (same component order, rooting,
    message schedule and tie-breaking), written for reading and for the tests.
    """
    unary = np.asarray(unary, dtype=float)
    N, K = unary.shape
    E = len(edges)
    out_half = [[] for _ in range(N)]
    for h in range(2 * E):
        e = h % E
        src = edges[e][0] if h < E else edges[e][1]
        out_half[src].append(h)

    def target(h):
        return edges[h][1] if h < E else edges[h - E][0]

    def pair(h):  # table oriented source label x target label
        P = np.asarray(tables[edge_table[h % E]], dtype=float)
        return P if h < E else P.T

    msg = np.zeros((2 * E, K))

    def belief(v):
        b = unary[v].copy()
        for h in out_half[v]:
            b += msg[(h + E) % (2 * E)]
        return b

    labels = np.zeros(N, dtype=np.int64)
    seen = np.zeros(N, dtype=bool)
    exact, converged, n_iter = True, True, 0
    for root in range(N):
        if seen[root]:
            continue
        order, up, n_half = [root], {root: -1}, 0
        seen[root] = True
        i = 0
        while i < len(order):
            v = order[i]
            i += 1
            for h in out_half[v]:
                n_half += 1
                t = target(h)
                if not seen[t]:
                    seen[t] = True
                    up[t] = (h + E) % (2 * E)
                    order.append(t)
        if n_half // 2 == len(order) - 1:
            back = {}
            for v in reversed(order[1:]):
                scores = belief(v)[:, None] + pair(up[v])
                back[v] = np.argmax(scores, axis=0)
                msg[up[v]] = scores.max(axis=0)
            labels[root] = int(np.argmax(belief(root)))
            for v in order[1:]:
                labels[v] = back[v][labels[target(up[v])]]
            continue
        exact = False
        best, best_y, done, it = -np.inf, None, False, 0
        while it < max_iter and not done:
            it += 1
            delta = 0.0
            for s in order:
                b = belief(s)
                for h in out_half[s]:
                    excl = b - msg[(h + E) % (2 * E)]
                    new = (excl[:, None] + pair(h)).max(axis=0)
                    val = (1 - damping) * (new - new.max()) + damping * msg[h]
                    delta = max(delta, float(np.abs(val - msg[h]).max()))
                    msg[h] = val
            for s in order:
                labels[s] = int(np.argmax(belief(s)))
            sc = sum(unary[v, labels[v]] for v in order) + sum(
                tables[edge_table[e]][labels[edges[e][0]], labels[edges[e][1]]]
                for v in order for h in out_half[v] if h < E for e in [h])
            if sc > best:
                best, best_y = sc, labels[order].copy()
            done = delta < tol
        labels[order] = best_y
        for _ in range(max_iter):  # iterated conditional modes
            changed = False
            for v in order:
                local = unary[v].copy()
                for h in out_half[v]:
                    local += pair(h)[:, labels[target(h)]]
                k = int(np.argmax(local))
                if local[k] > local[labels[v]] + 1e-12:
                    labels[v] = k
                    changed = True
            if not changed:
                break
        converged = converged and done
        n_iter = max(n_iter, it)
    return labels, exact, converged, n_iter
