"""Text chunking (CoNLL-2000) with a structural SVM: words + POS tags in, IOB chunks out.

Trains on CoNLL-2000's train.txt (8,936 sentences) and tests on test.txt (2,012),
with all 11 chunk types and the standard feature set (``SequenceFeatures(features=
"chunk")``: words and POS tags in a ±2 window, word bigrams, POS bigrams and
trigrams), then prints conlleval's chunk precision / recall / F1 overall and per
type, and chunks a sentence given as ``word/POS`` tokens::

    python examples/chunking.py
    python examples/chunking.py --n-train 500
    python examples/chunking.py --learner pegasos --max-iter 8
    python examples/chunking.py --sentence "He/PRP reckons/VBZ the/DT deficit/NN ./."

The default learner is the estimator's choice for sequences, ``dual_cd`` (dual
coordinate descent over per-example caches, trained to a certified duality gap): on
all of CoNLL-2000 about half a minute for chunk F1 0.940 (docs/benchmarks.md, side
by side with CRFsuite). ``--learner`` names another one (``pegasos`` runs
``--max-iter`` epochs, 8 by default). Get the corpus with
``python -c "import nltk; nltk.download('conll2000')"`` or point ``$NLTK_DATA`` /
``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse
import time

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.structures import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.structures.sequence import chunk_scores, token_accuracy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learner", default="default",
                    choices=["default", "dual_cd", "pegasos", "one_slack", "n_slack",
                             "frank_wolfe", "perceptron"],
                    help="default: the estimator's choice for sequences (dual_cd)")
    ap.add_argument("--C", type=float, default=None, help="default: the map's default_C")
    ap.add_argument("--max-iter", "--epochs", dest="max_iter", type=int, default=None,
                    help="passes (dual_cd, frank_wolfe), epochs (pegasos, perceptron: "
                         "default 8) or rounds (cutting plane); default: the learner's")
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
    max_iter = args.max_iter
    if args.learner in ("pegasos", "perceptron") and max_iter is None:
        max_iter = 8
    if args.learner == "pegasos":  # exactly its epochs (tol: a change of objective)
        params.update(learner=Pegasos(batch_size=50), tol=0.0, random_state=0)
    elif args.learner != "default":
        params.update(learner=args.learner)
    t0 = time.perf_counter()
    # the default call: structsvm.fit(X, Y, feature_map=SequenceFeatures(
    # features="chunk"), decoder="viterbi")
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features="chunk"),
                          decoder="viterbi", max_iter=max_iter, **params)
    train_time = time.perf_counter() - t0
    pred = model.predict(X_te)

    s = chunk_scores(Y_te, pred)
    print(f"Training: {train_time:.1f} s with {model.learner_.name} ({model.n_iter_} "
          f"passes/epochs/rounds, {model.feature_map_.n_input_features_} observation "
          f"features)")
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
