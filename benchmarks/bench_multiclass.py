"""Multiclass SVMs: structsvm's default call vs LinearSVC (Crammer-Singer).

Two data sets, same objective ½‖W‖² + C Σ_i max_y (Δ(y_i, y) + w_y·x_i − w_{y_i}·x_i)
(zero-one Δ, no intercept), in one run:

- ``qc``: UIUC question classification, 5,452 training questions, 50 fine classes
  (``COARSE:fine``), tf-idf of words and word bigrams (``TfidfVectorizer(ngram_range=
  (1, 2), sublinear_tf=True)`` fitted on the training questions), C = 1; test on the
  500 TREC-10 questions;
- ``digits``: scikit-learn's digits, X / 16, ``train_test_split(random_state=0)``,
  C = 0.1.

Systems: structsvm's default call ``structsvm.fit(X, y, feature_map=
MulticlassFeatures(), decoder="argmax", C=C)`` (every other parameter at its default:
the learner "multiclass_cd"), the same with ``learner=DualCD(n_batches=2)``
("dual_cd", the default for multiclass maps that multiclass_cd does not solve) and
with ``learner="one_slack"``, ``LinearSVC(multi_class="crammer_singer",
fit_intercept=False)`` at its default tol (the time reference) and at tol = 1e-6 (the
objective reference, effectively the optimum). All objectives are evaluated by one
function (structsvm's exact oracle) at each solver's weights. Times are medians of
``--repeats`` fits; ``--isolate`` runs every system in a fresh Python process (so the
first of its fits includes numba's start-up, and its peak memory is its own).

Usage::

    STRUCTSVM_DATA=... python benchmarks/bench_multiclass.py [--data qc digits]
        [--repeats 3] [--isolate]
"""
import argparse
import os
import sys
import statistics
import time

import numpy as np

import structsvm
from structsvm.structures import MulticlassFeatures
from structsvm.structures import get_decoder
from structsvm.learners import DualCD
from structsvm.structures import get_loss
from structsvm.learners.problem import Problem

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import (add_output_options, run_one, run_systems,  # noqa: E402
                     write_results)

ARGS = None
C_OF = {"qc": 1.0, "digits": 0.1}


def load(name, max_train=None):
    """(X_train, y_train, X_test, y_test) with X a CSR matrix or dense array."""
    if name == "digits":
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        X, y = load_digits(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, random_state=0)
    else:
        from sklearn.feature_extraction.text import TfidfVectorizer

        from structsvm.corpora import load_qc

        qc = load_qc()
        vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        Xtr = vec.fit_transform(qc.train_questions)
        Xte = vec.transform(qc.test_questions)
        ytr = np.array([":".join(p) for p in qc.train_labels])
        yte = np.array([":".join(p) for p in qc.test_labels])
    if max_train:
        Xtr, ytr = Xtr[:max_train], ytr[:max_train]
    return Xtr, ytr, Xte, yte


def objective_at(fm, X, y, w, C):
    problem = Problem(fm.encode_inputs(X), fm.encode_outputs(y), fm, get_decoder("argmax"),
                      get_loss("zero_one"), C)
    return problem.primal_objective(np.asarray(w, dtype=float).ravel())


def _fit_structsvm(data, C, **params):
    Xtr, ytr = data[0], data[1]
    return structsvm.fit(Xtr, list(ytr), feature_map=MulticlassFeatures(),
                         decoder="argmax", C=C, **params)


def _fit_linearsvc(data, C, tol):
    from sklearn.svm import LinearSVC

    return LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=False, tol=tol,
                     max_iter=100_000).fit(data[0], data[1])


def _system(kind):
    def run(data):
        C = C_OF[ARGS.dataset]
        fits = {"default": lambda: _fit_structsvm(data, C),
                "dual_cd": lambda: _fit_structsvm(data, C, learner=DualCD(n_batches=2)),
                "one_slack": lambda: _fit_structsvm(data, C, learner="one_slack"),
                "linearsvc": lambda: _fit_linearsvc(data, C, 1e-4),
                "linearsvc_opt": lambda: _fit_linearsvc(data, C, 1e-6)}[kind]
        times = []
        for _ in range(ARGS.repeats):
            t0 = time.perf_counter()
            model = fits()
            times.append(time.perf_counter() - t0)
        Xtr, ytr, Xte, yte = data
        fm = MulticlassFeatures().fit(Xtr, list(ytr))
        if kind.startswith("linearsvc"):
            acc = float(model.score(Xte, yte))
            tol = "1e-4 (default)" if kind == "linearsvc" else "1e-6"
            name = f"LinearSVC crammer_singer, tol={tol}"
            note = f"{model.n_iter_} iterations"
        else:
            acc = float(model.score(Xte, list(yte)))
            name = f"structsvm {'default call' if kind == 'default' else kind} " \
                   f"[{model.learner_.name}]"
            note = f"{model.n_iter_} passes, certified rel. gap " \
                   f"{model.duality_gap_ / model.objective_:.2g}"
        return dict(name=name, obj=float(objective_at(fm, Xtr, list(ytr), model.coef_, C)),
                    acc=acc, time=statistics.median(times), first=times[0], note=note)
    return run


SYSTEMS = {k: _system(k) for k in ("default", "dual_cd", "one_slack", "linearsvc",
                                   "linearsvc_opt")}


def main(argv=None):
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="*", default=["qc", "digits"], choices=list(C_OF))
    ap.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=list(SYSTEMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-train", type=int, default=None,
                    help="use only the first N training samples (smoke tests)")
    ap.add_argument("--isolate", action="store_true",
                    help="run every system in a fresh Python process")
    add_output_options(ap, "multiclass")
    ap.add_argument("--only", help=argparse.SUPPRESS)
    ap.add_argument("--dataset", default="qc", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ARGS = ap.parse_args(argv)
    if args.only:
        return run_one(SYSTEMS, args.only, lambda: load(args.dataset, args.max_train))
    out = {}
    for ds in args.data:
        args.dataset = ds
        child = ["--dataset", ds, "--repeats", str(args.repeats)] + (
            ["--max-train", str(args.max_train)] if args.max_train else [])
        rows = run_systems(os.path.abspath(__file__), SYSTEMS, args.systems,
                           lambda: load(ds, args.max_train), child, args.isolate)
        ref = next((r for r in rows if r["name"].endswith("tol=1e-6")), None)
        tref = next((r for r in rows if "1e-4" in r["name"]), None)
        lines = [f"{ds}: C = {C_OF[ds]}, median of {args.repeats} fits", "",
                 "| solver | objective | rel. diff vs LinearSVC tol=1e-6 | test accuracy | "
                 "train time (s) | first fit (s) | time / LinearSVC default | peak memory "
                 "(MB) | notes |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in rows:
            diff = f"{(r['obj'] - ref['obj']) / ref['obj']:+.2e}" if ref else "-"
            ratio = f"{r['time'] / tref['time']:.2f}x" if tref else "-"
            lines.append(f"| {r['name']} | {r['obj']:.6g} | {diff} | {100 * r['acc']:.2f}% "
                         f"| {r['time']:.3f} | {r['first']:.3f} | {ratio} | "
                         f"{r['peak_mb']:.0f} | {r['note']} |")
        print("\n" + "\n".join(lines))
        if args.write:
            write_results(f"{args.write}-{ds}", "\n".join(lines), __file__, argv)
        out[ds] = {r["name"]: r for r in rows}
    return out


if __name__ == "__main__":
    main()
