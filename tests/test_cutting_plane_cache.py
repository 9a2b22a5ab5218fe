"""The 1-slack constraint cache and the dropping of long-inactive constraints.

With the cache on, the learner still reaches the optimum of the full primal QP
(tests/reference_qp.py, every output enumerated), its certificate still brackets it,
and it calls the oracle less often. The cached constraint itself is checked against a
brute-force construction from the stored rows.
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.structures import MulticlassFeatures, RankingFeatures, SequenceFeatures
from structsvm.structures import get_decoder
from structsvm.learners import OneSlackCuttingPlane
from structsvm.learners._cache import OutputCache
from structsvm.structures import get_loss
from structsvm.learners.problem import Problem

from reference_qp import full_primal_qp


def random_multiclass(seed, n=40, d=4, k=4, noise=1.5):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + noise * rng.normal(size=(n, d))
    labels = ["a", "b", "c", "d", "e"][:k]
    return list(X), [labels[j] for j in y], labels


def zero_one(a, b):
    return float(a != b)


def _problem(X, Y, fm, C, decoder="argmax", loss="zero_one", rescaling="margin"):
    fm.fit(X, Y)
    return Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y, X), feature_map=fm,
                   decoder=get_decoder(decoder), loss=get_loss(loss), C=C,
                   rescaling=rescaling)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("cache_size", [0, 1, 3, 10])
def test_cached_learner_reaches_the_full_qp_optimum(seed, cache_size):
    X, Y, labels = random_multiclass(seed)
    C = [0.3, 3.0, 10.0][seed]
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=C,
                          learner=OneSlackCuttingPlane(cache_size=cache_size), tol=1e-7,
                          max_iter=2000)
    ref, w_ref = full_primal_qp(model.feature_map_, X, Y, labels, zero_one, C)
    assert model.converged_
    assert model.objective_ == pytest.approx(ref, rel=1e-5)
    assert model.objective_ >= ref * (1 - 1e-7)
    assert model.objective_ - model.duality_gap_ <= ref * (1 + 1e-7)
    np.testing.assert_allclose(model.coef_, w_ref, atol=1e-2 * np.abs(w_ref).max())


def test_cached_learner_with_slack_rescaling_reaches_the_full_qp_optimum():
    X, Y, labels = random_multiclass(4, k=4)
    rank = {lab: i for i, lab in enumerate(labels)}

    def distance(a, b):
        return abs(rank[a] - rank[b]) / 2.0

    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=1.0,
                          loss=distance, rescaling="slack", tol=1e-7, max_iter=2000,
                          learner=OneSlackCuttingPlane(cache_size=5))
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, distance, 1.0,
                            rescaling="slack")
    assert model.objective_ == pytest.approx(ref, rel=1e-5)


def test_cached_learner_on_sequences_reaches_the_full_qp_optimum():
    rng = np.random.default_rng(5)
    tags, words = ["A", "B", "C"], ["x", "y", "z"]
    X = [[words[j] for j in rng.integers(0, 3, size=int(rng.integers(1, 4)))]
         for _ in range(12)]
    Y = [[tags[j] for j in rng.integers(0, 3, size=len(x))] for x in X]
    cold = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"),
                         decoder="viterbi", C=2.0, tol=1e-7, max_iter=2000,
                         learner=OneSlackCuttingPlane(cache_size=0))
    cached = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"),
                           decoder="viterbi", C=2.0, tol=1e-7, max_iter=2000,
                           learner=OneSlackCuttingPlane(cache_size=4))
    fm = cached.feature_map_
    # reference over every tagging of every sentence (lengths differ: per sentence)
    import cvxpy as cp

    rows, losses, owner = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        truth = fm.joint_feature(x, y)
        for o in itertools.product(tags, repeat=len(x)):
            d = sum(p != q for p, q in zip(y, o))
            if d:
                rows.append(truth - fm.joint_feature(x, list(o)))
                losses.append(d)
                owner.append(i)
    w, xi = cp.Variable(fm.n_features_), cp.Variable(len(X), nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 2.0 * cp.sum(xi)),
                      [np.array(rows) @ w >= np.array(losses) - xi[owner]])
    ref = prob.solve(solver="CLARABEL")
    assert cached.objective_ == pytest.approx(ref, rel=1e-5)
    assert cold.objective_ == pytest.approx(ref, rel=1e-5)
    assert cached.n_iter_ < cold.n_iter_  # fewer oracle calls
    assert cached.learner_state_["n_cached_rounds"] > 0


def test_the_cache_saves_oracle_calls_and_the_certificate_comes_from_the_oracle():
    X, Y, _ = random_multiclass(6, n=40, k=5)
    problem = _problem(X, Y, MulticlassFeatures(), C=3.0)
    calls = {"n": 0}
    oracle = problem.oracle

    def counted(w, idx=None, **kw):
        calls["n"] += 1
        return oracle(w, idx, **kw)

    problem.oracle = counted
    w0 = np.zeros(problem.n_features)
    res = OneSlackCuttingPlane(cache_size=5).solve(problem, w0, max_iter=1000, tol=1e-6)
    assert res.converged and res.extra["n_cached_rounds"] > 0
    # every objective on the curve, and the certified gap, came from an oracle call
    assert calls["n"] == res.n_iter == len(res.objective_curve)
    assert res.objective == pytest.approx(problem.primal_objective(res.w), rel=1e-12)
    plain = OneSlackCuttingPlane(cache_size=0).solve(problem, w0, max_iter=1000, tol=1e-6)
    assert res.n_iter < plain.n_iter
    assert res.objective == pytest.approx(plain.objective, rel=2e-6)


@pytest.mark.parametrize("rescaling", ["margin", "slack"])
def test_cached_constraint_equals_brute_force(rescaling):
    rng = np.random.default_rng(7)
    n, D, K = 6, 5, 3
    cache = OutputCache(K)
    stored = []
    for _ in range(K + 1):  # one more than the cache holds: the oldest is dropped
        P = sp.random(n, D, density=0.6, random_state=rng, format="csr")
        lo = rng.integers(0, 3, size=n).astype(float)
        cache.push(P, lo)
        stored.append((P.toarray(), lo))
    stored = stored[1:]
    w = rng.normal(size=D)
    loss_sum, row, xi = cache.constraint(w, rescaling)
    want_psi, want_loss, want_xi = np.zeros(D), 0.0, 0.0
    for i in range(n):
        vals = [(lo[i] * (1 - P[i] @ w) if rescaling == "slack" else lo[i] - P[i] @ w, k)
                for k, (P, lo) in enumerate(stored)]
        v, k = max(vals)
        if v > 0:
            P, lo = stored[k]
            want_psi += (lo[i] if rescaling == "slack" else 1.0) * P[i]
            want_loss += lo[i]
            want_xi += v
    np.testing.assert_allclose(row.toarray().ravel(), want_psi, atol=1e-12)
    assert loss_sum == pytest.approx(want_loss)
    assert xi == pytest.approx(want_xi)


def test_inactive_constraints_are_dropped_and_the_optimum_kept():
    X, Y, labels = random_multiclass(8, n=40)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", C=3.0, tol=1e-6,
              max_iter=3000, warm_start=True)  # warm_start: keep the working set
    short = structsvm.fit(X, Y, learner=OneSlackCuttingPlane(inactive_window=1), **kw)
    long_ = structsvm.fit(X, Y, learner=OneSlackCuttingPlane(inactive_window=10000), **kw)
    ref, _ = full_primal_qp(short.feature_map_, X, Y, labels, zero_one, 3.0)
    ws_short = len(short.learner_state_["working_set"])
    ws_long = len(long_.learner_state_["working_set"])
    assert ws_short < ws_long
    # with window 1 every kept constraint was active in the last QP
    assert np.all(short.learner_state_["working_set"].idle < 1)
    for m in (short, long_):
        assert m.objective_ == pytest.approx(ref, rel=1e-5)


def test_cache_size_must_not_be_negative():
    X, Y, _ = random_multiclass(9)
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        structsvm.fit(X, Y, learner=OneSlackCuttingPlane(cache_size=-1))


def test_cache_is_bounded_by_stored_entries():
    cache = OutputCache(10, max_nnz=25)
    for k in range(5):
        cache.push(sp.csr_matrix(np.ones((2, 5 + k))[:, :5]), np.ones(2))  # 10 entries each
    assert len(cache.psi) == 2 and sum(P.nnz for P in cache.psi) == 20
    cache.push(sp.csr_matrix(np.ones((6, 5))), np.ones(6))  # 30 > 25: only the newest
    assert len(cache.psi) == 1


def test_cache_loops_equal_their_numpy_references():
    from structsvm.learners._cache_jit import best_cached_rows, gather_rows

    rng = np.random.default_rng(3)
    for slack in (False, True):
        n, K, D = 7, 3, 9
        M = sp.random(n * K, D, density=0.4, random_state=rng, format="csr")
        M.data = np.round(M.data * 4) / 4  # exact ties between cached answers
        loss = rng.integers(0, 3, size=n * K).astype(float)
        w = np.round(rng.normal(size=D) * 2) / 2
        best, top = best_cached_rows(M.indptr, M.indices, M.data, loss, n, w, slack)
        m = M @ w
        v = (loss * (1 - m) if slack else loss - m).reshape(K, n)
        want = v.argmax(axis=0)
        np.testing.assert_array_equal(best, want * n + np.arange(n))
        np.testing.assert_array_equal(top, v[want, np.arange(n)])
        rows = np.array([0, 5, 9, 20], dtype=np.int64)
        weights = rng.normal(size=rows.size)
        cols, vals = gather_rows(M.indptr, M.indices, M.data, rows, weights)
        S = M[rows]
        np.testing.assert_array_equal(cols, S.indices)
        np.testing.assert_array_equal(vals, S.data * np.repeat(weights, np.diff(S.indptr)))


def test_rankings_run_without_the_cache():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(6, 3)) for _ in range(8)]
    Y = [rng.integers(0, 3, size=6) for _ in X]
    model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=1.0,
                          tol=1e-4, learner=OneSlackCuttingPlane(cache_size=5), warm_start=True)
    assert model.learner_state_["n_cached_rounds"] == 0
    assert model.learner_state_["cache"] is None
