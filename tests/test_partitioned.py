"""Training on workers: the partitioned learner's blocks on worker processes of this
machine and on the workers of a Dask ``LocalCluster``; data read where it lives
(files, a Dask bag) without the fitting process opening a file; a worker killed
mid-fit; the memory budget per worker; click totals summed on workers.

The same blocks (number, examples, seeds) give the same model on any engine, so
processes and Dask are compared bit for bit; the objective is compared with the
serial learner's within the certified tolerance.
"""
import os
import signal
import sys
import threading

import numpy as np
import pytest

import structsvm
from structsvm.corpora import (DaskBag, Files, click_totals_in_parts, make_hmm_corpus,
                               make_ranking_problem, read_click_log,
                               simulate_click_logs, write_click_log)
from structsvm.learners import PartitionedCD, DualCD
from structsvm.learners.engines import Blocks, DaskWorkers, InMemory, LocalProcesses
from structsvm.structures import SequenceFeatures
from structsvm.structures.ranking import click_totals

distributed = pytest.importorskip("distributed")

TOL = 1e-2

# --------------------------------------------------------------------------- opened files
# every file this process opens while a test watches (audit hooks stay installed:
# the hook only records while WATCH holds a list)
WATCH = []


def _audit(event, args):
    if event == "open" and WATCH and isinstance(args[0], (str, bytes, os.PathLike)):
        WATCH[-1].append(os.fspath(args[0]))


sys.addaudithook(_audit)


@pytest.fixture(scope="module")
def cluster():
    """A 2-worker Dask LocalCluster (processes, one thread each) and its client."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as lc, Client(lc) as client:
        yield client


def corpus(seed=0, n=300):
    # a vocabulary of the size of a real one: most observation features belong to
    # few sentences (as in text), not to all
    return make_hmm_corpus(n_sentences=n, n_states=4, n_words=2000, mean_length=8,
                           random_state=seed)


def fit_params(**kw):
    kw.setdefault("tol", TOL)
    return dict(feature_map=SequenceFeatures(features="pos"), decoder="viterbi", **kw)


def write_conll(folder, X, Y, n_files):
    paths = []
    for f in range(n_files):
        path = folder / f"part-{f:02d}.txt"
        with open(path, "w", encoding="utf-8") as fh:
            for x, y in zip(X[f::n_files], Y[f::n_files]):
                fh.write("".join(f"{w} {t}\n" for w, t in zip(x, y)) + "\n")
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- in memory
@pytest.mark.parametrize("sharing", ["memory", "rounds"])
def test_processes_reach_the_serial_objective(sharing):
    X, Y = corpus()
    serial = structsvm.fit(X, Y, **fit_params(learner=DualCD()))
    model = structsvm.fit(X, Y, **fit_params(learner=PartitionedCD(sharing=sharing),
                                             n_jobs=2))
    assert model.converged_ and model.learner_.name == "partitioned_cd"
    assert model.learner_state_["engine"] == "processes"
    assert [b["n"] for b in model.learner_state_["blocks"]] == [150, 150]
    # both certified within TOL of the one optimum
    assert abs(model.objective_ - serial.objective_) <= TOL * serial.objective_
    Xt, Yt = corpus(seed=1, n=100)
    assert abs(model.score(Xt, Yt) - serial.score(Xt, Yt)) <= 0.01


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_workers_sharing_w_in_memory_converge_on_small_corpora(seed):
    # few examples, features every example touches (transitions): simultaneous
    # steps of the workers there would overshoot, but for the damped steps and
    # atomic additions
    X, Y = corpus(seed=seed)
    model = structsvm.fit(X, Y, **fit_params(learner=PartitionedCD(sharing="memory"),
                                             n_jobs=2))
    assert model.converged_ and model.n_iter_ < 200
    serial = structsvm.fit(X, Y, **fit_params(learner=DualCD()))
    assert abs(model.objective_ - serial.objective_) <= TOL * serial.objective_


def test_processes_and_dask_give_the_same_model(cluster):
    import joblib

    X, Y = corpus(seed=2, n=120)
    # in rounds: the same blocks and seeds, the same sums in the same order
    params = fit_params(learner=PartitionedCD(n_partitions=2, sharing="rounds",
                                              local_passes=0.25),
                        n_jobs=2, random_state=3)
    on_processes = structsvm.fit(X, Y, **params)
    with joblib.parallel_config(backend="dask"):
        on_dask = structsvm.fit(X, Y, **params)
    assert on_dask.learner_state_["engine"] == "dask"
    np.testing.assert_array_equal(on_processes.coef_, on_dask.coef_)
    assert on_processes.objective_ == on_dask.objective_


def test_a_script_without_a_main_guard_is_told_why_its_workers_fail(tmp_path):
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(
        "import structsvm\n"
        "from structsvm.corpora import make_hmm_corpus\n"
        "from structsvm.structures import SequenceFeatures\n"
        "X, Y = make_hmm_corpus(60, random_state=0)\n"
        "structsvm.fit(X, Y, feature_map=SequenceFeatures(), learner='partitioned_cd', n_jobs=2)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode != 0
    assert "if __name__ ==" in out.stderr


# --------------------------------------------------------------------------- a worker dies
def _blocks(engine, X, Y, sharing, K=2):
    from structsvm.estimator._estimator import StructuredSVM
    from structsvm.estimator._resolution import Resolution

    n = len(X)
    examples = [np.arange(k, n, K) for k in range(K)]
    blocks = Blocks(engine, [[InMemory([X[i] for i in e], [Y[i] for i in e])]
                             for e in examples], [11 * (k + 1) for k in range(K)],
                    examples)
    blocks.open()
    fm = SequenceFeatures(features="pos")
    fm.fit_from_summaries(blocks.summarize(fm))
    est = StructuredSVM(feature_map=fm, decoder="viterbi")
    decoder, loss = Resolution(StructuredSVM, est.get_params(deep=False)).plugins(fm)
    learner = PartitionedCD(sharing=sharing, local_passes=0.25)
    blocks.prepare(fm, decoder, loss, 0.1, "margin", learner)
    return blocks, fm, learner


def _kill_at_second_certificate(blocks, killed):
    def callback(info):
        if info["round"] == 2 and not killed:
            pid = blocks.opened[0]["pid"]
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)
    return callback


@pytest.mark.parametrize("sharing", ["memory", "rounds"])
@pytest.mark.parametrize("engine", ["processes", "dask"])
def test_a_worker_killed_mid_fit_loses_nothing(engine, sharing, request):
    X, Y = corpus(seed=4, n=160)
    results = []
    for kill in (False, True):
        eng = LocalProcesses(2) if engine == "processes" else \
            DaskWorkers(request.getfixturevalue("cluster"), 2)
        blocks, fm, learner = _blocks(eng, X, Y, sharing)
        killed = []
        try:
            result = learner.run(blocks, fm.n_features_, 0.1, np.zeros(fm.n_features_),
                                 max_iter=500, tol=TOL,
                                 callback=_kill_at_second_certificate(blocks, killed)
                                 if kill else None)
        finally:
            blocks.close()
        assert result.converged and result.extra["sharing"] == sharing
        results.append(result)
        if kill:
            assert killed and result.extra["recovered_blocks"] >= 1
    undisturbed, recovered = results
    assert abs(recovered.objective - undisturbed.objective) <= \
        TOL * undisturbed.objective


# --------------------------------------------------------------------------- files
def test_files_are_read_by_the_workers_only(cluster, tmp_path):
    import joblib

    X, Y = corpus(seed=5, n=200)
    paths = write_conll(tmp_path, X, Y, 8)
    data = Files(paths, format="conll")
    opened = []
    WATCH.append(opened)
    try:
        with joblib.parallel_config(backend="dask"):
            model = structsvm.fit(data, **fit_params(learner=PartitionedCD(local_passes=0.25),
                                                     ))
            per_file = model.predict(data)
    finally:
        WATCH.pop()
    assert not set(opened) & {os.fspath(p) for p in paths}
    assert len(per_file) == 8
    assert model.learner_state_["engine"] == "dask"
    assert sum(b["n"] for b in model.learner_state_["blocks"]) == len(X)
    # the same model as from the lists, up to tol
    whole = structsvm.fit(X, Y, **fit_params(learner=DualCD()))
    assert abs(model.objective_ - whole.objective_) <= TOL * whole.objective_
    flat = [p for part in per_file for p in part]
    truth = [y for f in range(8) for y in Y[f::8]]
    acc = np.mean([a == b for p, t in zip(flat, truth) for a, b in zip(p, t)])
    assert acc > 0.8


def test_a_bad_file_is_named_by_the_worker(tmp_path):
    X, Y = corpus(seed=6, n=40)
    paths = write_conll(tmp_path, X, Y, 2)
    with open(paths[1], "a", encoding="utf-8") as fh:
        fh.write("w1 T0 extra\n")
    with pytest.raises(ValueError, match=r"part-01\.txt, line \d+"):
        structsvm.fit(Files(paths, format="conll"), **fit_params(learner="partitioned_cd",
                                                                   n_jobs=2))


def test_a_dask_bag_trains_on_its_cluster(cluster):
    import dask.bag as db
    import joblib

    X, Y = corpus(seed=7, n=80)
    bag = db.from_sequence(list(zip(X, Y)), npartitions=4)
    with joblib.parallel_config(backend="dask"):
        model = structsvm.fit(DaskBag(bag), **fit_params(learner=PartitionedCD(local_passes=0.25),
                                                         ))
        preds = model.predict(DaskBag(bag))
    assert model.converged_ and len(preds) == 4
    assert sum(map(len, preds)) == len(X)
    with pytest.raises(ValueError, match="trains on the workers of its Dask cluster"):
        structsvm.fit(DaskBag(bag), **fit_params(learner="partitioned_cd", n_jobs=2))


def test_partitioned_data_needs_workers(tmp_path):
    X, Y = corpus(seed=8, n=20)
    data = Files(write_conll(tmp_path, X, Y, 2), format="conll")
    with pytest.raises(ValueError, match="read by workers"):
        structsvm.fit(data, **fit_params(learner="partitioned_cd"))
    with pytest.raises(TypeError, match="carries its outputs"):
        structsvm.fit(data, Y, **fit_params(learner="partitioned_cd", n_jobs=2))
    with pytest.raises(TypeError, match="fit needs Y"):
        structsvm.fit(X, **fit_params())


# --------------------------------------------------------------------------- memory
def test_the_memory_budget_is_per_worker(monkeypatch):
    X, Y = corpus(seed=9, n=400)
    from structsvm.learners.memory import fit_memory
    from structsvm.learners.problem import Problem
    from structsvm.structures.decoders import get_decoder
    from structsvm.structures.losses import get_loss

    fm = SequenceFeatures(features="pos").fit(X, Y)
    whole = fit_memory(DualCD(), Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X),
                                         fm, get_decoder("viterbi"),
                                         get_loss("hamming"), 0.1)).total
    # a budget below the one-process fit's needs, above each of two blocks'
    budget = int(0.8 * whole)
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", str(budget))
    with pytest.raises(MemoryError, match="needs an estimated"):
        structsvm.fit(X, Y, **fit_params(learner=DualCD()))
    model = structsvm.fit(X, Y, **fit_params(learner="partitioned_cd", n_jobs=2))
    assert all(b["memory"] <= budget for b in model.learner_state_["blocks"])
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", str(budget // 20))
    with pytest.raises(MemoryError, match="block [01] .* above this worker's budget|"
                                          "block [01] .*needs an estimated"):
        structsvm.fit(X, Y, **fit_params(learner="partitioned_cd", n_jobs=2))


# --------------------------------------------------------------------------- clicks
def _click_parts(tmp_path, n_parts=4):
    rng = np.random.default_rng(0)
    X, Y, _ = make_ranking_problem(n_queries=12, n_docs=8, random_state=0)
    rankings = [np.argsort(-rng.normal(size=len(x))) for x in X]
    paths = []
    for p in range(n_parts):
        logs = simulate_click_logs(rankings, Y, n_sessions=50, random_state=p)
        path = tmp_path / f"clicks-{p}.jsonl"
        write_click_log(path, logs)
        paths.append(path)
    qids = list(range(len(X)))
    docs = [list(range(len(x))) for x in X]
    return X, paths, qids, docs


def test_click_totals_summed_on_workers_equal_the_one_process_sums(tmp_path, cluster):
    import joblib

    X, paths, qids, docs = _click_parts(tmp_path)
    n_docs = [len(x) for x in X]
    kw = dict(query_ids=qids, document_ids=docs, propensities="logged")
    here, n_here = click_totals_in_parts(paths, n_docs, n_jobs=1, **kw)
    procs, n_procs = click_totals_in_parts(paths, n_docs, n_jobs=2, **kw)
    with joblib.parallel_config(backend="dask"):
        dask, n_dask = click_totals_in_parts(paths, n_docs, **kw)
    assert n_here == n_procs == n_dask == 4 * 50 * 12
    for a, b, c in zip(here, procs, dask):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # the sums of each part's own totals
    direct = [np.zeros(n) for n in n_docs]
    for p in paths:
        for q, t in enumerate(click_totals(read_click_log(p, query_ids=qids,
                                                          document_ids=docs),
                                           n_docs, propensities="logged")):
            direct[q] = direct[q] + t
    for a, b in zip(here, direct):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- checkpoints
@pytest.mark.parametrize("sharing", ["memory", "rounds"])
def test_a_checkpoint_holds_the_blocks_and_a_resumed_fit_goes_on(sharing, tmp_path):
    from sklearn.exceptions import ConvergenceWarning

    X, Y = corpus(seed=10, n=200)
    params = fit_params(learner=PartitionedCD(sharing=sharing), n_jobs=2)
    path = tmp_path / "ckpt.npz"
    with pytest.warns(ConvergenceWarning):
        first = structsvm.StructuredSVM(max_iter=4, **params).fit(X, Y,
                                                                   checkpoint=path)
    assert not first.converged_ and path.exists()
    resumed = structsvm.StructuredSVM(max_iter=200, **params).fit(X, Y, resume=path)
    assert resumed.converged_ and resumed.n_iter_ > first.n_iter_
    assert resumed.objective_curve_[:len(first.objective_curve_)] == \
        first.objective_curve_
    whole = structsvm.fit(X, Y, **params)
    assert abs(resumed.objective_ - whole.objective_) <= TOL * whole.objective_
    # the resumed dual point is the checkpoint's (that of the best certificate
    # before the stop): its first certificate is that one's
    assert resumed.objective_curve_[len(first.objective_curve_)] == pytest.approx(
        min(first.objective_curve_), rel=1e-9)
    # other data: refused, naming the reason
    with pytest.raises(ValueError, match="other training data"):
        structsvm.StructuredSVM(**params).fit(X[:-1], Y[:-1], resume=path)


def test_a_bad_example_is_named_by_its_place_in_the_data():
    X, Y = corpus(seed=11, n=40)
    short = list(Y)
    short[17] = short[17][:-1]  # one tag short
    with pytest.raises(ValueError, match=r"^Sentence 17: x has \d+ tokens but y has"):
        structsvm.fit(X, short, **fit_params(learner="partitioned_cd", n_jobs=2))
    numbers = list(X)
    numbers[23] = [1, 2]
    tags = list(Y)
    tags[23] = ["T0", "T0"]
    with pytest.raises(TypeError, match=r"^Sentence 23, token 0: expected a string"):
        structsvm.fit(numbers, tags, **fit_params(learner="partitioned_cd", n_jobs=2))


def test_partitioned_data_train_with_the_partitioned_learner_by_default(tmp_path):
    """With no learner named, partitioned data train with the learner that runs on
    the workers; a learner that needs the data in this process is refused."""
    X, Y = corpus(seed=10, n=60)
    data = Files(write_conll(tmp_path, X, Y, 2), format="conll")
    model = structsvm.fit(data, **fit_params(n_jobs=2))
    assert model.learner_.name == "partitioned_cd" and model.converged_
    whole = structsvm.fit(X, Y, **fit_params())
    assert abs(model.objective_ - whole.objective_) <= TOL * whole.objective_
    with pytest.raises(ValueError, match="whose work runs on the workers"):
        structsvm.fit(data, **fit_params(learner="dual_cd", n_jobs=2))
