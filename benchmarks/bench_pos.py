"""POS tagging on the NLTK treebank: structsvm's default call vs sklearn-crfsuite.

Split: first 3000 tagged sentences train, remaining 914 test (23,165 tokens, -NONE-
traces included). Systems run one after the other in this run (``--isolate``: each in
a fresh Python process, so its time includes numba's start-up and the peak-memory
column is its own).

- ``default``: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder="viterbi")``
  -- the default call, every parameter at its default (the learner it picks is named);
- ``one_slack``: the same call with ``learner="one_slack"`` (the 1-slack cutting plane);
- ``pegasos``: same map, ``Pegasos(batch_size=50)``, exactly ``--pegasos-epochs``
  epochs (``tol=0``), uncertified;
- ``crfsuite``: sklearn-crfsuite in its standard configuration, L-BFGS with
  c1 = c2 = 0.1 and 100 iterations, on exactly the observation strings of
  ``SequenceFeatures`` (word, lower case, prefixes/suffixes 1-4, shape flags,
  neighbouring words and suffixes; built before its clock starts);
- ``perceptron``: NLTK's PerceptronTagger from scratch (own features, 5 iterations).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_pos.py [--systems default crfsuite]
        [--isolate] [--markdown]
"""
import argparse
import os
import sys
import time

import numpy as np

import structsvm
from structsvm.corpora import load_treebank
from structsvm.structures import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.structures.sequence import token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import (add_output_options, run_one, run_systems,  # noqa: E402
                     write_results)

ARGS = None


def feature_strings(fm, X):
    """Per-token lists of observation strings: what crfsuite gets (same features)."""
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist() for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_structsvm(name, data, **params):
    X_tr, Y_tr, X_te, Y_te = data
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(), decoder="viterbi",
                          **params)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag = time.perf_counter() - t0
    gap = model.duality_gap_ / model.objective_ if np.isfinite(model.duality_gap_) else \
        float("nan")
    return dict(name=f"{name} [{model.learner_.name}]", acc=token_accuracy(Y_te, pred),
                train=train, tag=tag,
                note=f"C={model.C or SequenceFeatures.default_C}, {model.n_iter_} passes, "
                     f"objective {model.objective_:.4g}, rel. gap {gap:.3g}")


def run_crfsuite(data):
    import sklearn_crfsuite

    X_tr, Y_tr, X_te, Y_te = data
    fm = SequenceFeatures().fit(X_tr, Y_tr)
    F_tr, F_te = feature_strings(fm, X_tr), feature_strings(fm, X_te)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100)
    t0 = time.perf_counter()
    crf.fit(F_tr, Y_tr)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = crf.predict(F_te)
    tag = time.perf_counter() - t0
    return dict(name="sklearn-crfsuite L-BFGS", acc=token_accuracy(Y_te, pred),
                train=train, tag=tag, note="c1=c2=0.1, 100 iterations; same features")


def run_perceptron(data):
    from nltk.tag.perceptron import PerceptronTagger

    X_tr, Y_tr, X_te, Y_te = data
    tagger = PerceptronTagger(load=False)
    t0 = time.perf_counter()
    tagger.train([list(zip(x, y)) for x, y in zip(X_tr, Y_tr)], nr_iter=5)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = [[t for _, t in tagger.tag(x)] for x in X_te]
    tag = time.perf_counter() - t0
    return dict(name="NLTK PerceptronTagger", acc=token_accuracy(Y_te, pred), train=train,
                tag=tag, note="own features, 5 iterations")


SYSTEMS = {
    "default": lambda d: run_structsvm("structsvm default call", d),
    "one_slack": lambda d: run_structsvm("structsvm", d, learner="one_slack"),
    "pegasos": lambda d: run_structsvm(
        f"structsvm pegasos ({ARGS.pegasos_epochs} ep.)", d,
        learner=Pegasos(batch_size=50), tol=0.0, max_iter=ARGS.pegasos_epochs,
        random_state=0),
    "crfsuite": run_crfsuite,
    "perceptron": run_perceptron,
}


def _load():
    data = load_treebank()
    if ARGS.max_train:
        data = (data[0][:ARGS.max_train], data[1][:ARGS.max_train]) + tuple(data[2:])
    return data


def main(argv=None):
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", nargs="*", default=["default", "crfsuite"],
                    choices=list(SYSTEMS))
    ap.add_argument("--pegasos-epochs", type=int, default=10)
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N sentences only (smoke tests)")
    ap.add_argument("--isolate", action="store_true",
                    help="run every system in a fresh Python process")
    add_output_options(ap, "pos")
    ap.add_argument("--only", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ARGS = ap.parse_args(argv)
    if args.only:
        return run_one(SYSTEMS, args.only, _load)
    passed = ["--pegasos-epochs", str(args.pegasos_epochs)] + (
        ["--max-train", str(args.max_train)] if args.max_train else [])
    n_tok = sum(map(len, load_treebank()[3]))
    rows = run_systems(os.path.abspath(__file__), SYSTEMS, args.systems, _load, passed,
                       args.isolate)
    ref = next((r for r in rows if r["name"].startswith("sklearn-crfsuite")), None)
    table = ["| system | token acc. | train (s) | train / crfsuite | peak memory (MB) | "
             "tag (tokens/s) | notes |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r['train'] / ref['train']:.2f}" if ref else "-"
        speed = n_tok / r["tag"]
        table.append(f"| {r['name']} | {100 * r['acc']:.2f}% | {r['train']:.1f} | {ratio} | "
                     f"{r['peak_mb']:.0f} | {speed:,.0f} | {r['note']} |")
        if not (args.markdown or args.write):
            print(f"{r['name']:<46} acc {100 * r['acc']:6.2f}%  train {r['train']:7.1f}s "
                  f"(x{ratio} crfsuite)  peak {r['peak_mb']:.0f} MB  {r['note']}")
    if args.markdown or args.write:
        print("\n" + "\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return rows


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
