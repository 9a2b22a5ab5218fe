"""Learning to align protein-like sequences, against a fixed substitution matrix.

Simulated pairs (``structsvm.corpora.simulate_alignment_pairs``: two descendants of a
random ancestor, 1 substitution per site on each branch, affine indels; synthetic,
so the gold alignment is known) or pairs read from a file in the aligned-pairs text
format (``--train FILE --test FILE``). The default call

    structsvm.fit(X, Y, feature_map=AlignmentFeatures())

learns a substitution score for every pair of symbols and affine gap costs (Joachims,
Galor & Elber 2005). It is compared with fixed scorings decoded by the same
Needleman-Wunsch program: identity (match +1, mismatch -1) and, when Biopython is
installed, BLOSUM62, each with the gap costs of a small grid that score best on the
training pairs. Printed: Q (share of the gold aligned pairs recovered) and precision
(share of the predicted aligned pairs that are gold) on the held-out pairs, and the
learnt scores of a few symbol pairs.

Run: ``python examples/alignment.py [--n-train 150] [--n-test 100] [--seed 0]``
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import structsvm
from structsvm.corpora import read_alignment_pairs, simulate_alignment_pairs
from structsvm.structures import AlignmentFeatures
from structsvm.structures.alignment.needleman_wunsch import needleman_wunsch
from structsvm.structures.alignment import alignment_scores

#: Gap costs tried for a fixed substitution matrix, in units of its scores.
GAP_GRID = {"open": (-2.0, -4.0, -7.0, -10.0, -13.0), "extend": (-0.5, -1.0, -2.0)}


def fixed_weights(fm, substitution, gap_open, gap_extend):
    """The weight vector of ``fm`` that scores alignments with a fixed matrix.

    ``substitution(a, b)`` scores the aligned symbols a and b; gap runs cost
    ``gap_open`` for their first position and ``gap_extend`` for every further one,
    end gaps included; context features weigh 0.
    """
    w = np.zeros(fm.n_features_)
    for k, name in enumerate(fm.feature_names_):
        kind, _, rest = name.partition(":")
        if kind == "sub":
            a, b = rest.split("-", 1)
            w[k] = substitution(a, b)
        elif rest == "open":
            w[k] = gap_open
        elif rest == "extend":
            w[k] = gap_extend
    return w


def decode(fm, X, w):
    """Needleman-Wunsch alignments of the pairs X under the weights w."""
    return needleman_wunsch(fm.batch_potentials(fm.encode_inputs(X), w))


def tuned_fixed(fm, substitution, X, Y):
    """(weights, (open, extend)) of the grid point with the best Q on (X, Y)."""
    best = None
    for o, e in itertools.product(GAP_GRID["open"], GAP_GRID["extend"]):
        w = fixed_weights(fm, substitution, o, e)
        q = alignment_scores(Y, decode(fm, X, w))["Q"]
        if best is None or q > best[0]:
            best = (q, w, (o, e))
    return best[1], best[2]


def fixed_scorings():
    """Name -> substitution(a, b) of the fixed matrices to compare with."""
    out = {"identity (+1/-1)": lambda a, b: 1.0 if a == b else -1.0}
    try:
        from Bio.Align import substitution_matrices
    except ImportError:
        return out
    blosum = substitution_matrices.load("BLOSUM62")
    letters = set(blosum.alphabet)
    out["BLOSUM62"] = lambda a, b: float(blosum[a, b]) if a in letters and b in letters \
        else -4.0
    return out


def run(Xtr, Ytr, Xte, Yte):
    """Rows (name, Q, precision, seconds) of the learnt model and the fixed scorings."""
    t0 = time.perf_counter()
    model = structsvm.fit(Xtr, Ytr, feature_map=AlignmentFeatures())
    sec = time.perf_counter() - t0
    s = alignment_scores(Yte, model.predict(Xte))
    rows = [(f"structsvm default call [{model.learner_.name}]", s["Q"], s["precision"],
             sec)]
    fm = model.feature_map_
    for name, sub in fixed_scorings().items():
        t0 = time.perf_counter()
        w, (o, e) = tuned_fixed(fm, sub, Xtr, Ytr)
        sec = time.perf_counter() - t0
        s = alignment_scores(Yte, decode(fm, Xte, w))
        rows.append((f"{name}, gaps {o:g}/{e:g} tuned", s["Q"], s["precision"], sec))
    return rows, model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=150, help="simulated training pairs")
    ap.add_argument("--n-test", type=int, default=100, help="simulated test pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train", default=None, help="aligned pairs to train on (a file)")
    ap.add_argument("--test", default=None, help="aligned pairs to test on (a file)")
    args = ap.parse_args(argv)
    if (args.train is None) != (args.test is None):
        ap.error("--train and --test go together")
    if args.train is not None:
        Xtr, Ytr = read_alignment_pairs(args.train, require_alignment=True)
        Xte, Yte = read_alignment_pairs(args.test, require_alignment=True)
    else:
        X, Y = simulate_alignment_pairs(args.n_train + args.n_test, random_state=args.seed)
        Xtr, Ytr = X[:args.n_train], Y[:args.n_train]
        Xte, Yte = X[args.n_train:], Y[args.n_train:]
    print(f"{len(Xtr)} training pairs, {len(Xte)} test pairs "
          f"({sum(len(y) for y in Yte)} gold aligned pairs)")
    rows, model = run(Xtr, Ytr, Xte, Yte)
    print(f"{'':48s} {'Q':>7s} {'prec.':>7s} {'seconds':>8s}")
    for name, q, p, sec in rows:
        print(f"{name:48s} {q:7.4f} {p:7.4f} {sec:8.1f}")
    index = {n: k for k, n in enumerate(model.feature_map_.feature_names_)}
    shown = []
    for a, b in ("IL", "IV", "IW", "DE", "DW", "WW"):  # symmetric pairs: either order
        name = next((f"sub:{u}-{v}" for u, v in ((a, b), (b, a))
                     if f"sub:{u}-{v}" in index), None)
        if name is not None:
            shown.append((f"{a}-{b}", index[name]))
    shown += [(n, index[n]) for n in ("gap:open", "gap:extend", "end_gap:open",
                                      "end_gap:extend") if n in index]
    print("learnt scores: " + ", ".join(f"{n} {model.coef_[k]:+.3f}" for n, k in shown))
    return {"rows": rows, "model": model}


if __name__ == "__main__":
    main()
