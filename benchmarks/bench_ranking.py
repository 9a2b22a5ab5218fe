"""Ranking SVM on LETOR 4.0 MQ2008: structsvm vs LinearSVC on explicit pairs.

Fold 1: S1-S3 train, S4 validation (to pick C), S5 test. Both solvers minimise the
same objective, ½‖w‖² + C Σ_pairs max(0, 1 − w·(φ_a − φ_b)) over every pair of
documents of one query with different grades: structsvm with RankingFeatures and
its default learner for rankings, the 1-slack cutting plane (O(n log n)
aggregated oracle per query; ``--also`` adds other learners, e.g. dual_cd), scikit-learn's
LinearSVC(loss="hinge", fit_intercept=False) on the explicit pair differences (every
other pair flipped so both classes occur; the hinge sum is unchanged). Objectives
are computed by one function from each solver's w, so they are comparable; NDCG@10
is over test queries with a relevant document, gain 2^rel − 1.

Timing: structsvm end to end (``structsvm.fit`` on the raw per-query arrays: map
fitting, encoding, every cutting-plane round); LinearSVC both fit only and including
building the explicit pair-difference matrix (which the pairwise method needs and
structsvm does not). One untimed warm-up of each, then ``--repeats`` interleaved
runs; the table gives medians (the machine may be shared).

Usage::

    python benchmarks/bench_ranking.py
    python benchmarks/bench_ranking.py --C 0.1 --tol 1e-3 --svc-tol 1e-4 --repeats 3
    python benchmarks/bench_ranking.py --C 0.1 --repeats 5 --out ranking.md
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

import structsvm
from structsvm.corpora import load_mq2008
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking import mean_average_precision, ndcg_at_k

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402


def pair_differences(X, Y):
    """φ_a − φ_b for every pair with grade_a > grade_b within a query."""
    rows = []
    for x, y in zip(X, Y):
        a, b = np.nonzero(y[:, None] > y[None, :])
        rows.append(x[a] - x[b])
    return np.vstack(rows)


def objective(w, D, C):
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - D @ w).sum())


def rank(X, w):
    return [np.argsort(-(x @ w), kind="stable") for x in X]


def timed_pairs(X, Y):
    t0 = time.perf_counter()
    D = pair_differences(X, Y)
    return D, time.perf_counter() - t0


def fit_structsvm(X, Y, C, tol, learner=None):
    """The default call (``learner=None``: the learner chosen for rankings) or a named
    learner; returns (w, seconds, iterations, learner name)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=C,
                              tol=tol, max_iter=5000, learner=learner)
    return model.coef_, time.perf_counter() - t0, model.n_iter_, model.learner_.name


def fit_linearsvc(D, C, tol):
    sign = np.where(np.arange(len(D)) % 2 == 0, 1.0, -1.0)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc = LinearSVC(loss="hinge", fit_intercept=False, C=C, tol=tol,
                        max_iter=200000, random_state=0).fit(D * sign[:, None], sign)
    return svc.coef_.ravel(), time.perf_counter() - t0, int(np.max(svc.n_iter_))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fold", type=int, default=1)
    ap.add_argument("--path", default=None, help="folder with S1.txt..S5.txt")
    ap.add_argument("--C-grid", type=float, nargs="+", default=[0.01, 0.1, 1.0],
                    help="C values tried on the validation set")
    ap.add_argument("--C", type=float, default=None, help="skip selection, use this C")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="relative duality gap of structsvm's cutting plane")
    ap.add_argument("--svc-tol", type=float, default=1e-5, help="LinearSVC tol")
    ap.add_argument("--repeats", type=int, default=5,
                    help="timed runs of each solver (after one warm-up); medians reported")
    ap.add_argument("--also", nargs="*", default=["dual_cd"],
                    help="other structsvm learners to time next to the default call")
    add_output_options(ap, "ranking")
    args = ap.parse_args(argv)

    fold = load_mq2008(args.fold, args.path)
    Xtr, Ytr = fold.train.X, fold.train.Y
    D, _ = timed_pairs(Xtr, Ytr)
    print(f"MQ2008 fold {args.fold}: {len(Xtr)} train queries, {sum(map(len, Ytr))} "
          f"documents, {len(D)} preference pairs; {len(fold.vali.X)} validation, "
          f"{len(fold.test.X)} test queries")

    C = args.C
    if C is None:
        scores = {}
        for c in args.C_grid:
            w, secs, _, _ = fit_structsvm(Xtr, Ytr, c, 1e-3)
            scores[c] = ndcg_at_k(fold.vali.Y, rank(fold.vali.X, w), k=10)
            print(f"  C={c:g}: validation NDCG@10 {scores[c]:.4f} ({secs:.1f}s)")
        C = max(scores, key=scores.get)
        print(f"picked C={C:g} on the validation set")

    times = {"ssvm": [], "svc": [], "pairs": []}
    times.update({name: [] for name in args.also})
    other = {}
    for rep in range(args.repeats + 1):          # run 0: warm-up, not timed
        w_s, t_s, it_s, default_name = fit_structsvm(Xtr, Ytr, C, args.tol)
        for name in args.also:
            w_o, t_o, it_o, _ = fit_structsvm(Xtr, Ytr, C, args.tol, learner=name)
            other[name] = (w_o, it_o)
            if rep:
                times[name].append(t_o)
        D, t_p = timed_pairs(Xtr, Ytr)
        w_l, t_l, it_l = fit_linearsvc(D, C, args.svc_tol)
        if rep == 0:
            cold = t_s
            continue
        times["ssvm"].append(t_s)
        times["svc"].append(t_l)
        times["pairs"].append(t_p)
    med = {k: float(np.median(v)) for k, v in times.items()}
    # each repeat's structsvm / LinearSVC time, run back to back (robust to load)
    ratios = np.array(times["ssvm"]) / np.array(times["svc"])
    print("timings (s): " + "; ".join(f"{k} " + " ".join(f"{x:.3f}" for x in v)
                                      for k, v in times.items()))

    rows = []
    for name, w, secs, total, iters in [
            (f"structsvm default call [{default_name}]", w_s, med["ssvm"], med["ssvm"], it_s),
            ('LinearSVC(loss="hinge") on pairs', w_l, med["svc"], med["svc"] + med["pairs"],
             it_l)] + [(f"structsvm learner={n!r}", other[n][0], med[n], med[n], other[n][1])
                       for n in args.also]:
        pred = rank(fold.test.X, w)
        rows.append(dict(name=name, obj=objective(w, D, C), secs=secs, total=total,
                         iters=iters, ndcg=ndcg_at_k(fold.test.Y, pred, k=10),
                         map=mean_average_precision(fold.test.Y, pred)))
    ref = rows[1]["obj"]
    header = (f"| solver (MQ2008 fold {args.fold}, C={C:g}) | objective | rel. diff to "
              "LinearSVC | test NDCG@10 | test MAP | train time | incl. building pairs | "
              "iterations | ms / iteration |")
    lines = [header, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['obj']:.6g} | {(r['obj'] - ref) / ref:.2e} | "
                     f"{r['ndcg']:.4f} | {r['map']:.4f} | {r['secs']:.3f} s | "
                     f"{r['total']:.3f} s | {r['iters']} | "
                     f"{1e3 * r['secs'] / r['iters']:.2f} |")
    table = "\n".join(lines)
    print(table)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    summary = (f"Peak memory of the whole run {peak:.0f} MB. Medians of {args.repeats} "
               f"runs (tol {args.tol:g}, LinearSVC tol {args.svc_tol:g}); building the {len(D):,} pair differences took "
               f"{med['pairs']:.3f} s, structsvm's first (warm-up) run {cold:.3f} s. "
               f"Time ratio LinearSVC / structsvm: {med['svc'] / med['ssvm']:.2f} (fit "
               f"only), {(med['svc'] + med['pairs']) / med['ssvm']:.2f} (incl. building "
               f"pairs); structsvm / LinearSVC per repeat: median "
               f"{np.median(ratios):.2f}x (range {ratios.min():.2f}-{ratios.max():.2f}x); "
               f"NDCG@10 difference "
               f"{rows[0]['ndcg'] - rows[1]['ndcg']:+.4f}.")
    print(summary)
    if args.write:
        write_results(args.write, f"{table}\n\n{summary}", __file__, argv)
    return rows


if __name__ == "__main__":
    main()
