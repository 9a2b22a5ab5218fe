"""Small 1-slack problems of a structure written in Python train without numba
kernels: the one-group working-set QP by the active-set method in numpy, the cache's
sparse sums and the working set's products in numpy below ``COMPILED_FROM`` entries.
Each numpy path is checked against an independent reference (cvxpy's
Clarabel for the QP, the compiled kernels for the sums) and a small fit against the
same fit on the compiled paths. The default learner of such a structure, dual_cd,
runs the loops compiled at installation: it imports no numba either."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.learners import _cache, _sparse
from structsvm.learners._active_set import active_set_single, kkt_tolerance
from structsvm.learners._cache_jit import best_cached_rows, gather_rows
from structsvm.learners._qp import solve_dual_qp
from structure_examples import MultiLabel, multilabel_data
from test_working_set import kkt_violation


def random_qp(rng, m, rank):
    P = rng.normal(size=(m, rank))
    return P @ P.T, rng.random(m) * 3 - 0.5


def dual(G, b, alpha):
    return float(b @ alpha - 0.5 * alpha @ G @ alpha)


@pytest.mark.parametrize("C", [0.05, 1.0, 50.0])
@pytest.mark.parametrize("rank", [3, 40])
def test_active_set_reaches_clarabels_optimum_from_cold_and_warm_starts(C, rank):
    """Rounds of a working set: each QP has one constraint more than the last and
    starts from the last α (warm) or from nothing (cold)."""
    rng = np.random.default_rng(rank)
    G, b = random_qp(rng, 40, rank)
    tol = kkt_tolerance(G, b, C)
    solved = 0
    alpha = np.zeros(0)
    for m in range(1, 41):
        Gm, bm = G[:m, :m], b[:m]
        ref, _ = solve_dual_qp(Gm, bm, np.zeros(m, int), C, solver="CLARABEL")
        for start in (np.append(alpha, 0.0), np.zeros(m)):
            got = active_set_single(Gm, bm, start, C, tol)
            if got is None:
                continue
            solved += 1
            assert kkt_violation(Gm, bm, got, C) <= tol
            best = dual(Gm, bm, ref)
            assert dual(Gm, bm, got) >= best - 1e-8 * max(1.0, abs(best))
        alpha = active_set_single(Gm, bm, np.append(alpha, 0.0), C, tol)
        assert alpha is not None, f"warm start failed at {m} constraints"
    assert solved >= 70  # of 80: the method gives up only on rare degenerate supports


def test_active_set_zero_when_no_constraint_is_violated():
    G = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert np.array_equal(active_set_single(G, np.array([-1.0, 0.0]), np.zeros(2), 1.0,
                                                 1e-12), np.zeros(2))
    # a single violated constraint: its own optimum min(C, Δ/G_cc)
    got = active_set_single(G, np.array([1.0, -5.0]), np.zeros(2), 1.0, 1e-12)
    np.testing.assert_allclose(got, [0.5, 0.0])


@pytest.mark.parametrize("seed", range(4))
def test_solve_dual_qp_same_optimum_with_and_without_the_active_set(seed):
    rng = np.random.default_rng(seed)
    G, b = random_qp(rng, 25, 6)
    groups = np.zeros(25, int)
    alpha, value = solve_dual_qp(G, b, groups, 0.7, solver="SMO", compiled=False)
    alpha_smo, value_smo = solve_dual_qp(G, b, groups, 0.7, solver="SMO")
    assert value == pytest.approx(value_smo, rel=1e-10)
    np.testing.assert_allclose(G @ alpha, G @ alpha_smo, atol=1e-8)  # the same w


def stacked_cache(rng, n, answers, cols):
    """A cache's stacked CSR arrays with empty rows and repeated answers (ties)."""
    blocks = []
    for k in range(answers):
        M = sp.random(n, cols, density=0.3, random_state=int(rng.integers(1 << 30)),
                      format="csr")
        M.data -= 0.5
        M[rng.integers(0, n)] = 0.0  # an example whose answer is its own output
        M.eliminate_zeros()
        blocks.append(M if k % 3 else (blocks[-1] if blocks else M))  # repeats tie
    S = sp.vstack(blocks, format="csr")
    loss = rng.random(S.shape[0])
    for k in range(answers):
        if k % 3 == 0 and k:
            loss[k * n:(k + 1) * n] = loss[(k - 1) * n:k * n]
    return S.indptr.astype(np.int64), S.indices, S.data, loss


@pytest.mark.parametrize("slack", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_cache_sums_in_numpy_equal_the_loops(seed, slack):
    rng = np.random.default_rng(seed)
    n = 9
    indptr, indices, data, loss = stacked_cache(rng, n, 7, 30)
    w = rng.normal(size=30)
    best, top = _cache._best_cached_rows(indptr, indices, data, loss, n, w, slack)
    best_k, top_k = best_cached_rows(indptr, indices, data, loss, n, w, slack)
    np.testing.assert_array_equal(best, best_k)  # the oldest of equal violations
    np.testing.assert_allclose(top, top_k, rtol=1e-14, atol=1e-14)
    rows = np.sort(best)
    weights = rng.random(rows.size)
    for a, b in zip(_cache._gather_rows(indptr, indices, data, rows, weights),
                    gather_rows(indptr, indices, data, rows, weights)):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_working_set_products_are_one_pass_over_the_block():
    """Margins, weights and Gram matrix of the working set, with rows added one at a
    time (dense and sparse) and several at once, equal the dense algebra; the numpy
    path's bincounts and the compiled loops give the same values, bit for bit."""
    from structsvm.learners._working_set import WorkingSet

    rng = np.random.default_rng(1)
    M = sp.random(6, 80, density=0.25, random_state=2, format="csr").toarray()
    v = rng.normal(size=80)
    coef = np.array([0.5, 0.0, -2.0, 1.0, 0.0, 3.0])
    results = []
    for compiled in (False, True):
        ws = WorkingSet(80)
        ws.compiled = compiled
        ws.add(M[0], [0.1], [0])
        ws.add(sp.csr_matrix(M[1:2]), [0.2], [0])
        ws.add(sp.csr_matrix(M[2:6]), [0.3] * 4, [0] * 4)
        np.testing.assert_allclose(ws.dots(v), M @ v, rtol=1e-13)
        np.testing.assert_allclose(ws.weights(coef), coef @ M, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(ws.G, M @ M.T, rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(ws.matrix().toarray(), M)
        results.append((ws.dots(v), ws.weights(coef), ws.G))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def decisions(monkeypatch):
    """The (structure, Φ entries, answers, compiled) decisions of the fits that follow."""
    from structsvm.learners import cutting_plane

    seen = []

    def spy(problem, answers=1):
        out = _sparse.compiled_for(problem, answers)
        seen.append((type(problem.feature_map).structure, problem.truth_features().nnz,
                     answers, out))
        return out

    monkeypatch.setattr(cutting_plane, "compiled_for", spy)
    return seen


def test_compiled_for_counts_the_caches_entries(monkeypatch):
    from structsvm.structures import MulticlassFeatures

    seen = decisions(monkeypatch)
    X, Y = multilabel_data(n=150, d=5)
    structsvm.fit(X, Y, feature_map=MultiLabel(), learner="one_slack", max_iter=2)
    (structure, nnz, answers, compiled), = seen
    assert structure == "user" and answers == 10  # the default cache size
    assert nnz == sum(6 * sum(y) for y in Y)  # (x, 1) in every label that is on
    assert compiled == (2 * nnz * answers >= _sparse.COMPILED_FROM) and not compiled
    monkeypatch.setattr(_sparse, "COMPILED_FROM", 2 * nnz * answers)
    structsvm.fit(X, Y, feature_map=MultiLabel(), learner="one_slack", max_iter=2)
    assert seen[-1][3]  # at the threshold: the kernels
    # a built-in map's oracle is compiled anyway: its learner uses the kernels
    monkeypatch.setattr(_sparse, "COMPILED_FROM", 10 ** 9)
    Xa = np.array(X)
    structsvm.fit(Xa, (Xa[:, 0] > 0).astype(int), feature_map=MulticlassFeatures(),
                  learner="one_slack", max_iter=2)
    assert seen[-1][0] == "multiclass" and seen[-1][3]


def test_small_fit_same_model_on_the_compiled_paths(monkeypatch):
    """The numpy paths and the kernels solve the same problem to the same certified
    gap: the objectives agree within that gap."""
    X, Y = multilabel_data(n=150, d=5)
    kw = dict(feature_map=MultiLabel(), learner="one_slack", C=1.0, tol=1e-6)
    seen = decisions(monkeypatch)
    light = structsvm.fit(X, Y, **kw)
    monkeypatch.setattr(_sparse, "COMPILED_FROM", 0)  # the kernels throughout
    compiled = structsvm.fit(X, Y, **kw)
    assert [d[3] for d in seen] == [False, True]
    for m in (light, compiled):
        assert m.learner_.name == "one_slack"
        assert m.duality_gap_ <= 1e-6 * m.objective_
    assert light.objective_ == pytest.approx(compiled.objective_, rel=2e-6)
    assert np.mean([a == b for a, b in zip(light.predict(X), compiled.predict(X))]) >= 0.98


def test_warm_start_on_the_numpy_path_continues_the_saved_working_set(monkeypatch):
    """A warm-started refit of a small own structure takes the saved working set (and
    its cache) on the numpy path: it needs fewer oracle rounds than the cold fit, to
    an objective no worse."""
    seen = decisions(monkeypatch)
    X, Y = multilabel_data(n=150, d=5)
    model = structsvm.StructuredSVM(feature_map=MultiLabel(), learner="one_slack", C=1.0,
                                    tol=1e-4)
    model.fit(X, Y)
    cold_rounds, cold_objective = model.n_iter_, model.objective_
    assert model.converged_ and cold_rounds > 2
    model.set_params(warm_start=True)
    model.fit(X, Y)  # keeps the learner's state
    model.fit(X, Y)  # continues from it
    assert [d[3] for d in seen] == [False, False, False]
    assert model.converged_ and model.n_iter_ < cold_rounds
    assert model.objective_ <= cold_objective * (1 + 1e-4)


OWN_STRUCTURE_FIT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import structsvm
from structure_examples import MultiLabel, multilabel_data

X, Y = multilabel_data(n=200)
model = structsvm.fit(X, Y, feature_map=MultiLabel(), tol=1e-4,
                      learner=None if sys.argv[2] == "default" else sys.argv[2])
model.predict(X[:5])
print(json.dumps({"numba": "numba" in sys.modules, "learner": model.learner_.name,
                  "rounds": model.n_iter_, "gap": model.duality_gap_,
                  "objective": model.objective_}))
"""


@pytest.mark.parametrize("learner", ["default", "one_slack"])
def test_a_small_own_structure_fit_imports_no_numba(learner):
    """No kernel is compiled or loaded by numba: it is not even imported. The default
    learner (dual_cd) runs the loops compiled at installation, one_slack numpy."""
    from structsvm import _compiled

    if (learner == "default" and _compiled.extension() is None
            and os.environ.get("STRUCTSVM_REQUIRE_AOT") != "1"):
        pytest.skip("without the compiled extension dual_cd's loops compile (numba)")
    env = dict(os.environ, STRUCTSVM_JIT_WARMUP="0")
    tests = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", OWN_STRUCTURE_FIT, tests, learner],
                         env=env, text=True, capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["learner"] == ("dual_cd" if learner == "default" else learner)
    assert res["rounds"] > 1 and res["gap"] <= 1e-4 * res["objective"]
    assert res["numba"] is False
