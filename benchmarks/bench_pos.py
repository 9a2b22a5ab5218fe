"""POS tagging on the NLTK treebank: structsvm vs sklearn-crfsuite vs NLTK's perceptron.

Split: first 3000 tagged sentences train, remaining 914 test (23,165 tokens, -NONE-
traces included). All systems run in this one process, one after the other.

- structsvm one_slack: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(),
  decoder="viterbi")`` with the estimator's default parameters (``--one-slack-C`` /
  ``--one-slack-max-iter`` override them);
- structsvm pegasos: same map, ``Pegasos(batch_size=50)``, C = the map's default_C,
  exactly ``--pegasos-epochs`` epochs (``tol=0``: the map's default tol would stop
  it once an epoch changes the objective by < 25 %);
- sklearn-crfsuite: L-BFGS with its default regularisation (c1=0, c2=1), on exactly
  the same observation features (the strings of SequenceFeatures' vocabulary);
- NLTK PerceptronTagger trained from scratch (its own features, 5 iterations).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_pos.py [--skip one_slack] [--markdown]
"""
import argparse
import time

import numpy as np

import structsvm
from structsvm.corpora import load_treebank
from structsvm.features import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.metrics import token_accuracy


def feature_strings(fm, X):
    """Per-token lists of observation strings: what crfsuite gets (same features)."""
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist() for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_structsvm(name, X_tr, Y_tr, X_te, Y_te, **params):
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(), decoder="viterbi",
                          **params)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag = time.perf_counter() - t0
    return dict(name=name, acc=token_accuracy(Y_te, pred), train=train, tag=tag,
                note=f"{model.n_iter_} rounds, objective {model.objective_:.4g}")


def run_crfsuite(X_tr, Y_tr, X_te, Y_te):
    import sklearn_crfsuite

    fm = SequenceFeatures().fit(X_tr, Y_tr)
    t0 = time.perf_counter()
    F_tr = feature_strings(fm, X_tr)
    prep = time.perf_counter() - t0
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs")
    t0 = time.perf_counter()
    crf.fit(F_tr, Y_tr)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = crf.predict(feature_strings(fm, X_te))
    tag = time.perf_counter() - t0
    return dict(name="sklearn-crfsuite L-BFGS", acc=token_accuracy(Y_te, pred),
                train=train, tag=tag, note=f"same features; +{prep:.1f}s to build them")


def run_perceptron(X_tr, Y_tr, X_te, Y_te):
    from nltk.tag.perceptron import PerceptronTagger

    tagger = PerceptronTagger(load=False)
    t0 = time.perf_counter()
    tagger.train([list(zip(x, y)) for x, y in zip(X_tr, Y_tr)], nr_iter=5)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = [[t for _, t in tagger.tag(x)] for x in X_te]
    tag = time.perf_counter() - t0
    return dict(name="NLTK PerceptronTagger", acc=token_accuracy(Y_te, pred), train=train,
                tag=tag, note="own features, 5 iterations")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["one_slack", "pegasos", "crfsuite", "perceptron"])
    ap.add_argument("--one-slack-C", type=float, default=None)
    ap.add_argument("--one-slack-max-iter", type=int, default=None)
    ap.add_argument("--pegasos-epochs", type=int, default=10)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_treebank()
    n_tok = sum(map(len, X_te))
    print(f"treebank: {len(X_tr)} train / {len(X_te)} test sentences, {n_tok} test tokens")
    rows = []
    if "one_slack" not in args.skip:
        extra = {}
        if args.one_slack_C is not None:
            extra["C"] = args.one_slack_C
        if args.one_slack_max_iter is not None:
            extra["max_iter"] = args.one_slack_max_iter
        label = "structsvm one_slack" + (" (defaults)" if not extra else
                                         " " + ", ".join(f"{k}={v}" for k, v in extra.items()))
        rows.append(run_structsvm(label, X_tr, Y_tr, X_te, Y_te, **extra))
        print(rows[-1])
    if "pegasos" not in args.skip:
        C = SequenceFeatures.default_C
        rows.append(run_structsvm(f"structsvm pegasos (C={C}, {args.pegasos_epochs} ep.)",
                                  X_tr, Y_tr, X_te, Y_te, C=C,
                                  learner=Pegasos(batch_size=50), tol=0.0,
                                  max_iter=args.pegasos_epochs, random_state=0))
        print(rows[-1])
    if "crfsuite" not in args.skip:
        rows.append(run_crfsuite(X_tr, Y_tr, X_te, Y_te))
        print(rows[-1])
    if "perceptron" not in args.skip:
        rows.append(run_perceptron(X_tr, Y_tr, X_te, Y_te))
        print(rows[-1])

    ref = next((r for r in rows if r["name"].startswith("sklearn-crfsuite")), None)
    head = (f"| system | token acc. | train (s) | train / crfsuite | tag (tokens/s) | "
            f"notes |\n|---|---|---|---|---|---|")
    print("\n" + head if args.markdown else "")
    for r in rows:
        ratio = f"{r['train'] / ref['train']:.2f}" if ref else "-"
        speed = n_tok / r["tag"]
        if args.markdown:
            print(f"| {r['name']} | {100 * r['acc']:.2f}% | {r['train']:.1f} | {ratio} | "
                  f"{speed:,.0f} | {r['note']} |")
        else:
            print(f"{r['name']:<42} acc {100 * r['acc']:6.2f}%  train {r['train']:7.1f}s "
                  f"(x{ratio} crfsuite)  tag {speed:>9,.0f} tok/s  {r['note']}")
    return rows


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
