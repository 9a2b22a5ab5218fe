"""check_structure: every built-in feature map passes it, a user structure passes it,
and a broken structure fails it with a message naming the broken method."""
import networkx as nx  # noqa: F401  (graph inputs need networkx installed)
import numpy as np
import pytest
from nltk import Tree

import structsvm
from structsvm.registry import registered
from structsvm.structures import (AlignmentFeatures,
    BinaryFeatures,
    GraphFeatures,
    GrammarFeatures,
    MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.testing import check_structure
from structure_examples import HashedTagger, MultiLabel, multilabel_data, tagger_data


def _multiclass(rng):
    X = list(rng.normal(size=(8, 3)))
    return MulticlassFeatures(), X, [["a", "b", "c"][int(np.argmax(x))] for x in X]


def _attributes(rng):
    fm, X, Y = _multiclass(rng)
    return MulticlassFeatures(attributes={"a": [1.0, 0.0], "b": [0.0, 1.0],
                                          "c": [1.0, 1.0]}), X, Y


def _taxonomy(rng):
    tree = {"animal": ["cat", "dog"], "plant": ["oak", "fern"],
            "root": ["animal", "plant"]}
    X = list(rng.normal(size=(8, 4)))
    return TaxonomyFeatures(tree=tree), X, [["cat", "dog", "oak", "fern"][
        int(np.argmax(x))] for x in X]


def _sequence(rng):
    X = [rng.normal(size=(int(rng.integers(1, 4)), 3)) for _ in range(6)]
    return SequenceFeatures(), X, [["A" if r[0] > 0 else "B" for r in x] for x in X]


def _ranking(rng):
    w = rng.normal(size=3)
    X = [rng.normal(size=(int(rng.integers(2, 5)), 3)) for _ in range(5)]
    return RankingFeatures(), X, [np.round(q @ w) for q in X]


def _grammar(rng):
    Y = [Tree.fromstring(s) for s in (
        "(S (NP (DT the) (NN dog)) (VP (VB runs)))",
        "(S (NP (DT a) (NN cat)) (VP (VB sees) (NP (DT the) (NN dog))))",
        "(S (NP (NN dog)) (VP (VB sees) (NP (DT a) (NN cat))))")]
    return GrammarFeatures(), [t.leaves() for t in Y], Y


def _graph(rng):
    X, Y = [], []
    for _ in range(5):
        m = int(rng.integers(1, 4))
        edges = np.array([(i, i + 1) for i in range(m - 1)], dtype=np.int64).reshape(-1, 2)
        X.append((rng.normal(size=(m, 2)), {"chain": edges}))
        Y.append(np.array(["ab"[j] for j in rng.integers(0, 2, size=m)]))
    return GraphFeatures(), X, Y


def _alignment(rng):
    X = [("ACD", "AD"), ("CAD", "CCA"), ("DA", "DCA")]
    return AlignmentFeatures(), X, [[(0, 0), (2, 1)], [(0, 0), (1, 2)], [(0, 0), (1, 2)]]


def _dependency(rng):
    from structsvm.structures import DependencyFeatures

    X = [[("John", "NNP"), ("sleeps", "VBZ")], [("Dogs", "NNS"), ("bark", "VBP"),
                                                 ("loudly", "RB")], [("Yes", "UH")]]
    return DependencyFeatures(n_hash=2 ** 10), X, [[2, 0], [2, 0, 2], [0]]


def _binary(rng):
    X = list(rng.normal(size=(8, 3)))
    return BinaryFeatures(), X, ["spam" if x[0] > 0 else "ham" for x in X]


MAPS = {"MulticlassFeatures": _multiclass, "MulticlassFeatures-attributes": _attributes,
        "TaxonomyFeatures": _taxonomy, "SequenceFeatures": _sequence,
        "RankingFeatures": _ranking, "GrammarFeatures": _grammar,
        "GraphFeatures": _graph, "AlignmentFeatures": _alignment,
        "DependencyFeatures": _dependency, "BinaryFeatures": _binary}


def test_every_registered_map_is_checked():
    maps = {cls.__name__ for name, cls in registered("structure").items()
            if name != "user"}   # a user's Structure: test_a_user_structure_passes
    assert maps <= {name.split("-")[0] for name in MAPS}, maps


@pytest.mark.parametrize("name", list(MAPS))
def test_builtin_maps_pass(name):
    fm, X, Y = MAPS[name](np.random.default_rng(0))
    check_structure(fm, X, Y)


def test_a_user_structure_passes():
    X, Y = multilabel_data(n=12)
    check_structure(MultiLabel(n_labels=3), X, Y)


class WrongArgmax(MultiLabel):
    def argmax(self, x, w):
        return (0,) * self.n_labels


class WrongLength(MultiLabel):
    def joint_feature(self, x, y):
        phi = super().joint_feature(x, y)
        return phi if y[0] == 0 else np.append(phi, 1.0)


class WrongLoss(MultiLabel):
    def loss(self, y_true, y_pred):
        return super().loss(y_true, y_pred) - 0.5


class WrongAugmented(MultiLabel):
    def loss_augmented_argmax(self, x, y, w):
        return self.argmax(x, w)


class WrongInit(MultiLabel):
    def __init__(self, n_labels=3):
        self.n_labels = int(n_labels) + 1


@pytest.mark.parametrize("cls, name", [(WrongArgmax, "argmax"),
                                       (WrongLength, "joint_feature"),
                                       (WrongLoss, "loss"),
                                       (WrongAugmented, "loss_augmented_argmax"),
                                       (WrongInit, "clone")])
def test_a_broken_method_is_named(cls, name):
    X, Y = multilabel_data(n=12)
    with pytest.raises(AssertionError, match=rf"^{name}: "):
        check_structure(cls(), X, Y, save=False)


def test_a_structure_in_main_fails_the_save_check(monkeypatch):
    X, Y = multilabel_data(n=12)

    class Local(MultiLabel):
        pass

    with pytest.raises(AssertionError, match="^save: .*inside a function"):
        check_structure(Local(), X, Y)
    check_structure(Local(), X, Y, save=False)


def test_plain_functions_are_checked_too():
    from structsvm.structures.user.structure import FunctionStructure

    X, Y = multilabel_data(n=12)
    s = MultiLabel(n_labels=3)
    check_structure(FunctionStructure(joint_feature=s.joint_feature, argmax=s.argmax,
                                      loss=s.loss,
                                      loss_augmented_argmax=s.loss_augmented_argmax),
                    X, Y, save=False)
    assert structsvm.Structure is type(s).__mro__[1]


def test_hashed_features_with_outputs_of_different_lengths_pass():
    """Φ has one length for every output (hashed), but the outputs of different
    examples have different lengths: the outputs of another example are no
    candidates for x (its loss with y would compare sequences of other lengths)."""
    X, Y = tagger_data(n=10)
    assert len({len(y) for y in Y}) > 2
    check_structure(HashedTagger(), X, Y)


class TaggerWrongArgmax(HashedTagger):
    def argmax(self, x, w):
        return (0,) * len(x)


class TaggerWrongAugmented(HashedTagger):
    def loss_augmented_argmax(self, x, y, w):
        return self.argmax(x, w)


class TaggerLossNotZero(HashedTagger):
    def loss(self, y_true, y_pred):
        return super().loss(y_true, y_pred) + 0.5


class TaggerAugmentedMissesOneWord(HashedTagger):
    """Adds the loss of every word but the last: right on one-word sentences only
    when they are right anyway."""

    def loss_augmented_argmax(self, x, y, w):
        unary, trans = self._scores(x, w)
        wrong = (np.arange(self.n_tags)[None, :] != np.asarray(y)[:, None]).astype(float)
        wrong[-1] = 0.0
        return self._viterbi(unary + wrong, trans)


@pytest.mark.parametrize("cls, name", [(TaggerWrongArgmax, "argmax"),
                                       (TaggerWrongAugmented, "loss_augmented_argmax"),
                                       (TaggerAugmentedMissesOneWord,
                                        "loss_augmented_argmax"),
                                       (TaggerLossNotZero, "loss")])
def test_wrong_methods_of_a_hashed_structure_are_named(cls, name):
    X, Y = tagger_data(n=10)
    with pytest.raises(AssertionError, match=rf"^{name}: "):
        check_structure(cls(), X, Y, save=False)
