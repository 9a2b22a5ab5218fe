"""The parallel oracle: chunks on threads and processes give exactly the serial results."""
import gc

import joblib
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
import structsvm.learners.problem as problem_module
from structsvm.learners import _parallel
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.structures import get_decoder
from structsvm.structures import get_loss
from structsvm.learners.problem import Problem

BACKENDS = ["threading", "loky"]


@pytest.fixture(autouse=True)
def every_split_call_goes_to_the_workers(monkeypatch):
    """These problems are small: let every multi-chunk call reach the workers, also
    those in other processes (which otherwise get calls of >= MIN_REMOTE examples)."""
    monkeypatch.setattr(problem_module, "MIN_REMOTE", 0)


def sequences(seed, n=120, d=6, K=3):
    """Random real-valued token features (sums are not exact in floating point)."""
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(int(rng.integers(2, 8)), d)) for _ in range(n)]
    Y = [list(rng.integers(0, K, size=len(x))) for x in X]
    return X, Y


def sequence_problem(seed, n_jobs=1, chunk_size=16, n=120):
    X, Y = sequences(seed, n)
    fm = SequenceFeatures().fit(X, Y)
    p = Problem(fm.encode_inputs(X), fm.encode_outputs(Y, X), fm, get_decoder("viterbi"),
                get_loss("hamming"), 0.5, n_jobs=n_jobs, chunk_size=chunk_size)
    w = np.random.default_rng(seed + 1).normal(size=fm.n_features_)
    return p, w


def multiclass_problem(seed, n_jobs=1, rescaling="margin", n=150):
    rng = np.random.default_rng(seed)
    X = list(rng.normal(size=(n, 5)))
    Y = list(rng.integers(0, 4, size=n))
    fm = MulticlassFeatures().fit(X, Y)
    p = Problem(fm.encode_inputs(X), fm.encode_outputs(Y), fm, get_decoder("argmax"),
                get_loss("zero_one"), 0.7, rescaling=rescaling, n_jobs=n_jobs, chunk_size=20)
    return p, rng.normal(size=fm.n_features_)


def same_rows(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data))


# ------------------------------------------------------------------ chunk layout
@pytest.mark.parametrize("m, k", [(255, 1), (256, 2), (300, 2), (511, 2), (558, 2),
                                  (1023, 2), (1024, 4), (1500, 4), (4468, 12),
                                  (8936, 12), (100_000, 16)])
def test_chunk_counts(m, k):
    # 256-511 examples: two chunks (dual_cd's sweep batches on 4,096-8,191
    # sentences decode on 2 threads); above, chunks of at least 256, so a serial run
    # does not pay for more chunks than 2 or 4 workers need
    p, _ = multiclass_problem(0)
    p.chunk_size = None
    assert len(p._chunks(np.arange(m))) == k


@pytest.mark.parametrize("m", [1, 100, 300, 511, 512, 1000, 8936, 100_000])
def test_chunks_depend_on_the_number_of_examples_only(m):
    p, _ = multiclass_problem(0)
    p.chunk_size = None
    idx = np.arange(m)
    chunks = p._chunks(idx)
    assert np.array_equal(np.concatenate(chunks), idx)
    sizes = [len(c) for c in chunks]
    if m < 2 * problem_module.MIN_CHUNK:
        assert sizes == [m]
    else:
        assert min(sizes) >= problem_module.MIN_CHUNK
        assert len(chunks) <= problem_module.MAX_CHUNKS
        assert len(chunks) == 2 or len(chunks) % 4 == 0  # even loads on 2 or 4 workers
        assert max(sizes) - min(sizes) <= 1
    for n_jobs in (1, 2, 7):  # n_jobs plays no part
        p.n_jobs = n_jobs
        assert [len(c) for c in p._chunks(idx)] == sizes


@pytest.mark.parametrize("seed", range(3))
def test_sequence_chunks_balance_tokens(seed):
    """A map with example_costs (sentence lengths) gets chunks of about equal work:
    each chunk's tokens within one sentence of total / k; order kept, none empty."""
    p, _ = sequence_problem(seed, chunk_size=64, n=600)
    cost = p.feature_map.example_costs(p.Xe)
    rng = np.random.default_rng(seed)
    for idx in (np.arange(600), rng.permutation(600)[:200], rng.permutation(600)):
        chunks = p._chunks(idx)
        assert len(chunks) >= 2 and all(len(c) for c in chunks)
        assert np.array_equal(np.concatenate(chunks), idx)
        load = np.array([cost[c].sum() for c in chunks])
        assert np.all(np.abs(load - load.sum() / len(chunks)) <= cost[idx].max())
        for n_jobs in (1, 2, 7):  # n_jobs plays no part
            p.n_jobs = n_jobs
            assert all(np.array_equal(a, b) for a, b in zip(p._chunks(idx), chunks))


def test_chunked_sequence_sum_equals_the_one_pass_dense_sum():
    p, w = sequence_problem(0)
    whole = p.feature_map.aggregate_violation(p.Xe, p.Ye, w, p.loss)
    chunked = p.oracle_sum(w)  # 8 chunks, serial
    assert len(p._chunks(np.arange(p.n_samples))) > 4
    assert chunked[0] == pytest.approx(whole[0])
    np.testing.assert_allclose(chunked[1].toarray().ravel(), whole[1], atol=1e-12)
    np.testing.assert_allclose(chunked[2], whole[2], atol=1e-12)
    assert chunked[1].has_canonical_format
    # the scratch vectors are zero again after use
    p.Xe._scratch.put(scratch := p.Xe._take_scratch(p.n_features))
    assert not scratch.any()


def test_sparse_chunk_row_equals_the_dense_kernel():
    p, w = sequence_problem(1)
    fm = p.feature_map
    idx = np.arange(10, 47)
    _, row, _ = fm.aggregate_violation(p.Xe, p.Ye, w, p.loss, idx)
    # reference: loss-augmented Viterbi, then the dense difference sum of the chunk
    Y = [p.Ye[i] for i in idx]
    batch = fm.batch_potentials(p.Xe, w, idx).augment(Y, p.loss)
    Yh = get_decoder("viterbi")(batch)
    dense = fm.joint_feature_difference_sum(p.Xe, Y, Yh, idx)
    assert sp.issparse(row) and row.shape == (1, fm.n_features_)
    np.testing.assert_allclose(row.toarray().ravel(), dense, atol=1e-12)


# ------------------------------------------------------------------ serial == parallel
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_sequence_oracles_are_identical_to_serial(backend):
    serial, w = sequence_problem(2)
    par, _ = sequence_problem(2, n_jobs=2)
    ref_sum, ref = serial.oracle_sum(w), serial.oracle(w)
    with joblib.parallel_config(backend=backend), par:
        for _ in range(2):  # the second call reuses the pool
            got_sum, got = par.oracle_sum(w), par.oracle(w)
            assert got_sum[0] == ref_sum[0]
            assert same_rows(got_sum[1], ref_sum[1])
            assert np.array_equal(got_sum[2], ref_sum[2])
            assert same_rows(got.psi, ref.psi)
            for name in ("idx", "loss", "margin", "slack"):
                assert np.array_equal(getattr(got, name), getattr(ref, name)), name
            assert all(np.array_equal(a, b) for a, b in zip(got.y_hat, ref.y_hat))
        subset = np.arange(3, 110, 2)  # what a learner asks for: any subset
        assert same_rows(par.oracle(w, subset).psi, serial.oracle(w, subset).psi)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rescaling", ["margin", "slack"])
def test_parallel_multiclass_oracles_are_identical_to_serial(backend, rescaling):
    serial, w = multiclass_problem(3, rescaling=rescaling)
    par, _ = multiclass_problem(3, n_jobs=2, rescaling=rescaling)
    with joblib.parallel_config(backend=backend), par:
        got, ref = par.oracle_sum(w), serial.oracle_sum(w)
        assert got[0] == ref[0] and same_rows(got[1], ref[1])
        assert np.array_equal(got[2], ref[2])
        assert same_rows(par.oracle(w).psi, serial.oracle(w).psi)
        # enumeration in Python holds the GIL: processes are preferred there
        assert par._pool.prefer == ("processes" if rescaling == "slack" else "threads")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("learner", ["one_slack", "n_slack", "dual_cd"])
def test_parallel_fit_gives_the_serial_model(backend, learner, monkeypatch):
    monkeypatch.setattr(problem_module, "MIN_CHUNK", 8)  # 100 examples: 4 chunks
    X, Y = sequences(4, n=100)
    params = dict(feature_map=SequenceFeatures(), decoder="viterbi", learner=learner,
                  C=1.0, max_iter=8)
    ref = structsvm.fit(X, Y, **params)
    with joblib.parallel_config(backend=backend):
        got = structsvm.fit(X, Y, n_jobs=2, **params)
    assert np.array_equal(got.coef_, ref.coef_)
    assert got.n_iter_ == ref.n_iter_ and got.objective_ == ref.objective_


# ------------------------------------------------------------------ the pool
def test_processes_receive_the_data_once_and_keep_their_pool():
    p, w = sequence_problem(5, n_jobs=2)
    with joblib.parallel_config(backend="loky"), p:
        p.oracle_sum(w)
        pool, parallel = p._pool, p._pool._parallel
        assert pool.in_process is False and 1 <= len(pool.workers) <= 2
        shipped = pool.shipments
        assert 1 <= shipped <= 4
        for _ in range(4):
            p.oracle_sum(w)
            p.oracle(w)
        assert p._pool is pool and pool._parallel is parallel
        assert pool.shipments == shipped  # rounds send weights and chunks, not data
        assert pool.weights_by_value == 0  # same host: w through the shared file
        path = pool._weights.path
    assert p._pool is None and pool._parallel is None
    import os

    assert not os.path.exists(path)  # the shared weights file is removed


def test_workers_that_cannot_open_the_weights_file_get_the_weights(monkeypatch):
    p, w = sequence_problem(8, n_jobs=2)
    ref = sequence_problem(8)[0].oracle_sum(w)
    with joblib.parallel_config(backend="threading"), p:
        p.oracle_sum(w)
        p._pool.in_process = False  # pretend the threads were processes on another host
        monkeypatch.setattr(_parallel._WeightsRef, "get", lambda self: None)
        for _ in range(2):
            got = p.oracle_sum(w)
            assert got[0] == ref[0] and same_rows(got[1], ref[1])
        assert p._pool._weights is False and p._pool.weights_by_value > 0
    assert isinstance(_parallel._run_group(_parallel._Handle("no such token"), "x", w, [],
                                           (), None), _parallel._Missing)


def test_threads_share_the_problem_and_nothing_is_shipped():
    p, w = sequence_problem(6, n_jobs=2)
    with p:
        p.oracle_sum(w)
        assert p._pool.in_process is True and p._pool.shipments == 0


@pytest.mark.parametrize("backend, direct", [(None, True), ("threading", True),
                                             ("loky", False)])
def test_threading_backend_chunks_go_to_the_pools_own_threads(backend, direct,
                                                              monkeypatch):
    """joblib's threading workers are replaced by an executor of as many threads
    (no 10 ms result polling); other backends keep getting the tasks. Either way the
    serial answers, chunk by chunk, in order."""
    import contextlib
    import threading

    ran = []
    real = _parallel._run_group

    def run_group(*args):
        ran.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(_parallel, "_run_group", run_group)
    p, w = sequence_problem(14, n_jobs=2)
    ref, _ = sequence_problem(14)
    ctx = contextlib.nullcontext() if backend is None else \
        joblib.parallel_config(backend=backend)
    with ctx, p:
        got = p.oracle(w)
        pool = p._pool
        assert pool.direct is direct and pool.in_process is direct
        assert (pool._threads is not None) is direct
        if direct:  # every chunk on the executor's threads
            assert len(ran) == len(p._chunks(np.arange(p.n_samples))) > 1
            assert all(name.startswith("structsvm-chunks") for name in ran)
    assert pool._threads is None and pool._parallel is None  # closed with the problem
    want = ref.oracle(w)
    assert same_rows(got.psi, want.psi) and np.array_equal(got.loss, want.loss)
    assert np.array_equal(got.margin, want.margin) and np.array_equal(got.idx, want.idx)


def test_a_dropped_problem_releases_its_pool():
    p, w = sequence_problem(7, n_jobs=2)
    p.oracle_sum(w)
    pool, token = p._pool, p._pool.token
    del p
    gc.collect()
    assert pool._parallel is None and token not in _parallel._LOCAL


class _Draws:
    """Owner of the seed test: a chunk's random numbers depend on its seed only."""

    def draw(self, w, chunk, rng):
        return chunk + rng.random(len(chunk))

    def worker_copy(self):
        return _Draws()


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_seed_per_chunk(backend):
    chunks = np.array_split(np.arange(40), 7)
    seeds = _parallel.chunk_seeds(11, len(chunks))
    serial = [_Draws().draw(None, c, np.random.default_rng(s)) for c, s in zip(chunks, seeds)]
    owner = _Draws()
    pool = _parallel.ChunkPool(owner, n_jobs=2)
    try:
        with joblib.parallel_config(backend=backend):
            got = pool.map("draw", None, chunks, seed=11)
    finally:
        pool.close()
    assert all(np.array_equal(a, b) for a, b in zip(got, serial))
    assert len({float(g[0] - c[0]) for g, c in zip(got, chunks)}) == len(chunks)


# ------------------------------------------------------------------ kernels release the GIL
@pytest.mark.parametrize("module, name", [
    ("structsvm.structures.sequence._viterbi_jit", "viterbi_batch"),
    ("structsvm.structures.ranking._sort_jit", "violated_counts_batch"),
    ("structsvm.structures.sequence._jit", "scatter_differences"),
    ("structsvm.structures.sequence._jit", "scatter_differences_touched"),
    ("structsvm.structures.sequence._jit", "gather_touched"),
    ("structsvm.structures.ranking._jit", "aggregate_kernel"),
    ("structsvm.learners._sparse_jit", "gather_dot"),
])
def test_oracle_loops_release_the_gil(module, name):
    import importlib

    kernel = getattr(importlib.import_module(module), name)
    assert kernel.targetoptions.get("nogil") is True


# ------------------------------------------------------------------ the benchmark
def test_bench_scaling_smoke(need_data, capsys):
    import importlib.util
    from pathlib import Path

    from structsvm.corpora import load_conll2000

    need_data(load_conll2000)
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scaling.py"
    spec = importlib.util.spec_from_file_location("bench_scaling", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # one row (a fresh interpreter each): the models' equality is tested above
    rows = bench.main(["--quick", "--max-iter", "2", "--modes", "threads"])
    out = capsys.readouterr().out
    assert "| sentences | tokens | mode |" in out and "| 600 |" in out and "uptime" in out
    assert [(r["mode"], r["n_jobs"], r["rounds"]) for r in rows] == [("threads", 2, 2)]
    assert 0 < rows[0]["oracle"] < rows[0]["fit"] and rows[0]["rss_mb"] > 0


def test_bench_scaling_summary_pairs_each_repeat_with_its_serial_run():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scaling.py"
    spec = importlib.util.spec_from_file_location("bench_scaling", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def row(mode, rep, fit, oracle, sha="a"):
        return dict(n=100, mode=mode, rep=rep, n_jobs=1 if mode == "serial" else 2,
                    fit=fit, oracle_pass=oracle, coef_sha=sha)

    # repeat 0: serial 6 s / 0.12 s, threads 4 s / 0.06 s (1.5x, 2x);
    # repeat 1: serial 3 s / 0.06 s, threads 3 s / 0.06 s (1x, 1x);
    # repeat 2: serial 5 s / 0.10 s, threads 4 s / 0.08 s (1.25x, 1.25x)
    rows = [row("serial", 0, 6, 0.12), row("threads", 0, 4, 0.06),
            row("serial", 1, 3, 0.06), row("threads", 1, 3, 0.06),
            row("serial", 2, 5, 0.10), row("threads", 2, 4, 0.08, sha="b")]
    lines = bench.summary(rows).splitlines()
    serial = next(x for x in lines if "| serial |" in x)
    threads = next(x for x in lines if "| threads (2) |" in x)
    assert "| 3 | 5.00 | 100.0 | - | - | yes |" in serial
    # medians of the ratios within each repeat (the ratio of the medians would be
    # 0.100 / 0.060 = 1.67x for the oracle)
    assert "| 3 | 4.00 | 60.0 | 1.25x (2.00, 1.00, 1.25) | 1.25x (1.50, 1.00, 1.25) | NO |" \
        in threads


def test_small_calls_stay_here_when_the_workers_are_other_processes(monkeypatch):
    """With workers in other processes, a call on fewer than MIN_REMOTE examples
    runs its chunks in this thread (the weights would travel for little work); a
    larger call goes to the workers. Same chunks either way, so the same answers."""
    monkeypatch.setattr(problem_module, "MIN_REMOTE", 100)
    p, w = sequence_problem(6, n_jobs=2)  # 120 examples, chunks of 16
    ref = sequence_problem(6)[0]
    sent = []
    real_map = _parallel.ChunkPool.map
    monkeypatch.setattr(_parallel.ChunkPool, "map",
                        lambda self, *a, **k: sent.append(1) or real_map(self, *a, **k))
    small = np.arange(0, 120, 2)  # 60 examples: 3 chunks
    with joblib.parallel_config(backend="loky"), p:
        got = p.oracle(w, small)
        assert p._pool.in_process is False and not sent
        assert p._pool._weights is None  # no weights were published
        assert same_rows(got.psi, ref.oracle(w, small).psi)
        assert np.array_equal(got.loss, ref.oracle(w, small).loss)
        full = p.oracle(w)  # 120 examples >= 100: on the workers
        assert sent and p._pool._weights is not None
        assert same_rows(full.psi, ref.oracle(w).psi)
    with joblib.parallel_config(backend="threading"), sequence_problem(6, n_jobs=2)[0] as q:
        sent.clear()
        q.oracle(w, small)  # threads of this process: any split call is shared
        assert sent and q._pool.in_process


def test_a_problem_smaller_than_min_remote_opens_no_pool(monkeypatch):
    """Fewer examples than MIN_REMOTE: no call would ever reach workers in other
    processes, so no pool is opened (no workers started, no data shipped) even for
    a call that is split in chunks; the answers are the serial ones."""
    monkeypatch.setattr(problem_module, "MIN_REMOTE", 121)
    p, w = sequence_problem(7, n_jobs=2)  # 120 examples, chunks of 16
    ref = sequence_problem(7)[0].oracle(w)
    with joblib.parallel_config(backend="loky"), p:
        got = p.oracle(w)
        assert p._pool is None
    assert same_rows(got.psi, ref.psi) and np.array_equal(got.loss, ref.loss)


class _Echo:
    """An owner whose method returns the examples it was given, after a pause per
    call (``pause``: seconds) in the workers."""

    def __init__(self, pause):
        self.pause = pause

    def echo(self, w, idx):
        import time

        time.sleep(self.pause)
        return np.asarray(idx).tolist()


@pytest.mark.parametrize("slow_here", [True, False])
def test_the_callers_share_follows_who_finishes_first(slow_here):
    """ProcessShare.run: the parts come back in the order of the call's examples
    whatever the split, and the caller's share moves by 1 % of a call towards the
    split where it and the workers finish together, within [0.1, 0.9]."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    owner = _Echo(pause=0.0 if slow_here else 0.05)
    share = _parallel.ProcessShare(owner, 1)
    share._executor = ThreadPoolExecutor(1)  # a worker in this process for the test
    w, idx = np.zeros(3), np.arange(40, 140)

    def here(part):
        if slow_here:
            time.sleep(0.05)
        return np.asarray(part).tolist()

    try:
        start = share.share_here
        for k in range(3):
            parts = share.run("echo", w, idx, (), here)
            assert [i for p in parts for i in p] == idx.tolist()
            assert len(parts) == 2 and len(parts[0]) == round(
                (start + (-0.01 if slow_here else 0.01) * k) * len(idx))
        assert share.share_here == pytest.approx(start + (-0.03 if slow_here else 0.03))
        share.share_here = 0.1 if slow_here else 0.9
        share.run("echo", w, idx, (), here)
        assert share.share_here == pytest.approx(0.1 if slow_here else 0.9)
    finally:
        share._executor.shutdown()
        share.close()


def test_a_worker_copy_carries_the_ground_truth_features_once_built():
    """The fit builds Φ(x_i, y_i) first (its scale check); the copy a worker process
    receives carries them, so the worker does not build them again in its first
    call (a pass of a structure's joint_feature written in Python)."""
    p, _ = sequence_problem(3)
    assert "phi" not in p.worker_copy()._truth_cache
    phi = p.truth_features()
    copy = p.worker_copy()
    assert copy.truth_features() is phi and copy.n_jobs == 1 and copy._pool is None
    copy._truth_cache.clear()  # the copy's cache is its own
    assert "phi" in p._truth_cache
