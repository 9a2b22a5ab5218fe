"""Training on workers: the partitioned learner ('partitioned_cd') against the serial default.

Four parts, each writing its own results file with ``--write``:

``speed`` (``partitioned-speed.md``)
    CoNLL-2000 chunking (all 8,936 training sentences, F1 on the 2,012 test
    sentences) and treebank POS tagging (3,000 / 914 sentences, token accuracy).
    Every row is a fresh Python process timing ``structsvm.fit`` (encoding
    included):

    - ``serial``: the default call, ``n_jobs=1`` (``dual_cd``);
    - ``oracle``: the default call with ``n_jobs=2`` (``dual_cd``, its oracle shared
      out over two workers, its own steps in the fitting process);
    - ``processes``: ``learner="partitioned_cd", n_jobs=2`` (two worker processes);
    - ``dask``: ``learner="partitioned_cd"`` inside ``joblib.parallel_config(backend="dask")``
      with a 2-worker ``LocalCluster`` started before the clock (the cluster a user
      already has);
    - ``ceiling``: two serial fits at once, in two processes. Each takes longer than
      one alone (the cores share caches and memory); twice the serial time over
      theirs is what two cores of this machine deliver on this work, the bound of any
      speed-up on two workers (shown in its speed-up column).

    With ``--repeats R`` the modes alternate R times; the summary gives medians and
    the per-repeat speed-ups over that repeat's serial run, the objective's excess
    over the serial one and the test score.

``work`` (``partitioned-work.md``)
    K = 2, 4, 8, 16 blocks run in turn in this process (the same rounds as on K
    workers) on CoNLL-2000, certified every pass: the passes, the rounds and the
    summed local work (the blocks' seconds, the examples decoded) until the
    primal reaches the serial default's final objective, the bytes sent per round,
    and from these a projection of the speed-up on K workers (stated as one).

``memory`` (``partitioned-memory.md``)
    CoNLL-2000 as 8 files (train split in turn), trained on a 2-worker
    ``LocalCluster`` whose workers have a ``memory_limit`` below the one-process
    fit's estimated memory; each worker reads its files; the test accuracy
    against the one-process fit's.

``clicks`` (``partitioned-clicks.md``)
    A simulated click log of ``--sessions`` sessions on LETOR MQ2008 fold 1 (the
    position-based model, η = 1, logged propensities), written as 8 JSON Lines
    parts; click totals summed on 2 worker processes and on the 2-worker Dask
    cluster against this process summing the parts; Propensity SVM-Rank trained on
    each, the models compared bit for bit.

Usage::

    NLTK_DATA=.../nltk_data STRUCTSVM_DATA=... python benchmarks/bench_partitioned.py \\
        speed [--repeats 3] [--write]
    python benchmarks/bench_partitioned.py work [--max-train N] [--write]
    python benchmarks/bench_partitioned.py memory [--write]
    python benchmarks/bench_partitioned.py clicks [--sessions 10000000] [--write]
    python benchmarks/bench_partitioned.py speed --quick     # a smoke run
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

MODES = ("serial", "oracle", "processes", "dask", "ceiling")


# --------------------------------------------------------------------------- data
def tagging_data(task, max_train=None, max_test=None):
    from structsvm.corpora import load_conll2000, load_treebank

    X, Y, Xt, Yt = load_conll2000() if task == "chunking" else load_treebank()
    if max_train:
        X, Y = X[:max_train], Y[:max_train]
    if max_test:
        Xt, Yt = Xt[:max_test], Yt[:max_test]
    return X, Y, Xt, Yt


def features(task):
    from structsvm.structures import SequenceFeatures

    return SequenceFeatures(features="chunk" if task == "chunking" else "pos")


def test_score(task, Yt, pred):
    from structsvm.structures.sequence import chunk_scores, token_accuracy

    return chunk_scores(Yt, pred)["f1"] if task == "chunking" else \
        token_accuracy(Yt, pred)


def local_cluster(n_workers=2, memory_limit="auto"):
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=memory_limit)
    return cluster, Client(cluster)


# --------------------------------------------------------------------------- speed
def speed_child(spec):
    """One timed fit in this (fresh) process; returns its row."""
    import contextlib

    import joblib

    import structsvm

    X, Y, Xt, Yt = tagging_data(spec["task"], spec["max_train"], spec["max_test"])
    mode = spec["mode"]
    cluster = client = None
    ctx = contextlib.nullcontext()
    params = dict(feature_map=features(spec["task"]), decoder="viterbi")
    if mode == "oracle":
        params.update(n_jobs=2)
    elif mode == "processes":
        params.update(learner="partitioned_cd", n_jobs=2)
    elif mode == "dask":
        cluster, client = local_cluster()
        client.wait_for_workers(2)
        ctx = joblib.parallel_config(backend="dask")
        params.update(learner="partitioned_cd")
    if spec["max_iter"]:
        params["max_iter"] = spec["max_iter"]
    t0 = time.perf_counter()
    with ctx:
        model = structsvm.fit(X, Y, **params)
    fit = time.perf_counter() - t0
    score = test_score(spec["task"], Yt, model.predict(Xt))
    if client is not None:
        client.close()
        cluster.close()
    return dict(task=spec["task"], mode=mode, rep=spec["rep"], fit=fit,
                objective=float(model.objective_), gap=float(model.duality_gap_),
                passes=int(model.n_iter_), score=float(score),
                learner=model.learner_.name, n=len(X))


def run_child(spec, copies=1):
    """The row of ``spec`` timed in a fresh process; with ``copies`` > 1 that many
    processes at once, the row the slowest one's."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "child",
                               json.dumps(spec)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(copies)]
    rows = []
    for proc in procs:
        out, err = proc.communicate()
        found = [json.loads(line[len("RESULT "):]) for line in out.splitlines()
                 if line.startswith("RESULT ")]
        if not found:
            raise RuntimeError(f"row {spec} failed:\n{err[-3000:]}")
        rows.append(found[0])
    return max(rows, key=lambda r: r["fit"])


def speed(args):
    rows = []
    tasks = ["chunking", "pos"] if args.task == "both" else [args.task]
    for task in tasks:
        for rep in range(args.repeats):
            for mode in args.modes:
                spec = dict(task=task, mode=mode, rep=rep, max_train=args.max_train,
                            max_test=args.max_test, max_iter=args.max_iter)
                row = run_child(spec, copies=2 if mode == "ceiling" else 1)
                rows.append(row)
                print(row, flush=True)
    lines = ["| task | mode | learner | repeats | fit (s), median | speed-up over serial, "
             "median (each) | objective vs serial | test score | passes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for task in tasks:
        serial = {r["rep"]: r for r in rows if r["task"] == task and r["mode"] == "serial"}
        for mode in args.modes:
            rs = [r for r in rows if r["task"] == task and r["mode"] == mode]
            if not rs:
                continue
            # a two-process throughput for the ceiling: two fits in the time of one
            times = 2 if mode == "ceiling" else 1
            ups = [times * serial[r["rep"]]["fit"] / r["fit"] for r in rs
                   if r["rep"] in serial]
            rel = [r["objective"] / serial[r["rep"]]["objective"] - 1 for r in rs
                   if r["rep"] in serial]
            up = "-" if mode == "serial" or not ups else \
                f"{statistics.median(ups):.2f}x ({', '.join(f'{u:.2f}' for u in ups)})"
            ob = "-" if mode in ("serial", "ceiling") or not rel else \
                f"{100 * statistics.median(rel):+.2f} %"
            metric = "F1" if task == "chunking" else "accuracy"
            lines.append(
                f"| {task} ({rs[0]['n']:,} sentences) | {mode} | {rs[0]['learner']} | "
                f"{len(rs)} | {statistics.median(r['fit'] for r in rs):.1f} | {up} | {ob} | "
                f"{metric} {100 * statistics.median(r['score'] for r in rs):.2f} | "
                f"{statistics.median(r['passes'] for r in rs):.0f} |")
    md = "\n".join(lines)
    print(md)
    if args.write:
        write_results("partitioned-speed", md, __file__, notes=(
            "Each row a fresh process; oracle: the default call with n_jobs=2; "
            "processes: learner='partitioned_cd', n_jobs=2; dask: a 2-worker "
            "LocalCluster started before the clock; ceiling: two serial fits at once, "
            "its fit time the slower one's and its speed-up twice the serial time over "
            "it (what two cores of this machine deliver on this work). Speed-ups pair "
            "each run with the serial run of its repeat."))
    return rows


# --------------------------------------------------------------------------- work
class _Reached(Exception):
    pass


def _until(target, log):
    """A callback keeping the last certificate's progress (passes, rounds, work) and
    stopping at the serial objective."""
    def callback(info):
        log.append(info)
        if info["objective"] <= target:
            raise _Reached
    return callback


def work(args):
    from structsvm.estimator._estimator import StructuredSVM
    from structsvm.estimator._resolution import Resolution
    from structsvm.learners import DualCD, PartitionedCD
    from structsvm.learners.engines import Blocks, InMemory, LocalProcesses
    from structsvm.learners.partitioned_cd import InProcessBlocks
    from structsvm.learners._blocks import BlockSolver
    from structsvm.learners.problem import Problem
    from structsvm.structures.decoders import get_decoder
    from structsvm.structures.losses import get_loss

    X, Y, _, _ = tagging_data("chunking", args.max_train)
    fm = features("chunking")
    Xe = fm.fit_encode(X, Y)
    Ye = fm.encode_outputs(Y, X)
    C, tol = type(fm).default_C, type(fm).default_tol

    def problem():
        return Problem(Xe=Xe, Ye=Ye, feature_map=fm, decoder=get_decoder("viterbi"),
                       loss=get_loss("hamming"), C=C)

    params = dict(type(fm).default_learners[0][1])
    t0 = time.process_time()
    serial = DualCD(**params).solve(problem(), np.zeros(fm.n_features_), max_iter=None,
                                    tol=tol)
    serial_cpu = time.process_time() - t0
    target = serial.objective
    rows = []
    for sharing in args.sharing:
        for K in args.blocks:
            learner = PartitionedCD(n_partitions=K, sharing=sharing, certify_every=1)
            if sharing == "rounds":  # in turn in this process: the rounds K workers run
                blocks = InProcessBlocks([BlockSolver(problem(), np.arange(k, len(X), K),
                                                      learner.local_learner(), k)
                                          for k in range(K)])
            else:  # K worker processes of this machine (CPU time: they share cores)
                ex = [np.arange(k, len(X), K) for k in range(K)]
                blocks = Blocks(LocalProcesses(K), [[InMemory([X[i] for i in e],
                                                              [Y[i] for i in e])]
                                                    for e in ex], list(range(K)), ex)
                blocks.open()
                est = StructuredSVM(feature_map=fm, decoder="viterbi")
                dec, loss = Resolution(StructuredSVM, est.get_params(deep=False)).plugins(fm)
                blocks.prepare(fm, dec, loss, C, "margin", learner)
            log = []
            try:
                learner.run(blocks, fm.n_features_, C, np.zeros(fm.n_features_),
                            max_iter=args.max_passes, tol=0.0,
                            callback=_until(target, log))
                reached = False
            except _Reached:
                reached = True
            finally:
                blocks.close()
            rows.append(dict(K=K, sharing=sharing, reached=reached, **_work_of(log[-1])))
            print(rows[-1], flush=True)
    base = dict(seconds=serial_cpu, passes=serial.n_iter)
    lines = [f"Serial default (`dual_cd`): {base['passes']} passes to the objective "
             f"{target:.4g} (the objective every row must reach), {serial_cpu:.1f} s "
             "of CPU.", "",
             "| sharing | blocks K | passes | rounds | work (CPU s) | work vs serial | "
             "bytes per round | projected speed-up on K workers |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r["seconds"] / base["seconds"]
        comm = r["rounds"] * (r["bytes"] / 1e9 + 1e-3) if r["sharing"] == "rounds" else 0
        proj = base["seconds"] / (r["seconds"] / r["K"] + comm)
        mark = "" if r["reached"] else " (not reached)"
        lines.append(f"| {r['sharing']} | {r['K']} | {r['passes']:.1f}{mark} | "
                     f"{r['rounds']} | {r['seconds']:.1f} | {ratio:.2f}x | "
                     f"{r['bytes'] / 1e6:.2f} MB | {proj:.1f}x |")
    md = "\n".join(lines)
    print(md)
    if args.write:
        write_results("partitioned-work", md, __file__, notes=(
            "Certified every pass, stopped at the first certificate at or below the "
            "serial objective; passes and work exclude the certifying passes. Rounds: "
            "blocks in turn in one process (the rounds K workers run); memory: K worker "
            "processes of this machine, their CPU time. The projection assumes K "
            "workers of this machine's speed and, for rounds, 1 GB/s and 1 ms per round "
            "trip; it is a projection, not a measurement."))
    return dict(serial=base, target=target, rows=rows)


def _work_of(info):
    """The work up to a certificate (its callback info): passes without the
    certifying ones, rounds, the blocks' CPU seconds, bytes per round."""
    w = info["work"]
    rounds = max(info["rounds"], 1)
    return dict(passes=info["passes"] - info["certified_passes"], rounds=info["rounds"],
                seconds=w["block_seconds"],
                bytes=(w.get("bytes_out", 0) + w.get("bytes_in", 0)) / rounds)


# --------------------------------------------------------------------------- memory
def memory(args):
    import joblib

    import structsvm
    from structsvm.corpora import Files
    from structsvm.learners import DualCD
    from structsvm.learners.memory import fit_memory
    from structsvm.learners.problem import Problem
    from structsvm.limits import format_bytes
    from structsvm.structures.decoders import get_decoder
    from structsvm.structures.losses import get_loss

    X, Y, Xt, Yt = tagging_data("chunking", args.max_train, args.max_test)
    fm = features("chunking")
    Xe = fm.fit_encode(X, Y)
    whole = fit_memory(DualCD(**dict(type(fm).default_learners[0][1])),
                       Problem(Xe, fm.encode_outputs(Y, X), fm, get_decoder("viterbi"),
                               get_loss("hamming"), 0.1)).total
    del Xe
    limit = int(args.worker_fraction * whole)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for f in range(args.files):
            path = os.path.join(folder, f"train-{f:02d}.txt")
            with open(path, "w", encoding="utf-8") as fh:
                for x, y in zip(X[f::args.files], Y[f::args.files]):
                    fh.write("".join(f"{w} {p} {t}\n" for (w, p), t in zip(x, y)) + "\n")
            paths.append(path)
        cluster, client = local_cluster(memory_limit=limit)
        client.wait_for_workers(2)
        t0 = time.perf_counter()
        with joblib.parallel_config(backend="dask"):
            model = structsvm.fit(Files(paths, format="conll"),
                                  feature_map=features("chunking"), decoder="viterbi",
                                  learner="partitioned_cd")
        fit = time.perf_counter() - t0
        peaks = client.run(lambda: __import__("psutil").Process().memory_info().rss)
        client.close()
        cluster.close()
    one = structsvm.fit(X, Y, feature_map=features("chunking"), decoder="viterbi")
    s_parts = test_score("chunking", Yt, model.predict(Xt))
    s_one = test_score("chunking", Yt, one.predict(Xt))
    blocks = model.learner_state_["blocks"]
    lines = ["| | value |", "|---|---|",
             f"| training sentences, files | {len(X):,} in {args.files} files |",
             f"| one-process fit's estimated memory | {format_bytes(whole)} |",
             f"| each Dask worker's `memory_limit` | {format_bytes(limit)} |",
             f"| blocks' estimated memory | "
             f"{', '.join(format_bytes(b['memory']) for b in blocks)} |",
             f"| workers' resident memory after the fit | "
             f"{', '.join(format_bytes(v) for v in peaks.values())} |",
             f"| fit on the cluster (s) | {fit:.1f} |",
             f"| test F1: cluster, one process | {100 * s_parts:.2f}, "
             f"{100 * s_one:.2f} |"]
    md = "\n".join(lines)
    print(md)
    if args.write:
        write_results("partitioned-memory", md, __file__, notes=(
            "The workers read the files; the fitting process never opens them."))


# --------------------------------------------------------------------------- clicks
def clicks(args):
    import joblib

    import structsvm
    from structsvm.corpora import (click_totals_in_parts, load_mq2008,
                                   simulate_click_logs, write_click_log)
    from structsvm.structures import RankingFeatures
    from structsvm.structures.ranking import preferences_from_totals

    fold = load_mq2008(1)
    X, Y = fold.train.X, fold.train.Y
    rankings = [np.argsort(-x[:, 24], kind="stable") for x in X]
    per_query = max(1, args.sessions // len(X))
    n_parts = args.parts
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        t0 = time.perf_counter()
        for p in range(n_parts):  # each part: a share of every query's sessions
            counts = per_query // n_parts + (1 if p < per_query % n_parts else 0)
            logs = simulate_click_logs(rankings, Y, n_sessions=counts, top_k=10,
                                       random_state=p)
            path = os.path.join(folder, f"clicks-{p:02d}.jsonl")
            write_click_log(path, logs)
            paths.append(path)
        write_s = time.perf_counter() - t0
        size = sum(os.path.getsize(p) for p in paths)
        n_docs = [len(x) for x in X]
        kw = dict(query_ids=list(range(len(X))),
                  document_ids=[list(range(n)) for n in n_docs], propensities="logged")
        runs = {}
        t0 = time.perf_counter()
        runs["this process"] = click_totals_in_parts(paths, n_docs, n_jobs=1, **kw)
        times = {"this process": time.perf_counter() - t0}
        t0 = time.perf_counter()
        runs["2 processes"] = click_totals_in_parts(paths, n_docs, n_jobs=2, **kw)
        times["2 processes"] = time.perf_counter() - t0
        cluster, client = local_cluster()
        client.wait_for_workers(2)
        t0 = time.perf_counter()
        with joblib.parallel_config(backend="dask"):
            runs["Dask, 2 workers"] = click_totals_in_parts(paths, n_docs, **kw)
        times["Dask, 2 workers"] = time.perf_counter() - t0
        client.close()
        cluster.close()
    models = {}
    for name, (totals, sessions) in runs.items():
        targets = preferences_from_totals(totals, scale=len(totals) / sessions)
        t0 = time.perf_counter()
        models[name] = structsvm.fit(X, targets, feature_map=RankingFeatures(), C=0.01)
        times[name + " train"] = time.perf_counter() - t0
    ref = models["this process"].coef_
    lines = [f"{runs['this process'][1]:,} sessions in {n_parts} JSON Lines parts "
             f"({size / 1e9:.2f} GB; written in {write_s:.0f} s), MQ2008 fold 1.", "",
             "| totals summed by | sessions | read and sum (s) | speed-up | "
             "Propensity SVM-Rank: same model as this process |",
             "|---|---|---|---|---|"]
    for name, (_, sessions) in runs.items():
        same = "yes (bit for bit)" if np.array_equal(models[name].coef_, ref) else "NO"
        lines.append(f"| {name} | {sessions:,} | {times[name]:.1f} | "
                     f"{times['this process'] / times[name]:.2f}x | {same} |")
    md = "\n".join(lines)
    print(md)
    if args.write:
        write_results("partitioned-clicks", md, __file__, notes=(
            "Each part read and summed where it runs; the fitting process adds the "
            "parts' totals in order and trains on them."))


# --------------------------------------------------------------------------- main
def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "child":
        print("RESULT " + json.dumps(speed_child(json.loads(argv[1]))), flush=True)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="part", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--task", choices=["chunking", "pos", "both"], default="both")
    s.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    s.add_argument("--repeats", type=int, default=1)
    s.add_argument("--max-train", type=int, default=None)
    s.add_argument("--max-test", type=int, default=None)
    s.add_argument("--max-iter", type=int, default=None)
    s.add_argument("--quick", action="store_true", help="600 sentences, one repeat")
    w = sub.add_parser("work")
    w.add_argument("--blocks", type=int, nargs="+", default=[2, 4, 8, 16])
    w.add_argument("--sharing", nargs="+", choices=["memory", "rounds"],
                   default=["memory", "rounds"])
    w.add_argument("--max-train", type=int, default=None)
    w.add_argument("--max-passes", type=int, default=300)
    w.add_argument("--quick", action="store_true", help="600 sentences, K = 2")
    m = sub.add_parser("memory")
    m.add_argument("--files", type=int, default=8)
    m.add_argument("--worker-fraction", type=float, default=0.8,
                   help="each worker's memory_limit as a share of the one-process "
                        "fit's estimated memory")
    m.add_argument("--max-train", type=int, default=None)
    m.add_argument("--max-test", type=int, default=None)
    m.add_argument("--quick", action="store_true", help="600 sentences")
    c = sub.add_parser("clicks")
    c.add_argument("--sessions", type=int, default=10_000_000)
    c.add_argument("--parts", type=int, default=8)
    c.add_argument("--quick", action="store_true", help="20,000 sessions")
    for q in (s, w, m, c):
        add_output_options(q, "partitioned")
    args = p.parse_args(argv)
    if args.quick:
        if args.part in ("speed", "memory"):
            args.max_train, args.max_test = 600, 200
        if args.part == "speed":
            args.repeats = 1
        if args.part == "work":
            args.max_train, args.blocks = 600, [2]
        if args.part == "clicks":
            args.sessions = 20_000
    return {"speed": speed, "work": work, "memory": memory,
            "clicks": clicks}[args.part](args)


if __name__ == "__main__":
    main()
