"""Motif finding with a latent structural SVM (Yu & Joachims 2009, Sec. 5.2).

A DNA sequence is positive when it carries a motif, a short word of ``width`` bases
drawn from a position weight matrix, at an unknown position; negatives do not carry
it. The position is the hidden variable h of the output (y, h):

    Φ(x, (+1, h)) = (one-hot bases of x[h : h + width], 1),   Φ(x, (−1, ·)) = 0,

so w holds a position weight matrix and a bias, and x is called positive when its
best window scores above zero. CCCP finds a local optimum that depends on the first
positions: started where the most enriched k-mer of the positives occurs (a given
h, as motif finders seed their search; the run of lowest objective over the k-mer's
places in the window), it finds where the motif is and classifies
better than a linear SVM on the sequence's k-mer counts, which cannot tell a motif's
k-mers from the same k-mers anywhere else; started from random positions (the best
of a few restarts, by objective) it usually settles on a window of noise.

This file is a module too: ``MotifStructure`` is a :class:`structsvm.Structure`
(importable, so a model saves and loads, and worker processes of ``n_jobs`` find it).

Usage::

    python examples/motif_finding.py [--n-train 400] [--n-test 400] [--restarts 3]
        [--n-jobs 2]
"""
import argparse
import time

import numpy as np

import structsvm

BASES = "ACGT"


# --8<-- [start:structure]
class MotifStructure(structsvm.Structure):
    """y = +1: x holds the motif, starting at h; y = -1: it does not.

    x is an int array of bases (0..3); w is a position weight matrix of
    ``width`` x 4 scores, then a bias.
    """

    latent = True

    def __init__(self, width=10):
        self.width = width

    @property
    def n_features(self):
        return 4 * self.width + 1

    def window_scores(self, x, w):
        """Score of the window at every start h: Σ_j PWM[j, x[h + j]]."""
        pwm = w[:-1].reshape(self.width, 4)
        starts = np.arange(len(x) - self.width + 1)[:, None]
        return pwm[np.arange(self.width), x[starts + np.arange(self.width)]].sum(axis=1)

    def joint_feature(self, x, yh):
        y, h = yh
        phi = np.zeros(self.n_features)
        if y == 1:
            phi[4 * np.arange(self.width) + x[h:h + self.width]] = 1.0
            phi[-1] = 1.0
        return phi

    def latent_argmax(self, x, y, w):
        # the best start for a positive; a negative has no motif (h is unused)
        return int(np.argmax(self.window_scores(x, w))) if y == 1 else 0

    def argmax(self, x, w):
        h = self.latent_argmax(x, 1, w)
        best = self.window_scores(x, w)[h] + w[-1]
        return (1, h) if best > 0 else (-1, 0)

    def loss_augmented_argmax(self, x, y, w):
        # zero-one loss on y: the wrong label gains 1
        h = self.latent_argmax(x, 1, w)
        positive = self.window_scores(x, w)[h] + w[-1] + (y != 1)
        negative = 0.0 + (y != -1)
        return (1, h) if positive > negative else (-1, 0)

    def outputs(self, x):
        # every output, for structsvm.testing.check_structure on short sequences
        return [(-1, 0)] + [(1, h) for h in range(len(x) - self.width + 1)]
# --8<-- [end:structure]


def simulate(n, length=150, width=10, conserved=0.9, seed=0, motif=None):
    """``n`` sequences of ``length`` uniform random bases, half of them (y = +1)
    with a motif planted at a uniform random start: each of its ``width`` bases is
    the consensus base with probability ``conserved``, else another base.

    Returns
    -------
    X : list of ndarray of int
    y : ndarray of {-1, +1}
    starts : ndarray of int
        The planted start (-1 for negatives).
    motif : ndarray of int
        The consensus.
    """
    rng = np.random.default_rng(seed)
    if motif is None:
        motif = rng.integers(4, size=width)
    X, y, starts = [], [], []
    for i in range(n):
        x = rng.integers(4, size=length)
        label = 1 if i % 2 == 0 else -1
        start = -1
        if label == 1:
            start = int(rng.integers(length - width + 1))
            word = motif.copy()
            mutate = rng.random(width) > conserved
            word[mutate] = (word[mutate] + rng.integers(1, 4, size=mutate.sum())) % 4
            x[start:start + width] = word
        X.append(x)
        y.append(label)
        starts.append(start)
    return X, np.array(y), np.array(starts), motif


def kmer_counts(X, k):
    """The counts of every k-mer of each sequence (4^k columns)."""
    out = np.zeros((len(X), 4 ** k))
    powers = 4 ** np.arange(k)[::-1]
    for i, x in enumerate(X):
        codes = np.lib.stride_tricks.sliding_window_view(x, k) @ powers
        np.add.at(out[i], codes, 1.0)
    return out


def seed_starts(X, y, width, k=6, lead=None):
    """First motif positions from the most enriched k-mer (as motif finders seed
    their search): the k-mer found in most more positive than negative sequences;
    each positive's start is ``lead`` bases before its best match (fewest
    mismatches, the first on ties; ``lead`` centres the k-mer in the window by
    default), a negative's 0."""
    powers = 4 ** np.arange(k)[::-1]
    seen = np.zeros((2, 4 ** k))
    for x, label in zip(X, y):
        codes = np.unique(np.lib.stride_tricks.sliding_window_view(x, k) @ powers)
        seen[int(label == 1), codes] += 1
    best = int(np.argmax(seen[1] - seen[0]))
    word = (best // powers) % 4
    lead = (width - k) // 2 if lead is None else lead
    H = []
    for x, label in zip(X, y):
        if label != 1:
            H.append(0)
            continue
        windows = np.lib.stride_tricks.sliding_window_view(x, k)
        mismatches = (windows != word).sum(axis=1)
        pos = int(np.argmin(mismatches)) - lead
        H.append(int(np.clip(pos, 0, len(x) - width)))
    return H


def fit_latent(X, y, width, C, init="seed", restarts=1, n_jobs=None, k=6):
    """The model of the lowest objective of CCCP runs: from the enriched-k-mer
    starts with the k-mer at each place in the window (``init="seed"``: where the
    k-mer sits in the motif is not known, and a window shifted by a base is a local
    optimum of its own), or from ``restarts`` random starts."""
    best = None
    if init == "seed":
        for lead in range(width - k + 1):
            model = structsvm.fit(X, list(y), feature_map=MotifStructure(width), C=C,
                                  learner=structsvm.learners.CCCP(
                                      init=seed_starts(X, y, width, k, lead)),
                                  n_jobs=n_jobs)
            if best is None or model.objective_ < best.objective_:
                best = model
        return best
    for seed in range(restarts):
        model = structsvm.fit(X, list(y), feature_map=MotifStructure(width), C=C,
                              learner=structsvm.learners.CCCP(init="random"),
                              random_state=seed, n_jobs=n_jobs)
        if best is None or model.objective_ < best.objective_:
            best = model
    return best


def located(model, X, starts, width):
    """Share of the positive sequences whose predicted window overlaps the planted
    motif by more than half its width, and the share found at the exact start."""
    pos = np.flatnonzero(starts >= 0)
    s = model.feature_map_.user_structure
    h = np.array([s.latent_argmax(X[i], 1, model.coef_) for i in pos])
    off = np.abs(h - starts[pos])
    return float(np.mean(off < width / 2)), float(np.mean(off == 0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train", type=int, default=400)
    ap.add_argument("--n-test", type=int, default=400)
    ap.add_argument("--length", type=int, default=150)
    ap.add_argument("--width", type=int, default=10)
    ap.add_argument("--conserved", type=float, default=0.9)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--k", type=int, nargs="*", default=[3, 4, 5])
    ap.add_argument("--n-jobs", type=int, default=None)
    args = ap.parse_args(argv)
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    X, y, starts, motif = simulate(args.n_train, args.length, args.width,
                                   args.conserved, seed=0)
    Xt, yt, starts_t, _ = simulate(args.n_test, args.length, args.width,
                                   args.conserved, seed=1, motif=motif)
    rows = []
    for init in ("seed", "random"):
        t0 = time.perf_counter()
        model = fit_latent(X, y, args.width, args.C, init, args.restarts, args.n_jobs)
        took = time.perf_counter() - t0
        acc = float(np.mean(np.array(model.predict(Xt)) == yt))
        found, exact = located(model, Xt, starts_t, args.width)
        how = f"enriched-k-mer starts, best of {args.width - 5} placements" \
            if init == "seed" else f"best of {args.restarts} random starts"
        rows.append((f"latent SSVM (CCCP, {how})", acc, took,
                     f"{model.n_iter_} rounds, objective {model.objective_:.4g}; motif "
                     f"found in {100 * found:.1f}% of positives ({100 * exact:.1f}% at "
                     "the exact start)", found, model))
    model, found, exact = rows[0][5], rows[0][4], located(rows[0][5], Xt, starts_t,
                                                          args.width)[1]
    rows = [r[:4] for r in rows]
    for k in args.k:
        F, Ft = kmer_counts(X, k), kmer_counts(Xt, k)
        t0 = time.perf_counter()
        svc = GridSearchCV(LinearSVC(), {"C": [0.001, 0.01, 0.1, 1.0]}, cv=3).fit(F, y)
        rows.append((f"LinearSVC on {k}-mer counts", float(svc.score(Ft, yt)),
                     time.perf_counter() - t0, f"C={svc.best_params_['C']} (3-fold CV)"))
    for name, a, t, note in rows:
        print(f"{name:<30} test accuracy {100 * a:5.1f}%  {t:6.1f}s  {note}")
    consensus = "".join(BASES[b] for b in motif)
    pwm = model.coef_[:-1].reshape(args.width, 4)
    learned = "".join(BASES[b] for b in pwm.argmax(axis=1))
    print(f"planted consensus {consensus}; learned {learned}")
    return {"rows": rows, "found": found, "exact": exact, "model": model,
            "consensus": consensus, "learned": learned}


if __name__ == "__main__":
    main()
