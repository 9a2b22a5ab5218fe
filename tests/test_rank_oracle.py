"""The aggregated ranking oracle (RankingFeatures.aggregate_violation) and its kernel."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking._pairs import FlatTargets
from structsvm.structures.ranking.outputs import Preferences
from structsvm.structures.ranking._jit import aggregate_kernel, aggregate_reference
from structsvm.structures import get_decoder
from structsvm.structures import get_loss
from structsvm.structures.ranking import SwappedPairsLoss


def random_set(rng, n_queries=6, d=4, max_docs=8, ties=False, explicit=0.5,
               min_docs=1, weighted=False):
    """Queries with graded or (with probability ``explicit``) explicit-pair targets;
    ``weighted``: Preferences with a random weight per query (graded) or per pair
    (explicit), some of them 0."""
    X, Y = [], []
    for _ in range(n_queries):
        n = int(rng.integers(min_docs, max_docs + 1))
        x = rng.normal(size=(n, d))
        X.append(np.round(x) if ties else x)
        if rng.random() < explicit and n >= 2:
            k = int(rng.integers(0, 2 * n))
            a = rng.integers(0, n, size=k)
            b = (a + rng.integers(1, n, size=k)) % n      # never a == b; duplicates kept
            y = np.stack([a, b], axis=1).astype(np.intp)
            if weighted:
                y = Preferences(n, pairs=y, weights=random_weights(rng, k))
        else:
            y = rng.integers(0, int(rng.choice([1, 2, 3, 4, 12])), size=n)
            if weighted:
                y = Preferences(n, grades=y, weights=float(random_weights(rng, 1)[0]))
        Y.append(y)
    return X, Y


def random_weights(rng, k):
    """Weights of k pairs: exponential, a fifth of them 0, some integer-valued."""
    w = rng.exponential(2.0, size=k) * (rng.random(k) > 0.2)
    return np.where(rng.random(k) < 0.3, np.round(w), w)


def make_problem(X, Y, normalize=False):
    fm = RankingFeatures().fit(X, Y)
    return Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("sort"),
                   SwappedPairsLoss(normalize=normalize), C=1.0)


def run_kernel(s, offsets, targets, margins, enumerate_factor=None):
    flat = FlatTargets(targets, offsets, enumerate_factor)
    coef = np.full(s.size, np.nan)
    n_viol = np.full(len(targets), np.nan)
    hinge = np.full(len(targets), np.nan)
    aggregate_kernel(s, np.asarray(offsets, dtype=np.int64), flat.ranks, flat.max_rank,
                     flat.method, flat.perm, flat.lower, flat.pair_off, flat.pair_a,
                     flat.pair_b, flat.pair_w, flat.qweight,
                     np.asarray(margins, dtype=float), coef, n_viol, hinge)
    return coef, n_viol, hinge


# ----------------------------------------------------------------------- kernel
@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("enumerate_factor", [0.0, None, np.inf])
def test_kernel_equals_pairwise_reference(seed, enumerate_factor):
    """Graded queries swept (factor 0), enumerated (inf) or by the default rule."""
    rng = np.random.default_rng(seed)
    # sizes up to 70 exercise both the insertion sort and the argsort branch
    lens = rng.integers(0, 70 if seed % 3 == 0 else 9, size=7)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    s = rng.normal(size=int(offsets[-1]))
    if seed % 2:
        s = np.round(2 * s) / 2        # many tied scores, and ties at s_a - s_b == m
    targets = []
    weighted = seed % 4 >= 2   # weights of 0, integers and fractions
    for n in lens:
        if n >= 2 and rng.random() < 0.4:
            k = int(rng.integers(0, 3 * n))
            a = rng.integers(0, n, size=k)
            b = (a + rng.integers(1, n, size=k)) % n
            targets.append(Preferences(n, pairs=np.stack([a, b], axis=1),
                                       weights=random_weights(rng, k) if weighted else None))
        else:
            # 1..4 grade levels, or up to 30 (the Fenwick-tree branch beyond 8 levels)
            levels = 30 if seed % 5 == 4 else 1 + seed % 4
            targets.append(Preferences(n, grades=rng.integers(0, levels, size=n),
                                       weights=float(random_weights(rng, 1)[0])
                                       if weighted else None))
    margins = rng.choice([0.0, 0.5, 1.0, 1 / 3], size=len(targets))
    coef, n_viol, hinge = run_kernel(s, offsets, targets, margins, enumerate_factor)
    rc, rn, rh = aggregate_reference(s, offsets, targets, margins)
    if weighted:  # sums of weights in another order
        assert np.allclose(coef, rc, rtol=1e-12, atol=1e-12)
        assert np.allclose(n_viol, rn, rtol=1e-12, atol=1e-12)
    else:
        assert np.array_equal(coef, rc)
        assert np.array_equal(n_viol, rn)
    assert np.allclose(hinge, rh, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("enumerate_factor", [0.0, np.inf])
def test_kernel_known_answer(enumerate_factor):
    # grades 2 > 1 > 0; scores make (0, 1) violated (0.5 < 1) and (1, 2) satisfied
    s = np.array([1.5, 1.0, -1.0])
    coef, n_viol, hinge = run_kernel(s, [0, 3], [Preferences(3, grades=[2, 1, 0])], [1.0],
                                     enumerate_factor)
    assert coef.tolist() == [1.0, -1.0, 0.0]
    assert n_viol.tolist() == [1]
    assert hinge.tolist() == [0.5]


def test_flat_targets_method_rule():
    from structsvm.structures.ranking import _jit as _ranking_jit

    few = Preferences(4, grades=[1, 0, 0, 0])              # 3 pairs
    many = Preferences(6, grades=np.arange(6))             # 15 pairs > 0.5·6·log2 6
    flat = FlatTargets([few, many, Preferences(2, pairs=[[0, 1]])], [0, 4, 10, 12], 0.5)
    assert flat.method.tolist() == [_ranking_jit.ENUMERATE, _ranking_jit.SWEEP,
                                    _ranking_jit.EXPLICIT]
    assert flat.n_pairs.tolist() == [3, 15, 1]
    assert flat.perm[4:10].tolist() == list(range(6))
    assert flat.lower[4:10].tolist() == list(range(6))


# ----------------------------------------------------------------------- oracle
@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("normalize", [False, True])
def test_aggregate_violation_equals_generic_path(seed, normalize, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    X, Y = random_set(rng, ties=seed % 2 == 1, explicit=[0.0, 0.5, 1.0][seed % 3])
    if seed % 4 == 3:
        X = [sp.csr_matrix(x) for x in X]
    p = make_problem(X, Y, normalize)
    w = np.zeros(4) if seed == 0 else rng.normal(size=4)
    if seed % 2:
        w = np.round(w)                # integer scores: ties s_a − s_b == 1 == margin
    fast = p.oracle_sum(w)
    monkeypatch.setattr(RankingFeatures, "has_aggregate_oracle", False)
    slow = p.oracle_sum(w)
    assert fast[0] == pytest.approx(slow[0], rel=1e-12, abs=1e-12)
    assert np.allclose(fast[1].toarray(), slow[1].toarray(), rtol=1e-10, atol=1e-10)
    assert np.allclose(fast[2], slow[2], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("normalize", [False, True])
def test_aggregate_violation_equals_brute_force(seed, normalize):
    """max over every labelling c ∈ {0,1}^P of each query of Δ(c) − w·(Φ(y) − Φ(c))."""
    rng = np.random.default_rng(300 + seed)
    X, Y = random_set(rng, n_queries=3, d=3, max_docs=4, explicit=0.5)
    p = make_problem(X, Y, normalize)
    w = rng.normal(size=3)
    loss_sum, psi, slack = p.feature_map.aggregate_violation(p.Xe, p.Ye, w, p.loss)
    want_loss, want_psi = 0.0, np.zeros(3)
    for q, (x, y) in enumerate(zip(X, p.Ye)):
        pairs = y.pair_list()
        unit = p.loss.part_cost(y)
        best, arg = 0.0, ()
        for c in itertools.product([0, 1], repeat=len(pairs)):
            swapped = [pr for ci, pr in zip(c, pairs) if ci == 0]
            val = sum(unit - w @ (x[a] - x[b]) for a, b in swapped)
            if val > best:
                best, arg = val, swapped
        assert slack[q] == pytest.approx(best, abs=1e-12)
        want_loss += unit * len(arg)
        want_psi += sum((x[a] - x[b] for a, b in arg), np.zeros(3))
    assert loss_sum == pytest.approx(want_loss)
    assert np.allclose(psi, want_psi)


def test_cache_follows_the_targets_passed():
    rng = np.random.default_rng(7)
    X, Y = random_set(rng, explicit=0.5, min_docs=2)
    fm = RankingFeatures().fit(X, Y)
    Xe, loss = fm.encode_inputs(X), SwappedPairsLoss()
    w = rng.normal(size=4)
    Ye = fm.encode_outputs(Y, X)
    first = fm.aggregate_violation(Xe, Ye, w, loss)
    # other targets on the same encoded inputs, then one target replaced in place
    Y2 = [rng.permutation(len(x)) for x in X]
    Ye2 = fm.encode_outputs(Y2, X)
    for targets in (Ye2, Ye):
        got = fm.aggregate_violation(Xe, targets, w, loss)
        ref = aggregate_reference(np.asarray(Xe.X @ w), Xe.offsets, targets,
                                  np.ones(len(targets)))
        assert got[0] == ref[1].sum() and np.allclose(got[2], ref[2])
        assert np.allclose(got[1], Xe.X.T @ ref[0])
    assert first[0] == got[0]
    Ye[0] = Ye2[0]
    got = fm.aggregate_violation(Xe, Ye, w, loss)
    ref = aggregate_reference(np.asarray(Xe.X @ w), Xe.offsets, Ye, np.ones(len(Ye)))
    assert got[0] == ref[1].sum() and np.allclose(got[2], ref[2])


def test_aggregate_violation_errors():
    q = np.eye(3)
    fm = RankingFeatures().fit([q], [[2, 1, 0]])
    Xe, Ye = fm.encode_inputs([q]), fm.encode_outputs([[2, 1, 0]], [q])
    with pytest.raises(TypeError, match="swapped_pairs"):
        fm.aggregate_violation(Xe, Ye, np.zeros(3), get_loss("zero_one"))
    with pytest.raises(ValueError, match="w has 2 entries"):
        fm.aggregate_violation(Xe, Ye, np.zeros(2), SwappedPairsLoss())
    with pytest.raises(ValueError, match="Sample 0: the true output does not match"):
        fm.aggregate_violation(Xe, [Preferences(2, grades=[1, 0])], np.zeros(3),
                               SwappedPairsLoss())
    with pytest.raises(ValueError, match="1 queries but 2 outputs"):
        fm.aggregate_violation(Xe, Ye + Ye, np.zeros(3), SwappedPairsLoss())


# ----------------------------------------------------------------------- learning
def test_one_slack_on_explicit_pairs_equals_pairwise_qp():
    import cvxpy as cp

    rng = np.random.default_rng(21)
    X, Y = random_set(rng, n_queries=8, d=5, explicit=0.6, min_docs=2)
    D = np.array([x[a] - x[b] for x, y in zip(X, Y)
                  for a, b in (y if np.ndim(y) == 2 else
                               np.argwhere(y[:, None] > y[None, :]))])
    w = cp.Variable(5)
    obj = 0.5 * cp.sum_squares(w) + 0.5 * cp.sum(cp.pos(1 - D @ w))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
    model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=0.5,
                          tol=1e-7, max_iter=2000)
    assert abs(model.objective_ - float(obj.value)) <= 1e-4 * float(obj.value)
