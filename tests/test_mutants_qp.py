"""The working-set dual QP (structsvm.learners._qp): behaviours the mutation run found
untested (see docs/testing.md, "Mutation testing"). The fallback from one solver to
the next hides a solver that always fails, so each back-end is asked on its own."""
import numpy as np
import pytest

from structsvm.learners import _qp
from structsvm.learners._qp import solve_dual_qp


def _random_qp(seed, m=25, rank=6, n_groups=3):
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(m, rank))
    return P @ P.T, rng.random(m) * 3, rng.integers(0, n_groups, size=m)


@pytest.mark.parametrize("solver", ["CLARABEL", "OSQP"])
def test_each_cvxpy_back_end_solves_the_qp_on_its_own(solver):
    G, b, groups = _random_qp(0)
    alpha, status = _qp._solve_once(_qp._factor(G), b, groups, 1.0, solver, None)
    assert alpha is not None, status
    ref, ref_dual = solve_dual_qp(G, b, groups, 1.0, solver="smo")
    dual = b @ alpha - 0.5 * alpha @ G @ alpha
    assert dual == pytest.approx(ref_dual, rel=1e-6, abs=1e-9)


def test_a_solver_that_ends_without_a_solution_reports_its_status():
    import cvxpy as cp

    x = cp.Variable(2, nonneg=True)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [cp.sum(x) <= -1.0])   # infeasible
    alpha, status = _qp._run(prob, x, "CLARABEL", False)
    assert alpha is None and status == "infeasible"
