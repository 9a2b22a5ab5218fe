"""Small structured problems with every output enumerable: for the reference QP tests.

Each case gives raw training data, the estimator's plugins and, for the reference, the
enumeration of every output of every example with its loss, written here from the
definitions (itertools.product over tags, subsets of preference pairs, tree leaves)
and never through the library's decoders, losses or Problem.
"""
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from structsvm.structures import (MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.structures import HammingLoss
from structsvm.structures.ranking import SwappedPairsLoss
from structsvm.structures.taxonomy import TreeDistanceLoss

from reference_qp import (Constraints, pair_labellings, preference_pairs, random_tree,
                          sequence_outputs, tree_distance, tree_paths)


@dataclass
class Case:
    name: str
    X: list
    Y: list
    feature_map: Any
    decoder: str
    loss: Any
    candidates: Callable          # (i, x, y) -> iterable of (raw output, loss)
    slack: bool = True            # slack rescaling possible (enumerable outputs)
    extra: dict = field(default_factory=dict)

    def fit_params(self):
        return dict(feature_map=self.feature_map, decoder=self.decoder, loss=self.loss)


def multiclass_case(seed=0, n=14, d=3, k=3, loss="zero_one"):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    labels = ["a", "b", "c", "d", "e"][:k]
    y = np.arange(n) % k
    rng.shuffle(y)
    X = list(centers[y] + rng.normal(size=(n, d)))
    Y = [labels[j] for j in y]
    if loss == "zero_one":
        def delta(a, b):
            return float(a != b)
        est_loss = "zero_one"
    else:  # a callable, non-zero-one loss: classes on a line
        def delta(a, b):
            return abs(labels.index(a) - labels.index(b)) / 2.0
        est_loss = delta
    return Case(f"multiclass-{loss}", X, Y, MulticlassFeatures(bias=1.0), "argmax",
                est_loss, lambda i, x, yy: ((o, delta(yy, o)) for o in labels))


def taxonomy_case(seed=0, n=14, d=3, loss="zero_one"):
    rng = np.random.default_rng(100 + seed)
    children, root = random_tree(rng)
    paths = tree_paths(children, root)
    leaf_path = {p[-1]: p for p in paths}
    leaves = list(leaf_path)
    W = rng.normal(size=(len(leaves), d))
    X = rng.normal(size=(n, d))
    noisy = X @ W.T + rng.normal(size=(n, len(leaves)))
    Y = [leaves[j] for j in np.argmax(noisy, axis=1)]
    if loss == "zero_one":
        def delta(a, b):
            return float(a != b)
        est_loss = "zero_one"
    else:
        def delta(a, b):
            return tree_distance(leaf_path[a], leaf_path[b])
        est_loss = TreeDistanceLoss()
    return Case(f"taxonomy-{loss}", list(X), Y, TaxonomyFeatures(tree=children), "tree",
                est_loss, lambda i, x, yy: ((o, delta(yy, o)) for o in leaves),
                extra=dict(children=children, root=root, leaves=leaves, paths=paths))


def sequence_case(seed=0, n=8, d=3, tags=("A", "B", "C"), loss="hamming"):
    rng = np.random.default_rng(200 + seed)
    K = len(tags)
    E = rng.normal(size=(d, K))
    X, Y = [], []
    for i in range(n):
        T = int(rng.integers(1, 4))
        x = rng.normal(size=(T, d))
        s = x @ E + 0.8 * rng.normal(size=(T, K))
        X.append(x)
        Y.append([tags[j] for j in np.argmax(s, axis=1)])
    # every tag must occur in training (the map learns its tag set from Y)
    for j, t in enumerate(tags):
        if not any(t in y for y in Y):
            Y[j % n][0] = t
    normalize = loss == "hamming_normalized"

    def delta(a, b):
        d_ = sum(p != q for p, q in zip(a, b))
        return d_ / len(a) if normalize else float(d_)

    return Case(f"sequence-{loss}", X, Y, SequenceFeatures(), "viterbi",
                HammingLoss(normalize=normalize),
                lambda i, x, yy: ((o, delta(yy, o)) for o in sequence_outputs(tags, len(yy))),
                extra=dict(tags=list(tags)))


def ranking_case(seed=0, n=6, d=3, loss="swapped_pairs"):
    rng = np.random.default_rng(300 + seed)
    w = rng.normal(size=d)
    X, Y = [], []
    for i in range(n):
        m = int(rng.integers(3, 5))
        q = rng.normal(size=(m, d))
        rel = q @ w + 0.7 * rng.normal(size=m)
        grades = np.digitize(rel, np.quantile(rel, [0.34, 0.67]))  # 3 grades, ties allowed
        X.append(q)
        Y.append(grades.astype(float))
    normalize = loss == "swapped_pairs_normalized"

    def candidates(i, x, y):
        pairs = preference_pairs(y)
        for kept, n_swapped in pair_labellings(pairs):
            yield kept, (n_swapped / len(pairs) if normalize and pairs else float(n_swapped))

    return Case(f"ranking-{loss}", X, Y, RankingFeatures(), "sort",
                SwappedPairsLoss(normalize=normalize), candidates, slack=False)


CASE_BUILDERS = {
    "multiclass-zero_one": lambda: multiclass_case(loss="zero_one"),
    "multiclass-callable": lambda: multiclass_case(seed=1, k=4, loss="callable"),
    "taxonomy-zero_one": lambda: taxonomy_case(loss="zero_one"),
    "taxonomy-tree_distance": lambda: taxonomy_case(seed=1, loss="tree_distance"),
    "sequence-hamming": lambda: sequence_case(loss="hamming"),
    "sequence-hamming_normalized": lambda: sequence_case(seed=1,
                                                         loss="hamming_normalized"),
    "ranking-swapped_pairs": lambda: ranking_case(loss="swapped_pairs"),
    "ranking-swapped_pairs_normalized": lambda: ranking_case(
        seed=1, loss="swapped_pairs_normalized"),
}


@lru_cache(maxsize=None)
def get_case(name):
    return CASE_BUILDERS[name]()


@lru_cache(maxsize=None)
def constraints(name):
    """Every constraint of case ``name``, Φ from a map fitted on the case's data."""
    from sklearn.base import clone

    case = get_case(name)
    fm = clone(case.feature_map).fit(case.X, case.Y)
    return Constraints(fm.joint_feature, case.X, case.Y, case.candidates)


@lru_cache(maxsize=None)
def reference(name, C, rescaling):
    """(optimal objective, w*) of case ``name`` by the full primal QP."""
    return constraints(name).solve(C, rescaling)
