"""Chunking with confidence (CoNLL-2000): calibrated probabilities per tag and per
chunk, the 5 best chunkings of a sentence, and BIO-valid decoding.

Trains the default chunker on CoNLL-2000's train.txt but its last ``--held-out``
sentences (1,000 by default), which fit two calibrators: one maps a token's margin
(its predicted tag's max-marginal minus the best other tag's) to the probability
that the tag is right, the other a chunk's margin to the probability that the chunk
is right. Then, on test.txt:

- decoding with and without ``OutputConstraints(transitions="BIO")``: chunk F1 and
  the predicted tags that break BIO (an I-X not after B-X or I-X);
- the expected calibration error of the tags' and the chunks' confidence, before
  (σ(margin), the margin read as a logit) and after calibration, and the
  reliability diagram (``--plot``);
- one sentence: its chunks with their calibrated confidence, and its 5 best
  chunkings with their scores::

    python examples/chunking_confidence.py
    python examples/chunking_confidence.py --plot reliability.png
    python examples/chunking_confidence.py --n-train 1000 --sentence \\
        "He/PRP reckons/VBZ the/DT current/JJ account/NN deficit/NN will/MD narrow/VB ./."

Get the corpus with ``python -c "import nltk; nltk.download('conll2000')"`` or point
``$NLTK_DATA`` / ``$STRUCTSVM_DATA`` at a folder that has it.
"""
import argparse

import numpy as np

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.estimator.calibration import (CalibratedStructuredSVM, MarginCalibrator,
                                             expected_calibration_error)
from structsvm.structures import OutputConstraints, SequenceFeatures
from structsvm.structures.sequence import chunk_margins, chunk_scores, iob_chunks

BIO = OutputConstraints(transitions="BIO")


def bio_breaks(Y):
    """Predicted tags that break BIO: I-X not after B-X or I-X."""
    return sum(tag.startswith("I-") and prev[2:] != tag[2:]
               for y in Y for prev, tag in zip(["O"] + list(y), y))


def chunks_with_margins(model, X):
    """Every sentence's predicted chunks (BIO-valid decoding) and their margins."""
    tags = model.predict(X, constraints=BIO)
    tables = model.predict_max_marginals(X, constraints=BIO)
    return tags, [chunk_margins(y, t, model.feature_map_.tags_)
                  for y, t in zip(tags, tables)]


def chunk_truth(found, Y):
    """Margins of all predicted chunks, and whether each is a true chunk."""
    margins, right = [], []
    for chunks, y in zip(found, Y):
        gold = set(iob_chunks(y))
        for chunk, m in chunks:
            margins.append(m)
            right.append(chunk in gold)
    return np.array(margins), np.array(right)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--held-out", type=int, default=1000,
                    help="last N training sentences fit the calibrators")
    ap.add_argument("--n-train", type=int, default=0, help="first N training sentences")
    ap.add_argument("--n-test", type=int, default=0, help="first N test sentences")
    ap.add_argument("--k", type=int, default=5, help="chunkings of the sentence")
    ap.add_argument("--plot", default=None, help="write the reliability diagram here")
    ap.add_argument("--data", default=None, help="folder holding train.txt and test.txt")
    ap.add_argument("--sentence", default="He/PRP reckons/VBZ the/DT current/JJ "
                    "account/NN deficit/NN will/MD narrow/VB to/TO only/RB #/# 1.8/CD "
                    "billion/CD in/IN September/NNP ./.")
    args = ap.parse_args(argv)

    X, Y, X_te, Y_te = load_conll2000(args.data)
    X_tr, Y_tr = X[:-args.held_out], Y[:-args.held_out]
    X_cal, Y_cal = X[-args.held_out:], Y[-args.held_out:]
    if args.n_train:
        X_tr, Y_tr = X_tr[:args.n_train], Y_tr[:args.n_train]
    if args.n_test:
        X_te, Y_te = X_te[:args.n_test], Y_te[:args.n_test]
    print(f"CoNLL-2000: {len(X_tr)} training, {len(X_cal)} held-out and {len(X_te)} "
          "test sentences")
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features="chunk"))

    # decoding, with and without BIO validity
    plain, valid = model.predict(X_te), model.predict(X_te, constraints=BIO)
    for name, P in (("Viterbi", plain), ("Viterbi, BIO-valid", valid)):
        print(f"{name:<20} chunk F1 {chunk_scores(Y_te, P)['f1']:.4f}, "
              f"{bio_breaks(P)} tags breaking BIO")

    # calibrators, fitted on the held-out sentences
    tokens = CalibratedStructuredSVM(model, method="isotonic").fit(X_cal, Y_cal,
                                                                   constraints=BIO)
    chunks = MarginCalibrator("isotonic").fit(*chunk_truth(
        chunks_with_margins(model, X_cal)[1], Y_cal))

    # calibration on the test set, per tag and per chunk
    margins = np.concatenate(model.predict_margins(X_te, constraints=BIO))
    right = np.concatenate([np.array(p) == np.array(y) for p, y in zip(valid, Y_te)])
    raw = 1.0 / (1.0 + np.exp(-margins))
    calibrated = tokens.calibrator_.predict_proba(margins)
    c_margins, c_right = chunk_truth(chunks_with_margins(model, X_te)[1], Y_te)
    c_raw = 1.0 / (1.0 + np.exp(-c_margins))
    c_cal = chunks.predict_proba(c_margins)
    print("expected calibration error (15 bins), before -> after calibration:")
    print(f"  tags   {expected_calibration_error(raw, right):.4f} -> "
          f"{expected_calibration_error(calibrated, right):.4f} "
          f"({right.size} tags, {right.mean():.4f} right)")
    print(f"  chunks {expected_calibration_error(c_raw, c_right):.4f} -> "
          f"{expected_calibration_error(c_cal, c_right):.4f} "
          f"({c_right.size} chunks, {c_right.mean():.4f} right)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from structsvm.plotting import plot_reliability_diagram

        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
        plot_reliability_diagram({"σ(margin)": (raw, right),
                                  "isotonic": (calibrated, right)}, ax=a, title="tags")
        plot_reliability_diagram({"σ(margin)": (c_raw, c_right),
                                  "isotonic": (c_cal, c_right)}, ax=b, title="chunks")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"wrote {args.plot}")

    # one sentence: its chunks with their confidence, and its k best chunkings
    sentence = [tuple(tok.rsplit("/", 1)) for tok in args.sentence.split()]
    words = [w for w, _ in sentence]
    tags, found = chunks_with_margins(model, [sentence])
    print("\n" + " ".join(words))
    for (typ, s, e), m in found[0]:
        p = chunks.predict_proba([m])[0]
        print(f"  {typ:<5} {' '.join(words[s:e]):<30} margin {m:6.3f}  "
              f"confidence {p:.3f}")
    print(f"its {args.k} best chunkings (BIO-valid):")
    for y, score in model.predict_nbest([sentence], k=args.k, constraints=BIO)[0]:
        text = " ".join(f"[{typ} {' '.join(words[s:e])}]"
                        for typ, s, e in iob_chunks(y))
        print(f"  {score:8.3f}  {text}")
    return model


if __name__ == "__main__":
    main()
