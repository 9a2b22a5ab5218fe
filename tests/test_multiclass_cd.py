"""MulticlassDualCD ('multiclass_cd'): its kernels against plain-Python references, its
solutions against the direct cvxpy QP and LinearSVC, its certificate, refusals, the
default selection, warm start and model files."""
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.structures import MulticlassFeatures, TaxonomyFeatures
from structsvm.learners import MulticlassDualCD, default_learner
from structsvm.learners import _multiclass_cd_jit as jit
from structsvm.learners.multiclass_cd import primal_terms, weights_from_beta

from reference_qp import full_primal_qp


# ----------------------------------------------------------------------- references
def ref_subproblem(B, q, C):
    """argmin ½ q Σ β² + B·β s.t. Σ β = 0, β_0 ≤ C, β_k ≤ 0 (k > 0), by bisection on
    the multiplier θ of Σ_k min(C_k, (θ − B_k) / q) = 0 (increasing in θ)."""
    cap = np.zeros(len(B))
    cap[0] = C

    def total(theta):
        return np.minimum(cap, (theta - B) / q).sum()

    lo, hi = B.min() - q * C - 1.0, B.max() + q * C + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if total(mid) < 0 else (lo, mid)
    return np.minimum(cap, (0.5 * (lo + hi) - B) / q)


def ref_sweep(order, rows, Y, table, C, WT, beta, cls, n_act, shrink, gaps):
    """Plain-Python pass of :func:`jit.sweep` (``rows[i]`` = (columns, values))."""
    updated, gain = 0, 0.0
    for i in order:
        cols, vals = rows[i]
        q = float(vals @ vals)
        y, na = Y[i], n_act[i]
        act = list(cls[i, :na])
        s = np.array([float(vals @ WT[cols, k]) for k in act])
        G = table[y, act] + s
        b = beta[i, act]
        B = G - q * b
        caps = np.where(np.arange(na) == 0, C, 0.0)
        free = b < caps
        minG = G[free].min() if free.any() else np.inf
        gaps[i] = C * (G.max() - G[0]) + float(b @ G)
        maxG = G.max()
        if shrink:
            a = 1
            while a < na:
                if beta[i, cls[i, a]] == 0.0 and G[a] < minG:
                    na -= 1
                    cls[i, a], cls[i, na] = cls[i, na], cls[i, a]
                    G[a], G[na] = G[na], G[a]
                    B[a], B[na] = B[na], B[a]
                else:
                    a += 1
            n_act[i] = na
        if na < 2 or maxG - minG <= 1e-12 * (1.0 + abs(maxG)):
            continue
        act = cls[i, :na]
        new = ref_subproblem(B[:na], q, C)
        old = beta[i, act].copy()
        gain += float(np.sum((0.5 * q * old + B[:na]) * old - (0.5 * q * new + B[:na]) * new))
        if np.any(new != old):
            updated += 1
        beta[i, act] = new
        WT[np.ix_(cols, act)] += np.outer(vals, new - old)
    return updated, gain


def random_state_arrays(seed, n=15, d=6, K=4, C=0.7, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    Y = rng.integers(0, K, size=n).astype(np.int64)
    table = rng.uniform(0.5, 2.0, size=(K, K))
    np.fill_diagonal(table, 0.0)
    cls = np.tile(np.arange(K, dtype=np.int64), (n, 1))
    cls[np.arange(n), Y] = 0
    cls[:, 0] = Y
    return X, Y, table, C, cls


# ----------------------------------------------------------------------- kernels
@pytest.mark.parametrize("seed", range(30))
def test_subproblem_kernel_equals_bisection(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 9))
    B = rng.normal(size=K) * rng.choice([0.1, 1.0, 10.0])
    if seed % 5 == 0:
        B[1:] = B[1]  # ties
    q, C = float(rng.uniform(0.05, 5.0)), float(rng.uniform(0.01, 10.0))
    out = np.empty(K)
    jit.solve_subproblem(B, q, C, K, np.empty(K), out)
    ref = ref_subproblem(B, q, C)
    np.testing.assert_allclose(out, ref, atol=1e-9 * (1 + C))
    assert abs(out.sum()) <= 1e-12 * (1 + C) * K and out[0] <= C and np.all(out[1:] <= 0)


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("shrink", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sweep_kernel_equals_python_reference(dense, shrink, seed):
    X, Y, table, C, cls0 = random_state_arrays(seed)
    n, d = X.shape
    K = table.shape[0]
    Xs = sp.csr_matrix(X)
    rows = [(Xs.indices[Xs.indptr[i]:Xs.indptr[i + 1]],
             Xs.data[Xs.indptr[i]:Xs.indptr[i + 1]]) for i in range(n)]
    if dense:
        indptr, ind, data = np.arange(n + 1, dtype=np.int64) * d, np.zeros(1, np.int32), \
            X.ravel().copy()
    else:
        indptr, ind, data = Xs.indptr.astype(np.int64), Xs.indices, Xs.data
    sqn = (X * X).sum(axis=1)
    st = {}
    for name in ("jit", "ref"):
        st[name] = dict(WT=np.zeros((d, K)), beta=np.zeros((n, K)),
                        cls=cls0.astype(np.int32), n_act=np.full(n, K, dtype=np.int32),
                        gaps=np.zeros(n))
    rng = np.random.default_rng(seed)
    live = np.flatnonzero(sqn > 0)
    for _ in range(4):
        order = rng.permutation(live).astype(np.int64)
        a, b = st["jit"], st["ref"]
        got = jit.sweep(order, indptr, ind, data, dense, Y, sqn, table, C, a["WT"],
                        a["beta"], a["cls"], a["n_act"], shrink, a["gaps"])
        want = ref_sweep(order, rows, Y, table, C, b["WT"], b["beta"], b["cls"],
                         b["n_act"], shrink, b["gaps"])
        assert got[0] == want[0]
        assert got[1] == pytest.approx(want[1], rel=1e-8, abs=1e-12)
        for key in ("WT", "beta", "gaps"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-8, atol=1e-11)
        for key in ("cls", "n_act"):
            np.testing.assert_array_equal(a[key], b[key])
    # the dual variables stay feasible and WT = Xᵀβ
    beta = st["jit"]["beta"]
    np.testing.assert_allclose(beta.sum(axis=1), 0.0, atol=1e-12)
    assert np.all(beta[np.arange(n), Y] <= C)
    off = beta.copy()
    off[np.arange(n), Y] = 0.0
    assert np.all(off <= 0)
    Xm = data.reshape(n, d) if dense else sp.csr_matrix((data, ind, indptr),
                                                        shape=(n, d))
    WT = weights_from_beta(Xm, beta)
    np.testing.assert_allclose(WT, X.T @ beta, atol=1e-12)
    np.testing.assert_allclose(st["jit"]["WT"], WT, atol=1e-10)
    # the certification's primal terms against ξ_i and the gap written per example
    slack, gaps = primal_terms(Xm, WT, Y, table, beta, C)
    S = X @ WT
    G = table[Y] + S
    xi = np.maximum(0.0, (G - S[np.arange(n), Y][:, None]).max(axis=1))
    assert slack == pytest.approx(xi.sum(), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(gaps, C * (G.max(axis=1) - G[np.arange(n), Y])
                               + (beta * G).sum(axis=1), rtol=1e-10, atol=1e-12)
    dual = -(beta * table[Y]).sum() - 0.5 * (WT * WT).sum()  # Δ(y, y) = 0 here
    assert gaps.sum() == pytest.approx(0.5 * (WT * WT).sum() + C * xi.sum() - dual,
                                       rel=1e-9)


# ----------------------------------------------------------------------- the optimum
def problem(seed, n=24, d=4, k=4, sparse=False, zero_rows=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    X[:zero_rows] = 0.0
    labels = ["a", "b", "c", "d", "e"][:k]
    Xl = [sp.csr_matrix(x) for x in X] if sparse else list(X)
    return Xl, [labels[j] for j in y], labels


def distance(a, b):  # a cost-sensitive loss table: |rank a − rank b| / 2
    return abs("abcde".index(a) - "abcde".index(b)) / 2.0


def zero_one(a, b):
    return float(a != b)


def primal_by_enumeration(model, X, Y, labels, loss, C):
    fm, w = model.feature_map_, model.coef_
    total = 0.0
    for x, y in zip(X, Y):
        phi = fm.joint_feature(x, y)
        total += max(0.0, max(loss(y, o) - w @ (phi - fm.joint_feature(x, o))
                              for o in labels))
    return 0.5 * float(w @ w) + C * total


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["zero_one", "distance"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_equals_full_qp(sparse, loss, C):
    X, Y, labels = problem(int(C * 10) + len(loss), sparse=sparse, zero_rows=2)
    raw = zero_one if loss == "zero_one" else distance
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), C=C, tol=1e-9,
                          loss=None if loss == "zero_one" else distance,
                          learner="multiclass_cd", max_iter=20000)
    ref, w_ref = full_primal_qp(model.feature_map_, X, Y, labels, raw, C)
    assert model.converged_ and model.learner_.name == "multiclass_cd"
    assert model.objective_ >= ref * (1 - 1e-7)
    assert model.objective_ - ref <= 1e-7 * ref
    assert model.objective_ == pytest.approx(
        primal_by_enumeration(model, X, Y, labels, raw, C), rel=1e-10)
    np.testing.assert_allclose(model.coef_, w_ref, atol=1e-3 * (1 + np.abs(w_ref).max()))


def test_certified_gap_bounds_suboptimality_at_every_stop():
    X, Y, labels = problem(3, n=40)
    C = 5.0
    ref, _ = full_primal_qp(MulticlassFeatures().fit(X, Y), X, Y, labels, zero_one, C)
    for max_iter in (1, 2, 3, 5, 8):
        with pytest.warns(Warning, match="max_iter"):
            model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), C=C, tol=1e-14,
                                  max_iter=max_iter, learner="multiclass_cd")
        assert not model.converged_ and model.n_iter_ == max_iter
        exact = primal_by_enumeration(model, X, Y, labels, zero_one, C)
        assert model.objective_ == pytest.approx(exact, rel=1e-10)
        assert model.objective_curve_[-1] == model.objective_
        assert exact - ref <= model.duality_gap_ * (1 + 1e-9) + 1e-9 * ref
        assert exact >= ref * (1 - 1e-7)


def test_shrinking_off_reaches_the_same_optimum():
    X, Y, labels = problem(4, n=60, k=5)
    objs = [structsvm.fit(X, Y, C=2.0, tol=1e-10, max_iter=20000,
                          learner=MulticlassDualCD(shrinking=s)).objective_
            for s in (True, False)]
    assert objs[0] == pytest.approx(objs[1], rel=1e-9)


def test_objective_matches_linearsvc_crammer_singer():
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 6))
    y = rng.integers(0, 4, size=80)
    X[np.arange(80), y] += 1.5
    C = 0.5
    svc = LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=False, tol=1e-8,
                    max_iter=1_000_000).fit(X, y)
    model = structsvm.fit(X, list(y), C=C, tol=1e-9, max_iter=20000)
    assert model.learner_.name == "multiclass_cd"
    fm = model.feature_map_
    from structsvm.learners.problem import Problem

    p = Problem(fm.encode_inputs(X), fm.encode_outputs(list(y)), fm, model.decoder_,
                model.loss_, C)
    ours, theirs = model.objective_, p.primal_objective(svc.coef_.ravel())
    assert ours <= theirs * (1 + 1e-6)
    assert ours == pytest.approx(theirs, rel=1e-5)
    np.testing.assert_allclose(model.coef_.reshape(4, 6), svc.coef_, atol=1e-3)


def test_default_call_is_deterministic_and_seeds_change_only_the_path():
    X, Y, _ = problem(8, n=50)
    a = structsvm.fit(X, Y, C=1.0)
    b = structsvm.fit(X, Y, C=1.0)
    assert a.learner_.name == "multiclass_cd"
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = structsvm.fit(X, Y, C=1.0, random_state=5, tol=1e-10, max_iter=20000)
    d = structsvm.fit(X, Y, C=1.0, random_state=None, tol=1e-10, max_iter=20000)
    assert c.objective_ == pytest.approx(d.objective_, rel=1e-9)


def test_slack_rescaling_with_zero_one_loss_is_the_same_problem():
    X, Y, labels = problem(9)
    m = structsvm.fit(X, Y, C=1.0, tol=1e-9, max_iter=20000, rescaling="slack")
    assert m.learner_.name == "multiclass_cd"
    ref, _ = full_primal_qp(m.feature_map_, X, Y, labels, zero_one, 1.0, rescaling="slack")
    assert m.objective_ == pytest.approx(ref, rel=1e-7)


# ----------------------------------------------------------------------- refusals
def test_refuses_class_attributes_naming_the_learners_that_can():
    X, Y, _ = problem(10)
    fm = MulticlassFeatures(attributes=np.eye(4) + 0.1)
    with pytest.raises(ValueError, match=r"multiclass_cd.*one-hot.*Learners that can: "
                                         r".*dual_cd.*one_slack"):
        structsvm.fit(X, Y, feature_map=fm, learner="multiclass_cd")


def test_refuses_slack_rescaling_with_another_loss():
    X, Y, _ = problem(11)
    with pytest.raises(ValueError, match="slack rescaling .* zero-one loss.*Learners that "
                                         "can: dual_cd, n_slack, one_slack, partitioned_cd, "
                                         "pegasos"):
        structsvm.fit(X, Y, learner="multiclass_cd", loss=distance, rescaling="slack")


def test_refuses_negative_losses():
    X, Y, _ = problem(12)
    with pytest.raises(ValueError, match=r"finite and >= 0"):  # the loss refuses first
        structsvm.fit(X, Y, learner="multiclass_cd", loss=lambda a, b: -1.0 * (a != b))


def test_refuses_constraints():
    X, Y, _ = problem(13)
    with pytest.raises(ValueError, match="'multiclass_cd' cannot honour constraints.*"
                                         "one_slack"):
        structsvm.fit(X, Y, learner="multiclass_cd", constraints=lambda w, fm: [w >= -1])


# ----------------------------------------------------------------------- the default
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_default_picks_it_for_one_hot_maps_only():
    X, Y, _ = problem(14)
    # the general default stays, for the problems multiclass_cd refuses
    assert [name for name, _ in MulticlassFeatures.default_learners] == [
        "multiclass_cd", "dual_cd"]
    assert default_learner(MulticlassFeatures()).name == "dual_cd"  # map unfitted
    assert structsvm.fit(X, Y).learner_.name == "multiclass_cd"
    assert structsvm.fit(X, Y, decoder="exhaustive").learner_.name == "multiclass_cd"
    assert structsvm.fit(X, Y, loss=distance).learner_.name == "multiclass_cd"
    # class attributes, slack rescaling with a non-0/1 loss: the general default
    attr = structsvm.fit(X, Y, feature_map=MulticlassFeatures(attributes=np.eye(4) + 0.1))
    assert attr.learner_.name == "dual_cd" and attr.learner_.n_batches == 2
    slack = structsvm.fit(X, Y, loss=distance, rescaling="slack", max_iter=5)
    assert slack.learner_.name == "dual_cd"
    tax = structsvm.fit(X, Y, feature_map=TaxonomyFeatures({"x": ["a", "b"],
                                                            "z": ["c", "d"]}))
    assert tax.learner_.name == "dual_cd"
    # constraints on w still get the cutting plane
    cons = structsvm.fit(X, Y, constraints=lambda w, fm: [w >= -10], max_iter=50)
    assert cons.learner_.name == "one_slack"


def test_model_file_round_trip(tmp_path):
    X, Y, _ = problem(15)
    model = structsvm.fit(X, Y, C=1.0)
    again = structsvm.load(model.save(tmp_path / "m.npz"))
    assert again.learner_.name == "multiclass_cd"
    np.testing.assert_array_equal(again.coef_, model.coef_)
    assert again.predict(X) == model.predict(X)


# ----------------------------------------------------------------------- warm start
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_warm_start_continues_from_the_dual_variables():
    X, Y, labels = problem(16, n=60)
    est = structsvm.StructuredSVM(C=1.0, tol=1e-9, max_iter=20000, warm_start=True)
    est.fit(X, Y)
    first = est.objective_
    # the previous dual point is certified first: optimal already, no pass needed
    est.set_params(max_iter=1).fit(X, Y)
    assert est.n_iter_ == 0 and est.converged_
    assert est.duality_gap_ <= 1e-6 * est.objective_
    assert est.objective_ == pytest.approx(first, rel=1e-6)
    cold = structsvm.fit(X, Y, C=1.0, max_iter=1)  # a cold start is far from it
    assert cold.duality_gap_ > 1e-3 * cold.objective_
    # a new C: the scaled dual point is still feasible, the result certified
    est.set_params(C=3.0, max_iter=20000).fit(X, Y)
    ref, _ = full_primal_qp(est.feature_map_, X, Y, labels, zero_one, 3.0)
    assert est.converged_ and est.objective_ == pytest.approx(ref, rel=1e-7)
    assert est.objective_ - ref <= est.duality_gap_ + 1e-9 * ref


def test_warm_start_on_other_labels_starts_afresh():
    X, Y, labels = problem(17, n=40)
    est = structsvm.StructuredSVM(C=1.0, tol=1e-9, max_iter=20000, warm_start=True)
    est.fit(X, Y)
    Y2 = Y[1:] + Y[:1]  # same classes, other labels: the old β is infeasible
    est.fit(X, Y2)
    ref, _ = full_primal_qp(est.feature_map_, X, Y2, labels, zero_one, 1.0)
    assert est.converged_ and est.objective_ == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
def test_bias_column_and_a_class_without_examples(sparse):
    X, Y, labels = problem(18, n=30, k=3, sparse=sparse)
    fm = MulticlassFeatures(bias=1.0, classes=labels + ["z"])  # "z": no training example
    model = structsvm.fit(X, Y, feature_map=fm, C=2.0, tol=1e-9, max_iter=20000)
    assert model.learner_.name == "multiclass_cd"
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels + ["z"], zero_one, 2.0)
    assert model.converged_ and model.objective_ == pytest.approx(ref, rel=1e-7)


def test_refusals_name_every_other_learner():
    """The general learners a refusal names are all the registered learners but this
    one (the learner module names them without importing the registry)."""
    from structsvm.learners.multiclass_cd import _GENERAL
    from structsvm.protocols import capability
    from structsvm.registry import registered

    # (cccp is no other solver: it trains maps with a hidden part around one)
    assert sorted(_GENERAL) == \
        sorted(n for n, cls in registered("learner").items()
               if n != "multiclass_cd" and not capability(cls, "trains_latent"))
