"""The default learners resume from a checkpoint with their state in it: the resumed
run continues (its first objective is at or below the checkpoint's, n_iter_ counts
on) and reaches the uninterrupted run's optimum; asking for a checkpoint does not
change the learner."""
import os
import signal

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.estimator import read_checkpoint_info
from structsvm.learners import DualCD, MulticlassDualCD


def _blobs(n=80, k=4, d=6, seed=1):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    return [centers[c] + rng.normal(size=d) for c in y], [f"c{c}" for c in y]


@pytest.fixture
def ctrl_c_after_calls(monkeypatch):
    """Press Ctrl-C right after the learner's ``n``-th callback."""
    from structsvm.estimator import _training

    original = _training.RoundTracker.__call__

    def arm(n):
        calls = []

        def call(self, info):
            try:
                return original(self, info)
            finally:
                calls.append(1)
                if len(calls) == n:
                    os.kill(os.getpid(), signal.SIGINT)

        monkeypatch.setattr(_training.RoundTracker, "__call__", call)
    return arm


@pytest.mark.parametrize("learner", [DualCD, MulticlassDualCD, None],
                         ids=["dual_cd", "multiclass_cd", "default"])
def test_resume_continues_from_the_saved_state(tmp_path, learner, ctrl_c_after_calls,
                                               monkeypatch):
    X, Y = _blobs()
    tol = 1e-6
    params = dict(learner=None if learner is None else learner(), tol=tol, C=2.0)
    full = structsvm.StructuredSVM(**params).fit(X, Y)
    ck = tmp_path / "ck.npz"
    first = structsvm.StructuredSVM(**params)
    ctrl_c_after_calls(1)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        first.fit(X, Y, checkpoint=ck, checkpoint_every=0)
    # a checkpoint does not switch the learner
    assert first.learner_.name == full.learner_.name
    model, info = read_checkpoint_info(ck)
    state = info["learner_state"]
    assert isinstance(state, dict) and info["learner"] == full.learner_.name
    assert any(isinstance(v, np.ndarray) for v in state.values())
    monkeypatch.undo()
    resumed = structsvm.StructuredSVM(**params).fit(X, Y, resume=ck)
    k = len(first.objective_curve_)
    assert resumed.objective_curve_[:k] == first.objective_curve_
    # it continues from the saved dual point rather than from the start
    assert resumed.objective_curve_[k] <= model.objective_ * (1 + 1e-12)
    assert resumed.n_iter_ > first.n_iter_
    assert resumed.converged_ and not resumed.interrupted_
    assert resumed.objective_ == pytest.approx(full.objective_, rel=3 * tol)
    np.testing.assert_allclose(resumed.coef_, full.coef_,
                               atol=2e-2 * np.abs(full.coef_).max())


def test_checkpoint_with_the_default_learner_keeps_it(tmp_path):
    X, Y = _blobs()
    ck = tmp_path / "ck.npz"
    model = structsvm.StructuredSVM(tol=1e-4).fit(X, Y, checkpoint=ck)
    assert model.learner_.name == structsvm.StructuredSVM(tol=1e-4).fit(X, Y).learner_.name
    assert model.learner_.name == "multiclass_cd"
    again = structsvm.StructuredSVM(tol=1e-4).fit(X, Y, resume=ck)
    assert again.converged_ and again.n_iter_ >= model.n_iter_
