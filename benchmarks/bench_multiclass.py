"""Multiclass SVM on scikit-learn's digits: structsvm vs LinearSVC (Crammer-Singer).

Same data (X / 16, train_test_split(random_state=0)), same objective
½‖W‖² + C Σ_i max_y (Δ(y_i, y) + w_y·x_i − w_{y_i}·x_i) with C = 0.1 and no
intercept, in one run. Both objectives are evaluated by structsvm's exact oracle at
each solver's weights, so they are comparable. Repeats give median times.

Usage::

    python benchmarks/bench_multiclass.py [--repeats 3] [--C 0.1]
"""
import argparse
import statistics
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

import structsvm
from structsvm.problem import Problem
from structsvm.features import MulticlassFeatures
from structsvm.inference import get_decoder
from structsvm.learners import NSlackCuttingPlane, OneSlackCuttingPlane
from structsvm.losses import get_loss


def objective_at(fm, X, y, w, C):
    problem = Problem(fm.encode_inputs(X), fm.encode_outputs(y), fm, get_decoder("argmax"),
                      get_loss("zero_one"), C)
    return problem.primal_objective(np.asarray(w, dtype=float).ravel())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--max-train", type=int, default=None,
                    help="use only the first N training digits (smoke tests)")
    ap.add_argument("--skip", nargs="*", default=[], help="rows to skip (substrings)")
    args = ap.parse_args(argv)
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, random_state=0)
    if args.max_train:
        Xtr, ytr = Xtr[:args.max_train], ytr[:args.max_train]
    rows = {}
    runs = {
        "structsvm one_slack (defaults)": lambda: structsvm.fit(
            list(Xtr), list(ytr), feature_map=MulticlassFeatures(), decoder="argmax",
            C=args.C),
        "structsvm one_slack, solver=clarabel (cvxpy)": lambda: structsvm.fit(
            list(Xtr), list(ytr), feature_map=MulticlassFeatures(), decoder="argmax",
            C=args.C, learner=OneSlackCuttingPlane(solver="clarabel")),
        "structsvm n_slack": lambda: structsvm.fit(
            list(Xtr), list(ytr), feature_map=MulticlassFeatures(), decoder="argmax",
            C=args.C, learner=NSlackCuttingPlane()),
        "structsvm pegasos (50 epochs)": lambda: structsvm.fit(
            list(Xtr), list(ytr), feature_map=MulticlassFeatures(), decoder="argmax",
            C=args.C, learner="pegasos", max_iter=50, tol=0.0, random_state=0),
        "LinearSVC crammer_singer": lambda: LinearSVC(
            multi_class="crammer_singer", C=args.C, fit_intercept=False, tol=1e-6,
            max_iter=100000).fit(Xtr, ytr),
    }
    fm = MulticlassFeatures().fit(list(Xtr), list(ytr))
    runs = {k: v for k, v in runs.items() if not any(s in k for s in args.skip)}
    for name, run in runs.items():
        times, model = [], None
        for _ in range(args.repeats if "n_slack" not in name else 1):
            t0 = time.perf_counter()
            model = run()
            times.append(time.perf_counter() - t0)
        if isinstance(model, LinearSVC):
            w, acc = model.coef_, model.score(Xte, yte)
        else:
            w, acc = model.coef_, model.score(list(Xte), list(yte))
        rows[name] = dict(obj=objective_at(fm, list(Xtr), list(ytr), w, args.C), acc=acc,
                          time=statistics.median(times), n=len(times))
    ref = rows["LinearSVC crammer_singer"]
    print(f"digits: {len(Xtr)} train / {len(Xte)} test, C = {args.C}, "
          f"median of {args.repeats} runs (n_slack: 1)\n")
    print("| solver | objective | rel. diff vs LinearSVC | test accuracy | train time (s) "
          "| time ratio vs LinearSVC |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, r in rows.items():
        print(f"| {name} | {r['obj']:.5f} | {(r['obj'] - ref['obj']) / ref['obj']:+.2e} | "
              f"{100 * r['acc']:.2f}% | {r['time']:.3f} | {r['time'] / ref['time']:.1f}x |")
    return rows


if __name__ == "__main__":
    main()
