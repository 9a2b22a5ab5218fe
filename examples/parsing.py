"""Constituency parsing with a structural SVM (span features, CKY decoding).

Trains on the parse trees of the NLTK treebank sample (the first 3000 trees, those of
at most 25 words; the test trees are the remaining ones of at most 15 words), with
the gold part-of-speech tags as input, then prints the test labelled-bracket F1,
the training time and the parsing speed, and parses a sentence given on the
command line (tagged by a structural-SVM tagger trained on the same sentences)::

    python examples/parsing.py
    python examples/parsing.py --sentence "The company said it expects higher sales ."
    python examples/parsing.py --n-train 200 --n-test 50 --max-iter 20

Get the treebank with ``python -c "import nltk; nltk.download('treebank')"`` or point
``$NLTK_DATA`` / ``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse
import time

import structsvm
from structsvm.corpora.treebank import load_treebank_trees
from structsvm.structures import GrammarFeatures
from structsvm.structures.grammar import bracket_scores
from structsvm.estimator import StructSVMTagger


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentence", default="The new parser works remarkably well .",
                    help="sentence to parse (tokens separated by spaces)")
    ap.add_argument("--learner", default=None, help="learner name (default: the "
                    "estimator's default)")
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--n-train", type=int, default=0, help="first N training trees (0: all)")
    ap.add_argument("--n-test", type=int, default=0, help="first N test trees (0: all)")
    ap.add_argument("--max-train-len", type=int, default=25)
    ap.add_argument("--max-test-len", type=int, default=15)
    ap.add_argument("--data", default=None, help="folder of the treebank corpus")
    ap.add_argument("--save", default=None, help="write the parser to this path")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_treebank_trees(args.data, max_train_len=args.max_train_len,
                                                 max_test_len=args.max_test_len)
    if args.n_train:
        X_tr, Y_tr = X_tr[:args.n_train], Y_tr[:args.n_train]
    if args.n_test:
        X_te, Y_te = X_te[:args.n_test], Y_te[:args.n_test]
    print(f"NLTK treebank sample: {len(X_tr)} training trees (<= {args.max_train_len} "
          f"words), {len(X_te)} test trees (<= {args.max_test_len} words)")

    params = {k: v for k, v in (("learner", args.learner), ("C", args.C),
                                ("max_iter", args.max_iter)) if v is not None}
    t0 = time.perf_counter()
    parser = structsvm.fit(X_tr, Y_tr, feature_map=GrammarFeatures(), decoder="cky",
                           **params)
    train_time = time.perf_counter() - t0
    g = parser.feature_map_.grammar_
    print(f"Trained {parser.learner_.name} in {train_time:.1f}s ({parser.n_iter_} "
          f"rounds/epochs; {g.n_symbols} symbols, {g.n_rules} binary rules, "
          f"{parser.feature_map_.n_features_} features)")

    t0 = time.perf_counter()
    pred = parser.predict(X_te)
    dt = time.perf_counter() - t0
    s = bracket_scores(Y_te, pred)
    print(f"Test labelled brackets, gold tags: P {s.precision:.4f}  R {s.recall:.4f}  "
          f"F1 {s.f1:.4f}  ({len(X_te) / dt:.0f} sentences/s)")

    tagger = StructSVMTagger.train(X_tr, learner="perceptron", max_iter=5, random_state=0)
    tagged = tagger.tag_sents([[w for w, _ in x] for x in X_te])
    s_pred = bracket_scores(Y_te, parser.predict(tagged))
    print(f"Test labelled brackets, predicted tags: F1 {s_pred.f1:.4f}")

    words = args.sentence.split()
    if words:
        tree = parser.predict([tagger.tag(words)])[0]
        print("Parse:")
        print(tree.pformat(margin=88))
    if args.save:
        parser.save(args.save)
        print(f"Parser saved to {args.save}")
    return parser


if __name__ == "__main__":
    main()
