"""CoNLL-2000 chunking at growing sizes: serial training vs n_jobs workers.

For every training size (the first f x 8,936 sentences for each fraction f, plus any
absolute ``--sentences``) and every mode, a fresh Python process runs the default fit

    structsvm.fit(X, Y, feature_map=SequenceFeatures(features="chunk"),
                  decoder="viterbi", n_jobs=N)

with mode ``serial`` (n_jobs=1), ``threads`` (n_jobs=N, joblib's threading backend)
or ``processes`` (n_jobs=N, ``joblib.parallel_config(backend="loky")``), and reports

- fit: wall time of the whole fit (feature extraction and encoding included);
- rounds: the learner's ``n_iter_``; s/round = fit / rounds;
- oracle in fit: time inside ``Problem.oracle`` / ``Problem.oracle_sum``
  (loss-augmented decoding) during the fit, summed over calls (the default learner
  decodes its sweep batches of n/16 sentences one chunk each: below 256 sentences
  they run on the learner's thread, in every mode);
- oracle pass: the oracle on its own, one call on all training sentences at the
  trained w (median of 7 after a warm-up), on the fit's workers;
- speedups over the serial run of the same size: the oracle pass and the fit;
- peak RSS of the training process (``ru_maxrss``; in processes mode the peak sum
  of the worker processes too, sampled with psutil);
- same model: whether ``coef_`` equals the serial run's bit for bit.

One process per row, so every peak is the row's own. All rows of one size train
the same model (the chunk layout does not depend on n_jobs), so the oracle and fit
speedups compare identical work. Record ``uptime`` with the figures: on a busy
machine two workers do not get two cores.

With ``--repeats R`` every size runs R rounds of all modes, alternating (serial,
threads, processes, serial, ...), and a summary gives per mode the median fit time,
the median oracle pass and the medians of the per-round speedups over that round's
serial run: on a machine whose single-thread speed drifts (on a shared 2-vCPU
machine the same serial pass took 65-135 ms from one minute to the next) one pair
proves little.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_scaling.py \\
        [--fractions 0.1,0.25,0.5,0.75,1] [--sentences 1500] [--n-jobs 2] \\
        [--modes serial,threads,processes] [--max-iter N] [--plot docs/img/scaling.png]
        [--repeats R] [--save rows.jsonl]   # then --load rows.jsonl re-prints / re-plots
    python benchmarks/bench_scaling.py --quick      # 600 sentences, 5 rounds: a smoke run
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

MODES = ("serial", "threads", "processes")


# --------------------------------------------------------------------------- child
def _peak_workers(stop, out):
    """Sample the summed RSS of this process's children (loky workers) until stopped."""
    try:
        import psutil
    except ImportError:
        out.append(float("nan"))
        return
    me, peak = psutil.Process(), 0
    while not stop.wait(0.1):
        total = 0
        for c in me.children(recursive=True):
            try:
                total += c.memory_info().rss
            except psutil.Error:
                pass
        peak = max(peak, total)
    out.append(peak / 2**20)


def run_child(spec):
    """One fit in this process; returns the row as a dict."""
    import contextlib
    import hashlib
    import resource

    import joblib

    import structsvm
    from structsvm.corpora import load_conll2000
    from structsvm.structures import SequenceFeatures
    from structsvm.learners.problem import Problem

    clock = {"t": 0.0, "calls": 0, "depth": 0}

    def timed(func):
        def wrapper(self, *args, **kwargs):
            clock["depth"] += 1
            t0 = time.perf_counter()
            try:
                return func(self, *args, **kwargs)
            finally:
                clock["depth"] -= 1
                if clock["depth"] == 0:
                    clock["t"] += time.perf_counter() - t0
                    clock["calls"] += 1
        return wrapper

    Problem.oracle = timed(Problem.oracle)
    Problem.oracle_sum = timed(Problem.oracle_sum)

    X, Y, _, _ = load_conll2000()
    X, Y = X[:spec["n"]], Y[:spec["n"]]
    mode, n_jobs = spec["mode"], (1 if spec["mode"] == "serial" else spec["n_jobs"])
    # (built on demand: joblib.parallel_config sets its backend when constructed, not
    # when entered, so building all three at once would leave the last one in force)
    ctx = {"serial": contextlib.nullcontext,
           "threads": lambda: joblib.parallel_config(backend="threading"),
           "processes": lambda: joblib.parallel_config(backend="loky")}[mode]
    params = {} if spec["max_iter"] is None else {"max_iter": spec["max_iter"]}
    stop, workers = threading.Event(), []
    sampler = threading.Thread(target=_peak_workers, args=(stop, workers), daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    with ctx():
        model = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="chunk"),
                              decoder="viterbi", n_jobs=n_jobs, **params)
    fit = time.perf_counter() - t0
    oracle_in_fit, oracle_calls = clock["t"], clock["calls"]  # (the passes below are not)
    stop.set()
    sampler.join()
    # the oracle on its own: full passes over the training sentences at the model's w
    # (median of a few, after one warm-up), on the same workers as the fit
    with ctx():
        fm, w = model.feature_map_, model.coef_.ravel()
        problem = Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y, X),
                          feature_map=fm, decoder=model.decoder_, loss=model.loss_,
                          C=1.0,
                          n_jobs=n_jobs)
        with problem:
            passes = []
            for _ in range(spec.get("oracle_repeats", 7) + 1):
                t1 = time.perf_counter()
                problem.oracle(w)
                passes.append(time.perf_counter() - t1)
    return dict(n=spec["n"], tokens=sum(len(x) for x in X), mode=mode, n_jobs=n_jobs,
                fit=fit, rounds=int(model.n_iter_), oracle=oracle_in_fit,
                oracle_pass=statistics.median(passes[1:]),
                oracle_calls=oracle_calls, learner=model.learner_.name,
                objective=float(model.objective_), n_features=int(model.coef_.size),
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                workers_mb=workers[0] if workers else float("nan"),
                coef_sha=hashlib.sha256(model.coef_.tobytes()).hexdigest()[:16])


# --------------------------------------------------------------------------- parent
def run_row(spec):
    """Run one row in a fresh interpreter (its own peak memory); the child's dict."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                           json.dumps(spec)], capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"row {spec} failed:\n{proc.stderr[-3000:]}")


def markdown(rows):
    head = ("| sentences | tokens | mode | fit (s) | rounds | s/round | oracle in fit (s) "
            "| oracle pass (ms) | oracle speedup | fit speedup | peak RSS (MB) | workers' "
            "peak (MB) | same model |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    serial = {(r["n"], r.get("rep", 0)): r for r in rows if r["mode"] == "serial"}
    for r in rows:
        s = serial.get((r["n"], r.get("rep", 0)))  # the serial run of the same repeat
        sp_o = f"{s['oracle_pass'] / r['oracle_pass']:.2f}x" if s else "-"
        sp_f = f"{s['fit'] / r['fit']:.2f}x" if s else "-"
        same = "-" if not s else ("yes" if s["coef_sha"] == r["coef_sha"] else "NO")
        mode = r["mode"] if r["mode"] == "serial" else f"{r['mode']} ({r['n_jobs']})"
        wk = "-" if r["workers_mb"] != r["workers_mb"] or r["mode"] != "processes" \
            else f"{r['workers_mb']:.0f}"
        lines.append(f"| {r['n']:,} | {r['tokens']:,} | {mode} | {r['fit']:.1f} | "
                     f"{r['rounds']} | {r['fit'] / max(r['rounds'], 1):.3f} | "
                     f"{r['oracle']:.1f} | {1e3 * r['oracle_pass']:.1f} | {sp_o} | {sp_f} | "
                     f"{r['rss_mb']:.0f} | {wk} | {same} |")
    return "\n".join(lines)


def summary(rows):
    """Per size and mode: medians over repeats, speedups paired with the same
    repeat's serial run."""
    head = ("| sentences | mode | repeats | fit (s), median | oracle pass (ms), median | "
            "oracle speedup, median (each) | fit speedup, median (each) | same model |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    serial = {(r["n"], r.get("rep", 0)): r for r in rows if r["mode"] == "serial"}
    for n in sorted({r["n"] for r in rows}):
        for mode in MODES:
            rs = [r for r in rows if r["n"] == n and r["mode"] == mode]
            if not rs:
                continue
            pairs = [(serial[(n, r.get("rep", 0))], r) for r in rs
                     if (n, r.get("rep", 0)) in serial]
            so = [s["oracle_pass"] / r["oracle_pass"] for s, r in pairs]
            sf = [s["fit"] / r["fit"] for s, r in pairs]

            def fmt(v):
                if not v or mode == "serial":
                    return "-"
                return (f"{statistics.median(v):.2f}x ("
                        + ", ".join(f"{x:.2f}" for x in v) + ")")
            same = all(s["coef_sha"] == r["coef_sha"] for s, r in pairs)
            label = mode if mode == "serial" else f"{mode} ({rs[0]['n_jobs']})"
            lines.append(
                f"| {n:,} | {label} | {len(rs)} | "
                f"{statistics.median(r['fit'] for r in rs):.2f} | "
                f"{1e3 * statistics.median(r['oracle_pass'] for r in rs):.1f} | "
                f"{fmt(so)} | {fmt(sf)} | {'yes' if same else 'NO'} |")
    return "\n".join(lines)


def plot(rows, path, note=""):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    colours = dict(serial="tab:blue", threads="tab:orange", processes="tab:green")
    for mode in MODES:
        rs = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["n"])
        if not rs:
            continue
        n, c = [r["n"] for r in rs], colours[mode]
        a.plot(n, [r["fit"] / max(r["rounds"], 1) for r in rs], "o-", color=c,
               label=f"{mode}: whole round")
        a.plot(n, [r["oracle"] / max(r["rounds"], 1) for r in rs], "s--", color=c,
               label=f"{mode}: oracle")
        b.plot(n, [r["rss_mb"] for r in rs], "o-", color=c, label=f"{mode}: training process")
        if mode == "processes" and all(r["workers_mb"] == r["workers_mb"] for r in rs):
            b.plot(n, [r["workers_mb"] for r in rs], "s--", color=c,
                   label="processes: workers (sum)")
    a.set_ylim(bottom=0)
    b.set_ylim(bottom=0)
    a.set(xlabel="training sentences", ylabel="seconds per round",
          title="CoNLL-2000: time per round")
    b.set(xlabel="training sentences", ylabel="peak RSS (MB)", title="peak memory")
    if note:
        fig.suptitle(note, fontsize=9)
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fractions", default="0.1,0.25,0.5,0.75,1",
                    help="fractions of the 8,936 training sentences (comma-separated)")
    ap.add_argument("--sentences", default="1500",
                    help="absolute sizes too (comma-separated; '' for none)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--repeats", type=int, default=1,
                    help="rounds of all modes per size, alternating (medians reported)")
    ap.add_argument("--max-iter", type=int, default=None,
                    help="cap the learner's rounds (default: the estimator's)")
    ap.add_argument("--plot", default=None, help="save the figure here (.png)")
    ap.add_argument("--note", default="", help="a line above the figure (e.g. the load)")
    ap.add_argument("--save", default=None,
                    help="append every row as a JSON line to this file as it finishes")
    ap.add_argument("--load", default=None,
                    help="print the table (and --plot) of rows saved by --save; no runs")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 600 sentences (2 chunks), 5 rounds, no fractions")
    add_output_options(ap, "scaling")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(run_child(json.loads(args.child))), flush=True)
        return None
    if args.load:
        with open(args.load) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        print(markdown(rows))
        if any(r.get("rep", 0) for r in rows):
            print("\n" + summary(rows))
        if args.plot:
            plot(rows, args.plot, args.note)
        return rows
    if args.quick:
        args.fractions, args.sentences, args.max_iter = "", "600", args.max_iter or 5
    total = 8936
    sizes = sorted({max(1, round(float(f) * total)) for f in args.fractions.split(",") if f}
                   | {int(s) for s in args.sentences.split(",") if s})
    modes = [m for m in args.modes.split(",") if m]
    bad = set(modes) - set(MODES)
    if bad:
        ap.error(f"unknown modes {sorted(bad)}; choose from {MODES}")
    print(f"# bench_scaling: sizes {sizes}, modes {modes}, n_jobs {args.n_jobs}, "
          f"cores {os.cpu_count()}; uptime: {_uptime()}", flush=True)
    k = args.n_jobs
    core_speedup = core_check(k)
    print(f"# control: a GIL-free numba loop on {k} threads runs {core_speedup:.2f}x "
          f"faster than on 1 (the most any mode can gain now; ~{k} on an idle machine)",
          flush=True)
    rows = []
    for n in sizes:
        for rep, mode in ((rep, mode) for rep in range(max(1, args.repeats))
                          for mode in modes):
            r = run_row(dict(n=n, mode=mode, n_jobs=args.n_jobs, max_iter=args.max_iter))
            r["rep"] = rep
            rows.append(r)
            if args.save:
                with open(args.save, "a") as f:
                    f.write(json.dumps(r) + "\n")
            print(f"#   {n} sentences, {mode}: fit {r['fit']:.1f}s, {r['rounds']} rounds, "
                  f"oracle {r['oracle']:.1f}s, peak {r['rss_mb']:.0f} MB ({r['learner']})",
                  flush=True)
    print(f"# learner {rows[0]['learner']}; uptime at the end: {_uptime()}\n")
    print(markdown(rows))
    if args.repeats > 1:
        print("\n" + summary(rows))
    if args.write:
        control = (f"Learner {rows[0]['learner']}, n_jobs {args.n_jobs}. Control: a "
                   f"GIL-free numba loop ran {core_speedup:.2f}x faster on {k} threads "
                   "than on one (the most any mode could gain in this run).")
        write_results(args.write, markdown(rows) + (
            "\n\n" + summary(rows) if args.repeats > 1 else "") + "\n\n" + control,
            __file__, argv)
    if args.plot:
        plot(rows, args.plot, args.note or f"load at the end: {_uptime().split('load')[-1]}")
        print(f"\n# figure: {args.plot}")
    return rows


def core_check(n_jobs, n=30_000_000):
    """Speed-up of ``n_jobs`` threads over one on a GIL-free numba loop (best of 3):
    what the machine gives right now, the most any parallel mode can gain."""
    from concurrent.futures import ThreadPoolExecutor

    import numba
    import numpy as np

    @numba.njit(nogil=True)
    def burn(m):
        s = 0.0
        for i in range(m):
            s += np.sqrt(i * 1.0)
        return s

    burn(10)
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n_jobs):
            burn(n)
        serial = time.perf_counter() - t0
        with ThreadPoolExecutor(n_jobs) as ex:
            t0 = time.perf_counter()
            list(ex.map(burn, [n] * n_jobs))
            parallel = time.perf_counter() - t0
        best = max(best, serial / parallel)
    return best


def _uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "n/a"


if __name__ == "__main__":
    main()
