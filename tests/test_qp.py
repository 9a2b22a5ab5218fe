"""The working-set dual QP: cvxpy back-ends, SMO kernel vs its numpy reference, errors."""
import numpy as np
import pytest

from structsvm.protocols import QPError
from structsvm.learners import _qp
from structsvm.learners._qp import solve_dual_qp
from structsvm.learners._smo_jit import smo, smo_reference


def random_qp(seed, m=30, rank=8, n_groups=1):
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(m, rank))
    groups = rng.integers(0, n_groups, size=m) if n_groups > 1 else np.zeros(m, int)
    return P @ P.T, rng.random(m) * 3, groups


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n_groups", [1, 4])
@pytest.mark.parametrize("C", [0.05, 1.0, 50.0])
def test_solvers_agree(seed, n_groups, C):
    G, b, groups = random_qp(seed, n_groups=n_groups)
    values = {}
    for solver in ("clarabel", "osqp", "smo"):
        alpha, dual = solve_dual_qp(G, b, groups, C, solver=solver)
        assert np.all(alpha >= 0)
        assert np.all(np.bincount(groups, weights=alpha) <= C * (1 + 1e-12))
        assert np.isclose(dual, b @ alpha - 0.5 * alpha @ G @ alpha)
        values[solver] = dual
    scale = max(abs(values["clarabel"]), 1.0)
    assert abs(values["smo"] - values["clarabel"]) <= 1e-7 * scale
    assert abs(values["osqp"] - values["clarabel"]) <= 1e-6 * scale


@pytest.mark.parametrize("seed", range(8))
def test_smo_reaches_its_kkt_tolerance(seed):
    G, b, groups = random_qp(seed, n_groups=1 + seed % 4)
    alpha = np.zeros(len(b))
    tol = 1e-10 * max(b.max(), 1.0)
    it, viol = smo(G, b, groups.astype(np.int64), int(groups.max()) + 1, 1.0, alpha, tol,
                   10 ** 6)
    assert viol <= tol
    # the Frank-Wolfe gap bounds the distance to the optimum: check it is tiny
    grad = b - G @ alpha
    fw = sum(1.0 * max(0.0, grad[groups == k].max()) - alpha[groups == k] @ grad[groups == k]
             for k in np.unique(groups))
    assert fw <= 1e-8 * max(b.max(), 1.0)


@pytest.mark.parametrize("seed", range(6))
def test_smo_kernel_equals_numpy_reference(seed):
    G, b, groups = random_qp(seed, m=12, n_groups=1 + seed % 3)
    C = [0.1, 1.0, 10.0][seed % 3]
    ref = smo_reference(G, b, groups, C, np.zeros(len(b)))
    alpha = np.zeros(len(b))
    smo(G, b, groups.astype(np.int64), int(groups.max()) + 1, C, alpha, 1e-12, 100000)
    d_ref = b @ ref - 0.5 * ref @ G @ ref
    d_jit = b @ alpha - 0.5 * alpha @ G @ alpha
    assert abs(d_ref - d_jit) <= 1e-9 * max(abs(d_ref), 1.0)


def test_one_constraint_closed_form():
    # max α − ½·4α² with α ≤ C: α = min(C, 1/4)
    for C, expected in ((1.0, 0.25), (0.1, 0.1)):
        for solver in ("clarabel", "smo"):
            alpha, _ = solve_dual_qp(np.array([[4.0]]), np.array([1.0]), np.array([0]), C,
                                     solver=solver)
            assert alpha[0] == pytest.approx(expected, abs=1e-8)


def test_singular_gram_is_handled():
    P = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])  # duplicates, rank 2
    G, b = P @ P.T, np.array([1.0, 1.0, 1.5, 0.2])
    duals = [solve_dual_qp(G, b, np.zeros(4, int), 10.0, solver=s)[1]
             for s in ("clarabel", "smo", "osqp")]
    assert max(duals) - min(duals) <= 1e-7 * abs(duals[0])
    # primal check: w = Σ α ψ satisfies the constraints with ξ = 0 at C = 10
    alpha, dual = solve_dual_qp(G, b, np.zeros(4, int), 10.0, solver="smo")
    w = alpha @ P
    assert np.all(P @ w >= b - 1e-8)
    assert alpha.sum() < 10.0  # the box is not active, so strong duality gives
    assert dual == pytest.approx(0.5 * w @ w, rel=1e-6)  # dual = primal = ½‖w‖²


def test_failure_raises_qperror_naming_solver_status_and_round(monkeypatch):
    monkeypatch.setattr(_qp, "_solve_once", lambda *a, **k: (None, "infeasible"))
    monkeypatch.setattr(_qp, "_cached_single_group", lambda m: None)
    G, b, groups = random_qp(0)
    with pytest.raises(QPError, match=r"failed in round 7: CLARABEL: infeasible; "
                                      r"OSQP: infeasible; SCS: infeasible"):
        solve_dual_qp(G, b, groups, 1.0, round_=7)


def test_retry_uses_the_next_solver(monkeypatch):
    real = _qp._solve_once
    calls = []

    def flaky(F, b, groups, C, solver, alpha0):
        calls.append(solver)
        if solver == "CLARABEL":
            return None, "solver error: simulated"
        return real(F, b, groups, C, solver, alpha0)

    monkeypatch.setattr(_qp, "_solve_once", flaky)
    monkeypatch.setattr(_qp, "_cached_single_group", lambda m: None)
    G, b, groups = random_qp(1)
    alpha, dual = solve_dual_qp(G, b, groups, 1.0)
    assert calls[:2] == ["CLARABEL", "OSQP"]
    ref_alpha, ref_dual = solve_dual_qp(G, b, groups, 1.0, solver="smo")
    assert dual == pytest.approx(ref_dual, rel=1e-6)


def test_unknown_solver():
    with pytest.raises(ValueError, match="Unknown QP solver 'GUROBI'"):
        solve_dual_qp(np.eye(2), np.ones(2), np.zeros(2, int), 1.0, solver="gurobi")


def test_working_set_qps_run_blas_in_one_thread_and_restore_it(monkeypatch):
    """Small QPs solve with one BLAS thread (faster at these sizes); the caller's
    thread count is back afterwards, also when the solve fails."""
    from threadpoolctl import ThreadpoolController

    from structsvm.learners import _qp

    controller = ThreadpoolController()
    blas = controller.select(user_api="blas")
    if not blas.lib_controllers:
        pytest.skip("no BLAS library that threadpoolctl can control")
    before = [lib.num_threads for lib in blas.lib_controllers]
    seen = []
    solve = _qp._solve

    def spy(*args, **kwargs):
        seen.append([lib.get_num_threads() for lib in blas.lib_controllers])
        return solve(*args, **kwargs)

    monkeypatch.setattr(_qp, "_solve", spy)
    G = np.array([[2.0, 1.0], [1.0, 2.0]])
    _qp.solve_dual_qp(G, np.ones(2), np.zeros(2, dtype=int), 1.0, solver="AUTO")
    assert seen == [[1] * len(before)]
    assert [lib.get_num_threads() for lib in blas.lib_controllers] == before
    with pytest.raises(ValueError):
        _qp.solve_dual_qp(G, np.ones(2), np.zeros(2, dtype=int), 1.0, solver="nope")
    assert [lib.get_num_threads() for lib in blas.lib_controllers] == before
