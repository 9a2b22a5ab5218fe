"""Labelled dependency parsing of Universal Dependencies with a structural SVM.

Trains a parser on UD English EWT's training split (12,544 sentences) with the gold
universal and English tags, lemmas and morphological features as input: arcs with
their relations, and with ``--second-order`` sibling and grandparent factors too.
Prints the unlabelled and labelled attachment scores (UAS, LAS) on the test split,
over every word (UD's evaluation counts punctuation) and without punctuation, the
training time and the parsing speed; writes the test parses as CoNLL-U, with the
file's comments, multiword tokens and empty nodes where they were; saves the parser
and loads it back::

    python examples/ud_dependency_parsing.py
    python examples/ud_dependency_parsing.py --second-order --conllu parses.conllu --save parser.npz
    python examples/ud_dependency_parsing.py --second-order --decoder chu_liu_edmonds_one_root

(``chu_liu_edmonds_one_root`` finds non-projective trees: exactly at first order,
by McDonald & Pereira's rearrangement search at second order.)

The corpus is read from ``$STRUCTSVM_DATA/ud_english_ewt`` (or ``--data``); get it
with ``structsvm data fetch ud_english_ewt``.
"""
import argparse
import time

import structsvm
from structsvm.corpora import load_ud_english_ewt
from structsvm.structures.dependency import (DependencyFeatures, attachment_scores,
                                             write_conllu)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--second-order", action="store_true",
                    help="add sibling and grandparent factors")
    ap.add_argument("--decoder", default="eisner_one_root",
                    help="eisner_one_root (projective, the default) or "
                         "chu_liu_edmonds_one_root (non-projective)")
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--n-train", type=int, default=0, help="first N training sentences "
                    "(0: all)")
    ap.add_argument("--n-test", type=int, default=0, help="first N test sentences (0: all)")
    ap.add_argument("--data", default=None, help="folder of the UD English EWT files")
    ap.add_argument("--conllu", default=None, help="write the test parses to this file")
    ap.add_argument("--save", default=None, help="write the parser to this path")
    args = ap.parse_args(argv)

    train = load_ud_english_ewt(args.data, split="train")
    test = load_ud_english_ewt(args.data, split="test")
    if args.n_train:
        train = type(train)(*(part[:args.n_train] for part in train))
    if args.n_test:
        test = type(test)(*(part[:args.n_test] for part in test))
    # the trees as (head, relation) pairs: the parser then predicts relations too
    Y_train = [list(zip(h, r)) for h, r in zip(train.heads, train.relations)]
    Y_test = [list(zip(h, r)) for h, r in zip(test.heads, test.relations)]
    print(f"UD English EWT: {len(train.sentences)} training sentences, "
          f"{len(test.sentences)} test sentences")

    features = DependencyFeatures(siblings=args.second_order,
                                  grandparents=args.second_order)
    params = {k: v for k, v in (("C", args.C), ("max_iter", args.max_iter))
              if v is not None}
    t0 = time.perf_counter()
    parser = structsvm.fit(train.sentences, Y_train, feature_map=features,
                           decoder=args.decoder, **params)
    train_time = time.perf_counter() - t0
    fm = parser.feature_map_
    print(f"Trained {parser.learner_.name} in {train_time:.1f}s ({parser.n_iter_} passes, "
          f"C={parser.C_}, {len(fm.relations_)} relations, "
          f"{'second' if args.second_order else 'first'} order, decoder "
          f"{parser.decoder_.name})")

    t0 = time.perf_counter()
    pred = parser.predict(test.sentences)  # (head, relation) pairs per sentence
    dt = time.perf_counter() - t0
    every = attachment_scores(Y_test, pred)
    no_punct = attachment_scores(Y_test, pred, test.sentences, exclude_punctuation=True)
    print(f"Test UAS {every.uas:.4f}, LAS {every.las:.4f} ({every.n_words} words); "
          f"without punctuation UAS {no_punct.uas:.4f}, LAS {no_punct.las:.4f} "
          f"({len(pred) / dt:.0f} sentences/s)")

    if args.conllu:
        write_conllu(args.conllu, test.sentences, pred, layouts=test.layouts)
        print(f"Test parses written to {args.conllu}")
    if args.save:
        parser.save(args.save)
        again = structsvm.load(args.save).predict(test.sentences[:50])
        print(f"Parser saved to {args.save}; loaded back, it parses "
              f"{'the same' if again == pred[:50] else 'DIFFERENTLY'}")
    return parser, every, no_punct


if __name__ == "__main__":
    main()
