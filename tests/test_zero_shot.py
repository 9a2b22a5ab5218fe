"""Zero-shot: a class never seen in training is predicted from its attributes."""
import numpy as np

import structsvm
from structsvm.features import MulticlassFeatures


def attribute_data(rng, attrs, n_per_class, n_features=15, noise=0.5):
    protos = rng.standard_normal((len(next(iter(attrs.values()))), n_features))
    X, y = [], []
    for name, a in attrs.items():
        X.append(np.asarray(a, float) @ protos
                 + noise * rng.standard_normal((n_per_class, n_features)))
        y += [name] * n_per_class
    return np.vstack(X), np.array(y, dtype=object)


def test_unseen_class_is_predicted_from_its_attributes_above_chance():
    rng = np.random.default_rng(0)
    # 8 classes over 6 binary attributes; "zebra" combines attributes seen elsewhere
    attrs = {"horse": [1, 1, 0, 0, 0, 0], "tiger": [0, 0, 1, 1, 0, 0],
             "whale": [0, 0, 0, 0, 1, 1], "cow": [1, 0, 0, 0, 1, 0],
             "cat": [0, 1, 1, 0, 0, 0], "seal": [0, 0, 0, 1, 0, 1],
             "panda": [1, 0, 0, 1, 0, 0], "zebra": [1, 1, 1, 1, 0, 0]}
    X, y = attribute_data(rng, attrs, 40)
    seen = y != "zebra"
    model = structsvm.fit(X[seen], list(y[seen]),
                          feature_map=MulticlassFeatures(attributes=attrs, bias=1.0),
                          decoder="argmax", C=1.0)
    assert "zebra" in list(model.feature_map_.classes_)
    pred = np.array(model.predict(X[~seen]), dtype=object)
    acc = np.mean(pred == "zebra")
    chance = 1 / len(attrs)
    assert acc > 3 * chance, acc
    # seen classes are still recognised
    assert np.mean(np.array(model.predict(X[seen]), dtype=object) == y[seen]) > 0.8
