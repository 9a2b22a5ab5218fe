"""Text chunking (CoNLL-2000) with a structural SVM: words + POS tags in, IOB chunks out.

Trains on CoNLL-2000's train.txt (8,936 sentences) and tests on test.txt (2,012),
with all 11 chunk types and the standard feature set (``SequenceFeatures(features=
"chunk")``: words and POS tags in a ±2 window, word bigrams, POS bigrams and
trigrams), then prints conlleval's chunk precision / recall / F1 overall and per
type, and chunks a sentence given as ``word/POS`` tokens::

    python examples/chunking.py
    python examples/chunking.py --n-train 500 --epochs 3
    python examples/chunking.py --sentence "He/PRP reckons/VBZ the/DT deficit/NN ./."

The default learner here is Pegasos (8 epochs, ~3 minutes on a busy 2-core machine);
``--learner one_slack`` runs the estimator's default 1-slack cutting plane, which
needs many rounds on this corpus (see docs/benchmarks_sequences.md). Get the corpus
with ``python -c "import nltk; nltk.download('conll2000')"`` or point ``$NLTK_DATA``
/ ``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse
import time

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.features import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.metrics import chunk_scores, token_accuracy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learner", default="pegasos", choices=["pegasos", "one_slack"])
    ap.add_argument("--C", type=float, default=None, help="default: the map's default_C")
    ap.add_argument("--epochs", type=int, default=8,
                    help="Pegasos epochs, or cutting-plane rounds (max_iter)")
    ap.add_argument("--n-train", type=int, default=0, help="first N training sentences")
    ap.add_argument("--n-test", type=int, default=0, help="first N test sentences")
    ap.add_argument("--data", default=None, help="folder holding train.txt and test.txt")
    ap.add_argument("--sentence", default="He/PRP reckons/VBZ the/DT current/JJ "
                    "account/NN deficit/NN will/MD narrow/VB ./.")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_conll2000(args.data)
    if args.n_train:
        X_tr, Y_tr = X_tr[:args.n_train], Y_tr[:args.n_train]
    if args.n_test:
        X_te, Y_te = X_te[:args.n_test], Y_te[:args.n_test]
    print(f"CoNLL-2000: {len(X_tr)} training sentences, {len(X_te)} test sentences "
          f"({sum(map(len, X_te))} tokens)")

    params = {} if args.C is None else {"C": args.C}
    if args.learner == "pegasos":
        params.update(learner=Pegasos(batch_size=50), tol=0.0, random_state=0)
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features="chunk"),
                          decoder="viterbi", max_iter=args.epochs, **params)
    train_time = time.perf_counter() - t0
    pred = model.predict(X_te)

    s = chunk_scores(Y_te, pred)
    print(f"Training: {train_time:.1f} s ({model.n_iter_} epochs/rounds, "
          f"{model.feature_map_.n_input_features_} observation features)")
    print(f"Token accuracy {token_accuracy(Y_te, pred):.4f}; chunks: precision "
          f"{s['precision']:.4f}, recall {s['recall']:.4f}, F1 {s['f1']:.4f}")
    print(f"{'type':<6} {'true':>6} {'F1':>7}")
    for typ, c in sorted(s["per_type"].items(), key=lambda kv: -kv[1]["n_true"]):
        print(f"{typ:<6} {c['n_true']:>6} {c['f1']:>7.4f}")

    tokens = [tuple(tok.rsplit("/", 1)) for tok in args.sentence.split()]
    if tokens and all(len(t) == 2 for t in tokens):
        tags = model.predict([tokens])[0]
        print("Chunked: " + " ".join(f"{w}/{p}/{c}" for (w, p), c in zip(tokens, tags)))
    return model, s


if __name__ == "__main__":
    main()
