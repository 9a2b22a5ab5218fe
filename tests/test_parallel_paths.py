"""The oracle pool's paths that matter when they fail (``structsvm.learners._parallel``).

Where each chunk ran is observed, not assumed: the chunks report the process and
thread that computed them. Identical results prove nothing about the workers (a
pool that computes everything in the training process gives them too), so each
test asserts both the serial answers and where they were computed:

- a training run that asks for workers has every chunk computed by them (threads of
  the pool, or processes other than this one);
- priming leaves the data on every worker it reached;
- a worker without the data answers "missing" and is sent it again, then computes;
- workers that never hold the data are given up on: the chunks run here, with the
  same answers.
"""
import os
import threading
import time

import joblib
import numpy as np
import pytest

import structsvm
import structsvm.learners.problem as problem_module
from structsvm.learners import _parallel
from structsvm.estimator import _training
from structsvm.structures import SequenceFeatures
from structsvm.learners.problem import Problem


@pytest.fixture(autouse=True)
def every_split_call_goes_to_the_workers(monkeypatch):
    """These problems are small: let every multi-chunk call reach the workers, also
    those in other processes (which otherwise get calls of >= MIN_REMOTE examples)."""
    monkeypatch.setattr(problem_module, "MIN_REMOTE", 0)
    monkeypatch.setattr(problem_module, "MIN_CHUNK", 8)  # 80 examples: 4 chunks


def _here():
    return os.getpid(), threading.current_thread().name


class Where:
    """An owner whose method reports where it ran, with an answer to check."""

    def __init__(self, scale=3.0, vanishing=False):
        self.scale = scale
        self.vanishing = vanishing

    def compute(self, w, chunk):
        time.sleep(0.01)  # long enough that every worker gets a share
        return _here(), chunk * self.scale + w[0]

    def worker_copy(self):
        return Vanishing() if self.vanishing else Where(self.scale)


class Vanishing:
    """A payload that arrives as nothing: workers never hold the data."""

    def __reduce__(self):
        return _nothing, ()


def _nothing():
    return None


def _holds(handle):
    """Probe: (process, whether this worker holds the handle's data)."""
    time.sleep(0.02)
    return os.getpid(), handle.resolve() is not None


CHUNKS = np.array_split(np.arange(60), 6)
W = np.array([0.5, 1.0])


def _serial(owner):
    return [chunk * owner.scale + W[0] for chunk in CHUNKS]


def _run(pool):
    with joblib.parallel_config(backend="loky"):
        out = pool.map("compute", W, CHUNKS)
    return [where for where, _ in out], [value for _, value in out]


def test_priming_leaves_the_data_on_every_worker_it_reached():
    owner = Where()
    pool = _parallel.ChunkPool(owner, n_jobs=2)
    try:
        with joblib.parallel_config(backend="loky"):
            assert pool.is_in_process() is False  # opens and primes the pool
            probes = pool._parallel(joblib.delayed(_holds)(_parallel._Handle(pool.token))
                                    for _ in range(16))
    finally:
        pool.close()
    assert os.getpid() not in pool.workers and pool.workers
    primed = [held for pid, held in probes if pid in pool.workers]
    assert primed and all(primed)


def test_workers_without_the_data_are_sent_it_and_compute(monkeypatch):
    """Priming that sends nothing (workers that lost the data): every task answers
    "missing" once, is sent again with the data, and the workers compute."""
    real_prime = _parallel.ChunkPool._prime

    def prime_without_data(self):
        self._payload = lambda: None  # the priming handle carries the token only
        try:
            real_prime(self)
        finally:
            del self._payload

    monkeypatch.setattr(_parallel.ChunkPool, "_prime", prime_without_data)
    owner = Where()
    pool = _parallel.ChunkPool(owner, n_jobs=2)
    try:
        where, got = _run(pool)
        shipped = pool.shipments
        assert pool.in_process is False
        where2, got2 = _run(pool)
    finally:
        pool.close()
    assert shipped > pool._n_workers  # the priming count plus the copies re-sent
    for values in (got, got2):
        assert all(np.array_equal(a, b) for a, b in zip(values, _serial(owner)))
    pids = {pid for pid, _ in where + where2}
    assert os.getpid() not in pids  # computed by the workers, not here


def test_workers_that_never_hold_the_data_fall_back_to_this_process():
    owner = Where(vanishing=True)
    pool = _parallel.ChunkPool(owner, n_jobs=2)
    try:
        where, got = _run(pool)
        assert pool.in_process is False
    finally:
        pool.close()
    assert all(np.array_equal(a, b) for a, b in zip(got, _serial(owner)))
    assert {pid for pid, _ in where} == {os.getpid()}  # the fallback ran them here
    assert pool.shipments > pool._n_workers  # after sending the data again


class TaggedProblem(Problem):
    """The training problem, its chunks tagged with where they were computed."""

    def tagged(self, w, chunk, method, *args):
        return _here(), getattr(self, method)(w, chunk, *args)


def sequences(seed=0, n=80, d=5, K=3):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(int(rng.integers(2, 7)), d)) for _ in range(n)]
    Y = [list(rng.integers(0, K, size=len(x))) for x in X]
    return X, Y


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("backend", ["threading", "loky"])
@pytest.mark.parametrize("learner", ["n_slack", "dual_cd"])
def test_a_parallel_fit_computes_its_chunks_on_the_workers(backend, learner,
                                                           monkeypatch):
    where = []
    real_map = _parallel.ChunkPool.map

    def map_tagged(self, method, w, chunks, args=(), seed=None):
        out = real_map(self, "tagged", w, chunks, (method,) + tuple(args), seed)
        where.extend(tag for tag, _ in out)
        return [result for _, result in out]

    monkeypatch.setattr(_parallel.ChunkPool, "map", map_tagged)
    monkeypatch.setattr(_training, "Problem", TaggedProblem)
    X, Y = sequences()
    params = dict(feature_map=SequenceFeatures(), decoder="viterbi", learner=learner,
                  C=1.0, max_iter=4)
    ref = structsvm.fit(X, Y, **params)
    assert not where  # n_jobs=1: no pool
    with joblib.parallel_config(backend=backend):
        got = structsvm.fit(X, Y, n_jobs=2, **params)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert got.n_iter_ == ref.n_iter_
    assert len(where) >= 4 * len(got.objective_curve_)  # each full pass: 4 chunks
    if backend == "loky":
        assert os.getpid() not in {pid for pid, _ in where}
    else:
        assert {pid for pid, _ in where} == {os.getpid()}
        assert threading.current_thread().name not in {name for _, name in where}
