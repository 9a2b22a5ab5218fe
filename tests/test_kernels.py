"""Kernel functions, joint kernels and dual (kernel) Pegasos."""
import itertools

import numpy as np
import pytest
from sklearn.metrics import pairwise

from structsvm.corpora.synthetic import make_two_spirals
from structsvm.structures import MulticlassFeatures
from structsvm.svm.kernels import (joint_kernel, linear_kernel, median_sigma, pairwise_kernel,
                               polynomial_kernel, rbf_kernel, sigma_to_gamma,
                               taxonomy_embedding)
from structsvm.svm import KernelPegasosClassifier, PegasosClassifier


def two_spirals(n, noise=0.15, seed=0):
    return make_two_spirals(n, noise=noise, random_state=seed)


# ----------------------------------------------------------------- kernel functions
def test_kernels_match_sklearn():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(7, 3), rng.randn(4, 3)
    np.testing.assert_allclose(linear_kernel(X, Y), pairwise.linear_kernel(X, Y))
    np.testing.assert_allclose(polynomial_kernel(X, Y, degree=2, gamma=0.5, coef0=2.0),
                               pairwise.polynomial_kernel(X, Y, 2, 0.5, 2.0))
    np.testing.assert_allclose(rbf_kernel(X, Y, gamma=0.3), pairwise.rbf_kernel(X, Y, 0.3))
    np.testing.assert_allclose(rbf_kernel(X, Y, sigma=2.0),
                               pairwise.rbf_kernel(X, Y, sigma_to_gamma(2.0)))
    # definition, entry by entry
    assert rbf_kernel(X[:1], Y[:1], sigma=1.5)[0, 0] == pytest.approx(
        np.exp(-np.sum((X[0] - Y[0]) ** 2) / (2 * 1.5 ** 2)))
    assert pairwise_kernel(X, Y, "precomputed").shape == (7, 3)
    with pytest.raises(ValueError, match="sigma or gamma, not both"):
        rbf_kernel(X, sigma=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="kernel must be one of"):
        pairwise_kernel(X, Y, "laplace")


def test_median_sigma_brute_force():
    rng = np.random.RandomState(1)
    X = rng.randn(30, 4)
    d = [np.linalg.norm(X[i] - X[j]) for i, j in itertools.combinations(range(30), 2)]
    assert median_sigma(X) == pytest.approx(np.median(d))


# ----------------------------------------------------------------- joint kernels
def test_taxonomy_embedding_counts_shared_prefixes():
    labels = ["comp.sys.mac", "comp.sys.ibm", "comp.graphics", "rec.autos", "rec.sport.hockey"]
    classes, Lam, nodes = taxonomy_embedding(labels)
    assert classes == labels
    for (i, a), (j, b) in itertools.product(enumerate(labels), repeat=2):
        pa, pb = a.split("."), b.split(".")
        common = next((k for k in range(min(len(pa), len(pb))) if pa[k] != pb[k]),
                      min(len(pa), len(pb)))
        assert (Lam @ Lam.T)[i, j] == common
    assert ("comp", "sys") in nodes and len(nodes) == Lam.shape[1]


@pytest.mark.parametrize("attributes", [None, "random", "taxonomy"])
def test_joint_kernel_equals_joint_feature_inner_products(attributes):
    rng = np.random.RandomState(2)
    X = rng.randn(6, 3)
    y = np.array(["a.x", "a.y", "b.z", "a.x", "b.z", "a.y"])
    classes = sorted(set(y))
    if attributes is None:
        Lam = np.eye(3)
    elif attributes == "random":
        Lam = rng.randn(3, 2)
    else:
        _, Lam, _ = taxonomy_embedding(classes)
    fm = MulticlassFeatures(attributes=Lam if attributes else None, classes=classes)
    fm.fit(list(X), list(y))
    Phi = np.array([fm.joint_feature(x, c) for x in X for c in classes])
    pairs_x = np.repeat(np.arange(6), 3)
    pairs_y = np.tile(np.arange(3), 6)
    K = joint_kernel(linear_kernel(X)[np.ix_(pairs_x, pairs_x)], pairs_y, pairs_y, Lam)
    np.testing.assert_allclose(K, Phi @ Phi.T, atol=1e-12)


# ----------------------------------------------------------------- dual Pegasos
@pytest.mark.parametrize("loss", ["hinge", "log", "exp"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_kernel_pegasos_equals_primal(loss, fit_intercept):
    X, y = two_spirals(80, seed=3)
    Xt, _ = two_spirals(50, seed=4)
    kw = dict(C=0.5, max_iter=5, loss=loss, fit_intercept=fit_intercept, random_state=1)
    primal = PegasosClassifier(**kw).fit(X, y)
    dual = KernelPegasosClassifier(kernel="linear", **kw).fit(X, y)
    np.testing.assert_allclose(dual.decision_function(Xt), primal.decision_function(Xt),
                               rtol=1e-8, atol=1e-10)
    assert dual.objective_ == pytest.approx(primal.objective_, rel=1e-9)


def _dual_pegasos_reference(K, y, C, order):
    """Textbook dual (kernel) Pegasos in plain numpy, independent of the compiled loop:
    w_t = (nC/(t−1)) Σ_j α_j y_j φ(x_j); at step t on example i, α_i += 1 when
    y_i w_t·φ(x_i) < 1. Returns α and the coefficients of w_{T+1}."""
    n = len(y)
    alpha = np.zeros(n)
    for t, i in enumerate(order, start=1):
        f = 0.0 if t == 1 else n * C / (t - 1) * float((alpha * y) @ K[:, i])
        if y[i] * f < 1:
            alpha[i] += 1
    return alpha, n * C / len(order) * alpha * y


@pytest.mark.parametrize("sampling", ["cyclic", "permutation"])
def test_rbf_kernel_pegasos_equals_a_plain_numpy_dual_pegasos(sampling):
    from structsvm.svm._pegasos_utils import pegasos_order

    X, y = two_spirals(60, seed=6)
    Xt, _ = two_spirals(40, seed=7)
    C, epochs = 2.0, 3
    clf = KernelPegasosClassifier(kernel="rbf", sigma=0.3, C=C, max_iter=epochs,
                                  fit_intercept=False, average=False, projection=False,
                                  step="explicit", sampling=sampling,
                                  random_state=4).fit(X, y)
    order = (np.tile(np.arange(len(y)), epochs) if sampling == "cyclic"
             else pegasos_order(len(y), epochs, "permutation", 4))
    K = rbf_kernel(X, sigma=0.3)
    alpha, beta = _dual_pegasos_reference(K, np.asarray(y, dtype=float), C, order)
    np.testing.assert_array_equal(clf.alpha_, alpha)
    np.testing.assert_allclose(clf.decision_function(Xt), rbf_kernel(Xt, X, sigma=0.3) @ beta,
                               rtol=1e-9, atol=1e-12)


def test_alpha_counts_margin_violations():
    # the notes' dual Pegasos: w_{T+1} = (nC / T) Σ_j α_j y_j x_j
    X, y = two_spirals(40, seed=5)
    n, C, n_iter = len(y), 0.2, 4
    clf = KernelPegasosClassifier(kernel="linear", C=C, max_iter=n_iter, fit_intercept=False,
                                  average=False, projection=False, random_state=0).fit(X, y)
    assert np.all(clf.alpha_ == np.round(clf.alpha_)) and clf.alpha_.sum() > 0
    w = n * C / (n * n_iter) * (clf.alpha_ * y) @ X
    np.testing.assert_allclose(clf.decision_function(X), X @ w, rtol=1e-10, atol=1e-12)


def test_rbf_pegasos_separates_two_spirals_where_linear_cannot():
    X, y = two_spirals(400, seed=0)
    Xt, yt = two_spirals(1000, seed=1)
    rbf = KernelPegasosClassifier(sigma=0.1, C=10.0, max_iter=20, random_state=0).fit(X, y)
    lin = PegasosClassifier(C=10.0, max_iter=20, random_state=0).fit(X, y)
    assert rbf.score(Xt, yt) >= 0.95
    assert lin.score(Xt, yt) < 0.75
    assert len(rbf.support_) < len(y)
    # a precomputed Gram matrix gives the same model
    pre = KernelPegasosClassifier(kernel="precomputed", C=10.0, max_iter=20, random_state=0)
    pre.fit(rbf_kernel(X, sigma=0.1), y)
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(Xt, X, sigma=0.1)),
                               rbf.decision_function(Xt), rtol=1e-9, atol=1e-12)


def test_multiclass_dual_pegasos_approaches_the_crammer_singer_optimum():
    from structsvm.svm import KernelCuttingPlaneSVM

    rng = np.random.RandomState(3)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat(np.arange(3), 30)
    X = centers[y] + rng.randn(90, 2)
    ref = KernelCuttingPlaneSVM(kernel="linear", C=0.1).fit(X, y)
    peg = KernelPegasosClassifier(kernel="linear", C=0.1, max_iter=200, random_state=0)
    peg.fit(X, y)
    assert ref.objective_ - 1e-6 <= peg.objective_ <= 1.02 * ref.objective_
    assert peg.score(X, y) >= ref.score(X, y) - 0.05
    assert peg.decision_function(X).shape == (90, 3)
    assert peg.alpha_.shape == (90, 3)


def test_kernel_pegasos_errors():
    X, y = two_spirals(20)
    with pytest.raises(ValueError, match="sigma or gamma, not both"):
        KernelPegasosClassifier(sigma=1.0, gamma=1.0).fit(X, y)
    with pytest.raises(ValueError, match="square training Gram"):
        KernelPegasosClassifier(kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="loss='hinge' only"):
        KernelPegasosClassifier(loss="log").fit(X, np.arange(20) % 3)
    with pytest.raises(ValueError, match="one row per class"):
        KernelPegasosClassifier(attributes=np.eye(4)).fit(X, y)
