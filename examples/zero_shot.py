"""Zero-shot classification: predict classes never seen in training from their
attribute vectors alone.

With Φ(x, y) = φ(x) ⊗ Λ(y), where Λ(y) describes class y (attributes, or a TF vector
of its description, as in the lecture), the score w·Φ(x, y) = Λ(y)ᵀ W φ(x) is
defined for every class that has a description: W is learned from the seen classes
and transfers to the unseen ones through the shared attributes.

1. Synthetic "animals with attributes": 12 classes, each a binary vector over 10
   attributes; inputs are noisy mixtures of attribute prototypes. 3 classes are held
   out of training and predicted among all 12.
2. Mini newsgroups: a group is described by the prefixes of its dotted name
   ("rec", "rec.sport", "rec.sport.hockey"); one group per top-level branch is held
   out and must be recognised from the branch it belongs to.

Run: ``python examples/zero_shot.py``
"""
from __future__ import annotations

import sys

import numpy as np

import structsvm
from structsvm.structures import MulticlassFeatures


def make_attribute_data(n_classes=12, n_attributes=10, n_features=30, n_per_class=60,
                        noise=1.0, random_state=0):
    """Classes as distinct binary attribute vectors; x = Σ_active prototypes + noise."""
    rng = np.random.default_rng(random_state)
    attrs = set()
    while len(attrs) < n_classes:
        a = tuple(int(v) for v in rng.random(n_attributes) < 0.4)
        if sum(a) >= 2:
            attrs.add(a)
    attrs = {f"class{k}": np.array(a, dtype=float) for k, a in enumerate(sorted(attrs))}
    protos = rng.standard_normal((n_attributes, n_features))
    X, y = [], []
    for name, a in attrs.items():
        X.append(a @ protos + noise * rng.standard_normal((n_per_class, n_features)))
        y += [name] * n_per_class
    return np.vstack(X), np.array(y, dtype=object), attrs


def zero_shot_accuracy(X, y, attrs, unseen, C=1.0, random_state=0):
    """Train on the seen classes; accuracy on the unseen classes' samples.

    Returns ``(generalised, standard)``: all classes compete (chance 1/n_classes),
    or only the unseen ones do (chance 1/n_unseen).
    """
    rng = np.random.default_rng(random_state)
    seen = ~np.isin(y, list(unseen))
    test = np.flatnonzero(~seen)
    train = rng.permutation(np.flatnonzero(seen))
    model = structsvm.fit(X[train], list(y[train]),
                          feature_map=MulticlassFeatures(attributes=attrs, bias=1.0),
                          decoder="argmax", C=C)
    pred = np.array(model.predict(X[test]), dtype=object)
    fm = model.feature_map_
    scores = fm.batch_potentials(fm.encode_inputs(X[test]), model.coef_).scores
    cols = [list(fm.classes_).index(c) for c in unseen]
    restricted = np.array(unseen, dtype=object)[np.argmax(scores[:, cols], axis=1)]
    return float(np.mean(pred == y[test])), float(np.mean(restricted == y[test]))


def newsgroups_zero_shot(unseen=("rec.sport.hockey", "sci.space", "comp.graphics",
                                 "talk.politics.guns"), C=0.3):
    from sklearn.feature_extraction.text import TfidfVectorizer

    from structsvm.corpora import load_mini_newsgroups

    ng = load_mini_newsgroups()
    groups = sorted(set(ng.labels))
    prefixes = sorted({".".join(g.split(".")[:k]) for g in groups
                       for k in range(1, g.count(".") + 2)})
    col = {p: i for i, p in enumerate(prefixes)}
    attrs = {}
    for g in groups:
        a = np.zeros(len(prefixes))
        for k in range(1, g.count(".") + 2):
            a[col[".".join(g.split(".")[:k])]] = 1.0
        attrs[g] = a
    X = TfidfVectorizer(sublinear_tf=True, min_df=2, max_features=20000).fit_transform(ng.texts)
    y = np.array(ng.labels, dtype=object)
    return zero_shot_accuracy(X, y, attrs, unseen, C=C)


def main(argv=None):
    X, y, attrs = make_attribute_data()
    unseen = ("class3", "class7", "class10")
    gen, std = zero_shot_accuracy(X, y, attrs, unseen)
    print(f"synthetic attributes, samples of {len(unseen)} unseen classes: accuracy "
          f"{gen:.3f} among all {len(attrs)} classes (chance {1 / len(attrs):.3f}), "
          f"{std:.3f} among the unseen ones (chance {1 / len(unseen):.3f})")
    try:
        gen, std = newsgroups_zero_shot()
    except structsvm.corpora.DataNotFoundError as exc:
        print(f"mini newsgroups skipped: {exc}")
        return
    print(f"mini newsgroups, name-prefix attributes, 4 unseen groups: accuracy {gen:.3f} "
          f"among all 20 groups (chance 0.050), {std:.3f} among the unseen ones "
          f"(chance 0.250)")


if __name__ == "__main__":
    main(sys.argv[1:])
