"""Independent references for the learners: the full primal QP, solved directly.

For a small problem every constraint of the structural SVM is written out
(one per example and wrong output), and cvxpy solves

    min ½‖w‖² + C Σ_i ξ_i
    s.t. w·(Φ(x_i, y_i) − Φ(x_i, y)) ≥ Δ(y_i, y) − ξ_i        (margin rescaling)
         Δ(y_i, y) (1 − w·(Φ(x_i, y_i) − Φ(x_i, y))) ≤ ξ_i     (slack rescaling)
         ξ ≥ 0

with no working set, no oracle and no decoder: only ``joint_feature`` on raw data.
"""
import cvxpy as cp
import numpy as np


def full_primal_qp(fm, X, Y, outputs, loss, C, rescaling="margin"):
    """Optimal objective and w of the full primal QP.

    Parameters
    ----------
    fm : fitted feature map (``joint_feature(x, y)`` on raw data)
    X, Y : raw inputs and outputs
    outputs : list of every raw output
    loss : callable on raw outputs
    """
    rows, losses, owner = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        phi_true = fm.joint_feature(x, y)
        for o in outputs:
            d = loss(y, o)
            if d == 0:
                continue
            rows.append(phi_true - fm.joint_feature(x, o))
            losses.append(d)
            owner.append(i)
    D = np.array(rows)
    delta = np.array(losses)
    w = cp.Variable(D.shape[1])
    xi = cp.Variable(len(X), nonneg=True)
    if rescaling == "margin":
        cons = [D @ w >= delta - xi[owner]]
    else:
        cons = [cp.multiply(delta, 1 - D @ w) <= xi[owner]]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal", prob.status
    return prob.value, w.value
