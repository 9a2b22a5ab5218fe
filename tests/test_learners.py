"""Learners against the full primal QP solved directly (tests/reference_qp.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import MulticlassFeatures
from structsvm.structures import get_decoder
from structsvm.learners import FrankWolfe, NSlackCuttingPlane, OneSlackCuttingPlane, Pegasos
from structsvm.structures import get_loss

from reference_qp import full_primal_qp


def random_multiclass(seed, n=30, d=4, k=3, noise=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + noise * rng.normal(size=(n, d))
    labels = np.array(["a", "b", "c", "d", "e"])[:k]
    return list(X), list(labels[y]), list(labels)


def zero_one(a, b):
    return float(a != b)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("learner", ["one_slack", "n_slack"])
def test_cutting_plane_reaches_full_qp_optimum(seed, learner):
    X, Y, labels = random_multiclass(seed)
    C = [0.1, 1.0, 10.0, 0.5][seed]
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=C,
                          learner=learner, tol=1e-7, max_iter=2000)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, zero_one, C)
    assert model.converged_
    assert abs(model.objective_ - ref) / ref <= 1e-4
    # the certificate brackets the reference optimum
    assert model.objective_ >= ref * (1 - 1e-6)
    assert model.objective_ - model.duality_gap_ <= ref * (1 + 1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_slack_rescaling_matches_full_qp(seed):
    X, Y, labels = random_multiclass(10 + seed, n=20, k=4)
    rank = {lab: i for i, lab in enumerate(labels)}

    def distance(a, b):  # a loss that is not zero-one, so the rescalings differ
        return abs(rank[a] - rank[b]) / 2.0

    for learner in ("one_slack", "n_slack"):
        model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax",
                              C=1.0, loss=distance, rescaling="slack", learner=learner,
                              tol=1e-7, max_iter=2000)
        ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, distance, 1.0,
                                rescaling="slack")
        assert abs(model.objective_ - ref) / ref <= 1e-4, learner


def test_custom_loss_margin_rescaling_matches_full_qp():
    X, Y, labels = random_multiclass(7, n=25, k=4)
    rank = {lab: i for i, lab in enumerate(labels)}

    def distance(a, b):
        return float(abs(rank[a] - rank[b]))

    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=0.3,
                          loss=distance, tol=1e-7, max_iter=2000)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, distance, 0.3)
    assert abs(model.objective_ - ref) / ref <= 1e-4


@pytest.mark.parametrize("seed", [20, 21, 22])
def test_pegasos_gets_within_one_percent(seed):
    # Pegasos' error after T steps is O(G²/(λT)) with λ = 1/(nC): it suits small C
    # (at C = 1 on these problems 1% takes thousands of epochs; see docs/learners.md)
    X, Y, labels = random_multiclass(seed, noise=1.5)
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=0.1,
                          learner=Pegasos(batch_size=1), max_iter=200, tol=0.0,
                          random_state=seed)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, zero_one, 0.1)
    assert model.objective_ >= ref * (1 - 1e-9)  # cannot beat the optimum
    assert (model.objective_ - ref) / ref <= 0.01


@pytest.mark.parametrize("seed", range(3))
def test_perceptron_separates_separable_data(seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(4, 5))
    X = rng.normal(size=(80, 5))
    scores = X @ W.T
    top2 = np.sort(scores, axis=1)[:, -2:]
    X = X[top2[:, 1] - top2[:, 0] > 0.3]  # keep a margin: linearly separable by W
    Y = list(np.argmax(X @ W.T, axis=1))
    model = structsvm.fit(list(X), Y, feature_map=MulticlassFeatures(), decoder="argmax",
                          learner="perceptron", max_iter=500, random_state=seed)
    assert model.converged_
    assert model.predict(list(X)) == Y


def test_learners_agree_on_one_problem():
    X, Y, labels = random_multiclass(3, n=40, noise=1.5)
    objs = {}
    for learner in ("one_slack", "n_slack"):
        objs[learner] = structsvm.fit(X, Y, decoder="argmax", C=0.1, learner=learner,
                                      tol=1e-7).objective_
    objs["pegasos"] = structsvm.fit(X, Y, C=0.1, learner="pegasos", max_iter=200, tol=0,
                                    random_state=0).objective_
    assert abs(objs["one_slack"] - objs["n_slack"]) / objs["n_slack"] <= 1e-4
    assert abs(objs["pegasos"] - objs["n_slack"]) / objs["n_slack"] <= 0.01


@pytest.mark.parametrize("learner", ["one_slack", None])
def test_objective_curve_and_gap_reported(learner):
    X, Y, _ = random_multiclass(5)
    model = structsvm.fit(X, Y, C=1.0, tol=1e-4, learner=learner)
    assert model.objective_curve_[-1] == model.objective_
    if learner == "one_slack":  # one exact objective per round
        assert model.n_iter_ == len(model.objective_curve_)
    else:  # dual_cd: one per certifying pass (n_iter_ counts every oracle pass)
        assert 1 <= len(model.objective_curve_) <= model.n_iter_
    assert 0 <= model.duality_gap_ <= 1e-4 * model.objective_


def test_sparse_inputs_give_the_same_model_as_dense():
    X, Y, _ = random_multiclass(8)
    dense = structsvm.fit(X, Y, C=1.0, tol=1e-7)
    sparse = structsvm.fit([sp.csr_matrix(x) for x in X], Y, C=1.0, tol=1e-7)
    assert abs(dense.objective_ - sparse.objective_) <= 1e-6 * dense.objective_
    assert dense.predict(X) == sparse.predict([sp.csr_matrix(x) for x in X])


def test_parallel_oracle_equals_serial(monkeypatch):
    monkeypatch.setattr("structsvm.learners.problem.MIN_REMOTE", 0)  # a pool for 200 examples
    X, Y, _ = random_multiclass(9, n=200)
    fm = MulticlassFeatures().fit(X, Y)
    args = (fm.encode_inputs(X), fm.encode_outputs(Y), fm, get_decoder("argmax"),
            get_loss("zero_one"), 1.0)
    w = np.random.default_rng(0).normal(size=fm.n_features_)
    serial = Problem(*args).oracle(w)
    par = Problem(*args, n_jobs=2, chunk_size=50)  # 4 chunks on 2 workers
    parallel = par.oracle(w)
    assert par._pool is not None
    np.testing.assert_array_equal(serial.y_hat, parallel.y_hat)
    np.testing.assert_allclose(serial.slack, parallel.slack)
    np.testing.assert_allclose(serial.psi.toarray(), parallel.psi.toarray())


def test_one_slack_solvers_agree():
    X, Y, _ = random_multiclass(11)
    objs = [structsvm.fit(X, Y, C=1.0, tol=1e-6,
                          learner=OneSlackCuttingPlane(solver=s)).objective_
            for s in ("clarabel", "osqp")]
    assert abs(objs[0] - objs[1]) <= 1e-5 * objs[0]


def test_warm_start_continues_from_previous_solution():
    X, Y, _ = random_multiclass(12)
    model = structsvm.StructuredSVM(C=1.0, tol=1e-2).fit(X, Y)
    first = model.objective_
    model.set_params(warm_start=True, tol=1e-7)
    model.fit(X, Y)
    ref = structsvm.fit(X, Y, C=1.0, tol=1e-7).objective_
    assert model.objective_ <= first + 1e-9
    assert abs(model.objective_ - ref) <= 1e-4 * ref


def test_max_iter_reached_warns_convergence():
    from sklearn.exceptions import ConvergenceWarning

    X, Y, _ = random_multiclass(13)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        model = structsvm.fit(X, Y, C=10.0, tol=1e-9, max_iter=2)
    assert not model.converged_


def test_nslack_learner_object_params():
    X, Y, _ = random_multiclass(14)
    model = structsvm.fit(X, Y, learner=NSlackCuttingPlane(solver="osqp"), tol=1e-6)
    assert model.learner_.solver == "osqp"
    assert model.converged_


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("batch_size", [1, 7])
def test_frank_wolfe_certified_against_full_qp(seed, batch_size):
    X, Y, labels = random_multiclass(seed, noise=1.5)
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=0.1,
                          learner=FrankWolfe(batch_size=batch_size), tol=1e-3,
                          max_iter=2000, random_state=seed)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, labels, zero_one, 0.1)
    assert model.converged_
    assert model.objective_ >= ref * (1 - 1e-9)
    assert (model.objective_ - ref) / ref <= 1e-3
    # the dual value (objective − gap) is a lower bound on the optimum
    assert model.objective_ - model.duality_gap_ <= ref * (1 + 1e-9)


def test_frank_wolfe_refuses_slack_rescaling_and_warm_start():
    X, Y, _ = random_multiclass(1)
    with pytest.raises(ValueError, match="rescaling='margin' only"):
        structsvm.fit(X, Y, learner="frank_wolfe", rescaling="slack")
    model = structsvm.StructuredSVM(learner="frank_wolfe", max_iter=3).fit(X, Y)
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match="warm_start is not supported"):
        model.fit(X, Y)
