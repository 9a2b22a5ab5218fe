"""Why sequences default to C = 0.1 and tol = 0.05: the default learner on the
treebank POS task over a grid of C and tol, with the test token accuracy, the
certified gap and the time of each fit.

The split is the main job's (the first 3,000 tagged sentences train, the other 914
test). Every fit is the default call but for C and tol
(``structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder="viterbi", C=C,
tol=tol)``), in this process, one after the other; the first fit's time includes
loading the compiled loops.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_sequence_defaults.py
        [--C 0.03 0.1 0.3] [--tol 0.1 0.05 0.02] [--max-train N] [--write]
"""
import argparse
import os
import sys
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.corpora import load_treebank
from structsvm.structures import SequenceFeatures
from structsvm.structures.sequence import token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--C", type=float, nargs="+", default=[0.03, 0.1, 0.3])
    ap.add_argument("--tol", type=float, nargs="+", default=[0.1, 0.05, 0.02])
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N sentences only (smoke tests)")
    add_output_options(ap, "sequence_defaults")
    args = ap.parse_args(argv)
    X, Y, X_te, Y_te = load_treebank()
    if args.max_train:
        X, Y = X[:args.max_train], Y[:args.max_train]
    rows = []
    for C in args.C:
        for tol in args.tol:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = structsvm.fit(X, Y, feature_map=SequenceFeatures(),
                                      decoder="viterbi", C=C, tol=tol)
            seconds = time.perf_counter() - t0
            acc = token_accuracy(Y_te, model.predict(X_te))
            rows.append(dict(C=C, tol=tol, acc=acc, seconds=seconds,
                             passes=model.n_iter_, learner=model.learner_.name,
                             gap=model.duality_gap_ / model.objective_))
            print(rows[-1], flush=True)
    defaults = (SequenceFeatures.default_C, SequenceFeatures.default_tol)
    table = [f"{len(X)} training sentences, {sum(map(len, X_te)):,} test tokens; the "
             f"default learner ({rows[0]['learner']}); the defaults (C = "
             f"{defaults[0]:g}, tol = {defaults[1]:g}) in bold.", "",
             "| C | tol | test token accuracy | certified relative gap | passes | "
             "train (s) |", "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        bold = "**" if (r["C"], r["tol"]) == defaults else ""
        table.append(f"| {bold}{r['C']:g}{bold} | {bold}{r['tol']:g}{bold} | "
                     f"{100 * r['acc']:.2f}% | {r['gap']:.3f} | {r['passes']} | "
                     f"{r['seconds']:.1f} |")
    print("\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return rows


if __name__ == "__main__":
    main()
