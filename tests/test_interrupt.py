"""Ctrl-C keeps the work; checkpoints resume to the same model; progress lines."""
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.cli import main
from structsvm.structures import SequenceFeatures
from structsvm.learners import NSlackCuttingPlane, OneSlackCuttingPlane

REPO = Path(structsvm.__file__).resolve().parent.parent


def _blobs(n=60, k=4, d=6, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    return [centers[c] + rng.normal(size=d) for c in y], [f"c{c}" for c in y]


@pytest.fixture
def ctrl_c_after(monkeypatch):
    """``ctrl_c_after(rounds, times)``: press Ctrl-C ``times`` times right after the
    learner's callback of each round in ``rounds`` -- what a user at the keyboard
    does, at a reproducible moment."""
    from structsvm.estimator import _training

    original = _training.RoundTracker.__call__

    def arm(rounds, times=1):

        def call(self, info):
            try:
                return original(self, info)
            finally:
                if info["round"] in rounds:
                    for _ in range(times):
                        os.kill(os.getpid(), signal.SIGINT)

        monkeypatch.setattr(_training.RoundTracker, "__call__", call)
    return arm


@pytest.mark.parametrize("learner", ["one_slack", "pegasos"])
def test_ctrl_c_stops_after_the_round_and_keeps_the_best_weights(learner, ctrl_c_after):
    X, Y = _blobs()
    handler = signal.getsignal(signal.SIGINT)
    ctrl_c_after({3})
    model = structsvm.StructuredSVM(learner=learner, tol=1e-9, max_iter=500)
    with pytest.warns(ConvergenceWarning, match="interrupted .*after 4 rounds.*best "
                                                "weights"):
        model.fit(X, Y)
    assert signal.getsignal(signal.SIGINT) is handler   # handler restored
    assert model.interrupted_ and not model.converged_
    assert model.n_iter_ == 4 and len(model.objective_curve_) == 4
    assert model.objective_ == min(model.objective_curve_)
    # coef_ is the best round's w: its exact primal objective is objective_
    fm = model.feature_map_
    from structsvm.learners.problem import Problem

    prob = Problem(fm.encode_inputs(X), fm.encode_outputs(Y), fm, model.decoder_,
                   model.loss_, model.C_)
    assert prob.primal_objective(model.coef_) == pytest.approx(model.objective_, rel=1e-9)
    assert len(model.predict(X)) == len(X)


def test_second_ctrl_c_stops_at_once_and_still_keeps_the_work(ctrl_c_after):
    X, Y = _blobs()
    ctrl_c_after({2}, times=2)
    model = structsvm.StructuredSVM(learner="one_slack", tol=1e-9)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        model.fit(X, Y)
    assert model.interrupted_ and model.n_iter_ == 2
    assert model.objective_ == min(model.objective_curve_)


@pytest.mark.parametrize("learner", [OneSlackCuttingPlane, NSlackCuttingPlane])
def test_checkpoint_then_resume_reaches_the_uninterrupted_model(tmp_path, learner,
                                                               ctrl_c_after):
    X, Y = _blobs(seed=1)
    tol = 1e-7
    full = structsvm.StructuredSVM(learner=learner(), tol=tol, C=0.5).fit(X, Y)
    ck = tmp_path / "ck.npz"
    first = structsvm.StructuredSVM(learner=learner(), tol=tol, C=0.5)
    ctrl_c_after({3})
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        first.fit(X, Y, checkpoint=ck, checkpoint_every=0)
    ctrl_c_after(set())
    assert structsvm.load(ck).predict(X) == first.predict(X)   # a checkpoint is a model
    resumed = structsvm.StructuredSVM(learner=learner(), tol=tol, C=0.5).fit(
        X, Y, resume=ck)
    assert resumed.converged_ and not resumed.interrupted_
    assert resumed.n_iter_ > 4 and resumed.objective_curve_[:4] == first.objective_curve_
    # the primal is strictly convex: both runs certify the same optimum within tol
    assert resumed.objective_ == pytest.approx(full.objective_, rel=3 * tol)
    np.testing.assert_allclose(resumed.coef_, full.coef_,
                               atol=1e-3 * np.abs(full.coef_).max())
    # same predictions wherever the optimum's top class wins by more than the
    # certified difference of the two models' scores
    fm = full.feature_map_
    Xe = fm.encode_inputs(X)
    s_full = fm.batch_potentials(Xe, full.coef_).scores
    s_res = resumed.feature_map_.batch_potentials(Xe, resumed.coef_).scores
    top2 = np.sort(s_full, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * np.abs(s_full - s_res).max()
    assert clear.sum() >= 0.9 * len(X)
    assert np.array_equal(np.argmax(s_full, 1)[clear], np.argmax(s_res, 1)[clear])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_resume_refuses_other_data_parameters_and_learners(tmp_path):
    X, Y = _blobs()
    ck = tmp_path / "ck.npz"
    structsvm.StructuredSVM(max_iter=3, tol=1e-12).fit(X, Y, checkpoint=ck)
    with pytest.raises(ValueError, match="other training data"):
        structsvm.StructuredSVM(max_iter=3, tol=1e-12).fit(X[:-1], Y[:-1], resume=ck)
    with pytest.raises(ValueError, match="other parameters \\(C\\)"):
        structsvm.StructuredSVM(C=3.0, tol=1e-12).fit(X, Y, resume=ck)
    with pytest.raises(ValueError, match="learner 'pegasos' cannot continue"):
        structsvm.StructuredSVM(learner="pegasos").fit(X, Y, resume=ck)
    plain = tmp_path / "plain.npz"
    structsvm.fit(X, Y).save(plain)
    with pytest.raises(ValueError, match="a model file, not a checkpoint"):
        structsvm.StructuredSVM().fit(X, Y, resume=plain)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        structsvm.StructuredSVM().fit(X, Y, checkpoint=tmp_path / "no" / "ck.npz")


def test_progress_lines(caplog):
    X, Y = _blobs()
    with caplog.at_level(logging.INFO, logger="structsvm"):
        structsvm.fit(X, Y, verbose=1, tol=1e-6)
        structsvm.fit(X, Y, verbose=1, learner="pegasos", max_iter=2)
    lines = [r.getMessage() for r in caplog.records]
    rounds = [m for m in lines if m.startswith("round")]
    assert any("gap" in m and "objective" in m for m in rounds)
    assert not any("nan" in m or "constraints -" in m for m in rounds)
    assert any(m.startswith("training pegasos on 60 examples") for m in lines)


# ------------------------------------------------------------------ the command line
def _svm_hmm_file(path, n=80, T=12, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(1, n + 1):
        for _ in range(T):
            tag = int(rng.integers(1, 5))
            feats = sorted(set(int(f) for f in rng.integers(1, 40, size=4)) | {40 + tag})
            lines.append(f"{tag} qid:{q} " + " ".join(f"{f}:1" for f in feats))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ctrl_c_during_structsvm_learn_writes_a_loadable_model(tmp_path):
    train = _svm_hmm_file(tmp_path / "train.dat")
    model = tmp_path / "model.npz"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "structsvm.cli", "learn", "--task", "sequence",
         "--learner", "pegasos", "--tol", "0", "--max-iter", "1000000", "-v",
         str(train), str(model)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    seen, t0 = [], time.monotonic()
    try:
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("[structsvm] round    3"):
                proc.send_signal(signal.SIGINT)
                break
            assert time.monotonic() - t0 < 120, "".join(seen)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, "".join(seen) + err
    assert "interrupted after" in err and str(model) in err
    fitted = structsvm.load(model)
    assert not fitted.converged_ and fitted.n_iter_ >= 3
    assert isinstance(fitted.feature_map_, SequenceFeatures)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_learn_checkpoint_and_resume_on_the_command_line(tmp_path, capsys):
    train = _svm_hmm_file(tmp_path / "train.dat", n=20, T=5)
    ck, m1, m2 = tmp_path / "ck.npz", tmp_path / "m1.npz", tmp_path / "m2.npz"
    args = ["learn", "--task", "sequence", "--tol", "1e-4", "-C", "0.1"]
    assert main(args + ["--max-iter", "3", "--checkpoint", str(ck),
                        "--checkpoint-every", "0", str(train), str(m1)]) == 0
    assert main(args + ["--max-iter", "20", "--resume", str(ck), str(train),
                        str(m2)]) == 0
    resumed = structsvm.load(m2)
    # the structure's default learner, resumed: the passes count on from the checkpoint
    assert resumed.learner_.name == structsvm.load(m1).learner_.name
    assert resumed.n_iter_ == 20 and resumed.objective_ < structsvm.load(m1).objective_


def test_learn_fails_before_training_and_classify_refuses_empty_files(tmp_path, capsys):
    train = _svm_hmm_file(tmp_path / "train.dat", n=4, T=3)
    assert main(["learn", "--task", "sequence", str(train),
                 str(tmp_path / "missing" / "m.npz")]) == 2
    assert "folder" in capsys.readouterr().err
    model = tmp_path / "m.npz"
    assert main(["learn", "--task", "sequence", "--learner", "frank_wolfe", str(train),
                 str(model)]) == 0
    empty = tmp_path / "empty.dat"
    empty.write_text("")
    assert main(["classify", str(model), str(empty)]) == 2
    err = capsys.readouterr().err
    assert "holds no examples" in err and "nan" not in err


def test_interrupted_flag_survives_save_and_load(tmp_path, ctrl_c_after):
    X, Y = _blobs()
    ctrl_c_after({2})
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        model = structsvm.StructuredSVM(learner="one_slack", tol=1e-9).fit(X, Y)
    again = structsvm.load(model.save(tmp_path / "m.npz"))
    assert again.interrupted_ and not again.converged_
    ctrl_c_after(set())
    done = structsvm.fit(X, Y)
    assert structsvm.load(done.save(tmp_path / "d.npz")).interrupted_ is False
