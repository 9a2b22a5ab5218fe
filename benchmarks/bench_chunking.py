"""CoNLL-2000 chunking: structsvm vs sklearn-crfsuite, chunk F1 (all 11 chunk types).

Train on train.txt (8,936 sentences), test on test.txt (2,012 sentences); the
observations are the words and the given POS tags (``SequenceFeatures(features=
"chunk")``, the standard CoNLL-2000 set: words and POS tags at t-2..t+2, word
bigrams at t-1..t+1, POS bigrams and trigrams in the window, word|POS, suffixes,
shape), for both systems. F1 is conlleval's (``structsvm.metrics.chunk_scores``).
All systems run in this one process, one after the other.

- structsvm one_slack: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(
  features="chunk"), decoder="viterbi")`` with the estimator's default parameters
  (``--C`` / ``--one-slack-max-iter`` override them, and the row says so);
- structsvm pegasos: same map, ``Pegasos(batch_size=50)``, C = the map's default_C,
  exactly ``--epochs`` epochs (``tol=0``);
- sklearn-crfsuite: L-BFGS with its default regularisation (c1=0, c2=1), on exactly
  the same observation features (its feature strings are built before its clock
  starts).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_chunking.py [--skip pegasos] [--markdown]
"""
import argparse
import time

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.features import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.metrics import chunk_scores, token_accuracy


def feature_strings(fm, X):
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist() for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_structsvm(name, X_tr, Y_tr, X_te, Y_te, **params):
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features="chunk"),
                          decoder="viterbi", **params)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag = time.perf_counter() - t0
    return dict(name=name, f1=chunk_scores(Y_te, pred)["f1"],
                acc=token_accuracy(Y_te, pred), train=train, tag=tag,
                note=f"{model.n_iter_} rounds, objective {model.objective_:.4g}")


def run_crfsuite(X_tr, Y_tr, X_te, Y_te):
    import sklearn_crfsuite

    fm = SequenceFeatures(features="chunk").fit(X_tr, Y_tr)
    F_tr, F_te = feature_strings(fm, X_tr), feature_strings(fm, X_te)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs")
    t0 = time.perf_counter()
    crf.fit(F_tr, Y_tr)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = crf.predict(F_te)
    tag = time.perf_counter() - t0
    return dict(name="sklearn-crfsuite L-BFGS", f1=chunk_scores(Y_te, pred)["f1"],
                acc=token_accuracy(Y_te, pred), train=train, tag=tag, note="same features")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["one_slack", "pegasos", "crfsuite"])
    ap.add_argument("--C", type=float, default=None,
                    help="C for both structsvm rows (default: the map's default_C)")
    ap.add_argument("--epochs", type=int, default=8, help="pegasos epochs")
    ap.add_argument("--one-slack-max-iter", type=int, default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_conll2000()
    n_tok = sum(map(len, X_te))
    print(f"CoNLL-2000: {len(X_tr)} train / {len(X_te)} test sentences ({n_tok} tokens), "
          f"{len({t for y in Y_tr for t in y})} chunk tags")
    rows = []
    if "one_slack" not in args.skip:
        extra = {}
        if args.C is not None:
            extra["C"] = args.C
        if args.one_slack_max_iter is not None:
            extra["max_iter"] = args.one_slack_max_iter
        label = "structsvm one_slack" + (" (defaults)" if not extra else
                                         " " + ", ".join(f"{k}={v}" for k, v in extra.items()))
        rows.append(run_structsvm(label, X_tr, Y_tr, X_te, Y_te, **extra))
        print(rows[-1])
    if "pegasos" not in args.skip:
        C = SequenceFeatures.default_C if args.C is None else args.C
        rows.append(run_structsvm(f"structsvm pegasos (C={C}, {args.epochs} ep.)",
                                  X_tr, Y_tr, X_te, Y_te, C=C,
                                  learner=Pegasos(batch_size=50), max_iter=args.epochs, tol=0.0,
                                  random_state=0))
        print(rows[-1])
    if "crfsuite" not in args.skip:
        rows.append(run_crfsuite(X_tr, Y_tr, X_te, Y_te))
        print(rows[-1])
    ref = next((r for r in rows if r["name"].startswith("sklearn-crfsuite")), None)
    if args.markdown:
        print("\n| system | chunk F1 | token acc. | train (s) | train / crfsuite | "
              "tag (tokens/s) | notes |\n|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = f"{r['train'] / ref['train']:.2f}" if ref else "-"
        if args.markdown:
            print(f"| {r['name']} | {r['f1']:.4f} | {100 * r['acc']:.2f}% | "
                  f"{r['train']:.1f} | {ratio} | {n_tok / r['tag']:,.0f} | {r['note']} |")
        else:
            print(f"{r['name']:<40} F1 {r['f1']:.4f}  acc {100 * r['acc']:.2f}%  train "
                  f"{r['train']:7.1f}s (x{ratio} crfsuite)  tag {n_tok / r['tag']:,.0f} "
                  f"tok/s  {r['note']}")
    return rows


if __name__ == "__main__":
    main()
