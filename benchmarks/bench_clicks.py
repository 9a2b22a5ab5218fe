"""Unbiased learning to rank from biased clicks on LETOR 4.0 MQ2008: full-information
SVM-Rank, the naive click SVM-Rank and Propensity SVM-Rank, for several strengths of
position bias and growing click logs, in one run.

The protocol of Joachims, Swaminathan & Schnabel (WSDM 2017, Sec. 6), on each fold
of ``--folds`` (fold 1: S1-S3 train, S4 validation, S5 test; the figures are means
over the folds, as LETOR reports them):

1. A logging ("production") ranker: BM25 of the whole document (LETOR feature 25;
   test NDCG@10 0.600 on fold 1), or with ``--logger svm`` SVM-Rank trained on
   ``--logger-queries`` training queries drawn at random (the paper's choice: 1% of
   the training set).
2. Simulated users, position-based model: the whole ranked list is shown, position
   k is examined with probability (1/k)^η, an examined result is clicked with
   probability 0.1 + 0.8 (2^grade − 1)/3 (grade 0: 0.1, i.e. click noise on
   irrelevant results; grade 2: 0.9).
3. Position bias estimated from ``--interventions`` sessions of randomised
   top-1/position-k swaps (k uniform in 1..10) of the logging ranking on the
   training queries (their first 10 results; :func:`propensities_from_swaps`), with
   95% bootstrap intervals; beyond position 10 the estimated curve continues with
   the power law fitted to it.
4. Training logs: n sessions per training query of the logging ranking, for each
   n of ``--sessions`` (one growing log: each is the one before plus more
   sessions), summed part by part (:func:`click_totals`; a log of millions of
   sessions is never held at once).
5. Three models, each with C from ``--C-grid`` chosen by NDCG@10 on the validation
   queries (the same protocol for all three): SVM-Rank on the true grades (full
   information), on the clicks unweighted (naive: ``propensity_preferences`` without
   propensities) and on the clicks weighted by the inverse estimated propensities
   (Propensity SVM-Rank); test NDCG@10 (queries with a relevant document).
6. Counterfactual evaluation: the IPS estimate of each final model's click DCG
   from a fresh log of ``--test-sessions`` sessions per test query under the
   logging ranker, with the estimated propensities, against its true value.

On one fold the choice of C alone moves test NDCG@10 by about ±0.01 (156 test
queries), as much as the differences asked about; the mean over five folds is the
figure to read.

Usage::

    python benchmarks/bench_clicks.py
    python benchmarks/bench_clicks.py --folds 1 --etas 1 --sessions 16 256 4096
    python benchmarks/bench_clicks.py --plot docs/img/clicks_ndcg.png \\
        --plot-propensities docs/img/clicks_propensities.png --out results.md
"""
from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.corpora import load_mq2008
from structsvm.corpora.clicks import (click_probabilities, examination_probabilities,
                                      simulate_click_logs)
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking import (click_totals, expected_click_metric,
                                          ips_estimate, ndcg_at_k, preferences_from_totals,
                                          propensities_from_swaps)

NOISE = 0.1          # click probability of an examined irrelevant result
MAX_GRADE = 2        # MQ2008's grades are 0, 1, 2
K = 10               # positions whose propensities are estimated (and checked)
BM25 = 24            # column of LETOR 4.0's feature 25, BM25 of the whole document


def fit(X, Y, C, tol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=C,
                             tol=tol, max_iter=2000)


def select(X, targets, vali, test, grid, tol):
    """Fit at every C of ``grid``; the model with the best validation NDCG@10 and its
    validation and test NDCG@10."""
    best = None
    for C in grid:
        model = fit(X, targets, C, tol)
        v = ndcg_at_k(vali.Y, model.predict(vali.X), k=10)
        if best is None or v > best[1]:
            best = (model, v, C)
    model, v, C = best
    return model, v, ndcg_at_k(test.Y, model.predict(test.X), k=10), C


def session_parts(sizes, chunk):
    """Sessions per query to simulate in each part, so that the running total passes
    through every size of ``sizes``; yields (part size, size reached or None)."""
    done = 0
    for target in sorted(sizes):
        while done < target:
            step = min(chunk, target - done)
            done += step
            yield step, (target if done == target else None)


def run_eta(eta, data, logger_rank, args, seeds, full, fold):
    train, vali, test = data
    n_docs = [len(x) for x in train.X]
    truth = examination_probabilities(K, eta)
    t0 = time.perf_counter()
    per_query = max(1, int(round(args.interventions / len(train.X))))
    # clicks at positions 1..K do not depend on what is shown below: the first page
    swaps = simulate_click_logs(logger_rank, train.Y, n_sessions=per_query, eta=eta,
                                noise=NOISE, max_grade=MAX_GRADE, top_k=K, swap=K,
                                random_state=seeds.pop())
    curve = propensities_from_swaps(swaps, K, random_state=seeds.pop())
    rel_err = curve.propensity / truth - 1.0
    covered = (curve.lower <= truth) & (truth <= curve.upper)
    print(f"fold {fold}, eta={eta:g}: {len(swaps):,} swap sessions -> propensities "
          + " ".join(f"{p:.4f}" for p in curve.propensity)
          + f"; largest relative error {np.max(np.abs(rel_err)):.3f}; true value inside "
          f"the 95% interval at {int(covered.sum())}/{K} positions; fitted decay "
          f"{curve.decay:.3f} ({time.perf_counter() - t0:.1f}s)", flush=True)
    totals = {"naive": [np.zeros(n) for n in n_docs], "propensity": [np.zeros(n) for n in n_docs]}
    weights = {"naive": None, "propensity": curve}
    if "true" in args.methods:
        totals["true"] = [np.zeros(n) for n in n_docs]
        weights["true"] = examination_probabilities(max(n_docs), eta)
    rows, models = [], {}
    for step, reached in session_parts(args.sessions, args.chunk):
        logs = simulate_click_logs(logger_rank, train.Y, n_sessions=step, eta=eta,
                                   noise=NOISE, max_grade=MAX_GRADE, random_state=seeds.pop())
        for name, prop in weights.items():
            part = click_totals(logs, n_docs, propensities=prop)
            totals[name] = [a + b for a, b in zip(totals[name], part)]
        if reached is None:
            continue
        row = dict(fold=fold, eta=eta, per_query=reached,
                   sessions=reached * len(train.X), full=full[2])
        for name in weights:
            t = time.perf_counter()
            model, v, ndcg, C = select(train.X, preferences_from_totals(
                totals[name], scale=1.0 / reached), vali, test, args.C_grid, args.tol)
            row[name], row[name + "_C"] = ndcg, C
            models[name] = model
            row[name + "_secs"] = time.perf_counter() - t
        rows.append(row)
        print("  " + f"{reached:>6} sessions per query ({row['sessions']:>9,}): "
              + ", ".join(f"{n} {row[n]:.4f} (C={row[n + '_C']:g})" for n in weights)
              + f"; full information {full[2]:.4f}", flush=True)
    models["full"] = full[0]
    return dict(curve=curve, truth=truth, rel_err=rel_err, covered=covered, rows=rows,
                models=models, n_swaps=len(swaps))


def counterfactual(eta, res, logger_test, test, args, seed, fold):
    """IPS estimates of each final model's click DCG from a test log, and the truth."""
    logs = simulate_click_logs(logger_test, test.Y, n_sessions=args.test_sessions,
                               eta=eta, noise=NOISE, max_grade=MAX_GRADE, random_state=seed)
    rho = click_probabilities(test.Y, noise=NOISE, max_grade=MAX_GRADE)
    out = []
    for name, model in res["models"].items():
        pred = model.predict(test.X)
        est = ips_estimate(logs, pred, metric="dcg", propensities=res["curve"])
        true = expected_click_metric(pred, rho, metric="dcg")
        out.append(dict(fold=fold, eta=eta, model=name, est=est, truth=true,
                        covered=est.lower <= true <= est.upper))
        print(f"  IPS click DCG of the {name} model: {est.value:.4f} ± {est.stderr:.4f} "
              f"(95% [{est.lower:.4f}, {est.upper:.4f}]); true {true:.4f}; "
              f"{'covered' if out[-1]['covered'] else 'NOT covered'}")
    return out


def mean_rows(runs, eta, methods):
    """Per log size, the mean over folds of each model's test NDCG@10 (and the
    lowest and highest fold)."""
    per_fold = [r["results"][eta]["rows"] for r in runs]
    out = []
    for rows in zip(*per_fold):
        row = dict(per_query=rows[0]["per_query"],
                   sessions=float(np.mean([r["sessions"] for r in rows])))
        for name in list(methods) + ["full"]:
            vals = [r[name] for r in rows]
            row[name], row[name + "_lo"], row[name + "_hi"] = (
                float(np.mean(vals)), float(np.min(vals)), float(np.max(vals)))
        out.append(row)
    return out


def plot_curves(means, logger, methods, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    etas = sorted(means)
    fig, axes = plt.subplots(1, len(etas), figsize=(4.2 * len(etas), 3.6), sharey=True,
                             squeeze=False)
    labels = {"propensity": "Propensity SVM-Rank (estimated p)",
              "naive": "naive click SVM-Rank", "true": "Propensity SVM-Rank (true p)"}
    for ax, eta in zip(axes[0], etas):
        rows = means[eta]
        x = [r["sessions"] for r in rows]
        for name, style in (("propensity", "o-"), ("naive", "s-"), ("true", "^:")):
            if name in methods:
                line, = ax.plot(x, [r[name] for r in rows], style, label=labels[name])
                ax.fill_between(x, [r[name + "_lo"] for r in rows],
                                [r[name + "_hi"] for r in rows], color=line.get_color(),
                                alpha=0.12)
        ax.axhline(rows[0]["full"], color="k", label="full-information SVM-Rank")
        ax.axhline(logger, color="gray", ls="--", label="logging ranker")
        ax.set_xscale("log")
        ax.set_xlabel("logged sessions")
        ax.set_title(f"η = {eta:g}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test NDCG@10 (mean of the folds)")
    axes[0][-1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_propensities(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.6))
    for eta in sorted(results):
        res = results[eta]
        res["curve"].plot(ax, label=f"η = {eta:g} (estimated, 95% interval)")
        ax.plot(res["curve"].positions, res["truth"], "k--", lw=0.8)
    ax.set_yscale("log")
    ax.set_title("propensities from swaps (dashed: true)")
    handles, labels = ax.get_legend_handles_labels()
    keep = [i for i, lab in enumerate(labels) if lab.startswith("η")]
    ax.legend([handles[i] for i in keep], [labels[i] for i in keep], fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_fold(fold_no, args, rng):
    """Every η on one fold: the logging ranker, full information, the click models
    and the counterfactual check."""
    fold = load_mq2008(fold_no, args.path)
    train, vali, test = fold.train, fold.vali, fold.test
    if args.max_queries:
        m = args.max_queries
        cut = lambda d, k: type(d)(d.X[:k], d.Y[:k], d.qids[:k])
        train, vali, test = cut(train, m), cut(vali, max(m // 3, 5)), cut(test, max(m // 3, 5))
    seeds = list(rng.integers(0, 2 ** 31 - 1, size=10_000))
    print(f"MQ2008 fold {fold_no}: {len(train.X)} training queries "
          f"({sum(map(len, train.Y))} documents), {len(vali.X)} validation, "
          f"{len(test.X)} test")
    if args.logger == "bm25":
        logger_name = "BM25 of the whole document (feature 25)"
        by_bm25 = lambda X: [np.argsort(-x[:, BM25], kind="stable") for x in X]
        logger_rank, logger_test = by_bm25(train.X), by_bm25(test.X)
    else:
        sub = rng.choice(len(train.X), size=min(args.logger_queries, len(train.X)),
                         replace=False)
        logger_name = f"SVM-Rank on {len(sub)} training queries"
        logger = fit([train.X[i] for i in sub], [train.Y[i] for i in sub], 0.1, args.tol)
        logger_rank, logger_test = logger.predict(train.X), logger.predict(test.X)
    logger_ndcg = ndcg_at_k(test.Y, logger_test, k=10)
    full = select(train.X, train.Y, vali, test, args.C_grid, args.tol)
    print(f"logging ranker ({logger_name}): test NDCG@10 {logger_ndcg:.4f}; "
          f"full-information SVM-Rank (C={full[3]:g}): {full[2]:.4f}", flush=True)
    results, cf = {}, []
    for eta in args.etas:
        results[eta] = run_eta(eta, (train, vali, test), logger_rank, args, seeds, full,
                               fold_no)
        cf += counterfactual(eta, results[eta], logger_test, test, args, seeds.pop(),
                             fold_no)
    return dict(fold=fold_no, results=results, counterfactual=cf, logger=logger_ndcg,
                logger_name=logger_name, full=full[2], full_C=full[3])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--path", default=None, help="folder with S1.txt..S5.txt")
    ap.add_argument("--etas", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--sessions", type=int, nargs="+",
                    default=[4, 16, 64, 256, 1024, 4096, 16384],
                    help="logged sessions per training query (one growing log)")
    ap.add_argument("--interventions", type=int, default=2_000_000,
                    help="swap sessions for estimating the position bias")
    ap.add_argument("--logger", choices=["bm25", "svm"], default="bm25",
                    help="the logging ranker: BM25 (feature 25) or SVM-Rank on a few "
                         "queries")
    ap.add_argument("--logger-queries", type=int, default=5,
                    help="training queries of the SVM-Rank logging ranker")
    ap.add_argument("--methods", nargs="+", default=["naive", "propensity"],
                    choices=["naive", "propensity", "true"],
                    help="click models ('true': weighted by the true propensities)")
    ap.add_argument("--C-grid", type=float, nargs="+",
                    default=[0.003, 0.01, 0.03, 0.1, 0.3, 1.0])
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--chunk", type=int, default=512,
                    help="sessions per query simulated at once")
    ap.add_argument("--test-sessions", type=int, default=2000,
                    help="sessions per test query of the counterfactual check")
    ap.add_argument("--max-queries", type=int, default=None,
                    help="use the first N train (and N/3 validation and test) queries")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None, help="save NDCG@10 against sessions here")
    ap.add_argument("--plot-propensities", default=None,
                    help="save the estimated propensity curves (first fold) here")
    ap.add_argument("--out", default=None, help="append markdown tables to this file")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    runs = [run_fold(f, args, rng) for f in args.folds]
    methods = [m for m in ("naive", "propensity", "true") if m in args.methods]
    means = {eta: mean_rows(runs, eta, methods) for eta in args.etas}
    logger_mean = float(np.mean([r["logger"] for r in runs]))
    full_mean = float(np.mean([r["full"] for r in runs]))
    folds = ", ".join(map(str, args.folds))

    # ---------------------------------------------------------------- tables
    head = ["naive click SVM-Rank", "Propensity SVM-Rank"] + \
        (["Propensity SVM-Rank, true p"] if "true" in methods else []) + ["full information"]
    lines = [f"| η | sessions per query | sessions (mean) | " + " | ".join(head) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in head) + " |"]
    for eta in args.etas:
        for r in means[eta]:
            cells = [f"{r[m]:.4f} ({r[m + '_lo']:.3f}–{r[m + '_hi']:.3f})"
                     for m in methods + ["full"]]
            lines.append(f"| {eta:g} | {r['per_query']:,} | {r['sessions']:,.0f} | "
                         + " | ".join(cells) + " |")
    table = "\n".join(lines)
    plines = ["| fold | η | swap sessions | " + " | ".join(f"p{k}" for k in range(1, K + 1))
              + " | largest error | true inside 95% |",
              "| --- | --- | --- | " + " | ".join("---" for _ in range(K)) + " | --- | --- |"]
    for run in runs:
        for eta in args.etas:
            res = run["results"][eta]
            plines.append(f"| {run['fold']} | {eta:g} | {res['n_swaps']:,} | "
                          + " | ".join(f"{p:.4f}" for p in res["curve"].propensity)
                          + f" | {100 * np.max(np.abs(res['rel_err'])):.1f}% | "
                          f"{int(res['covered'].sum())}/{K} |")
    for eta in args.etas:
        plines.append(f"| | {eta:g} | (true) | "
                      + " | ".join(f"{p:.4f}" for p in examination_probabilities(K, eta))
                      + " | | |")
    ptable = "\n".join(plines)
    cf = [c for run in runs for c in run["counterfactual"]]
    clines = ["| fold | η | model | IPS click DCG | 95% interval | true | covered |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in cf:
        clines.append(f"| {c['fold']} | {c['eta']:g} | {c['model']} | {c['est'].value:.4f} "
                      f"| [{c['est'].lower:.4f}, {c['est'].upper:.4f}] | {c['truth']:.4f} "
                      f"| {'yes' if c['covered'] else 'no'} |")
    ctable = "\n".join(clines)

    # ---------------------------------------------------------------- the checks
    checks = []
    for eta in args.etas:
        last = means[eta][-1]
        beats = last["propensity"] > last["naive"]
        close = last["full"] - last["propensity"] <= 0.01
        errs = [np.max(np.abs(run["results"][eta]["rel_err"])) for run in runs]
        within = bool(max(errs) <= 0.10)
        checks.append(dict(eta=eta, beats=beats, close=close, within=within))
        print(f"eta={eta:g} (mean of folds {folds}): Propensity SVM-Rank beats the naive "
              f"one at {last['per_query']:,} sessions per query: {beats} "
              f"({last['propensity']:.4f} vs {last['naive']:.4f}); within 0.01 of full "
              f"information: {close} ({last['full']:.4f}); propensities within 10% at "
              f"positions 1..{K} on every fold: {within} (largest error "
              f"{100 * max(errs):.1f}%)")
    n_cov = sum(c["covered"] for c in cf)
    print(table)
    print(ptable)
    print(ctable)
    secs = time.perf_counter() - t_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    full_Cs = ", ".join(f"{r['full_C']:g}" for r in runs)
    summary = (f"Folds {folds}; logging ranker: {runs[0]['logger_name']}, test NDCG@10 "
               f"{logger_mean:.4f} (mean); full-information SVM-Rank {full_mean:.4f} "
               f"(mean; C per fold {full_Cs}). "
               f"Counterfactual intervals covering the true click DCG: {n_cov} of "
               f"{len(cf)}. Whole run {secs:.0f} s, peak memory {peak:.0f} MB.")
    print(summary)
    if args.plot:
        plot_curves(means, logger_mean, methods, args.plot)
    if args.plot_propensities:
        plot_propensities(runs[0]["results"], args.plot_propensities)
    if args.out:
        cmd = "python benchmarks/bench_clicks.py " + " ".join(argv or sys.argv[1:])
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(f"\n`{cmd.strip()}` ({platform.machine()}, "
                     f"{platform.python_version()}, structsvm {structsvm.__version__})\n\n"
                     f"{table}\n\n{ptable}\n\n{ctable}\n\n{summary}\n")
    return dict(runs=runs, means=means, checks=checks, logger=logger_mean, full=full_mean)


if __name__ == "__main__":
    main()
