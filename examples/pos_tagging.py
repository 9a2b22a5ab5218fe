"""Part-of-speech tagging with a structural SVM (HMM-style features, Viterbi decoding).

Trains on the NLTK treebank sample (first 3000 sentences; the remaining 914 are the
test set) -- or, when the treebank is not installed, on a synthetic corpus sampled
from a random HMM, saying so -- then prints the test token accuracy (overall, on
words seen / unseen in training), the training time, the tagging speed, and tags a
sentence given on the command line::

    python examples/pos_tagging.py
    python examples/pos_tagging.py --sentence "The old man the boats ."
    python examples/pos_tagging.py --n-train 300 --n-test 100 --max-iter 2

Get the treebank with ``python -c "import nltk; nltk.download('treebank')"`` or point
``$NLTK_DATA`` / ``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse
import logging
import time

import structsvm
from structsvm.corpora import DataNotFoundError, load_treebank, make_hmm_corpus
from structsvm.structures import SequenceFeatures
from structsvm.learners.pegasos import Pegasos
from structsvm.structures.sequence import sentence_accuracy, token_accuracy


def load_data(n_train, n_test, path):
    try:
        X_tr, Y_tr, X_te, Y_te = load_treebank(path)
        source = "NLTK treebank sample"
    except DataNotFoundError as exc:
        print(f"Treebank not found ({str(exc).splitlines()[0][:120]}...).")
        print("Using a synthetic corpus sampled from a random HMM instead. To tag real "
              "English: python -c \"import nltk; nltk.download('treebank')\"")
        X, Y = make_hmm_corpus(3914, n_states=12, n_words=2000, random_state=0)
        X_tr, Y_tr, X_te, Y_te = X[:3000], Y[:3000], X[3000:], Y[3000:]
        source = "synthetic HMM corpus"
    if n_train:
        X_tr, Y_tr = X_tr[:n_train], Y_tr[:n_train]
    if n_test:
        X_te, Y_te = X_te[:n_test], Y_te[:n_test]
    return source, X_tr, Y_tr, X_te, Y_te


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentence", default="The new tagger works remarkably well .",
                    help="sentence to tag (tokens separated by spaces)")
    ap.add_argument("--learner", default="default",
                    choices=["default", "dual_cd", "pegasos", "one_slack", "n_slack",
                             "frank_wolfe", "perceptron"],
                    help="default: the estimator's choice for sequences (dual_cd, "
                         "certified duality gap)")
    ap.add_argument("--C", type=float, default=SequenceFeatures.default_C)
    ap.add_argument("--max-iter", type=int, default=None,
                    help="passes (dual_cd), epochs (pegasos, perceptron; default 10) or "
                         "rounds (cutting plane); default: the learner's")
    ap.add_argument("--n-train", type=int, default=0, help="use the first N training "
                    "sentences only (0: all)")
    ap.add_argument("--n-test", type=int, default=0, help="first N test sentences (0: all)")
    ap.add_argument("--data", default=None, help="folder of the treebank corpus")
    ap.add_argument("--save", default=None, help="write the model to this path")
    args = ap.parse_args(argv)

    logging.basicConfig(format="  %(message)s", level=logging.INFO)
    source, X_tr, Y_tr, X_te, Y_te = load_data(args.n_train, args.n_test, args.data)
    n_tok = sum(map(len, X_te))
    print(f"Data: {source}; {len(X_tr)} training sentences, {len(X_te)} test sentences "
          f"({n_tok} tokens)")

    learner = {"default": None, "pegasos": Pegasos(batch_size=50)}.get(args.learner,
                                                                      args.learner)
    max_iter = args.max_iter
    if max_iter is None and args.learner in ("pegasos", "perceptron"):
        max_iter = 10
    print(f"Training (learner={args.learner}, C={args.C}); progress per round:")
    t0 = time.perf_counter()
    # Pegasos runs exactly its epochs (the map's default tol, a relative duality gap
    # for the certified learners, would stop it on a small change of the objective)
    tol = 0.0 if args.learner == "pegasos" else None
    # the default call: structsvm.fit(X, Y, feature_map=SequenceFeatures(),
    # decoder="viterbi"); C and the seed are spelled out to be visible
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(), decoder="viterbi",
                          learner=learner, C=args.C, max_iter=max_iter, tol=tol,
                          verbose=1, random_state=0)
    print(f"Trained with {model.learner_.name}: objective {model.objective_:.6g}, "
          f"relative duality gap {model.duality_gap_ / model.objective_:.3g}")
    train_time = time.perf_counter() - t0

    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag_time = time.perf_counter() - t0

    known = {w for x in X_tr for w in x}
    pairs = [(w in known, g == p) for x, y, z in zip(X_te, Y_te, pred)
             for w, g, p in zip(x, y, z)]
    seen = [ok for k, ok in pairs if k]
    unseen = [ok for k, ok in pairs if not k]
    print(f"Test token accuracy:     {token_accuracy(Y_te, pred):.4f}")
    print(f"  known words:           {sum(seen) / max(len(seen), 1):.4f} ({len(seen)} tokens)")
    print(f"  unknown words:         {sum(unseen) / max(len(unseen), 1):.4f} "
          f"({len(unseen)} tokens)")
    print(f"Test sentence accuracy:  {sentence_accuracy(Y_te, pred):.4f}")
    print(f"Training time:           {train_time:.1f} s ({model.n_iter_} rounds)")
    print(f"Tagging speed:           {n_tok / tag_time:,.0f} tokens/s")
    if args.save:
        model.save(args.save)
        print(f"Model written to {args.save}")

    tokens = args.sentence.split()
    if tokens:
        tags = model.predict([tokens])[0]
        print("Tagged: " + " ".join(f"{w}/{t}" for w, t in zip(tokens, tags)))
    return model


if __name__ == "__main__":
    main()
