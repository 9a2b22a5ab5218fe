"""DualCD ('dual_cd') against the direct cvxpy QP of the full primal, and its kernels
against plain-Python references."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.structures import MulticlassFeatures, SequenceFeatures, TaxonomyFeatures
from structsvm.learners import DualCD
from structsvm.learners import _dual_cd_jit as jit

from reference_qp import full_primal_qp


# ----------------------------------------------------------------------- problems
def multiclass(seed, n=24, d=4, k=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + 1.2 * rng.normal(size=(n, d))
    labels = ["a", "b", "c", "d"][:k]
    return list(X), [labels[j] for j in y], labels, MulticlassFeatures()


def sequences(seed, n=10, T=3, K=3, d=3):
    """Chains of T tokens with dense (T, d) observations; every output is a tag list."""
    rng = np.random.default_rng(seed)
    tags = ["A", "B", "C"][:K]
    proto = rng.normal(scale=1.5, size=(K, d))
    Y = [[tags[j] for j in rng.integers(0, K, size=T)] for _ in range(n)]
    X = [np.array([proto[tags.index(t)] for t in y]) + rng.normal(size=(T, d)) for y in Y]
    outputs = [list(o) for o in itertools.product(tags, repeat=T)]
    return X, Y, outputs, SequenceFeatures()


def taxonomy(seed, n=20, d=3):
    rng = np.random.default_rng(seed)
    tree = {"animal": ["cat", "dog"], "plant": ["oak", "fern", "moss"]}
    leaves = ["cat", "dog", "oak", "fern", "moss"]
    proto = rng.normal(scale=1.5, size=(len(leaves), d))
    y = rng.integers(0, len(leaves), size=n)
    X = proto[y] + rng.normal(size=(n, d))
    return list(X), [leaves[j] for j in y], leaves, TaxonomyFeatures(tree, bias=1.0)


PROBLEMS = {"multiclass": multiclass, "sequence": sequences, "taxonomy": taxonomy}


def raw_loss(model):
    fm = model.feature_map_

    def loss(a, b):
        ea, eb = fm.encode_outputs([a], None), fm.encode_outputs([b], None)
        return float(model.loss_(ea[0], eb[0]))
    return loss


def primal_by_enumeration(model, X, Y, outputs, C):
    """½‖w‖² + C Σ_i max(0, max_o Δ(y_i, o) − w·(Φ(x_i, y_i) − Φ(x_i, o))), from
    ``joint_feature`` on raw data and every output: no oracle, no decoder."""
    fm, w, loss = model.feature_map_, model.coef_, raw_loss(model)
    total = 0.0
    for x, y in zip(X, Y):
        phi = fm.joint_feature(x, y)
        total += max(0.0, max(loss(y, o) - w @ (phi - fm.joint_feature(x, o))
                              for o in outputs))
    return 0.5 * float(w @ w) + C * total


# ----------------------------------------------------------------------- the optimum
def check_against_qp(kind, seed, C, cache_size, tol):
    X, Y, outputs, fm = PROBLEMS[kind](seed)
    model = structsvm.fit(X, Y, feature_map=fm, C=C, tol=tol, max_iter=3000,
                          learner=DualCD(cache_size=cache_size, n_batches=3),
                          random_state=seed)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, outputs, raw_loss(model), C)
    assert model.converged_ and model.learner_.name == "dual_cd"
    assert model.objective_ >= ref * (1 - 1e-7)
    assert model.objective_ - ref <= max(tol, 1e-5) * ref
    # the reported objective is the primal at coef_, recomputed independently
    assert model.objective_ == pytest.approx(primal_by_enumeration(model, X, Y, outputs, C),
                                             rel=1e-9)
    # certificate: the gap bounds the true suboptimality (reference solver tolerance)
    assert model.objective_ - ref <= model.duality_gap_ + 1e-7 * ref


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_dual_cd_with_cache_equals_full_qp(kind, seed):
    check_against_qp(kind, seed, C=[0.3, 2.0][seed], cache_size=8, tol=1e-7)


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
@pytest.mark.parametrize("cache_size", [1, 2])
def test_dual_cd_small_cache_equals_full_qp(kind, cache_size):
    # one cached output per example is block Frank-Wolfe with merged corners (the
    # cache "off"): it converges sublinearly, so it is held to a looser certified tol
    check_against_qp(kind, 0, C=0.3, cache_size=cache_size, tol=1e-3)


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
def test_sweeps_alone_equal_full_qp(kind):
    # inner_passes=0 (the sequence default): cached steps only inside the sweeps
    X, Y, outputs, fm = PROBLEMS[kind](4)
    model = structsvm.fit(X, Y, feature_map=fm, C=1.0, tol=1e-7, max_iter=3000,
                          learner=DualCD(n_batches=4, inner_passes=0))
    ref, _ = full_primal_qp(model.feature_map_, X, Y, outputs, raw_loss(model), 1.0)
    assert model.converged_
    assert ref * (1 - 1e-7) <= model.objective_ <= ref * (1 + 1e-6)


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
def test_certified_gap_bounds_suboptimality_at_every_stop(kind):
    X, Y, outputs, fm = PROBLEMS[kind](3)
    C = 1.0
    ref = None
    for max_iter in (1, 2, 4, 7):
        with pytest.warns(Warning):  # ConvergenceWarning: stopped by max_iter
            model = structsvm.fit(X, Y, feature_map=fm, C=C, tol=1e-12, max_iter=max_iter,
                                  learner=DualCD(cache_size=3, n_batches=2),
                                  random_state=0)
        if ref is None:
            ref, _ = full_primal_qp(model.feature_map_, X, Y, outputs, raw_loss(model), C)
        assert not model.converged_ and model.n_iter_ == max_iter
        exact = primal_by_enumeration(model, X, Y, outputs, C)
        assert model.objective_ == pytest.approx(exact, rel=1e-9)  # AT coef_
        assert model.objective_curve_[-1] == model.objective_
        assert exact - ref <= model.duality_gap_ * (1 + 1e-9) + 1e-9 * ref
        assert exact >= ref * (1 - 1e-6)


def test_slack_rescaling_equals_full_qp():
    X, Y, labels, fm = multiclass(5, k=4)
    rank = {lab: i for i, lab in enumerate(labels)}

    def distance(a, b):
        return abs(rank[a] - rank[b]) / 2.0

    model = structsvm.fit(X, Y, feature_map=fm, C=1.0, loss=distance, rescaling="slack",
                          learner="dual_cd", tol=1e-7, max_iter=3000)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, distance, 1.0,
                            rescaling="slack")
    assert model.converged_
    assert abs(model.objective_ - ref) <= 1e-5 * ref


def test_sparse_inputs_and_warm_start():
    X, Y, labels, fm = multiclass(6, n=30)
    Xs = [sp.csr_matrix(x) for x in X]
    model = structsvm.StructuredSVM(feature_map=fm, learner="dual_cd", C=1.0,
                                    tol=1e-2).fit(Xs, Y)
    first = model.objective_
    model.set_params(warm_start=True, tol=1e-8)
    model.fit(Xs, Y)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, raw_loss(model), 1.0)
    assert model.converged_ and model.objective_ <= first + 1e-12
    assert abs(model.objective_ - ref) <= 1e-5 * ref


@pytest.mark.parametrize("bad, match", [
    (dict(cache_size=0), "cache_size must be an int >= 1"),
    (dict(n_batches=0), "n_batches must be an int >= 1"),
    (dict(inner_passes=-1), "inner_passes must be an int >= 0"),
    (dict(inner_tol=-0.5), "inner_tol must be a number >= 0"),
])
def test_bad_parameters(bad, match):
    X, Y, _, fm = multiclass(0, n=6)
    with pytest.raises(ValueError, match=match):
        structsvm.fit(X, Y, feature_map=fm, learner=DualCD(**bad))


# ----------------------------------------------------------------------- kernels
def _random_state(rng, n=5, S=4, D=12, omega=None):
    rows = [sp.random(1, D, density=0.4, format="csr", random_state=rng.integers(1 << 30))
            for _ in range(n * (S - 1))]
    M = sp.vstack(rows, format="csr")
    M.sort_indices()
    slot = np.full((n, S), -1, dtype=np.int64)
    alpha, loss, gram = np.zeros((n, S)), np.zeros((n, S)), np.zeros((n, S, S))
    C = 0.7
    for i in range(n):
        ids = i * (S - 1) + np.arange(S - 1)
        slot[i, :S - 1] = ids
        a = rng.dirichlet(np.ones(S)) * C
        alpha[i, :S - 1] = a[:S - 1] * (rng.random(S - 1) < 0.7)
        loss[i, :S - 1] = rng.random(S - 1) * 2
        W = M[ids] if omega is None else M[ids] @ sp.diags(omega)
        G = (W @ M[ids].T).toarray()
        gram[i, :S - 1, :S - 1] = G
    return M, slot, alpha, loss, gram, C


def _reference_block(i, w, M, slot, alpha, loss, C, steps, omega=None, shared=False):
    """Plain numpy pairwise steps on example i (dense rows, the null output explicit);
    with ``omega``, those of the quadratic ½ Σ_j ω_j (Σ α ψ)_j², w moving by ω ⊙ d
    (``shared``: the steps are those, but the returned w moves by d)."""
    S = slot.shape[1]
    om = np.ones(M.shape[1]) if omega is None else omega
    occ = [s for s in range(S) if slot[i, s] >= 0]
    P = np.vstack([M[slot[i, s]].toarray().ravel() for s in occ] + [np.zeros(M.shape[1])])
    a = np.append(alpha[i, occ], C - alpha[i, occ].sum())
    b = np.append(loss[i, occ], 0.0)
    g0 = b - P @ w
    gap = C * max(0.0, g0.max()) - a[:-1] @ g0[:-1]
    moved = np.zeros_like(w)
    for _ in range(steps):
        g = b - P @ w
        up = int(np.argmax(g))
        cand = np.flatnonzero(a > 1e-12 * C)
        dn = int(cand[np.argmin(g[cand])])
        if up == dn or g[up] - g[dn] <= 1e-12 * (1 + abs(g[up])):
            break
        d = P[up] - P[dn]
        q = d @ (om * d)
        t = a[dn] if q <= 1e-300 else min((g[up] - g[dn]) / q, a[dn])
        a[up] += t
        a[dn] -= t
        w = w + t * om * d
        moved += t * d
    return (w - om * moved + moved if shared else w), a[:-1], gap


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("steps", [1, 300])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shared", [False, True])
def test_block_step_kernel_equals_reference(seed, steps, weighted, shared):
    # one step: the same pair and step; many: the block optimum (after an exact
    # line search the next pair can tie within rounding, so the paths may differ);
    # weighted: the per-feature ω of the partitioned learner's local subproblem;
    # shared: a w other processes step on (atomic additions, ω damps the steps only)
    rng = np.random.default_rng(seed)
    D = 12
    omega = rng.integers(1, 5, size=D).astype(float) if weighted else None
    M, slot, alpha, loss, gram, C = _random_state(rng, D=D, omega=omega)
    p_ind, p_dat = M.indices.astype(np.int32), M.data.copy()
    p_start, p_len = M.indptr[:-1].astype(np.int64), np.diff(M.indptr).astype(np.int64)
    w = jit.weights_from_alpha(M.shape[1], p_ind, p_dat, p_start, p_len, slot, alpha)
    np.testing.assert_allclose(w, sum(alpha[i, s] * M[slot[i, s]].toarray().ravel()
                                      for i in range(slot.shape[0])
                                      for s in range(slot.shape[1]) if slot[i, s] >= 0))
    for i in range(slot.shape[0]):
        w_ref, a_ref, gap_ref = _reference_block(i, w.copy(), M, slot, alpha.copy(), loss,
                                                 C, steps=steps, omega=omega,
                                                 shared=shared)
        a = alpha.copy()
        gap = jit.block_smo(i, w, p_ind, p_dat, p_start, p_len, slot, a, loss, gram, C,
                            1e-12, steps, np.empty(slot.shape[1]),
                            np.empty(0) if omega is None else omega, shared)
        occ = slot[i] >= 0
        assert gap == pytest.approx(gap_ref, rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(a[i, occ], a_ref, atol=1e-9)
        np.testing.assert_allclose(w, w_ref, atol=1e-9)
        assert a[i].min() >= 0 and a[i].sum() <= C * (1 + 1e-12)
        alpha = a


def test_sparse_row_dot_equals_numpy():
    rng = np.random.default_rng(0)
    M = sp.random(6, 40, density=0.3, format="csr", random_state=1)
    M.sort_indices()
    v = rng.normal(size=40)
    for a in range(6):
        sa, la = M.indptr[a], M.indptr[a + 1] - M.indptr[a]
        assert jit.row_dot_dense(M.indices, M.data, sa, la, v) == pytest.approx(M[a] @ v)
        for b in range(6):
            sb, lb = M.indptr[b], M.indptr[b + 1] - M.indptr[b]
            assert jit.row_dot_row(M.indices, M.data, sa, la, sb, lb,
                                   np.empty(0)) == pytest.approx(
                (M[a] @ M[b].T).toarray()[0, 0])
            omega = rng.random(40) + 0.5
            assert jit.row_dot_row(M.indices, M.data, sa, la, sb, lb,
                                   omega) == pytest.approx(
                (M[a] @ sp.diags(omega) @ M[b].T).toarray()[0, 0])
