"""Issue 14's two bugs: objective_ at coef_ after max_iter, and warm starts that continue.

The objective is recomputed here from ``coef_`` by brute force over every output
(``joint_feature`` on raw data, no oracle, no decoder), so a learner that reports the
objective of another w fails.
"""
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.structures import MulticlassFeatures
from structsvm.learners import (NSlackCuttingPlane, OneSlackCuttingPlane, Pegasos,
                                Perceptron)


def random_multiclass(seed, n=40, d=5, k=4, noise=1.5):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=2.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + noise * rng.normal(size=(n, d))
    labels = ["a", "b", "c", "d", "e"][:k]
    return list(X), [labels[j] for j in y], labels


def brute_force_objective(model, X, Y, labels, C):
    """½‖w‖² + C Σ_i max_y [Δ(y_i, y) − w·(Φ(x_i, y_i) − Φ(x_i, y))], zero-one Δ."""
    w = model.coef_
    fm = model.feature_map_
    total = 0.0
    for x, y in zip(X, Y):
        truth = w @ fm.joint_feature(x, y)
        total += max(float(o != y) - truth + w @ fm.joint_feature(x, o) for o in labels)
    return 0.5 * float(w @ w) + C * total


LEARNERS = ["one_slack", "n_slack", "frank_wolfe", "pegasos", "perceptron"]


@pytest.mark.parametrize("learner", LEARNERS)
@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_objective_is_at_coef_when_stopping_at_max_iter(learner, max_iter):
    X, Y, labels = random_multiclass(3)
    C = 10.0
    with _maybe_warns():
        model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax",
                              C=C, tol=1e-12, max_iter=max_iter, learner=learner,
                              random_state=0)
    assert not model.converged_
    expected = brute_force_objective(model, X, Y, labels, C)
    assert model.objective_ == pytest.approx(expected, rel=1e-9)
    assert model.objective_curve_[-1] == pytest.approx(expected, rel=1e-9)


class _maybe_warns:
    """Context manager that swallows the ConvergenceWarning of a max_iter stop."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", ConvergenceWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


# ------------------------------------------------------------------ warm start
def _fit(model, X, Y):
    with _maybe_warns():
        return model.fit(X, Y)


@pytest.mark.parametrize("learner", [Pegasos(), Pegasos(average=False, projection=False),
                                     Pegasos(batch_size=4), Perceptron()])
def test_stochastic_warm_start_continues_the_run(learner):
    """3 epochs, then 3 more warm, equal 6 epochs in one run: the step counter, the
    last iterate, the average and the random stream all continue (a cold restart,
    whose first Pegasos step 1 − 1/t = 0 wipes w0, does not)."""
    X, Y, _ = random_multiclass(5)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", C=1.0, tol=0.0,
              learner=learner, random_state=0)
    model = _fit(structsvm.StructuredSVM(max_iter=3, **kw), X, Y)
    model.set_params(warm_start=True)
    _fit(model, X, Y)
    six = _fit(structsvm.StructuredSVM(max_iter=6, **kw), X, Y)
    three = _fit(structsvm.StructuredSVM(max_iter=3, **kw), X, Y)
    assert not np.allclose(six.coef_, three.coef_)
    np.testing.assert_allclose(model.coef_, six.coef_, rtol=1e-10, atol=1e-12)
    steps = 6 * len(X) // getattr(learner, "batch_size", 1)
    assert model.learner_state_["steps"] == six.learner_state_["steps"] == steps


@pytest.mark.parametrize("cache_size", [0, 10])
def test_one_slack_warm_start_needs_fewer_rounds_and_starts_at_previous_objective(
        cache_size):
    """Loose then tight (warm) costs about what tight alone costs beyond loose: the
    warm run continues the working set instead of restarting from one constraint."""
    X, Y, _ = random_multiclass(7, n=30)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", C=3.0,
              learner=OneSlackCuttingPlane(cache_size=cache_size))
    cold_loose = structsvm.StructuredSVM(tol=1e-2, **kw).fit(X, Y)
    cold_tight = structsvm.StructuredSVM(tol=1e-6, **kw).fit(X, Y)
    warm = structsvm.StructuredSVM(tol=1e-2, warm_start=True, **kw).fit(X, Y)
    previous = warm.objective_
    warm.set_params(warm_start=True, tol=1e-6)
    warm.fit(X, Y)
    assert warm.converged_
    assert warm.objective_curve_[0] == pytest.approx(previous, rel=1e-12)
    qp = {m: m.learner_state_["n_qp"] for m in (warm, cold_loose, cold_tight)}
    assert qp[warm] < qp[cold_tight] - qp[cold_loose] + 2
    assert warm.n_iter_ < cold_tight.n_iter_ - cold_loose.n_iter_ + 2 or cache_size
    assert warm.objective_ == pytest.approx(cold_tight.objective_, rel=1e-5)


@pytest.mark.parametrize("learner", [OneSlackCuttingPlane(), NSlackCuttingPlane()])
def test_cutting_plane_warm_start_with_a_new_C_is_still_certified(learner):
    """The working set is valid for any C (its α are rescaled): same optimum as cold."""
    X, Y, _ = random_multiclass(8)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", learner=learner,
              tol=1e-6)
    model = structsvm.StructuredSVM(C=1.0, warm_start=True, **kw).fit(X, Y)
    model.set_params(C=4.0)
    model.fit(X, Y)
    cold = structsvm.StructuredSVM(C=4.0, **kw).fit(X, Y)
    assert model.converged_
    assert model.objective_ == pytest.approx(cold.objective_, rel=1e-5)


def test_warm_start_on_other_data_does_not_reuse_the_working_set():
    X, Y, _ = random_multiclass(9)
    X2, Y2, _ = random_multiclass(10)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", C=1.0, tol=1e-6,
              learner="one_slack")
    model = structsvm.StructuredSVM(warm_start=True, **kw).fit(X, Y)
    model.fit(X2, Y2)
    cold = structsvm.StructuredSVM(**kw)
    cold.fit(X, Y)  # the same fitted feature map as the warm model
    assert "working_set" not in cold.learner_state_  # not kept without warm_start
    cold.set_params(warm_start=True)
    cold.fit(X2, Y2)  # only w0 carried over
    assert model.objective_ == pytest.approx(cold.objective_, rel=1e-5)


def test_frank_wolfe_refuses_warm_start_naming_those_that_can():
    X, Y, _ = random_multiclass(12)
    model = _fit(structsvm.StructuredSVM(learner="frank_wolfe", max_iter=2), X, Y)
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match="frank_wolfe.*warm_start.*one_slack"):
        model.fit(X, Y)
