"""Kernelised cutting plane vs the primal structural SVM and a direct QP."""
import numpy as np
import pytest

import structsvm
from structsvm.structures import MulticlassFeatures
from structsvm.svm.kernels import rbf_kernel, taxonomy_embedding
from structsvm.svm import KernelCuttingPlaneSVM


def blobs(n_per, centers, seed=0, scale=1.0):
    rng = np.random.RandomState(seed)
    centers = np.asarray(centers, dtype=float)
    y = np.repeat(np.arange(len(centers)), n_per)
    return centers[y] + scale * rng.randn(len(y), centers.shape[1]), y


def crammer_singer_primal_cvxpy(X, y, C, Lam, D):
    """min ½‖W‖² + C Σ ξ_i s.t. Λ(y_i)ᵀWx_i − Λ(ȳ)ᵀWx_i ≥ Δ(y_i, ȳ) − ξ_i (all ȳ)."""
    cp = pytest.importorskip("cvxpy")
    n, d = X.shape
    W = cp.Variable((Lam.shape[1], d))
    S = X @ W.T @ Lam.T               # (n, K) scores
    xi = cp.Variable(n, nonneg=True)
    cons = [S[i, y[i]] - S[i, k] >= D[y[i], k] - xi[i]
            for i in range(n) for k in range(Lam.shape[0]) if k != y[i]]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C * cp.sum(xi)), cons)
    return prob.solve(solver="CLARABEL")


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_linear_kernel_reproduces_the_primal_multiclass_model(C):
    X, y = blobs(20, [[0, 0], [2, 0], [0, 2]], seed=1, scale=1.2)
    primal = structsvm.fit(list(X), list(y), feature_map=MulticlassFeatures(),
                           decoder="argmax", C=C, tol=1e-6)
    kcp = KernelCuttingPlaneSVM(kernel="linear", C=C).fit(X, y)
    assert kcp.objective_ == pytest.approx(primal.objective_, rel=1e-4)
    assert kcp.duality_gap_ <= 1e-4 * kcp.objective_
    np.testing.assert_array_equal(kcp.predict(X), primal.predict(list(X)))


def test_matches_direct_qp_with_attributes_and_taxonomy():
    X, y = blobs(10, [[0, 0], [2, 0], [0, 2], [2, 2]], seed=2, scale=1.0)
    X = np.c_[X, np.ones(len(X))]
    Lam = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]])  # 4 classes, 2 attrs
    labels = np.array(["a.p", "a.q", "b.r", "b.s"])
    _, Tax, _ = taxonomy_embedding(list(labels))
    tree_loss = 2.0 - Tax @ Tax.T  # path distance: 0, 1 (siblings), 2
    for attributes, L, D, yy in [(Lam, Lam, 1 - np.eye(4), y),
                                 ("taxonomy", Tax, tree_loss, labels[y])]:
        kcp = KernelCuttingPlaneSVM(kernel="linear", C=0.5, attributes=attributes,
                                    loss_matrix=D).fit(X, yy)
        ref = crammer_singer_primal_cvxpy(X, y, 0.5, L, D)
        assert kcp.objective_ == pytest.approx(ref, rel=1e-4)


def test_attribute_map_matches_the_estimator():
    X, y = blobs(15, [[0, 0], [3, 0], [0, 3]], seed=3)
    Lam = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # the exact reference: the 1-slack cutting plane certifies tol=1e-6 in a few rounds
    # (dual_cd, the default, is slow to reach such tight gaps with shared class weights)
    primal = structsvm.fit(list(X), list(y), feature_map=MulticlassFeatures(attributes=Lam),
                           decoder="argmax", C=1.0, tol=1e-6, learner="one_slack")
    kcp = KernelCuttingPlaneSVM(kernel="linear", C=1.0, attributes=Lam).fit(X, y)
    assert kcp.objective_ == pytest.approx(primal.objective_, rel=1e-4)


def test_rbf_kernel_predictions_and_precomputed():
    # concentric rings: not linearly separable
    rng = np.random.RandomState(4)
    r = np.repeat([0.5, 1.5, 2.5], 25) + 0.1 * rng.randn(75)
    t = rng.rand(75) * 2 * np.pi
    X, y = np.c_[r * np.cos(t), r * np.sin(t)], np.repeat([0, 1, 2], 25)
    kcp = KernelCuttingPlaneSVM(sigma=0.5, C=10.0).fit(X, y)
    assert kcp.score(X, y) >= 0.95
    assert len(kcp.support_) <= len(y) and kcp.dual_coef_.shape[1] == 3
    pre = KernelCuttingPlaneSVM(kernel="precomputed", C=10.0).fit(rbf_kernel(X, sigma=0.5), y)
    np.testing.assert_allclose(pre.decision_function(rbf_kernel(X, sigma=0.5)),
                               kcp.decision_function(X), rtol=1e-6, atol=1e-8)


def test_errors():
    X, y = blobs(5, [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="C must be"):
        KernelCuttingPlaneSVM(C=-1).fit(X, y)
    with pytest.raises(ValueError, match="one row per class"):
        KernelCuttingPlaneSVM(attributes=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="zero diagonal"):
        KernelCuttingPlaneSVM(loss_matrix=np.ones((2, 2))).fit(X, y)
