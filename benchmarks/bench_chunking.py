"""CoNLL-2000 chunking: structsvm's default call vs sklearn-crfsuite, chunk F1.

Train on train.txt (8,936 sentences), test on test.txt (2,012 sentences), all 11
chunk types; the observations are the words and the given POS tags
(``SequenceFeatures(features="chunk")``, the standard CoNLL-2000 set: words and POS
tags at t-2..t+2, word bigrams at t-1..t+1, POS bigrams and trigrams in the window,
word|POS, suffixes, shape), the same strings for both systems. F1 is conlleval's
(``structsvm.structures.sequence.chunk_scores``). Systems run one after the other in this run
(``--isolate``: each in a fresh Python process, so its time includes numba's start-up
and the peak-memory column is its own).

- ``default``: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(features="chunk"),
  decoder="viterbi")``, every parameter at its default (the learner it picks is named);
- ``one_slack``: the same with ``learner="one_slack"`` and ``--one-slack-max-iter``;
- ``pegasos``: ``Pegasos(batch_size=50)``, exactly ``--epochs`` epochs (``tol=0``);
- ``crfsuite``: sklearn-crfsuite in its standard configuration, L-BFGS with
  c1 = c2 = 0.1 and 100 iterations (its feature strings are built before its clock
  starts).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_chunking.py [--systems default crfsuite]
        [--isolate] [--markdown]
"""
import argparse
import os
import sys
import time

import numpy as np

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.structures import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.structures.sequence import chunk_scores, token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import (add_output_options, run_one, run_systems,  # noqa: E402
                     write_results)

ARGS = None


def feature_strings(fm, X):
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist() for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_structsvm(name, data, **params):
    X_tr, Y_tr, X_te, Y_te = data
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features="chunk"),
                          decoder="viterbi", **params)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag = time.perf_counter() - t0
    gap = model.duality_gap_ / model.objective_ if np.isfinite(model.duality_gap_) else \
        float("nan")
    return dict(name=f"{name} [{model.learner_.name}]", **_f1(Y_te, pred),
                acc=token_accuracy(Y_te, pred), train=train, tag=tag,
                note=f"C={model.C or SequenceFeatures.default_C}, {model.n_iter_} passes, "
                     f"objective {model.objective_:.4g}, rel. gap {gap:.3g}")


def _f1(Y_te, pred):
    """conlleval's F1 and the counts behind it (correct / predicted chunks)."""
    s = chunk_scores(Y_te, pred)
    return dict(f1=s["f1"], correct=int(s["n_correct"]), predicted=int(s["n_pred"]))


def run_crfsuite(data):
    import sklearn_crfsuite

    X_tr, Y_tr, X_te, Y_te = data
    fm = SequenceFeatures(features="chunk").fit(X_tr, Y_tr)
    F_tr, F_te = feature_strings(fm, X_tr), feature_strings(fm, X_te)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100)
    t0 = time.perf_counter()
    crf.fit(F_tr, Y_tr)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = crf.predict(F_te)
    tag = time.perf_counter() - t0
    return dict(name="sklearn-crfsuite L-BFGS", **_f1(Y_te, pred),
                acc=token_accuracy(Y_te, pred), train=train, tag=tag,
                note="c1=c2=0.1, 100 iterations; same features")


SYSTEMS = {
    "default": lambda d: run_structsvm("structsvm default call", d),
    "one_slack": lambda d: run_structsvm("structsvm", d, learner="one_slack",
                                         max_iter=ARGS.one_slack_max_iter),
    "pegasos": lambda d: run_structsvm(
        f"structsvm pegasos ({ARGS.epochs} ep.)", d, learner=Pegasos(batch_size=50),
        max_iter=ARGS.epochs, tol=0.0, random_state=0),
    "crfsuite": run_crfsuite,
}


def _load():
    data = load_conll2000()
    if ARGS.max_train:
        data = (data[0][:ARGS.max_train], data[1][:ARGS.max_train]) + tuple(data[2:])
    return data


def main(argv=None):
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", nargs="*", default=["default", "crfsuite"],
                    choices=list(SYSTEMS))
    ap.add_argument("--epochs", type=int, default=15, help="pegasos epochs")
    ap.add_argument("--one-slack-max-iter", type=int, default=None)
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N sentences only (smoke tests)")
    ap.add_argument("--isolate", action="store_true",
                    help="run every system in a fresh Python process")
    add_output_options(ap, "chunking")
    ap.add_argument("--only", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ARGS = ap.parse_args(argv)
    if args.only:
        return run_one(SYSTEMS, args.only, _load)
    child = ["--epochs", str(args.epochs)] + (
        ["--one-slack-max-iter", str(args.one_slack_max_iter)]
        if args.one_slack_max_iter else []) + (
        ["--max-train", str(args.max_train)] if args.max_train else [])
    n_tok = sum(map(len, load_conll2000()[3]))
    rows = run_systems(os.path.abspath(__file__), SYSTEMS, args.systems, _load, child,
                       args.isolate)
    ref = next((r for r in rows if r["name"].startswith("sklearn-crfsuite")), None)
    table = ["| system | chunk F1 (correct / predicted chunks) | token acc. | train (s) | "
             "train / crfsuite | peak memory (MB) | tag (tokens/s) | notes |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r['train'] / ref['train']:.2f}" if ref else "-"
        table.append(f"| {r['name']} | {r['f1']:.5f} ({r['correct']:,} / "
                     f"{r['predicted']:,}) | {100 * r['acc']:.2f}% | {r['train']:.1f} | "
                     f"{ratio} | {r['peak_mb']:.0f} | {n_tok / r['tag']:,.0f} | "
                     f"{r['note']} |")
        if not (args.markdown or args.write):
            print(f"{r['name']:<46} F1 {r['f1']:.5f} ({r['correct']}/{r['predicted']})  "
                  f"acc {100 * r['acc']:.2f}%  train "
                  f"{r['train']:7.1f}s (x{ratio} crfsuite)  peak {r['peak_mb']:.0f} MB  "
                  f"{r['note']}")
    if args.markdown or args.write:
        print("\n" + "\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return rows


if __name__ == "__main__":
    main()
