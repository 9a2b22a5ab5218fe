"""The seam for losses over the whole data set (Joachims 2005): a loss that declares
``decomposition = "dataset"`` is trained by the 1-slack oracle as one structured
output, the labelling of all n examples.

A small F1 loss written here proves it: its most violated labelling (Joachims'
enumeration of the contingency tables) equals brute force over all 2^n labellings,
and a 1-slack fit reaches the optimum of the direct QP over all 2^n constraints.
"""
import itertools
from typing import ClassVar

import cvxpy as cp
import numpy as np
import pytest

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import BaseLoss, MulticlassFeatures, get_decoder


class F1Loss(BaseLoss):
    """Δ(Y, Ŷ) = 1 − F1 of the positive class (encoded 1) over the whole data set;
    F1 = 2TP / (2TP + FP + FN), and Δ = 0 when no example is positive either way."""

    name = "f1"
    decomposition: ClassVar[str] = "dataset"

    def __call__(self, Y_true, Y_pred):
        y, p = np.asarray(Y_true) == 1, np.asarray(Y_pred) == 1
        tp, fp, fn = np.sum(y & p), np.sum(~y & p), np.sum(y & ~p)
        return 0.0 if tp + fp + fn == 0 else 1.0 - 2.0 * tp / (2 * tp + fp + fn)

    def max_loss(self, Y_true):
        return 1.0

    def most_violated(self, batch, Y_true):
        """argmax_Ŷ Δ(Y, Ŷ) + Σ_i score_i(ŷ_i): for each number a of positives and b
        of negatives labelled positive, the a positives and the b negatives with the
        largest score gains (Joachims 2005, Algorithm 2), O(n log n + P·N)."""
        gain = batch.scores[:, 1] - batch.scores[:, 0]
        y = np.asarray(Y_true) == 1
        pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
        pos = pos[np.argsort(-gain[pos], kind="stable")]
        neg = neg[np.argsort(-gain[neg], kind="stable")]
        P = np.concatenate([[0.0], np.cumsum(gain[pos])])
        N = np.concatenate([[0.0], np.cumsum(gain[neg])])
        best, best_ab = -np.inf, (0, 0)
        for a in range(len(pos) + 1):
            for b in range(len(neg) + 1):
                fn = len(pos) - a
                loss = 0.0 if a + b + fn == 0 else 1.0 - 2.0 * a / (2 * a + b + fn)
                value = loss + P[a] + N[b]
                if value > best:
                    best, best_ab = value, (a, b)
        out = np.zeros(len(y), dtype=np.intp)
        out[pos[:best_ab[0]]] = 1
        out[neg[:best_ab[1]]] = 1
        return list(out)


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0.8, "pos", "neg")
    y[0], y[1] = "pos", "neg"  # both classes present
    return list(X), list(y)


def _problem(X, y, C=1.0):
    fm = MulticlassFeatures().fit(X, y)
    return Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(y), feature_map=fm,
                   decoder=get_decoder("argmax"), loss=F1Loss(), C=C)


def _brute_force(problem, w):
    """max over all 2^n labellings of Δ(Y, Ŷ) − w·(Φ(X, Y) − Φ(X, Ŷ))."""
    Y = list(problem.Ye)
    truth = np.asarray(problem.truth_features().sum(axis=0)).ravel()
    best = -np.inf
    for labels in itertools.product((0, 1), repeat=len(Y)):
        phi = problem.feature_map.joint_features(problem.Xe, list(labels))
        psi = truth - np.asarray(phi.sum(axis=0)).ravel()
        best = max(best, problem.loss(Y, list(labels)) - float(psi @ w))
    return best


@pytest.mark.parametrize("n", [2, 5, 8, 10])
@pytest.mark.parametrize("seed", range(4))
def test_most_violated_labelling_equals_brute_force(n, seed):
    X, y = _data(n, seed)
    problem = _problem(X, y)
    for k in range(3):
        w = np.random.default_rng(100 * seed + k).normal(size=problem.n_features)
        loss, psi, slack = problem.dataset_violation(w)
        value = loss - float(psi @ w)
        assert value == pytest.approx(_brute_force(problem, w), abs=1e-9)
        assert slack[0] == pytest.approx(max(0.0, value), abs=1e-12)
        # the 1-slack oracle hands the learners the same constraint
        loss2, psi2, slack2 = problem.oracle_sum(w)
        assert loss2 == loss and np.allclose(psi2.toarray().ravel(), psi)
        assert slack2.shape == (1,) and slack2[0] == slack[0]


def test_a_one_slack_fit_reaches_the_direct_qp_over_all_labellings():
    """½‖w‖² + C ξ subject to w·(Φ(X,Y) − Φ(X,Ŷ)) ≥ Δ(Y,Ŷ) − ξ for all 2^n Ŷ."""
    X, y = _data(8, 7)
    C = 5.0
    model = structsvm.fit(X, y, loss=F1Loss(), C=C, tol=1e-7, max_iter=500)
    assert model.learner_.name == "one_slack"  # the default for such a loss
    assert model.converged_
    problem = _problem(X, y, C)
    Y = list(problem.Ye)
    truth = np.asarray(problem.truth_features().sum(axis=0)).ravel()
    rows, losses = [], []
    for labels in itertools.product((0, 1), repeat=len(Y)):
        phi = problem.feature_map.joint_features(problem.Xe, list(labels))
        rows.append(truth - np.asarray(phi.sum(axis=0)).ravel())
        losses.append(problem.loss(Y, list(labels)))
    w, xi = cp.Variable(problem.n_features), cp.Variable()
    qp = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * xi),
                    [np.array(rows) @ w >= np.array(losses) - xi, xi >= 0])
    qp.solve(solver="CLARABEL")
    assert model.objective_ == pytest.approx(qp.value, rel=1e-5)
    np.testing.assert_allclose(model.coef_, w.value, atol=1e-3)
    # the objective is the one slack's: ½‖w‖² + C max(0, max_Ŷ Δ − w·δΦ)
    assert model.objective_ == pytest.approx(problem.primal_objective(model.coef_))


def test_per_example_learners_refuse_it_and_the_oracle_has_no_rows():
    X, y = _data(6, 3)
    with pytest.raises(ValueError, match="whole data set's labelling: learner "
                                         "'dual_cd' cannot train it; use one of "
                                         r"\['one_slack'\]"):
        structsvm.fit(X, y, loss=F1Loss(), learner="dual_cd")
    with pytest.raises(TypeError, match="no constraint per example"):
        _problem(X, y).oracle(np.zeros(6))
    with pytest.raises(ValueError, match="rescaling='margin' only"):
        structsvm.fit(X, y, loss=F1Loss(), rescaling="slack")


def test_score_is_one_minus_the_data_set_loss():
    X, y = _data(10, 1)
    model = structsvm.fit(X, y, loss=F1Loss(), C=10.0)
    pred = model.feature_map_.encode_outputs(model.predict(X))
    truth = model.feature_map_.encode_outputs(y)
    assert model.score(X, y) == pytest.approx(1.0 - F1Loss()(truth, pred))
