"""Model files written by an earlier version of structsvm (tests/model_files/, with
the predictions that version made) still load, predict the same, and a checkpoint
still resumes: moving a class to another module does not orphan users' files."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import structsvm
from structsvm.estimator import read_checkpoint_info

FOLDER = Path(__file__).resolve().parent / "model_files"
EXPECTED = json.loads((FOLDER / "expected.json").read_text())
sys.path.insert(0, str(FOLDER))
from inputs import as_json, data  # noqa: E402

from structure_examples import MultiLabel  # noqa: E402


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_old_model_file_predicts_what_it_predicted(name):
    model = structsvm.load(FOLDER / f"{name}.npz", trusted=[MultiLabel])
    _, _, X_test = data(name)
    got = as_json(model.predict(X_test))
    want = EXPECTED[name]["predictions"]
    assert got == want, (name, got, want)


def test_an_old_checkpoint_resumes(tmp_path):
    model, info = read_checkpoint_info(FOLDER / "checkpoint.npz")
    assert info["learner"] == "dual_cd" and info["n_iter"] == model.n_iter_ == 5
    X, Y, _ = data("checkpoint")
    params = dict(feature_map=model.feature_map, max_iter=2000, tol=1e-4)
    resumed = structsvm.StructuredSVM(**params).fit(X, Y, resume=FOLDER / "checkpoint.npz")
    fresh = structsvm.StructuredSVM(**params).fit(X, Y)
    assert resumed.n_iter_ > 5 and resumed.converged_ and fresh.converged_
    # the same strictly convex optimum: both certified within a relative gap of 1e-4
    assert resumed.objective_ == pytest.approx(fresh.objective_, rel=2e-4)
    np.testing.assert_allclose(resumed.coef_, fresh.coef_, atol=0.05)
