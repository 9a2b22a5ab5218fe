"""Weighted ranking targets: ½‖w‖² + C Σ ω_ab max(0, 1 − w·(φ_a − φ_b)) for every
learner, against a direct QP, brute force and the unweighted problem it stands for."""
import itertools
import numpy as np
import pytest

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import RankingFeatures, get_decoder
from structsvm.structures.ranking import SwappedPairsLoss
from structsvm.structures.ranking.outputs import Preferences

from test_rank_oracle import random_set


def weighted_problem(X, Y, normalize=False, C=1.0):
    fm = RankingFeatures().fit(X, Y)
    return Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("sort"),
                   SwappedPairsLoss(normalize=normalize), C=C)


def pairs_and_weights(X, Y):
    """Every pair's φ_a − φ_b and ω_ab, listed from the targets' definition."""
    rows, om = [], []
    for x, y in zip(X, Y):
        y = y if isinstance(y, Preferences) else \
            RankingFeatures().fit([x], [y]).encode_outputs([y], [x])[0]
        if y.pairs is not None:
            pw = np.ones(len(y.pairs)) if y.pair_weights is None else y.pair_weights
            for (a, b), wt in zip(y.pairs, pw):
                rows.append(x[a] - x[b])
                om.append(y.weight * wt)
        else:
            for a, b in itertools.product(range(len(x)), repeat=2):
                if y.grades[a] > y.grades[b]:
                    rows.append(x[a] - x[b])
                    om.append(y.weight)
    return np.array(rows), np.array(om)


def direct_qp(D, om, C):
    """min ½‖w‖² + C Σ_k ω_k ξ_k  s.t.  D_k·w ≥ 1 − ξ_k, ξ ≥ 0 (cvxpy, Clarabel)."""
    import cvxpy as cp

    w = cp.Variable(D.shape[1])
    obj = 0.5 * cp.sum_squares(w) + C * (om @ cp.pos(1 - D @ w))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
    return float(obj.value), np.asarray(w.value)


def objective(w, D, om, C):
    return 0.5 * float(w @ w) + C * float(om @ np.maximum(0.0, 1.0 - D @ w))


# ----------------------------------------------------------------------- oracle
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("normalize", [False, True])
def test_weighted_oracle_equals_brute_force(seed, normalize):
    """max over every labelling c ∈ {0,1}^P of Σ ω (1 − c)(m − w·(φ_a − φ_b)), the
    aggregated (compiled) oracle and the per-example oracle alike."""
    rng = np.random.default_rng(500 + seed)
    X, Y = random_set(rng, n_queries=3, d=3, max_docs=4, explicit=0.5, weighted=True)
    p = weighted_problem(X, Y, normalize)
    w = rng.normal(size=3)
    loss_sum, psi, slack = p.feature_map.aggregate_violation(p.Xe, p.Ye, w, p.loss)
    v = p.oracle(w)
    want_loss, want_psi = 0.0, np.zeros(3)
    for q, (x, y) in enumerate(zip(X, p.Ye)):
        pairs, om = y.pair_list(), y.weights_of_pairs()
        total = om.sum()
        unit = (1.0 / total if total > 0 else 0.0) if normalize else 1.0
        best, arg = 0.0, ()
        for c in itertools.product([0, 1], repeat=len(pairs)):
            swapped = [k for k, ck in enumerate(c) if ck == 0]
            val = sum(om[k] * (unit - w @ (x[pairs[k, 0]] - x[pairs[k, 1]]))
                      for k in swapped)
            if val > best + 1e-12:
                best, arg = val, swapped
        assert slack[q] == pytest.approx(best, abs=1e-10)
        assert v.slack[q] == pytest.approx(best, abs=1e-10)
        q_psi = sum((om[k] * (x[pairs[k, 0]] - x[pairs[k, 1]]) for k in arg), np.zeros(3))
        assert np.allclose(v.psi[q].toarray().ravel(), q_psi)
        assert v.loss[q] == pytest.approx(unit * sum(om[k] for k in arg))
        want_loss += unit * sum(om[k] for k in arg)
        want_psi += q_psi
    assert loss_sum == pytest.approx(want_loss)
    assert np.allclose(psi, want_psi)


@pytest.mark.parametrize("seed", range(8))
def test_weighted_aggregate_equals_generic_path(seed, monkeypatch):
    rng = np.random.default_rng(700 + seed)
    X, Y = random_set(rng, explicit=[0.0, 0.5, 1.0][seed % 3], weighted=True,
                      ties=seed % 2 == 1)
    p = weighted_problem(X, Y, normalize=seed % 2 == 0)
    w = np.round(rng.normal(size=4)) if seed % 2 else rng.normal(size=4)
    fast = p.oracle_sum(w)
    monkeypatch.setattr(RankingFeatures, "has_aggregate_oracle", False)
    slow = p.oracle_sum(w)
    assert fast[0] == pytest.approx(slow[0], rel=1e-12, abs=1e-12)
    assert np.allclose(fast[1].toarray(), slow[1].toarray(), rtol=1e-10, atol=1e-10)
    assert np.allclose(fast[2], slow[2], rtol=1e-10, atol=1e-10)


def test_weighted_joint_feature_and_loss_of_an_ordering():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 3))
    pairs = np.array([[0, 1], [2, 1], [4, 3], [0, 4], [3, 0]])
    om = np.array([2.0, 0.0, 0.5, 3.0, 1.25])
    y = Preferences(5, pairs=pairs, weights=om)
    fm = RankingFeatures().fit([x], [y])
    brute = sum((o * (x[a] - x[b]) for (a, b), o in zip(pairs, om)), np.zeros(3))
    assert np.allclose(fm.joint_feature(x, y), brute)
    w = rng.normal(size=3)
    assert w @ fm.joint_feature(x, y) == pytest.approx(fm.potentials(x, w).score(y))
    order = rng.permutation(5)
    pos = np.argsort(order)
    swapped = sum(o for (a, b), o in zip(pairs, om) if pos[a] > pos[b])
    assert SwappedPairsLoss()(y, order) == pytest.approx(swapped)
    assert SwappedPairsLoss(normalize=True)(y, order) == pytest.approx(swapped / om.sum())
    assert SwappedPairsLoss().max_loss(y) == pytest.approx(om.sum())
    # a query weight on graded targets scales Φ and Δ alike
    g = Preferences(5, grades=[2, 0, 1, 1, 0], weights=2.5)
    plain = Preferences(5, grades=[2, 0, 1, 1, 0])
    assert np.allclose(g.coef, 2.5 * plain.coef)
    assert SwappedPairsLoss()(g, order) == pytest.approx(2.5 * SwappedPairsLoss()(plain, order))


# ----------------------------------------------------------------------- learners
def small_weighted_set(seed):
    rng = np.random.default_rng(900 + seed)
    X, Y = random_set(rng, n_queries=8, d=5, max_docs=7, explicit=0.6, min_docs=2,
                      weighted=True)
    return X, Y


# each learner certifies a relative duality gap of ``tol`` (Frank-Wolfe converges
# slowly: a looser one, within seconds)
LEARNERS = {"one_slack": dict(tol=1e-7, max_iter=3000),
            "n_slack": dict(tol=1e-7, max_iter=3000),
            "dual_cd": dict(tol=1e-7, max_iter=3000),
            "frank_wolfe": dict(tol=1e-3, max_iter=5000)}


@pytest.mark.parametrize("learner", sorted(LEARNERS))
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_every_learner_reaches_the_weighted_qp_optimum(learner, C):
    """½‖w‖² + C Σ ω ξ, solved directly (cvxpy over the explicit weighted pairs), equals
    the objective each learner reports and the one recomputed from its w."""
    X, Y = small_weighted_set(int(C * 10))
    D, om = pairs_and_weights(X, Y)
    assert (om == 0).any() and len(set(np.round(om, 6))) > 3  # weights really vary
    ref, w_ref = direct_qp(D, om, C)
    model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=C,
                          learner=learner, random_state=0, **LEARNERS[learner])
    assert model.converged_
    w = model.coef_
    assert objective(w, D, om, C) == pytest.approx(model.objective_, rel=1e-9)
    tol = max(1e-4, LEARNERS[learner]["tol"])
    assert -1e-6 * ref <= model.objective_ - ref <= tol * ref, (learner, model.objective_, ref)
    # the unweighted optimum is another point: the weights change the problem
    unweighted = objective(direct_qp(D, np.ones_like(om), C)[1], D, om, C)
    assert unweighted > ref * (1 + 1e-3)


def test_pegasos_gets_within_two_percent_of_the_weighted_optimum():
    X, Y = small_weighted_set(1)
    D, om = pairs_and_weights(X, Y)
    ref, _ = direct_qp(D, om, 0.1)
    model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=0.1,
                          learner="pegasos", max_iter=400, tol=0.0, random_state=0)
    assert objective(model.coef_, D, om, 0.1) <= 1.02 * ref


def test_integer_weights_equal_repeated_pairs_and_zero_weights_dropped_pairs():
    """ω = 3 is the pair listed three times; ω = 0 is the pair left out; a query
    weight c is every pair of the query weighing c."""
    rng = np.random.default_rng(4)
    X = [rng.normal(size=(6, 3)) for _ in range(4)]
    Yw, Yr = [], []
    for x in X:
        pairs = np.array([(a, b) for a in range(6) for b in range(6) if a != b])
        pairs = pairs[rng.random(len(pairs)) < 0.5]
        om = rng.integers(0, 4, size=len(pairs)).astype(float)
        Yw.append(Preferences(6, pairs=pairs, weights=om))
        Yr.append(np.repeat(pairs, om.astype(int), axis=0))
    kw = dict(feature_map=RankingFeatures(), decoder="sort", C=0.3, tol=1e-8,
              max_iter=3000)
    a = structsvm.fit(X, Yw, **kw)
    b = structsvm.fit(X, Yr, **kw)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-6)
    assert np.allclose(a.coef_, b.coef_, atol=1e-4)
    grades = [rng.integers(0, 3, size=6) for _ in X]
    c = structsvm.fit(X, [Preferences(6, grades=g, weights=2.0) for g in grades], **kw)
    d = structsvm.fit(X, grades, **dict(kw, C=0.6))
    assert c.objective_ == pytest.approx(d.objective_, rel=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    (dict(pairs=[[0, 1]], weights=[-1.0]), "finite and >= 0"),
    (dict(pairs=[[0, 1]], weights=[np.nan]), "finite and >= 0"),
    (dict(pairs=[[0, 1]], weights=[1.0, 2.0]), r"shape \(2,\) for 1 pairs"),
    (dict(grades=[1, 0], weights=[1.0]), "per-pair weights need explicit pairs"),
    (dict(grades=[1, 0], weights=-2.0), "finite and >= 0"),
])
def test_weight_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Preferences(2, **kwargs)
