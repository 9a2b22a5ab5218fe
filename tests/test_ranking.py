"""Ranking map, sort decoder, swapped-pairs loss and metrics against brute force."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.learners.problem import Problem
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking.outputs import PairLabelling, Preferences
from structsvm.structures.ranking.features import RankingPotentials
from structsvm.structures import get_decoder
from structsvm.structures.ranking._sort_jit import violated_counts_batch, violated_counts_reference
from structsvm.structures import get_loss
from structsvm.structures.ranking import (kendall_tau,
    mean_average_precision,
    ndcg_at_k,
    pairwise_accuracy)
from structsvm.structures.ranking import SwappedPairsLoss


def random_queries(rng, n_queries=5, d=4, max_docs=7, levels=3, ties=False):
    X = [rng.normal(size=(int(rng.integers(1, max_docs + 1)), d)) for _ in range(n_queries)]
    if ties:
        X = [np.round(x) for x in X]
    Y = [rng.integers(0, levels, size=len(x)) for x in X]
    return X, Y


def graded_pairs(y):
    return [(a, b) for a in range(len(y)) for b in range(len(y)) if y[a] > y[b]]


def problem(X, Y, C=1.0, loss="swapped_pairs"):
    fm = RankingFeatures().fit(X, Y)
    return Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("sort"),
                   get_loss(loss), C=C)


# ----------------------------------------------------------------------- kernel
@pytest.mark.parametrize("seed", range(40))
def test_violated_counts_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    s = rng.normal(size=n)
    if seed % 2:
        s = np.round(s)  # tied scores
    r = rng.integers(0, 1 + seed % 5, size=n).astype(float)
    m = float(rng.choice([0.0, 0.5, 1.0]))
    up = np.zeros(n, dtype=np.int64)
    down = np.zeros(n, dtype=np.int64)
    violated_counts_batch(s, s + m, r, np.array([0, n]), up, down)
    bu = [sum(r[b] < r[a] and s[a] < s[b] + m for b in range(n)) for a in range(n)]
    bd = [sum(r[a] > r[b] and s[a] < s[b] + m for a in range(n)) for b in range(n)]
    assert up.tolist() == bu and down.tolist() == bd
    ru, rd = violated_counts_reference(s, s + m, r)
    assert ru.tolist() == bu and rd.tolist() == bd


# ----------------------------------------------------------------------- oracle
@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("explicit", [False, True])
def test_oracle_equals_enumeration_of_all_pairs(seed, explicit):
    rng = np.random.default_rng(seed)
    X, Y = random_queries(rng, ties=seed % 3 == 0)
    if explicit:  # the same preferences, given as explicit (better, worse) pairs
        Y = [np.array(graded_pairs(y), dtype=np.intp).reshape(-1, 2) for y in Y]
    w = rng.normal(size=4) * (0 if seed == 0 else 1)
    v = problem(X, Y).oracle(w)
    for i, (x, y) in enumerate(zip(X, Y)):
        pairs = [tuple(p) for p in y] if explicit else graded_pairs(y)
        hinge = sum(max(0.0, 1 - w @ (x[a] - x[b])) for a, b in pairs)
        swapped = [(a, b) for a, b in pairs if w @ (x[a] - x[b]) < 1]
        psi = sum((x[a] - x[b] for a, b in swapped), np.zeros(4))
        assert v.slack[i] == pytest.approx(hinge, abs=1e-10)
        assert v.loss[i] == len(swapped)
        assert np.allclose(v.psi[i].toarray().ravel(), psi)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("normalize", [False, True])
def test_loss_augmented_labelling_maximises_over_all_labellings(seed, normalize):
    """Brute force over every c ∈ {0,1}^P: max Δ(c) − w·(Φ(y) − Φ(c))."""
    rng = np.random.default_rng(50 + seed)
    x = rng.normal(size=(5, 3))
    y = rng.integers(0, 3, size=5)
    pairs = graded_pairs(y)[:10]
    Y = [np.array(pairs, dtype=np.intp).reshape(-1, 2)]
    loss = SwappedPairsLoss(normalize=normalize)
    fm = RankingFeatures().fit([x], Y)
    target = fm.encode_outputs(Y, [x])[0]
    w = rng.normal(size=3)
    batch = fm.batch_potentials(fm.encode_inputs([x]), w).augment([target], loss)
    got = get_decoder("sort")(batch)[0]
    unit = loss.part_cost(target)
    best = -np.inf
    for c in itertools.product([0, 1], repeat=len(pairs)):
        val = sum(unit * (1 - ci) - (1 - ci) * w @ (x[a] - x[b])
                  for ci, (a, b) in zip(c, pairs))
        best = max(best, val)
    s = x @ w
    got_val = loss(target, got) - (target.coef - got.coef) @ s
    assert got_val == pytest.approx(max(best, 0.0))


def test_joint_feature_score_identity_for_every_output_kind():
    rng = np.random.default_rng(1)
    X, Y = random_queries(rng, n_queries=3, max_docs=6)
    fm = RankingFeatures().fit(X, Y)
    w = rng.normal(size=4)
    for x, y in zip(X, Y):
        target = fm.encode_outputs([y], [x])[0]
        pot = fm.potentials(x, w)
        assert w @ fm.joint_feature(x, y) == pytest.approx(pot.score(target))
        brute = sum((x[a] - x[b] for a, b in graded_pairs(y)), np.zeros(4))
        assert np.allclose(fm.joint_feature(x, y), brute)
        order = rng.permutation(len(x))
        phi = fm.joint_features(fm.encode_inputs([x]), [order]).toarray().ravel()
        assert w @ phi == pytest.approx(pot.score(order))
        aug = pot.augment([target], SwappedPairsLoss())
        lab = get_decoder("sort")(aug)[0]
        phi = fm.joint_features(fm.encode_inputs([x]), [lab]).toarray().ravel()
        assert w @ phi == pytest.approx(pot.score(lab))


def test_sparse_queries_give_the_same_oracle():
    rng = np.random.default_rng(4)
    X, Y = random_queries(rng, n_queries=4)
    w = rng.normal(size=4)
    dense = problem(X, Y).oracle(w)
    sparse = problem([sp.csr_matrix(x) for x in X], Y).oracle(w)
    assert np.allclose(dense.slack, sparse.slack)
    assert np.allclose(dense.psi.toarray(), sparse.psi.toarray())


def test_sort_decoder_ranks_by_score_and_loss_counts_swaps():
    pot = RankingPotentials(np.array([0.3, 2.0, -1.0, 0.5]), [0, 4])
    order = get_decoder("sort")(pot)[0]
    assert order.tolist() == [1, 3, 0, 2]
    y = Preferences(4, grades=[3, 0, 1, 2])
    brute = sum(1 for a, b in graded_pairs([3, 0, 1, 2])
                if list(order).index(a) > list(order).index(b))
    assert SwappedPairsLoss()(y, order) == brute
    assert SwappedPairsLoss(normalize=True)(y, order) == pytest.approx(brute / 6)


@pytest.mark.parametrize("bad, match", [
    ([[0, 1]], "2 relevance grades for a query with 3"),
    ([np.array([[0, 5]])], "outside"),
    ([np.array([[1, 1]])], "itself"),
    ([["a", "b", "c"]], "numeric"),
])
def test_target_errors_name_the_sample(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RankingFeatures().fit([np.zeros((3, 2))], bad)


def test_augment_rejects_other_losses():
    pot = RankingPotentials(np.zeros(2), [0, 2])
    with pytest.raises(TypeError, match="swapped_pairs"):
        pot.augment([Preferences(2, grades=[1, 0])], get_loss("zero_one"))


# ----------------------------------------------------------------------- learning
def pairwise_qp(X, Y, C):
    """The ranking SVM as a direct QP over every pair (the brute-force reference)."""
    import cvxpy as cp

    D = np.array([x[a] - x[b] for x, y in zip(X, Y) for a, b in graded_pairs(y)])
    w = cp.Variable(D.shape[1])
    obj = 0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - D @ w))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
    return float(obj.value)


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_one_slack_objective_equals_pairwise_qp(C):
    import structsvm

    rng = np.random.default_rng(11)
    X, Y = random_queries(rng, n_queries=8, d=5, max_docs=8)
    model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=C,
                          tol=1e-7, max_iter=2000)
    ref = pairwise_qp(X, Y, C)
    assert abs(model.objective_ - ref) <= 1e-4 * ref
    pred = model.predict(X)
    assert all(sorted(p.tolist()) == list(range(len(x))) for p, x in zip(pred, X))


# ----------------------------------------------------------------------- metrics
def test_ndcg_matches_sklearn_with_exponential_gain():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(5)
    rels = [rng.integers(0, 3, size=8) for _ in range(6)]
    rels = [r for r in rels if r.any()]
    ranks = [rng.permutation(8) for _ in rels]
    ref = np.mean([ndcg_score([2.0 ** r - 1], [-np.argsort(o).astype(float)], k=5)
                   for r, o in zip(rels, ranks)])
    assert ndcg_at_k(rels, ranks, k=5) == pytest.approx(ref)


def test_ranking_metrics_known_values():
    rel = [[2, 0, 1], [0, 0, 0]]
    perfect = [[0, 2, 1], [0, 1, 2]]
    assert ndcg_at_k(rel, perfect) == 1.0  # the all-zero query is skipped
    assert ndcg_at_k(rel, perfect, empty="zero") == 0.5
    assert mean_average_precision(rel, perfect) == 1.0
    assert pairwise_accuracy(rel, perfect) == 1.0
    assert kendall_tau(rel, [[1, 2, 0], [0, 1, 2]]) == -1.0
    with pytest.raises(ValueError, match="Sample 0: the ranking must be a permutation"):
        ndcg_at_k([[1, 0]], [[0, 0]])
