"""Independent references for the learners: the full primal QP, solved directly.

For a small problem every constraint of the structural SVM is written out
(one per example and wrong output), and cvxpy solves

    min ½‖w‖² + C Σ_i ξ_i
    s.t. w·(Φ(x_i, y_i) − Φ(x_i, y)) ≥ Δ(y_i, y) − ξ_i        (margin rescaling)
         Δ(y_i, y) (1 − w·(Φ(x_i, y_i) − Φ(x_i, y))) ≤ ξ_i     (slack rescaling)
         ξ ≥ 0

with no working set, no oracle and no decoder: only ``joint_feature`` on raw data.
The outputs are enumerated here (``itertools.product``), never by the library, and
:func:`primal_objective` recomputes ½‖w‖² + C Σ_i ξ_i of any w from the same
enumerated constraints, so a learner's ``coef_`` can be checked without trusting its
own oracle or its reported ``objective_``.
"""
import itertools

import cvxpy as cp
import numpy as np


class Constraints:
    """Every constraint of a small problem: δΦ rows, losses and their example.

    Attributes
    ----------
    D : ndarray of shape (n_constraints, n_features)
        Rows δΦ_i(y) = Φ(x_i, y_i) − Φ(x_i, y).
    delta : ndarray of shape (n_constraints,)
        Δ(y_i, y) (> 0: outputs with zero loss are left out, their constraint is ξ ≥ 0).
    owner : ndarray of int of shape (n_constraints,)
        The example i of each row.
    n_samples : int
    """

    def __init__(self, phi, X, Y, candidates):
        """``candidates(i, x, y)`` yields ``(output, loss)`` for every output of example i;
        ``phi(x, y)`` is Φ as a dense vector (the map's public ``joint_feature``)."""
        rows, losses, owner = [], [], []
        for i, (x, y) in enumerate(zip(X, Y)):
            phi_true = np.asarray(phi(x, y), dtype=float).ravel()
            for o, d in candidates(i, x, y):
                if d == 0:
                    continue
                rows.append(phi_true - np.asarray(phi(x, o), dtype=float).ravel())
                losses.append(float(d))
                owner.append(i)
        self.D = np.array(rows)
        self.delta = np.array(losses)
        self.owner = np.array(owner, dtype=np.intp)
        self.n_samples = len(X)

    def slacks(self, w, rescaling="margin"):
        """ξ_i(w) = max(0, max_y ...) per example, from the enumerated constraints."""
        margin = self.D @ np.asarray(w, dtype=float)
        if rescaling == "margin":
            v = self.delta - margin
        else:
            v = self.delta * (1.0 - margin)
        xi = np.zeros(self.n_samples)
        np.maximum.at(xi, self.owner, v)
        return xi

    def objective(self, w, C, rescaling="margin"):
        """½‖w‖² + C Σ_i ξ_i(w)."""
        w = np.asarray(w, dtype=float)
        return 0.5 * float(w @ w) + C * float(self.slacks(w, rescaling).sum())

    def solve(self, C, rescaling="margin"):
        """(optimal objective, optimal w) of the full primal QP (cvxpy, Clarabel)."""
        w = cp.Variable(self.D.shape[1])
        xi = cp.Variable(self.n_samples, nonneg=True)
        if rescaling == "margin":
            cons = [self.D @ w >= self.delta - xi[self.owner]]
        else:
            cons = [cp.multiply(self.delta, 1 - self.D @ w) <= xi[self.owner]]
        prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), cons)
        # tight tolerances: w* is then accurate to ~1e-9, so learners' coef_ can be
        # compared with it (the default tolerances leave ~1e-5 in w)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                   tol_ktratio=1e-10)
        if prob.status != "optimal":
            prob.solve(solver="CLARABEL")
        assert prob.status == "optimal", prob.status
        w_opt = np.asarray(w.value, dtype=float)
        return self.objective(w_opt, C, rescaling), w_opt


def primal_objective(w, constraints, C, rescaling="margin"):
    """Independent primal objective ½‖w‖² + C Σ_i ξ_i of ``w`` (see :class:`Constraints`)."""
    return constraints.objective(w, C, rescaling)


def full_primal_qp(fm, X, Y, outputs, loss, C, rescaling="margin"):
    """Optimal objective and w of the full primal QP (outputs shared by all examples).

    Parameters
    ----------
    fm : fitted feature map (``joint_feature(x, y)`` on raw data)
    X, Y : raw inputs and outputs
    outputs : list of every raw output
    loss : callable on raw outputs
    """
    cons = Constraints(fm.joint_feature, X, Y,
                       lambda i, x, y: ((o, loss(y, o)) for o in outputs))
    return cons.solve(C, rescaling)


# --------------------------------------------------------------------------- enumeration
def sequence_outputs(tags, length):
    """Every tag sequence of ``length`` over ``tags`` (lists), by itertools.product."""
    return [list(p) for p in itertools.product(tags, repeat=length)]


def preference_pairs(grades):
    """(better, worse) pairs of a graded query: a ≻ b iff grades[a] > grades[b]."""
    g = np.asarray(grades)
    return [(a, b) for a in range(g.size) for b in range(g.size) if g[a] > g[b]]


def pair_labellings(pairs):
    """Every labelling of the preference pairs: (kept pairs as an int array, n_swapped).

    The labelling keeping pairs K has Φ = Σ_{(a,b)∈K} (φ_a − φ_b), which is the map's
    ``joint_feature`` of the explicit pairs K; its loss is the number of pairs left out.
    """
    out = []
    for keep in itertools.product((1, 0), repeat=len(pairs)):
        kept = np.array([p for p, k in zip(pairs, keep) if k], dtype=np.intp).reshape(-1, 2)
        out.append((kept, len(pairs) - sum(keep)))
    return out


def tree_paths(children, root):
    """Root-to-leaf paths (root excluded) of a ``{parent: [children]}`` tree."""
    out = []

    def walk(node, prefix):
        kids = children.get(node, [])
        if not kids:
            out.append(prefix)
        for c in kids:
            walk(c, prefix + (c,))

    walk(root, ())
    return out


def tree_distance(path_a, path_b):
    """Nodes in the symmetric difference of two root paths (Cai & Hofmann 2004)."""
    return float(len(set(path_a) ^ set(path_b)))


def random_tree(rng, n_inner=(2, 4), fanout=(2, 3), max_depth=3):
    """A random tree ``({parent: [children]}, root)`` with unique node names.

    Depths of leaves vary (unbalanced trees): each child of a node above
    ``max_depth`` is an inner node with probability ½.
    """
    children, counter = {}, itertools.count()
    root = "r"

    def grow(node, depth):
        k = int(rng.integers(fanout[0], fanout[1] + 1))
        kids = [f"n{next(counter)}" for _ in range(k)]
        children[node] = kids
        for c in kids:
            if depth < max_depth and rng.random() < 0.5:
                grow(c, depth + 1)

    grow(root, 1)
    return children, root
