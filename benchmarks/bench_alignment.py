"""Sequence alignment: the default call vs Biopython's PairwiseAligner with BLOSUM62.

Data: simulated protein-like pairs (``structsvm.corpora.simulate_alignment_pairs`` at
its defaults: ancestors of 100-200 residues, each descendant 1 substitution per site
away, 4 % indel events per site and branch), ``--n-train`` training and ``--n-test``
held-out pairs from one seed; ``--seeds`` runs several such data sets. Synthetic
data: the gold alignment is known.

- structsvm: the default call ``structsvm.fit(X, Y, feature_map=AlignmentFeatures())``
  (decoder ``"needleman_wunsch"``, loss ``"alignment"``).
- peer: ``Bio.Align.PairwiseAligner(mode="global")`` with BLOSUM62 and the affine gap
  scores (open, extend, and whether end gaps are free) of a small grid chosen on the
  TRAINING pairs by their Q, the usual practice with a fixed substitution matrix.

Reported: Q (gold aligned pairs recovered) and precision (predicted aligned pairs that
are gold) on the test pairs; training time (structsvm's fit; the peer's grid search);
decoding time of all test pairs for both, measured alternately in the same run, the
median of ``--repeats``: structsvm's ``predict`` (aligned index pairs) and the
peer's ``aligner.align(s, t)[0]`` (its alignment objects; turning them into index
pairs is not timed).

Usage::

    python benchmarks/bench_alignment.py [--n-train 500] [--n-test 200] [--seeds 0 1 2]
        [--repeats 5] [--C C] [--markdown]
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

#: The peer's grid: gap open and extend scores (BLOSUM62 units), end gaps scored like
#: the others or free (EMBOSS needle's default).
OPEN = (-7.0, -9.0, -11.0, -13.0, -15.0)
EXTEND = (-0.5, -1.0, -2.0)
END = ("scored", "free")


def biopython_pairs(alignment):
    """The aligned index pairs (i, j) of a Biopython pairwise alignment."""
    blocks = alignment.aligned
    out = [np.c_[np.arange(a0, a1), np.arange(b0, b1)]
           for (a0, a1), (b0, b1) in zip(blocks[0], blocks[1])]
    return np.concatenate(out).astype(np.intp) if out else np.zeros((0, 2), np.intp)


def make_aligner(open_gap, extend_gap, end):
    from Bio import Align
    from Bio.Align import substitution_matrices

    aligner = Align.PairwiseAligner(
        mode="global", substitution_matrix=substitution_matrices.load("BLOSUM62"),
        open_gap_score=open_gap, extend_gap_score=extend_gap)
    if end == "free":
        aligner.end_gap_score = 0.0
    return aligner


def align_all(aligner, X):
    return [biopython_pairs(aligner.align(s, t)[0]) for s, t in X]


def tune_peer(X, Y, scores):
    """(best Q on the training pairs, (open, extend, end), seconds) over the grid."""
    t0 = time.perf_counter()
    best = None
    for params in itertools.product(OPEN, EXTEND, END):
        q = scores(Y, align_all(make_aligner(*params), X))["Q"]
        if best is None or q > best[0]:
            best = (q, params)
    return best[0], best[1], time.perf_counter() - t0


def run(n_train=300, n_test=200, seed=0, repeats=5, C=None):
    import structsvm
    from structsvm.corpora import simulate_alignment_pairs
    from structsvm.structures import AlignmentFeatures
    from structsvm.structures.alignment import alignment_scores

    X, Y = simulate_alignment_pairs(n_train + n_test, random_state=seed)
    Xtr, Ytr, Xte, Yte = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    identity = np.mean(np.concatenate([[s[i] == t[j] for i, j in y]
                                       for (s, t), y in zip(Xte, Yte)]))
    print(f"{n_train} training, {n_test} test pairs; {identity:.1%} of the gold aligned "
          "test residues are identical", flush=True)

    q_train, params, peer_train = tune_peer(Xtr, Ytr, alignment_scores)
    print(f"peer grid: best (open, extend, end gaps) = {params}, training Q "
          f"{q_train:.4f} ({peer_train:.1f} s)", flush=True)
    aligner = make_aligner(*params)

    kw = {} if C is None else {"C": C}
    t0 = time.perf_counter()
    model = structsvm.fit(Xtr, Ytr, feature_map=AlignmentFeatures(), **kw)
    fit_sec = time.perf_counter() - t0
    learner = model.learner_.name
    print(f"structsvm default call [{learner}]: {fit_sec:.1f} s, {model.n_iter_} "
          "iterations", flush=True)

    model.predict(Xte[:2])  # compiled loops loaded before timing
    times = {"structsvm": [], "biopython": []}
    preds = {}
    for _ in range(repeats):  # alternately, in this process
        t0 = time.perf_counter()
        preds["structsvm"] = model.predict(Xte)
        times["structsvm"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        found = [aligner.align(s, t)[0] for s, t in Xte]
        times["biopython"].append(time.perf_counter() - t0)
        preds["biopython"] = [biopython_pairs(a) for a in found]  # not timed
    rows = []
    for name, train_sec in (("structsvm", fit_sec), ("biopython", peer_train)):
        s = alignment_scores(Yte, preds[name])
        rows.append({"name": name, "Q": s["Q"], "precision": s["precision"],
                     "train_seconds": train_sec,
                     "decode_seconds": statistics.median(times[name])})
    rows[0]["label"] = f"structsvm default call [{learner}]"
    rows[1]["label"] = (f"Biopython PairwiseAligner, BLOSUM62, open {params[0]:g}, "
                        f"extend {params[1]:g}, end gaps {params[2]}")
    return {"rows": rows, "params": params, "identity": identity,
            "decode_ratio": rows[0]["decode_seconds"] / rows[1]["decode_seconds"],
            "q_gain": rows[0]["Q"] - rows[1]["Q"], "model": model}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0],
                    help="one data set (simulation seed) per value, run one after another")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--C", type=float, default=None)
    add_output_options(ap, "alignment")
    args = ap.parse_args(argv)
    runs = []
    for seed in args.seeds:
        print(f"seed {seed}")
        out = run(args.n_train, args.n_test, seed, args.repeats, args.C)
        print(f"\n{'system':84s} {'Q':>7s} {'prec.':>7s} {'train s':>8s} "
              f"{'decode s':>9s}")
        for r in out["rows"]:
            print(f"{r['label']:84s} {r['Q']:7.4f} {r['precision']:7.4f} "
                  f"{r['train_seconds']:8.2f} {r['decode_seconds']:9.3f}")
        print(f"Q gain {out['q_gain']:+.4f}; decoding time structsvm / Biopython "
              f"{out['decode_ratio']:.2f}x (median of {args.repeats})\n", flush=True)
        out["seed"] = seed
        runs.append(out)
    table = ["| seed | system | Q | precision | train time (s) | decode test pairs (s) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for o in runs:
        for r in o["rows"]:
            table.append(f"| {o['seed']} | {r['label']} | {r['Q']:.4f} | "
                         f"{r['precision']:.4f} | {r['train_seconds']:.1f} | "
                         f"{r['decode_seconds']:.3f} |")
    gains = [o["q_gain"] for o in runs]
    ratios = [o["decode_ratio"] for o in runs]
    summary = (f"{args.n_train} training and {args.n_test} test pairs per seed. Over "
               f"{len(runs)} seed(s): Q gain over Biopython mean {np.mean(gains):+.4f} "
               f"(smallest {min(gains):+.4f}); decoding time structsvm / Biopython, "
               f"median {statistics.median(ratios):.2f}x (largest {max(ratios):.2f}x), "
               f"each a median of {args.repeats} runs.")
    print(summary)
    if args.markdown or args.write:
        print("\n" + "\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table) + "\n\n" + summary, __file__, argv)
    return runs


if __name__ == "__main__":
    main()
