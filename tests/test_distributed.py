"""The same training on a local Dask cluster and a local Ray instance (joblib backends).

Both engines are in the ``test`` and ``dist`` extras; a test skips only where its
engine is not installed, and fails then under ``STRUCTSVM_REQUIRE_DATA=1`` (CI).
"""
import joblib
import numpy as np
import pytest

import structsvm
import structsvm.learners.problem as problem_module
from structsvm.structures import SequenceFeatures
from structsvm.structures import get_decoder
from structsvm.structures import get_loss
from structsvm.learners.problem import Problem

pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn.exceptions.ConvergenceWarning",
    "ignore::DeprecationWarning", "ignore::ResourceWarning")


def data(seed=0, n=80, d=5, K=3):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(int(rng.integers(2, 7)), d)) for _ in range(n)]
    Y = [list(rng.integers(0, K, size=len(x))) for x in X]
    return X, Y


@pytest.fixture(autouse=True)
def every_split_call_goes_to_the_workers(monkeypatch):
    """These problems are small: let every multi-chunk call reach the workers, also
    those in other processes (which otherwise get calls of >= MIN_REMOTE examples)."""
    monkeypatch.setattr(problem_module, "MIN_REMOTE", 0)


PARAMS = dict(feature_map=SequenceFeatures(), decoder="viterbi", C=1.0, max_iter=6)


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(problem_module, "MIN_CHUNK", 8)  # 80 examples: 4 chunks of 20


HINT = "(pip install 'structsvm[dist]')"


def test_dask_cluster_trains_the_serial_model(small_chunks, need_module):
    need_module("distributed", HINT)
    from distributed import Client, LocalCluster, get_task_stream

    X, Y = data()
    ref = structsvm.fit(X, Y, **PARAMS)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        with get_task_stream(client) as stream, joblib.parallel_config(backend="dask"):
            got = structsvm.fit(X, Y, **PARAMS)  # n_jobs: the cluster's cores
        workers = {t["worker"] for t in stream.data}
    assert np.array_equal(got.coef_, ref.coef_) and got.n_iter_ == ref.n_iter_
    assert len(stream.data) >= got.n_iter_ and len(workers) >= 1


@pytest.fixture(scope="module")
def ray_instance(need_module):
    ray = need_module("ray", HINT)
    from ray.util.joblib import register_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    register_ray()
    yield ray
    ray.shutdown()


def test_ray_trains_the_serial_model(ray_instance, small_chunks):
    X, Y = data(1)
    ref = structsvm.fit(X, Y, **PARAMS)
    with joblib.parallel_config(backend="ray", n_jobs=2):
        got = structsvm.fit(X, Y, **PARAMS)
    assert np.array_equal(got.coef_, ref.coef_) and got.n_iter_ == ref.n_iter_


def test_ray_workers_receive_the_data_once(ray_instance):
    X, Y = data(2)
    fm = SequenceFeatures().fit(X, Y)
    p = Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("viterbi"),
                get_loss("hamming"), 1.0, n_jobs=2, chunk_size=16)
    w = np.random.default_rng(0).normal(size=fm.n_features_)
    p.n_jobs = 1
    serial = p.oracle_sum(w)
    p.n_jobs = 2
    with joblib.parallel_config(backend="ray", n_jobs=2), p:
        first = p.oracle_sum(w)
        pool = p._pool
        shipped = pool.shipments
        for _ in range(3):
            again = p.oracle_sum(w)
        assert pool.in_process is False and pool.shipments == shipped <= 4
    assert first[0] == serial[0] and np.array_equal(first[2], serial[2])
    assert np.array_equal(again[1].toarray(), serial[1].toarray())


@pytest.mark.parametrize("required", ["1", ""])
def test_a_missing_engine_fails_when_required(need_module, monkeypatch, required):
    monkeypatch.setenv("STRUCTSVM_REQUIRE_DATA", required)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome, match="structsvm_no_such_engine"):
        need_module("structsvm_no_such_engine", HINT)
    assert need_module("numpy") is np
