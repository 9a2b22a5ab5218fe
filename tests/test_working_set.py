"""The cutting planes' working set and its QP: the rows as one CSR block, pruning of
inactive constraints, the dense 1-slack sum of the ranking oracle, and the active-set
polish of SMO's one-group QPs."""
import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.learners import _qp
from structsvm.learners._qp import solve_dual_qp
from structsvm.learners._smo_jit import smo
from structsvm.learners._working_set import WorkingSet


def random_qp(seed, m=30, rank=8):
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(m, rank))
    return P @ P.T, rng.random(m) * 3


def kkt_violation(G, b, alpha, C):
    """SMO's optimality measure of the one-group dual (and feasibility)."""
    assert np.all(alpha >= 0) and alpha.sum() <= C * (1 + 1e-12)
    grad = b - G @ alpha
    down = grad[alpha > 0].min() if (alpha > 0).any() else np.inf
    if C - alpha.sum() > 1e-12 * C:
        down = min(down, 0.0)
    return max(0.0, grad.max()) - down


@pytest.mark.parametrize("C", [0.05, 1.0, 50.0])
def test_polish_reaches_the_smo_optimum(C):
    """From SMO's iterate at a loose tolerance, the polished α is optimal to SMO's own
    tolerance and has SMO's dual value (when it gives up, SMO finishes: rare here)."""
    polished_runs = 0
    for seed in range(10):
        G, b = random_qp(seed)
        groups = np.zeros(len(b), dtype=np.int64)
        tol = 1e-11 * b.max()
        exact = np.zeros(len(b))
        smo(G, b, groups, 1, C, exact, tol, 10 ** 6)
        rough = np.zeros(len(b))
        smo(G, b, groups, 1, C, rough, 1e-2 * b.max(), 10 ** 6)
        polished = _qp._polish_single(G, b, rough, C, tol)
        if polished is None:
            continue
        polished_runs += 1
        assert kkt_violation(G, b, polished, C) <= tol
        dual = lambda a: b @ a - 0.5 * a @ G @ a  # noqa: E731
        assert abs(dual(polished) - dual(exact)) <= 1e-12 * abs(dual(exact))
    assert polished_runs >= 8


def test_polish_succeeds_from_rough_starts_and_fixes_the_support():
    successes, fixed = 0, 0
    for seed in range(20):
        G, b = random_qp(seed)
        C = 1.0
        rough = np.zeros(len(b))
        smo(G, b, np.zeros(len(b), dtype=np.int64), 1, C, rough, 1e-2 * b.max(), 10 ** 6)
        polished = _qp._polish_single(G, b, rough, C, 1e-11 * b.max())
        if polished is not None:
            successes += 1
            fixed += not np.array_equal(polished > 0, rough > 0)
    assert successes >= 15 and fixed >= 1


def test_polish_gives_up_on_an_empty_support():
    G, b = random_qp(0)
    assert _qp._polish_single(G, b, np.zeros(len(b)), 1.0, 1e-9) is None


@pytest.mark.parametrize("seed", range(6))
def test_solve_dual_qp_same_optimum_with_and_without_polish(seed, monkeypatch):
    G, b = random_qp(seed, m=40)
    groups = np.zeros(len(b), dtype=np.intp)
    a1, d1 = solve_dual_qp(G, b, groups, 2.0, solver="smo")
    monkeypatch.setattr(_qp, "_POLISH_MIN", 10 ** 9)
    a2, d2 = solve_dual_qp(G, b, groups, 2.0, solver="smo")
    assert abs(d1 - d2) <= 1e-12 * abs(d2)
    np.testing.assert_allclose(G @ a1, G @ a2, rtol=1e-6, atol=1e-9 * np.abs(b).max())


def test_dense_and_sparse_rows_build_the_same_working_set():
    rng = np.random.default_rng(0)
    psi = rng.normal(size=(5, 12)) * (rng.random((5, 12)) < 0.5)
    losses = rng.random(5)
    dense_ws, sparse_ws = WorkingSet(12), WorkingSet(12)
    for k in range(5):
        dense_ws.add(psi[k], [losses[k]], [0])
        sparse_ws.add(sp.csr_matrix(psi[k:k + 1]), [losses[k]], [0])
    np.testing.assert_array_equal(dense_ws.G, sparse_ws.G)
    np.testing.assert_allclose(dense_ws.G, psi @ psi.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(dense_ws.matrix().toarray(), psi)
    alpha = rng.random(5)
    np.testing.assert_allclose(dense_ws.weights(alpha), alpha @ psi, atol=1e-12)
    w = rng.normal(size=12)
    np.testing.assert_allclose(dense_ws.slacks(w, 1),
                               [max(0.0, (losses - psi @ w).max())], atol=1e-12)
    # many rows at once (n-slack), with a duplicate entry summed
    many = WorkingSet(12)
    many.add(sp.csr_matrix(psi[:2]), losses[:2], [0, 1])
    dup = sp.csr_matrix((np.array([1.0, 2.0]), np.array([3, 3]), np.array([0, 2])),
                        shape=(1, 12))
    many.add(sp.vstack([sp.csr_matrix(psi[2:4]), dup]), [0.1, 0.2, 0.3], [0, 1, 0])
    stacked = np.vstack([psi[:4], np.eye(12)[3] * 3.0])
    np.testing.assert_allclose(many.G, stacked @ stacked.T, atol=1e-12)
    many.idle[:] = [0, 5, 0, 5, 0]
    many.prune(3)
    np.testing.assert_allclose(many.G, stacked[[0, 2, 4]] @ stacked[[0, 2, 4]].T,
                               atol=1e-12)
    np.testing.assert_array_equal(many.matrix().toarray(), stacked[[0, 2, 4]])


@pytest.mark.parametrize("sparse", [False, True])
def test_ranking_oracle_sum_dense_equals_the_sparse_row(sparse):
    from structsvm.structures import RankingFeatures
    from structsvm.structures import get_decoder
    from structsvm.structures.ranking import SwappedPairsLoss
    from structsvm.learners.problem import Problem

    rng = np.random.default_rng(1)
    X = [rng.normal(size=(n, 6)) for n in (5, 8, 3, 7)]
    if sparse:
        X = [sp.csr_matrix(x * (rng.random(x.shape) < 0.6)) for x in X]
    Y = [rng.integers(0, 3, size=x.shape[0]) for x in X]
    fm = RankingFeatures().fit(X, Y)
    problem = Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("sort"),
                      SwappedPairsLoss(), 1.0)
    assert problem.aggregates_in_one_pass()  # the path dense=True serves
    w = rng.normal(size=6)
    loss_d, psi_d, slack_d = problem.oracle_sum(w, dense=True)
    loss_s, psi_s, slack_s = problem.oracle_sum(w)
    assert isinstance(psi_d, np.ndarray) and sp.issparse(psi_s)
    assert loss_d == loss_s > 0
    np.testing.assert_array_equal(psi_d, psi_s.toarray().ravel())
    np.testing.assert_array_equal(slack_d, slack_s)


def test_constraints_below_the_inactive_threshold_are_pruned_after_the_window():
    """α_c ≤ INACTIVE_THRESHOLD · Σα (or 0) counts as idle; after ``window`` idle rounds
    the constraint goes with its row, Gram row and column; the rest stays feasible."""
    from structsvm.learners._working_set import INACTIVE_THRESHOLD

    rng = np.random.default_rng(3)
    psi = rng.normal(size=(4, 6))
    ws = WorkingSet(6)
    for k in range(4):
        ws.add(psi[k], [1.0], [0])
    ws.alpha = np.array([0.5, 0.4 * INACTIVE_THRESHOLD, 0.0, 0.1])
    for _ in range(3):
        ws.mark(C=1.0)
    np.testing.assert_array_equal(ws.idle, [0, 3, 3, 0])
    ws.prune(4)
    assert len(ws) == 4
    ws.prune(3)
    assert len(ws) == 2
    np.testing.assert_array_equal(ws.matrix().toarray(), psi[[0, 3]])
    np.testing.assert_allclose(ws.G, psi[[0, 3]] @ psi[[0, 3]].T, rtol=1e-13)
    np.testing.assert_array_equal(ws.alpha, [0.5, 0.1])
    np.testing.assert_allclose(ws.weights(ws.alpha), 0.5 * psi[0] + 0.1 * psi[3])
