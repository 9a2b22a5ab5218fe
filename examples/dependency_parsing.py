"""Dependency parsing with a structural SVM (arc-factored features, Eisner decoding).

Trains on the dependency version of the NLTK treebank sample, split by file (the
first 80 % of the 199 files train: 3,396 sentences; the last 40 test: 518), with
the gold part-of-speech tags as input; prints the unlabelled attachment score
(punctuation excluded, and with it), the training time and the parsing speed;
writes the test parses as CoNLL-U; and parses a sentence given on the command line,
tagged by a structural-SVM tagger trained on the same sentences::

    python examples/dependency_parsing.py
    python examples/dependency_parsing.py --sentence "The company said it expects higher sales ."
    python examples/dependency_parsing.py --decoder chu_liu_edmonds --conllu parses.conllu

Get the corpus with ``python -c "import nltk; nltk.download('dependency_treebank')"``
or point ``$NLTK_DATA`` / ``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse
import time

import structsvm
from structsvm.corpora import load_dependency_treebank
from structsvm.estimator import StructSVMTagger
from structsvm.structures.dependency import (DependencyFeatures, attachment_scores,
                                             write_conllu)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentence", default="The new parser works remarkably well .",
                    help="sentence to parse (tokens separated by spaces)")
    ap.add_argument("--decoder", default=None, help="eisner (default), "
                    "chu_liu_edmonds, or their _one_root variants")
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--n-train", type=int, default=0, help="first N training sentences "
                    "(0: all)")
    ap.add_argument("--n-test", type=int, default=0, help="first N test sentences (0: all)")
    ap.add_argument("--data", default=None, help="folder of the dependency treebank")
    ap.add_argument("--conllu", default=None, help="write the test parses to this file")
    ap.add_argument("--save", default=None, help="write the parser to this path")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_dependency_treebank(args.data, split="files")
    if args.n_train:
        X_tr, Y_tr = X_tr[:args.n_train], Y_tr[:args.n_train]
    if args.n_test:
        X_te, Y_te = X_te[:args.n_test], Y_te[:args.n_test]
    print(f"Dependency treebank sample: {len(X_tr)} training sentences, {len(X_te)} "
          "test sentences")

    params = {k: v for k, v in (("decoder", args.decoder), ("C", args.C),
                                ("max_iter", args.max_iter)) if v is not None}
    t0 = time.perf_counter()
    parser = structsvm.fit(X_tr, Y_tr, feature_map=DependencyFeatures(), **params)
    train_time = time.perf_counter() - t0
    print(f"Trained {parser.learner_.name} in {train_time:.1f}s ({parser.n_iter_} "
          f"passes, C={parser.C_}, {parser.feature_map_.n_features_} hashed features, "
          f"decoder {parser.decoder_.name})")

    t0 = time.perf_counter()
    pred = parser.predict(X_te)
    dt = time.perf_counter() - t0
    no_punct = attachment_scores(Y_te, pred, X_te, exclude_punctuation=True)
    every = attachment_scores(Y_te, pred, X_te)
    print(f"Test UAS, gold tags: {no_punct.uas:.4f} without punctuation "
          f"({no_punct.n_words} words), {every.uas:.4f} with it "
          f"({len(X_te) / dt:.0f} sentences/s)")

    tagger = StructSVMTagger.train(X_tr, learner="perceptron", max_iter=5, random_state=0)
    tagged = tagger.tag_sents([[w for w, _ in x] for x in X_te])  # (word, tag) pairs
    s = attachment_scores(Y_te, parser.predict(tagged), X_te, exclude_punctuation=True)
    print(f"Test UAS, predicted tags: {s.uas:.4f} without punctuation")

    if args.conllu:
        write_conllu(args.conllu, X_te, pred)
        print(f"Test parses written to {args.conllu}")
    words = args.sentence.split()
    if words:
        x = tagger.tag(words)
        heads = parser.predict([x])[0]
        print("Parse:")
        for d, ((w, t), h) in enumerate(zip(x, heads), start=1):
            print(f"  {d:2d} {w:<14} {t:<5} <- {h} {'ROOT' if h == 0 else x[h - 1][0]}")
    if args.save:
        parser.save(args.save)
        print(f"Parser saved to {args.save}")
    return parser


if __name__ == "__main__":
    main()
