"""Save/load through the .npz model file for every feature map: same weights, same
predictions, on inputs the model was not trained on (so the loaded map must encode
new data exactly as the fitted one did)."""
import numpy as np
import pytest

import structsvm
from nltk import Tree

from structsvm.structures import (GrammarFeatures,
    GraphFeatures,
    MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)


def _multiclass(rng, attributes=False):
    X = list(rng.normal(size=(30, 4)))
    Y = [["a", "b", "c"][int(np.argmax(x[:3]))] for x in X]
    fm = MulticlassFeatures(bias=1.0)
    if attributes:
        fm = MulticlassFeatures(attributes={"a": [1.0, 0.0], "b": [0.0, 1.0],
                                            "c": [1.0, 1.0], "z": [2.0, -1.0]})
    return fm, "argmax", X, Y, list(rng.normal(size=(10, 4)))


def _taxonomy(rng):
    tree = {"animal": ["cat", "dog"], "plant": ["oak", "fern"], "root": ["animal", "plant"]}
    leaves = ["cat", "dog", "oak", "fern"]
    X = list(rng.normal(size=(30, 4)))
    Y = [leaves[int(np.argmax(x))] for x in X]
    return TaxonomyFeatures(tree=tree), "tree", X, Y, list(rng.normal(size=(10, 4)))


def _sequence_tokens(rng):
    words = {"D": ["the", "a"], "N": ["dog", "cat", "Fido"], "V": ["runs", "sat"]}
    X, Y = [], []
    for _ in range(20):
        tags = ["D", "N", "V"][: int(rng.integers(1, 4))]
        X.append([words[t][int(rng.integers(len(words[t])))] for t in tags])
        Y.append(tags)
    test = [["the", "cat", "runs"], ["a", "Rex", "sat"], ["dog"]]  # "Rex" unseen
    return SequenceFeatures(features="pos"), "viterbi", X, Y, test


def _sequence_matrices(rng):
    X = [rng.normal(size=(int(rng.integers(1, 5)), 3)) for _ in range(20)]
    Y = [["A" if r[0] > 0 else "B" for r in x] for x in X]
    test = [rng.normal(size=(int(rng.integers(1, 5)), 3)) for _ in range(5)]
    return SequenceFeatures(), "viterbi", X, Y, test


def _ranking(rng):
    w = rng.normal(size=3)
    X = [rng.normal(size=(int(rng.integers(2, 6)), 3)) for _ in range(10)]
    Y = [np.round(q @ w) for q in X]
    test = [rng.normal(size=(int(rng.integers(2, 6)), 3)) for _ in range(5)]
    return RankingFeatures(), "sort", X, Y, test


def _grammar(rng, tagged):
    trees = ["(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
             "(S (NP (DT a) (JJ big) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it)))))",
             "(S (NP (NNP Fido)) (VP (VBZ runs) (ADVP (RB fast))))",
             "(S (NP (PRP it)) (VP (VBD ran) (NP (DT the) (NN race))))",
             "(NP (DT the) (JJ old) (NN cat))"]
    Y = [Tree.fromstring(t) for t in trees]
    X = [t.pos() if tagged else t.leaves() for t in Y]
    test = [["the", "cat", "runs", "fast"], ["Rex", "sat"], ["a", "dog"], ["it"]]
    if tagged:
        test = [list(zip(x, t)) for x, t in zip(test, [["DT", "NN", "VBZ", "RB"],
                                                        ["NNP", "VBD"], ["DT", "NN"],
                                                        ["PRP"]])]
    return GrammarFeatures(markov=1), "cky", X, Y, test


def _graph(rng):
    def graph(n):
        u = rng.integers(0, n, size=2 * n)
        v = (u + rng.integers(1, n, size=2 * n)) % n
        near = np.stack([u, v], axis=1)
        chain = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
        return (rng.normal(size=(n, 3)), {"chain": chain, "near": near},
                {"near": rng.normal(size=(2 * n, 2))})

    X = [graph(int(rng.integers(3, 7))) for _ in range(12)]
    Y = [np.where(x[0][:, 0] > 0, "pos", np.where(x[0][:, 1] > 0, "mid", "neg"))
         for x in X]
    test = [graph(int(rng.integers(3, 7))) for _ in range(4)]
    return GraphFeatures(bias=1.5, directed=("chain",)), "max_product", X, Y, test


def _dependency(rng):
    from structsvm.structures import DependencyFeatures

    X = [[("the", "DT"), ("dog", "NN"), ("barks", "VBZ")], [("a", "DT"), ("cat", "NN"),
                                                          ("sat", "VBD"), (".", ".")],
         [("Fido", "NNP"), ("runs", "VBZ"), ("fast", "RB")]] * 4
    Y = [[2, 3, 0], [2, 3, 0, 3], [2, 0, 2]] * 4
    test = [[("the", "DT"), ("cat", "NN"), ("runs", "VBZ")], [("Rex", "NNP"),
                                                             ("sleeps", "VBZ")]]
    return DependencyFeatures(n_hash=2 ** 14), "eisner", X, Y, test


MAPS = {"multiclass": _multiclass,
        "multiclass-attributes": lambda rng: _multiclass(rng, attributes=True),
        "taxonomy": _taxonomy, "sequence-tokens": _sequence_tokens,
        "sequence-matrices": _sequence_matrices, "ranking": _ranking,
        "grammar-words": lambda rng: _grammar(rng, tagged=False),
        "grammar-tagged": lambda rng: _grammar(rng, tagged=True), "graph": _graph,
        "dependency": _dependency}


@pytest.mark.parametrize("name", list(MAPS))
def test_save_load_round_trip_predicts_the_same(name, tmp_path):
    rng = np.random.default_rng(0)
    fm, decoder, X, Y, X_new = MAPS[name](rng)
    model = structsvm.fit(X, Y, feature_map=fm, decoder=decoder, C=1.0, max_iter=50)
    path = tmp_path / "model.npz"
    model.save(path)
    # a plain npz archive: readable without pickle
    with np.load(path, allow_pickle=False) as archive:
        assert len(archive.files) > 0
    loaded = structsvm.load(path)
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    for data in (X, X_new):
        before, after = model.predict(data), loaded.predict(data)
        assert len(before) == len(after) == len(data)
        for a, b in zip(before, after):
            if isinstance(a, Tree):            # parse trees: nested lists, compare as trees
                assert a == b
                continue
            np.testing.assert_array_equal(np.asarray(a, dtype=object),
                                          np.asarray(b, dtype=object))
    # the loaded map encodes data exactly as the fitted one: same Φ(x, y) for new x
    # (a ranking's predicted ordering is read as grades here: any valid target will do)
    for x, y in zip(X_new + X[:3], model.predict(X_new) + Y[:3]):
        np.testing.assert_allclose(loaded.joint_feature(x, y), model.joint_feature(x, y))
