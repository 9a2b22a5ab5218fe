"""The binary structure: losses over the whole data set (Joachims 2005).

Every loss's most violated labelling equals brute force over all labellings of
small data sets (ROC area: over all labellings of the positive-negative pairs), the
1-slack fit reaches the optimum of the direct QP over all of them, the error-rate
loss trains scikit-learn's LinearSVC, and the measures equal hand-computed values
and scikit-learn's where it has them.
"""
import itertools
import math

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import f1_score, roc_auc_score
from sklearn.svm import LinearSVC

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import BinaryFeatures, get_decoder, get_loss
from structsvm.structures.binary import (ErrorRateLoss, FBetaLoss, PairSwaps,
                                         PrecisionAtKLoss, PRBEPLoss, RecallAtKLoss,
                                         ROCAreaLoss, metrics)
from structsvm.structures.binary._jit import (below_k_reference, concave_search_reference,
                                              squared_norm_sum_reference)
from structsvm._compiled import loops


def _data(n, seed, d=3, bias_frac=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + rng.normal(size=n) > bias_frac, 1, -1)
    y[0], y[1] = 1, -1  # both classes present
    return X, y


def _problem(X, y, loss, C=1.0, bias=1.0):
    fm = BinaryFeatures(bias=bias).fit(X, y)
    return Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(y), feature_map=fm,
                   decoder=get_decoder("sign"), loss=loss, C=C)


def _labelling_brute_force(problem, w):
    """max over all 2^n labellings Ȳ of Δ(Y, Ȳ) − w·(Φ(X, Y) − Φ(X, Ȳ))."""
    fm, Y = problem.feature_map, problem.Ye
    best = -np.inf
    for lab in itertools.product((-1, 1), repeat=len(Y)):
        lab = np.array(lab)
        psi = fm.joint_feature_difference_sum(problem.Xe, Y, lab)
        best = max(best, problem.loss(Y, lab) - float(psi @ w))
    return best


def _pair_brute_force(problem, w):
    """max over all labellings c of the P·N pairs of
    #swapped / PN − w·(1/(PN R)) Σ_swapped (x_i − x_j)."""
    X, y, R = problem.Xe, problem.Ye, problem.feature_map.scale_
    pairs = [(i, j) for i in np.flatnonzero(y > 0) for j in np.flatnonzero(y < 0)]
    margin = np.array([(X[i] - X[j]) @ w / R for i, j in pairs])
    best = -np.inf
    for c in itertools.product((0, 1), repeat=len(pairs)):
        c = np.array(c)
        best = max(best, float(c.sum() - c @ margin) / len(pairs))
    return best


LOSSES = [ErrorRateLoss(), FBetaLoss(), FBetaLoss(beta=0.5), FBetaLoss(beta=2.0),
          PrecisionAtKLoss(k=1), PrecisionAtKLoss(k=3), PrecisionAtKLoss(k=0.5),
          PrecisionAtKLoss(), RecallAtKLoss(k=2), RecallAtKLoss(k=5), RecallAtKLoss(),
          PRBEPLoss()]


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
@pytest.mark.parametrize("n", [2, 5, 9])
def test_most_violated_labelling_equals_brute_force(loss, n):
    for seed in range(4):
        X, y = _data(n, seed, bias_frac=[0.0, 0.8, -0.8, 0.3][seed])
        if getattr(loss, "k", None) is not None and loss.k > n:
            continue
        problem = _problem(X, y, loss)
        rng = np.random.default_rng(seed)
        for scale in (0.1, 1.0, 5.0, 50.0):  # from near 0 to far from it
            w = rng.normal(size=problem.n_features) * scale
            delta, psi, slack = problem.dataset_violation(w)
            value = delta - float(psi @ w)
            assert value == pytest.approx(_labelling_brute_force(problem, w), abs=1e-9)
            assert slack[0] == pytest.approx(max(0.0, value), abs=1e-12)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_roc_area_most_violated_pair_labelling_equals_brute_force(n):
    for seed in range(6):
        X, y = _data(n, seed, bias_frac=[0.0, 0.5, -0.5, 0.0, 1.0, -1.0][seed])
        if (y > 0).sum() * (y < 0).sum() > 12:
            continue
        problem = _problem(X, y, ROCAreaLoss())
        rng = np.random.default_rng(10 + seed)
        for scale in (0.1, 1.0, 10.0):
            w = rng.normal(size=problem.n_features) * scale
            delta, psi, _ = problem.dataset_violation(w)
            assert delta - float(psi @ w) == pytest.approx(
                _pair_brute_force(problem, w), abs=1e-12)


def test_roc_area_oracle_counts_pairs_in_n_log_n_without_forming_them():
    """The counts are those of the pairs with w·(x_i − x_j) < R on 2,000 examples
    (checked pair by pair here), and the labelling holds n numbers, not P·N."""
    X, y = _data(2000, 3)
    problem = _problem(X, y, ROCAreaLoss())
    w = np.random.default_rng(0).normal(size=problem.n_features)
    batch = problem.feature_map.batch_potentials(problem.Xe, w)
    out = ROCAreaLoss().most_violated(batch, problem.Ye)
    s = batch.scores / problem.feature_map.scale_
    pos, neg = s[y > 0], s[y < 0]
    swapped = pos[:, None] - neg[None, :] < 1.0
    np.testing.assert_array_equal(out.swapped[y > 0], swapped.sum(axis=1))
    np.testing.assert_array_equal(out.swapped[y < 0], swapped.sum(axis=0))
    assert out.n_swapped == swapped.sum() and len(out) == 2000
    assert ROCAreaLoss()(problem.Ye, out) == pytest.approx(swapped.mean())


def test_pair_swaps_refuses_counts_of_no_pair_labelling():
    with pytest.raises(ValueError, match="not those of a pair labelling"):
        PairSwaps([1, -1, -1], [1, 1, 1])   # 1 swap of the positive, 2 of negatives
    with pytest.raises(ValueError, match="3 labels but 2 counts"):
        PairSwaps([1, -1, -1], [1, 1])
    with pytest.raises(ValueError, match="belongs to another data set"):
        ROCAreaLoss()([1, -1], PairSwaps([1, -1, -1], [0, 0, 0]))


def _prefix_sums(rng, P, N):
    SP = np.concatenate([[0.0], np.cumsum(np.sort(rng.normal(size=P))[::-1])])
    SN = np.concatenate([[0.0], np.cumsum(np.sort(rng.normal(size=N))[::-1])])
    return SP, SN


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_searches_equal_their_numpy_references(seed):
    """The bisection over fp (concave losses) and the search below k against trying
    every (tp, fp) of random prefix sums."""
    rng = np.random.default_rng(seed)
    P, N = int(rng.integers(0, 9)), int(rng.integers(0, 9))
    SP, SN = _prefix_sums(rng, P, N)
    jit = loops("structsvm.structures.binary._jit")
    for kind, p1 in ((0, 1.0), (0, 4.0), (0, 0.25)):
        got = jit.concave_search(SP, SN, kind, p1, 0)
        assert got[2] == pytest.approx(concave_search_reference(SP, SN, kind, p1, 0)[2],
                                       abs=1e-12)
    for k in range(1, P + N + 1):
        for kind, p1 in ((1, 0.0), (2, float(k))):
            if kind == 2 and P == 0:
                continue
            got = jit.concave_search(SP, SN, kind, p1, k)
            ref = concave_search_reference(SP, SN, kind, p1, k)
            assert got[2] == pytest.approx(ref[2], abs=1e-12) and got[0] + got[1] >= k
        for den in (float(k), float(max(P, 1))):
            got = jit.below_k_search(SP, SN, P + N, k, den)
            assert got[2] == pytest.approx(below_k_reference(SP, SN, P + N, k, den)[2],
                                           abs=1e-12)
            assert got[0] + got[1] < k


def test_squared_norms_sum_duplicates_first_without_sorting():
    """A CSR matrix may hold a row's column twice (scipy sums them) and its columns
    in any order: the compiled pass equals scipy's summed-then-squared entries."""
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 30, size=400), rng.integers(0, 50, size=400)
    vals = rng.normal(size=400)
    order = np.argsort(rows, kind="stable")   # rows in order, columns not, repeats
    indptr = np.searchsorted(rows[order], np.arange(31)).astype(np.int32)
    A = sp.csr_matrix((vals[order], cols[order].astype(np.int32), indptr), shape=(30, 50))
    assert not A.has_canonical_format
    got = loops("structsvm.structures.binary._jit").squared_norm_sum(
        A.indptr, A.indices, A.data, A.shape[1])
    assert got == pytest.approx(squared_norm_sum_reference(A))
    assert got == pytest.approx(float(np.sum(A.toarray() ** 2)))


# --------------------------------------------------------------------------- QP
def _all_constraints(problem):
    """Rows Φ(X, Y) − Φ(X, Ȳ) and losses of every labelling (pairs for ROC area)."""
    fm, Y, Xe = problem.feature_map, problem.Ye, problem.Xe
    rows, losses = [], []
    if type(problem.loss) is ROCAreaLoss:
        pairs = [(i, j) for i in np.flatnonzero(Y > 0) for j in np.flatnonzero(Y < 0)]
        for c in itertools.product((0, 1), repeat=len(pairs)):
            d = sum((c_ * (Xe[i] - Xe[j]) for c_, (i, j) in zip(c, pairs)),
                    np.zeros(fm.n_features_))
            rows.append(d / (len(pairs) * fm.scale_))
            losses.append(sum(c) / len(pairs))
        return np.array(rows), np.array(losses)
    for lab in itertools.product((-1, 1), repeat=len(Y)):
        lab = np.array(lab)
        rows.append(fm.joint_feature_difference_sum(Xe, Y, lab))
        losses.append(problem.loss(Y, lab))
    return np.array(rows), np.array(losses)


@pytest.mark.parametrize("loss", [FBetaLoss(), PRBEPLoss(), PrecisionAtKLoss(k=2),
                                  ROCAreaLoss()], ids=repr)
def test_a_one_slack_fit_reaches_the_direct_qp_over_all_labellings(loss):
    """½‖w‖² + C ξ s.t. w·(Φ(X,Y) − Φ(X,Ȳ)) ≥ Δ(Y,Ȳ) − ξ for all Ȳ, solved by cvxpy."""
    X, y = _data(7, 11)
    C = 50.0
    model = structsvm.fit(X, y, feature_map=BinaryFeatures(), loss=loss, C=C,
                          tol=1e-8, max_iter=1000)
    assert model.learner_.name == "one_slack" and model.converged_
    problem = _problem(X, y, loss, C)
    rows, losses = _all_constraints(problem)
    w, xi = cp.Variable(problem.n_features), cp.Variable()
    qp = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * xi),
                    [rows @ w >= losses - xi, xi >= 0])
    qp.solve(solver="CLARABEL")
    assert model.objective_ == pytest.approx(qp.value, rel=1e-5)
    np.testing.assert_allclose(model.coef_, w.value, atol=1e-4 * max(1, np.abs(w.value).max()))


# --------------------------------------------------------------------------- LinearSVC
def test_the_error_rate_loss_trains_linear_svc():
    """Joachims 2005, Theorem 1: with the error rate the 1-slack problem is the
    ordinary SVM; here LinearSVC(C / (n R²), hinge) with intercept_scaling = bias."""
    rng = np.random.default_rng(0)
    X = sp.random(200, 30, density=0.2, random_state=1, format="csr")
    y = np.where(X @ rng.normal(size=30) + 0.1 * rng.normal(size=200) > 0.1, 1, -1)
    C = 300.0
    model = structsvm.fit(X, y, feature_map=BinaryFeatures(bias=2.0), loss="error_rate",
                          C=C, tol=1e-7, max_iter=5000)
    R2 = model.feature_map_.scale_ ** 2
    assert R2 == pytest.approx(X.multiply(X).sum() / 200 + 4.0)
    peer = LinearSVC(C=C / (200 * R2), loss="hinge", intercept_scaling=2.0, tol=1e-9,
                     max_iter=10 ** 6).fit(X, y)
    w = model.coef_ / model.feature_map_.scale_
    np.testing.assert_allclose(w[:-1], peer.coef_.ravel(), atol=1e-4)
    assert 2.0 * w[-1] == pytest.approx(peer.intercept_[0], abs=1e-4)


# --------------------------------------------------------------------------- measures
def test_measures_by_hand_and_against_scikit_learn():
    y = np.array([1, -1, 1, -1, -1, 1])
    s = np.array([0.9, 0.8, 0.7, 0.1, 0.7, -0.2])
    # top 3: 0.9 (+), 0.8 (−), then 0.7 twice (one + one −): 1 + 1/2 hits
    assert metrics.precision_at_k(y, s, k=3) == pytest.approx(1.5 / 3)
    assert metrics.recall_at_k(y, s, k=3) == pytest.approx(1.5 / 3)
    assert metrics.prbep(y, s) == pytest.approx(1.5 / 3)
    assert metrics.precision_at_k(y, s, k=0.5) == pytest.approx(1.5 / 3)  # 3 of 6
    assert metrics.precision_at_k(y, s) == pytest.approx(0.5)   # k = 2: 0.9, 0.8
    assert metrics.recall_at_k(y, s) == pytest.approx(1.0)      # k = 6
    assert metrics.roc_auc(y, s) == pytest.approx(roc_auc_score(y, s))
    p = np.where(s > 0.5, 1, -1)
    assert metrics.f_beta_score(y, p) == pytest.approx(f1_score(y, p))
    assert metrics.error_rate(y, p) == pytest.approx(np.mean(p != y))
    assert metrics.f_beta_score([-1, -1], [-1, -1]) == 1.0    # nothing to find
    assert metrics.f_beta_score([1, -1], [-1, -1]) == 0.0


def test_ties_count_as_random_orders():
    """The measures of a ranking with ties are their mean over every order of the
    tied examples (enumerated here)."""
    y = np.array([1, -1, 1, -1, 1])
    s = np.array([0.5, 0.5, 0.5, 0.2, 0.2])
    for k in (1, 2, 3, 4):
        values = []
        for perm in itertools.permutations(range(5)):
            order = sorted(range(5), key=lambda i: (-s[i], perm[i]))
            values.append(np.mean(y[order[:k]] > 0))
        assert metrics.precision_at_k(y, s, k=k) == pytest.approx(np.mean(values))


def test_a_bad_k_is_named():
    with pytest.raises(ValueError, match="k=7 asks for the top 7 of 5 examples"):
        metrics.precision_at_k([1, -1, 1, -1, 1], np.arange(5.0), k=7)
    with pytest.raises(ValueError, match="an int >= 1, a fraction in"):
        PrecisionAtKLoss(k=1.5)([1, -1], [0.0, 1.0])
    with pytest.raises(ValueError, match="an int >= 1, a fraction in"):
        RecallAtKLoss(k=True)([1, -1], [0.0, 1.0])
    with pytest.raises(ValueError, match="Sample 1: scores is NaN"):
        metrics.roc_auc([1, -1], [0.0, np.nan])


def test_losses_are_one_minus_their_measures_and_zero_on_the_truth():
    y = np.array([1, -1, 1, -1, -1, 1, -1, -1])
    s = np.random.default_rng(0).normal(size=8)
    assert FBetaLoss(beta=2.0)(y, s) == pytest.approx(
        1 - metrics.f_beta_score(y, np.where(s > 0, 1, -1), beta=2.0))
    assert ROCAreaLoss()(y, s) == pytest.approx(1 - roc_auc_score(y, s))
    assert PRBEPLoss()(y, s) == pytest.approx(1 - metrics.prbep(y, s))
    for loss in (ErrorRateLoss(), FBetaLoss(), PRBEPLoss(), ROCAreaLoss(),
                 PrecisionAtKLoss(), RecallAtKLoss()):
        assert loss(y, y) == 0.0 and type(loss).decomposition == "dataset"
    with pytest.raises(ValueError, match="must hold \\+1 and -1"):
        FBetaLoss()([0, 1], [1, 1])
    with pytest.raises(TypeError, match="function of the whole data set"):
        FBetaLoss().batch([1, -1], [1, -1])


# --------------------------------------------------------------------------- the map
def test_the_map_is_the_scaled_sum_of_signed_examples():
    X = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 0.0]])
    fm = BinaryFeatures().fit(X, ["b", "a", "b"])
    R = math.sqrt((5 + 1 + 9) / 3 + 1)
    assert fm.scale_ == pytest.approx(R)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(["a", "b", "b"])
    assert Ye.tolist() == [-1, 1, 1] and fm.classes_.tolist() == ["a", "b"]
    phi = np.asarray(fm.joint_features(Xe, Ye).sum(axis=0)).ravel()
    expected = (-np.r_[X[0], 1] + np.r_[X[1], 1] + np.r_[X[2], 1]) / (2 * 3 * R)
    np.testing.assert_allclose(phi, expected)
    w = np.array([0.5, -1.0, 2.0])
    assert fm.batch_potentials(Xe, w).score(Ye).sum() == pytest.approx(w @ phi)
    assert fm.decode_outputs([1, -1]) == ["b", "a"]
    assert BinaryFeatures(positive_class="a").fit(X, ["b", "a", "b"]).classes_.tolist() \
        == ["b", "a"]


def test_scaling_the_features_changes_no_prediction():
    X, y = _data(40, 2)
    a = structsvm.fit(X, y, feature_map=BinaryFeatures(), loss="f1", C=100.0, tol=1e-6)
    b = structsvm.fit(X * 100.0, y, feature_map=BinaryFeatures(bias=100.0), loss="f1",
                      C=100.0, tol=1e-6)
    assert a.predict(X) == b.predict(X * 100.0)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5)


def test_the_map_refuses_bad_labels_and_inputs_with_the_sample():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="exactly two labels, got 3"):
        BinaryFeatures().fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="exactly two labels, got 1"):
        BinaryFeatures().fit(X, [1, 1, 1])
    with pytest.raises(ValueError, match="Sample 1: label is None"):
        BinaryFeatures().fit(X, ["a", None, "b"])
    with pytest.raises(ValueError, match="Sample 2: label is nan"):
        BinaryFeatures().fit(X, np.array([0.0, 1.0, np.nan]))
    fm = BinaryFeatures().fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="Sample 1: unknown label 5"):
        fm.encode_outputs([0, 5])
    with pytest.raises(ValueError, match="positive_class='z' is not one of"):
        BinaryFeatures(positive_class="z").fit(X, ["a", "b", "a"])
    with pytest.raises(ValueError, match="Sample 1: X contains NaN"):
        BinaryFeatures().fit(np.array([[0.0], [np.nan]]), [0, 1])
    with pytest.raises(TypeError, match="adds no loss to its scores"):
        fm.batch_potentials(fm.encode_inputs(X), np.zeros(3)).augment([1, -1, 1],
                                                                     get_loss("hamming"))


def test_a_loss_default_C_is_the_fit_default():
    X, y = _data(30, 1)
    model = structsvm.fit(X, y, feature_map=BinaryFeatures(), loss="roc_auc")
    P = int((y > 0).sum())
    assert model.C_ == pytest.approx(3 * P * (30 - P) / 30)
    f1 = structsvm.fit(X, y, feature_map=BinaryFeatures(), loss=FBetaLoss(beta=2.0))
    assert f1.C_ == pytest.approx(BinaryFeatures.default_C * 30 / (5 * P + 1))
    assert structsvm.fit(X, y, feature_map=BinaryFeatures()).C_ == BinaryFeatures.default_C
    assert structsvm.fit(X, y, feature_map=BinaryFeatures(), loss="f1", C=3.0).C_ == 3.0


def test_sparse_inputs_and_save_load_through_the_estimator(tmp_path):
    X = sp.random(60, 2000, density=0.01, random_state=0, format="csr")
    total = np.asarray(X.sum(axis=1)).ravel()
    y = np.where(total > np.median(total), "yes", "no")
    model = structsvm.fit(X, y, feature_map=BinaryFeatures(), loss="f1")
    back = structsvm.load(model.save(tmp_path / "m.npz"))
    assert back.predict(X) == model.predict(X)
    assert back.C_ == model.C_   # a default of the training labels, kept in the file
    assert back.feature_map_.scale_ == model.feature_map_.scale_
    assert back.score(X, y) == pytest.approx(model.score(X, y))
