"""CoNLL-2000 chunking: calibrated confidence, BIO-valid decoding and the 5 best
chunkings, structsvm side by side with sklearn-crfsuite's marginal probabilities.

Protocol. CoNLL-2000's train.txt (8,936 sentences) is split: the first 7,936
sentences train both systems, the last 1,000 are held out to fit calibrators; the
2,012 sentences of test.txt (47,377 tokens) measure everything. Both systems see
the same observation strings (``SequenceFeatures(features="chunk")``).

- structsvm: the default call, ``structsvm.fit(X, Y, feature_map=SequenceFeatures(
  features="chunk"), decoder="viterbi")``. Its per-token confidence is the margin of
  the predicted tag (its max-marginal minus the best other tag's,
  ``predict_margins``), under BIO-valid decoding
  (``OutputConstraints(transitions="BIO")``) unless stated: "raw" reads it as a
  probability through the logistic function σ(margin), uncalibrated; "sigmoid" and
  "isotonic" are ``CalibratedStructuredSVM`` fitted on the held-out sentences
  (Platt scaling, isotonic regression).
- sklearn-crfsuite: L-BFGS, c1 = c2 = 0.1, 100 iterations (its standard
  configuration); its per-token confidence is the marginal probability of the tag it
  predicts (``predict_marginals``), raw and after isotonic calibration on the same
  held-out sentences (the same ``MarginCalibrator``).

Measured: chunk F1 (conlleval) with and without BIO-valid decoding and the number
of predicted tags that break BIO (an I-X not after B-X or I-X); the expected
calibration error (15 equal-width bins) and Brier score of the per-token confidence
on the test set; the whole-sentence confidence (the output's margin over the second
best, isotonic) likewise; the 5 best chunkings of every test sentence (how often the
true one is among them) and the time of each call. Times are wall-clock in this
process, on a shared machine; the first call of each kind compiles its loops
(numba) and is included.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_confidence.py [--held-out 1000]
        [--max-train N] [--plot docs/img/reliability_conll2000.png] [--write]
"""
import argparse
import os
import sys
import time

import numpy as np

import structsvm
from structsvm.corpora import load_conll2000
from structsvm.estimator.calibration import (CalibratedStructuredSVM, MarginCalibrator,
                                             expected_calibration_error)
from structsvm.structures import OutputConstraints, SequenceFeatures
from structsvm.structures.sequence import chunk_scores, token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

BIO = OutputConstraints(transitions="BIO")


def bio_breaks(Y):
    """Predicted tags that break BIO: I-X not after B-X or I-X."""
    n = 0
    for y in Y:
        prev = "O"
        for tag in y:
            if tag.startswith("I-") and prev[2:] != tag[2:]:
                n += 1
            prev = tag
    return n


def brier(p, right):
    return float(np.mean((np.asarray(p) - np.asarray(right, dtype=float)) ** 2))


def timed(f, *args, **kw):
    t0 = time.perf_counter()
    out = f(*args, **kw)
    return out, time.perf_counter() - t0


def run_structsvm(X_tr, Y_tr, X_cal, Y_cal, X_te, Y_te, k):
    model, train = timed(structsvm.fit, X_tr, Y_tr,
                         feature_map=SequenceFeatures(features="chunk"), decoder="viterbi")
    plain, t_plain = timed(model.predict, X_te)
    valid, t_valid = timed(model.predict, X_te, constraints=BIO)
    margins, t_margins = timed(model.predict_margins, X_te, constraints=BIO)
    right = np.concatenate([np.array(p) == np.array(y) for p, y in zip(valid, Y_te)])
    flat = np.concatenate(margins)
    probs = {"raw σ(margin)": 1.0 / (1.0 + np.exp(-flat))}
    for method in ("sigmoid", "isotonic"):
        cal = CalibratedStructuredSVM(model, method=method).fit(X_cal, Y_cal,
                                                                constraints=BIO)
        probs[method] = cal.calibrator_.predict_proba(flat)
    # the same without the constraints (plain Viterbi's tags)
    cal_plain = CalibratedStructuredSVM(model, method="isotonic").fit(X_cal, Y_cal)
    right_plain = np.concatenate([np.array(p) == np.array(y) for p, y in zip(plain, Y_te)])
    p_plain = np.concatenate(cal_plain.predict_proba(X_te))
    # whole sentences: the output's margin over the second best
    whole = CalibratedStructuredSVM(model, method="isotonic", level="output").fit(
        X_cal, Y_cal, constraints=BIO)
    p_whole = whole.predict_proba(X_te, constraints=BIO)
    right_whole = np.array([p == y for p, y in zip(valid, Y_te)])
    nbest, t_nbest = timed(model.predict_nbest, X_te, k=k, constraints=BIO)
    in_k = np.mean([any(y == cand for cand, _ in lst) for lst, y in zip(nbest, Y_te)])
    return dict(model=model, train=train, plain=plain, valid=valid, t_plain=t_plain,
                t_valid=t_valid, t_margins=t_margins, t_nbest=t_nbest, right=right,
                probs=probs, right_plain=right_plain, p_plain=p_plain, p_whole=p_whole,
                right_whole=right_whole, in_k=in_k,
                first=np.mean([p == y for p, y in zip(valid, Y_te)]))


def feature_strings(fm, X):
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist()
            for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_crfsuite(fm, X_tr, Y_tr, X_cal, Y_cal, X_te, Y_te):
    import sklearn_crfsuite

    F_tr, F_cal, F_te = (feature_strings(fm, X) for X in (X_tr, X_cal, X_te))
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100)
    _, train = timed(crf.fit, F_tr, Y_tr)
    pred, t_pred = timed(crf.predict, F_te)

    def confidence(F, P):
        marg = crf.predict_marginals(F)
        return np.array([m[t][tag] for m, p in zip(marg, P) for t, tag in enumerate(p)])

    p_te = confidence(F_te, pred)
    pred_cal = crf.predict(F_cal)
    p_cal = confidence(F_cal, pred_cal)
    right_cal = np.concatenate([np.array(p) == np.array(y) for p, y in zip(pred_cal, Y_cal)])
    right = np.concatenate([np.array(p) == np.array(y) for p, y in zip(pred, Y_te)])
    iso = MarginCalibrator("isotonic").fit(p_cal, right_cal)
    return dict(train=train, pred=pred, t_pred=t_pred, right=right,
                probs={"marginal probability": p_te,
                       "isotonic": iso.predict_proba(p_te)})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--held-out", type=int, default=1000,
                    help="last N training sentences held out for calibration")
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N sentences only (smoke tests)")
    ap.add_argument("--max-test", type=int, default=None,
                    help="test on the first N sentences only (smoke tests)")
    ap.add_argument("--k", type=int, default=5, help="outputs per sentence (n-best)")
    ap.add_argument("--no-crfsuite", action="store_true", help="structsvm only")
    ap.add_argument("--plot", default=None, help="write the reliability diagram here")
    add_output_options(ap, "confidence")
    args = ap.parse_args(argv)

    X, Y, X_te, Y_te = load_conll2000()
    X_tr, Y_tr = X[:-args.held_out], Y[:-args.held_out]
    X_cal, Y_cal = X[-args.held_out:], Y[-args.held_out:]
    if args.max_train:
        X_tr, Y_tr = X_tr[:args.max_train], Y_tr[:args.max_train]
    if args.max_test:
        X_te, Y_te = X_te[:args.max_test], Y_te[:args.max_test]
    n_tok = sum(map(len, X_te))
    print(f"train {len(X_tr)}, held out {len(X_cal)}, test {len(X_te)} sentences "
          f"({n_tok} tokens)", flush=True)

    s = run_structsvm(X_tr, Y_tr, X_cal, Y_cal, X_te, Y_te, args.k)
    print(f"structsvm trained in {s['train']:.1f} s", flush=True)
    c = None
    if not args.no_crfsuite:
        c = run_crfsuite(s["model"].feature_map_, X_tr, Y_tr, X_cal, Y_cal, X_te, Y_te)
        print(f"crfsuite trained in {c['train']:.1f} s", flush=True)

    f1 = {name: chunk_scores(Y_te, P) for name, P in
          (("plain", s["plain"]), ("valid", s["valid"]))}
    rows = ["| decoding | chunk F1 (correct / predicted chunks) | token acc. | tags "
            "breaking BIO | decode (tokens/s) |", "|---|---|---|---|---|"]

    def dec_row(name, P, sc, t):
        rows.append(f"| {name} | {sc['f1']:.5f} ({int(sc['n_correct']):,} / "
                    f"{int(sc['n_pred']):,}) | {100 * token_accuracy(Y_te, P):.2f}% | "
                    f"{bio_breaks(P)} | {n_tok / t:,.0f} |")

    dec_row("structsvm, Viterbi", s["plain"], f1["plain"], s["t_plain"])
    dec_row("structsvm, Viterbi under BIO constraints", s["valid"], f1["valid"],
            s["t_valid"])
    if c is not None:
        dec_row("sklearn-crfsuite", c["pred"], chunk_scores(Y_te, c["pred"]), c["t_pred"])
    delta = f1["valid"]["f1"] - f1["plain"]["f1"]

    cal = ["| per-token confidence | ECE (15 bins) | Brier score | mean confidence | "
           "accuracy |", "|---|---|---|---|---|"]

    def cal_row(name, p, right):
        cal.append(f"| {name} | {expected_calibration_error(p, right):.4f} | "
                   f"{brier(p, right):.4f} | {np.mean(p):.4f} | {np.mean(right):.4f} |")

    for name, p in s["probs"].items():
        cal_row(f"structsvm BIO-valid, {name}", p, s["right"])
    cal_row("structsvm Viterbi, isotonic", s["p_plain"], s["right_plain"])
    if c is not None:
        for name, p in c["probs"].items():
            cal_row(f"sklearn-crfsuite, {name}", p, c["right"])
    cal_row("structsvm BIO-valid, whole sentence (output margin), isotonic",
            s["p_whole"], s["right_whole"])

    extra = ["| call on the test set | time (s) | tokens/s |", "|---|---|---|"]
    for name, t in (("predict (Viterbi)", s["t_plain"]),
                    ("predict under BIO constraints", s["t_valid"]),
                    ("predict_margins under BIO constraints", s["t_margins"]),
                    (f"predict_nbest, k={args.k}, under BIO constraints", s["t_nbest"])):
        extra.append(f"| {name} | {t:.2f} | {n_tok / t:,.0f} |")

    ece_iso = expected_calibration_error(s["probs"]["isotonic"], s["right"])
    summary = (f"BIO-valid decoding changes chunk F1 by {delta:+.5f} "
               f"({f1['plain']['f1']:.5f} → {f1['valid']['f1']:.5f}); the isotonic "
               f"per-token confidence has ECE {ece_iso:.4f} on the test set; the true "
               f"chunking is the best output for {100 * s['first']:.1f}% of the test "
               f"sentences and among the {args.k} best for {100 * s['in_k']:.1f}%.")
    text = ("Decoding (the same structsvm model; trained on "
            f"{len(X_tr):,} sentences in {s['train']:.0f} s"
            + (f", sklearn-crfsuite in {c['train']:.0f} s" if c else "") + "):\n\n"
            + "\n".join(rows) + "\n\nConfidence of every predicted tag of the test set "
            "(calibrators fitted on the held-out sentences):\n\n" + "\n".join(cal)
            + "\n\nTime of each call on the test set (first call in the process, "
            "compilation included):\n\n" + "\n".join(extra) + "\n\n" + summary)
    print("\n" + text)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        from structsvm.plotting import plot_reliability_diagram

        curves = {f"structsvm, {n}": (p, s["right"]) for n, p in s["probs"].items()}
        if c is not None:
            curves["sklearn-crfsuite, marginal probability"] = (
                c["probs"]["marginal probability"], c["right"])
        ax = plot_reliability_diagram(curves, title="CoNLL-2000 test set, per token")
        ax.figure.set_size_inches(6.5, 5)
        ax.figure.tight_layout()
        ax.figure.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    if args.write:
        write_results(args.write, text, __file__, argv,
                      notes="ECE: expected calibration error over 15 equal-width "
                            "confidence bins.")
    return dict(delta_f1=delta, ece=ece_iso, f1=f1, in_k=s["in_k"])


if __name__ == "__main__":
    main()
