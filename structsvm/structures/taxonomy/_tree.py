"""Taxonomy trees as arrays: parse a tree given as a DiGraph, children dict or paths.

A :class:`Tree` numbers its nodes in breadth-first order (every parent before its
children), drops the root (its indicator is the same for every class, so it
cancels in every constraint) and keeps, per node, its parent index (``-1`` under
the root), its name and its depth (1 for the root's children).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from ...limits import check_total

__all__ = ["Tree", "build_tree", "tree_from_parents"]


#: bytes a root-to-leaf path holds per node on it (a tuple slot and an int object)
#: and per path (the tuple itself), for the memory budget
_PATH_ENTRY_BYTES = 8 + 32
_PATH_BYTES = 64


class Tree:
    """A rooted tree over node indices ``0 .. n_nodes-1`` (the root itself excluded).

    Parameters
    ----------
    parent : ndarray of int, shape (n_nodes,)
        Parent of each node, ``-1`` for the root's children; parents precede children.
    names : sequence of hashable, length n_nodes
        Node labels (the last component of a path).
    root : hashable or None
        Label of the root, or None when the root is virtual (a forest was given).
    """

    def __init__(self, parent, names, root=None):
        parent = np.asarray(parent)
        if parent.ndim != 1 or (parent.size and parent.dtype.kind not in "iu"):
            raise ValueError(f"tree parents must be a 1-D array of node indices, got "
                             f"dtype {parent.dtype}, shape {parent.shape}")
        self.parent = parent.astype(np.intp)
        n = len(self.parent)
        if n == 0:
            raise ValueError("tree has no node below the root")
        bad = np.flatnonzero((self.parent < -1) | (self.parent >= np.arange(n)))
        if bad.size:
            v = int(bad[0])
            raise ValueError(f"tree nodes must be numbered parents-first: node {v} has "
                             f"parent {int(self.parent[v])} (expected -1 .. {v - 1})")
        names = list(names)
        if len(names) != n:
            raise ValueError(f"tree has {n} nodes but {len(names)} names")
        self.names = np.empty(n, dtype=object)
        self.names[:] = names
        self.root = root
        self.depth = np.ones(n, dtype=np.intp)
        for v in np.flatnonzero(self.parent >= 0).tolist():
            self.depth[v] = self.depth[self.parent[v]] + 1
        has_child = np.zeros(n, dtype=bool)
        has_child[self.parent[self.parent >= 0]] = True
        self.leaves = np.flatnonzero(~has_child)
        order = np.argsort(self.depth, kind="stable")
        cuts = np.flatnonzero(np.diff(self.depth[order])) + 1
        self.levels = np.split(order, cuts)  # node indices at depth 1, 2, ...
        # the leaves' paths are what decoding returns; every node's path is never
        # built (a chain of n nodes would hold n²/2 entries)
        check_total(int(self.depth[self.leaves].sum()) * _PATH_ENTRY_BYTES
                    + self.leaves.size * _PATH_BYTES,
                    f"the root-to-leaf paths of a taxonomy of {n} nodes "
                    f"({self.leaves.size} leaves, {int(self.depth[self.leaves].sum())} "
                    "nodes on their paths)")
        self.leaf_paths = [self._path(int(v)) for v in self.leaves]
        self.leaf_pos = {int(v): k for k, v in enumerate(self.leaves)}
        self._child = {}  # (parent, name) -> node
        by_name = {}
        for v, (p, name) in enumerate(zip(self.parent.tolist(), names)):
            try:
                key = (p, name)
                if key in self._child:
                    raise ValueError(f"tree node {v} repeats the name {name!r:.40} of "
                                     f"node {self._child[key]} under the same parent")
            except TypeError:
                raise ValueError(f"tree node {v}: name {name!r:.40} is not hashable") \
                    from None
            self._child[key] = v
            by_name.setdefault(name, []).append(v)
        self.by_name = by_name
        self._loss_rows = {}

    def _path(self, v):
        """Node indices from depth 1 down to node ``v``."""
        out = [v]
        while self.parent[v] >= 0:
            v = int(self.parent[v])
            out.append(v)
        return tuple(reversed(out))

    def node_of(self, names):
        """The node at the end of the path of ``names`` below the root, or None."""
        v = -1
        for name in names:
            try:
                v = self._child.get((v, name))
            except TypeError:
                return None
            if v is None:
                return None
        return None if v == -1 else v

    @property
    def node_paths(self):
        """Node indices from depth 1 down to each node, for every node (built on
        each call: O(n_nodes × height))."""
        return [self._path(v) for v in range(self.n_nodes)]

    @property
    def n_nodes(self):
        """Number of nodes below the root."""
        return len(self.parent)

    @property
    def height(self):
        """Depth of the deepest leaf (1 when every node is a child of the root)."""
        return int(self.depth.max())

    def path_names(self, path):
        """Node labels along an encoded path (a tuple of node indices)."""
        return tuple(self.names[list(path)])

    def encode(self, y, sep=None, i=0):
        """Encoded path (node indices) of a label: a leaf name, a path or a string.

        Paths may include the root; a string is split on ``sep`` when ``sep`` is set.
        Errors name sample ``i``.
        """
        if isinstance(y, (tuple, list)) or (isinstance(y, str) and sep is not None):
            names = tuple(y.split(sep)) if isinstance(y, str) else tuple(y)
            node = self.node_of(names)
            if node is None and self.root is not None and len(names) > 1 \
                    and names[0] == self.root:
                node = self.node_of(names[1:])
            if node is None:
                raise ValueError(f"Sample {i}: path {names!r} is not in the tree")
        else:
            try:
                nodes = self.by_name.get(y)
            except TypeError:
                raise TypeError(f"Sample {i}: label {y!r} is not hashable") from None
            if not nodes:
                raise ValueError(f"Sample {i}: unknown label {y!r}; it names no node of "
                                 "the tree")
            if len(nodes) > 1:
                raise ValueError(f"Sample {i}: label {y!r} names {len(nodes)} nodes of "
                                 "the tree; give its path instead")
            node = nodes[0]
        if node not in self.leaf_pos:
            raise ValueError(f"Sample {i}: label {y!r} is an internal node; classes are "
                             "root-to-leaf paths")
        return self.leaf_paths[self.leaf_pos[node]]

    def loss_rows(self, loss, y_true):
        """Δ(y_true, ℓ) for every leaf path ℓ, cached per loss object and true path."""
        key = id(loss)
        if key not in self._loss_rows:
            self._loss_rows[key] = (loss, {})
        cache = self._loss_rows[key][1]
        row = cache.get(y_true)
        if row is None:
            row = np.array([loss(y_true, p) for p in self.leaf_paths], dtype=float)
            if not np.all(np.isfinite(row)) or np.any(row < 0):
                raise ValueError(f"loss {loss!r} returned a negative or non-finite value "
                                 f"for path {self.path_names(y_true)!r}")
            cache[y_true] = row
        return row


def tree_from_parents(parent, names, root=None):
    """Rebuild a :class:`Tree` from its fitted arrays (model files)."""
    return Tree(parent, names, root)


def _split(path, sep, what):
    if isinstance(path, str):
        if sep is None:
            raise ValueError(f"{what}: {path!r} is a string; give paths as tuples of node "
                             "names, or set sep= to split strings")
        return tuple(path.split(sep))
    try:
        out = tuple(path)
    except TypeError:
        raise TypeError(f"{what}: expected a path (sequence of node names), got "
                        f"{type(path).__name__}") from None
    if len(out) == 0:
        raise ValueError(f"{what}: empty path")
    return out


def _from_children(children, roots, label):
    """BFS numbering from a children mapping (node -> list of children)."""
    if len(roots) == 0:
        raise ValueError(f"{label} has no root (every node has a parent: a cycle?)")
    root = roots[0] if len(roots) == 1 else None
    start = list(children.get(root, ())) if root is not None else list(roots)
    return _number(children, start, root, label)


def _number(children, start, root, label):
    parent, names, index = [], [], {}
    queue = deque((c, -1) for c in start)
    while queue:
        node, p = queue.popleft()
        if node in index:
            raise ValueError(f"{label}: node {node!r} is reached twice (not a tree)")
        index[node] = len(names)
        names.append(node)
        parent.append(p)
        queue.extend((c, index[node]) for c in children.get(node, ()))
    return Tree(parent, names, root)


def _from_paths(paths, sep):
    paths = [_split(p, sep, f"tree path {i}") for i, p in enumerate(paths)]
    if not paths:
        raise ValueError("tree is an empty list of paths")
    firsts = {p[0] for p in paths}
    root = None
    if len(firsts) == 1 and all(len(p) > 1 for p in paths):
        root = paths[0][0]
        paths = [p[1:] for p in paths]
    children, seen = {None: []}, set()
    for p in paths:
        for k in range(1, len(p) + 1):
            node = p[:k]
            if node not in seen:
                seen.add(node)
                children.setdefault(p[:k - 1] if k > 1 else None, []).append(node)
    full = {p for p in paths}
    for p in full:
        if p in children:
            raise ValueError(f"tree path {p!r} ends at an internal node (another path "
                             "continues below it); classes must be leaves")
    t = _number(children, children[None], None, "tree")
    # nodes were keyed by prefix tuples: keep only the last component as the name
    return Tree(t.parent, [n[-1] for n in t.names], root)


def build_tree(tree, sep=None):
    """Parse a taxonomy given as a networkx DiGraph, a dict of children or paths.

    Parameters
    ----------
    tree : networkx.DiGraph, dict or sequence of paths
        Edges parent → child; or ``{parent: [children]}``; or root-to-leaf paths
        (tuples of node names, or strings split on ``sep``). A single top node is
        the root; several top nodes hang under a virtual root.
    sep : str, optional
        Separator for string paths (e.g. ``"."`` for ``"comp.sys.mac.hardware"``).

    Returns
    -------
    Tree
        Nodes numbered breadth-first without the root; ``parent``, ``names`` and
        ``depth`` per node.

    Raises
    ------
    TypeError
        When ``tree`` is none of the accepted forms.
    ValueError
        When a node has several parents, a node is unreachable, or a class is not a
        leaf.

    Examples
    --------
    >>> from structsvm.structures.taxonomy.features import build_tree
    >>> t = build_tree(["sci.med", "sci.space", "talk.religion"], sep=".")
    >>> t.names.tolist(), t.parent.tolist()
    (['sci', 'talk', 'med', 'space', 'religion'], [-1, -1, 0, 0, 1])
    """
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover - networkx is a core dependency
        nx = None
    if nx is not None and isinstance(tree, nx.Graph):
        if not tree.is_directed():
            raise TypeError("tree must be a directed graph (edges parent -> child)")
        bad = [v for v, d in tree.in_degree() if d > 1]
        if bad:
            raise ValueError(f"tree: node {bad[0]!r} has {tree.in_degree(bad[0])} parents")
        roots = [v for v, d in tree.in_degree() if d == 0]
        children = {v: list(tree.successors(v)) for v in tree.nodes}
        t = _from_children(children, roots, "tree")
        if t.n_nodes + (t.root is not None) != tree.number_of_nodes():
            raise ValueError("tree: some nodes are not reachable from a root (a cycle?)")
        return t
    if isinstance(tree, dict):
        kids = {k: list(v) for k, v in tree.items()}
        child_set = {c for v in kids.values() for c in v}
        roots = [k for k in kids if k not in child_set]
        t = _from_children(kids, roots, "tree")
        n_all = len(set(kids) | child_set)
        if t.n_nodes + (t.root is not None) != n_all:
            raise ValueError("tree: some nodes are not reachable from a root (a cycle?)")
        return t
    if isinstance(tree, (str, bytes)):
        raise TypeError("tree must be a networkx DiGraph, a dict of children or a list "
                        "of paths, got a string")
    try:
        paths = list(tree)
    except TypeError:
        raise TypeError(f"tree must be a networkx DiGraph, a dict of children or a list "
                        f"of paths, got {type(tree).__name__}") from None
    return _from_paths(paths, sep)
