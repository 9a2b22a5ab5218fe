"""Flat multiclass vs taxonomy SVM on UIUC question classification and mini newsgroups.

The taxonomy model scores a class as the sum of its path's node scores,
w·Φ(x, y) = Σ_{v ∈ path(y)} w_vᵀ φ(x), so classes under one parent share weights and
mistakes tend to stay close in the tree. Both models see the same TF-IDF features;
we report accuracy and the mean tree distance of the test predictions (0 when
right, 2 for a sibling, 4 for a class under another coarse label in QC).

Run: ``python examples/taxonomy.py [--C 1] [--max-train N]``
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer

import structsvm
from structsvm.structures import MulticlassFeatures, TaxonomyFeatures
from structsvm.structures.taxonomy import tree_distance


def compare(X_train, Y_train, X_test, Y_test, C, sep=None, tol=1e-2):
    """Fit the flat and the taxonomy model; return {name: (accuracy, tree distance, s)}."""
    out = {}
    for name, fm, loss in [("flat multiclass", MulticlassFeatures(), "zero_one"),
                           ("taxonomy, zero-one loss", TaxonomyFeatures(sep=sep), "zero_one"),
                           ("taxonomy, tree-distance loss", TaxonomyFeatures(sep=sep),
                            "tree_distance")]:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = structsvm.fit(X_train, Y_train, feature_map=fm, loss=loss, C=C, tol=tol)
        pred = model.predict(X_test)
        acc = float(np.mean([p == y for p, y in zip(pred, Y_test)]))
        out[name] = (acc, tree_distance(Y_test, pred, sep=sep), time.perf_counter() - t0)
    return out


def report(title, results):
    print(title)
    for name, (acc, dist, secs) in results.items():
        print(f"  {name:30s} accuracy {acc:.4f}   mean tree distance {dist:.4f}   "
              f"({secs:.1f} s)")


def qc(C, max_train=None):
    from structsvm.corpora import load_qc

    data = load_qc()
    n = len(data.train_questions) if max_train is None else max_train
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    Xtr = vec.fit_transform(data.train_questions[:n])
    Xte = vec.transform(data.test_questions)
    return compare(Xtr, data.train_labels[:n], Xte, data.test_labels, C)


def newsgroups(C, max_train=None, random_state=0):
    from structsvm.corpora import load_mini_newsgroups

    data = load_mini_newsgroups()
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(len(data.texts))
    cut = int(0.7 * len(perm))
    train, test = perm[:cut][:max_train], perm[cut:]
    vec = TfidfVectorizer(sublinear_tf=True, min_df=2, max_features=20000)
    Xtr = vec.fit_transform([data.texts[i] for i in train])
    Xte = vec.transform([data.texts[i] for i in test])
    return compare(Xtr, [data.labels[i] for i in train], Xte,
                   [data.labels[i] for i in test], C, sep=".")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--max-train", type=int, default=None)
    args = ap.parse_args(argv)
    res = qc(args.C, args.max_train)
    report(f"UIUC QC (50 fine labels under 6 coarse ones), C={args.C:g}:", res)
    res2 = newsgroups(args.C, args.max_train)
    report(f"mini newsgroups (20 groups, dotted-name tree), 70/30 split, C={args.C:g}:", res2)
    return res, res2


if __name__ == "__main__":
    main()
