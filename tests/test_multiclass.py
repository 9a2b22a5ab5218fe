"""MulticlassFeatures, argmax and exhaustive decoders, zero-one/Hamming losses."""
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.structures import MulticlassFeatures, MulticlassPotentials
from structsvm.structures import get_decoder
from structsvm.structures import CallableLoss, HammingLoss, ZeroOneLoss, get_loss

argmax = get_decoder("argmax")
exhaustive = get_decoder("exhaustive")


def brute_force_argmax(scores, y_true=None, loss=None, exclude=None):
    """Plain Python loop over classes: the independent reference."""
    out = []
    for i, row in enumerate(scores):
        best, best_val = None, -np.inf
        for k, s in enumerate(row):
            if exclude is not None and k == exclude[i]:
                continue
            val = s + (loss(y_true[i], k) if loss is not None else 0.0)
            if val > best_val:
                best, best_val = k, val
        out.append(best)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_argmax_equals_exhaustive_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(1, 8), rng.integers(2, 7)
    scores = rng.normal(size=(n, k))
    batch = MulticlassPotentials(scores)
    Y = list(rng.integers(0, k, size=n))
    assert list(argmax(batch)) == list(exhaustive(batch)) == brute_force_argmax(scores)
    assert list(argmax(batch, exclude=Y)) == list(exhaustive(batch, exclude=Y)) \
        == brute_force_argmax(scores, exclude=Y)
    for loss in (ZeroOneLoss(), HammingLoss(), CallableLoss(lambda a, b: abs(a - b) / 3)):
        aug = batch.augment(Y, loss)
        assert list(argmax(aug)) == list(exhaustive(aug)) \
            == brute_force_argmax(scores, Y, loss)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("sparse", [False, True])
def test_joint_feature_score_identity(seed, sparse):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(6, 5))
    X[X < 0.3] = 0.0
    Y = list(rng.choice(["x", "y", "z", "w"], size=6))
    Xin = [sp.csr_matrix(x) for x in X] if sparse else list(X)
    attrs = None if seed % 2 == 0 else rng.normal(size=(len(set(Y)), 3))
    fm = MulticlassFeatures(attributes=attrs, bias=0.5 * (seed % 3)).fit(Xin, Y)
    w = rng.normal(size=fm.n_features_)
    for x in Xin:
        pot = fm.potentials(x, w)
        for k, label in enumerate(fm.classes_):
            assert np.isclose(w @ fm.joint_feature(x, label), pot.score(k))
    # the batched rows equal the one-at-a-time vectors
    Xe, Ye = fm.encode_inputs(Xin), fm.encode_outputs(Y)
    rows = fm.joint_features(Xe, Ye).toarray()
    for i, (x, y) in enumerate(zip(Xin, Y)):
        np.testing.assert_allclose(rows[i], fm.joint_feature(x, y))


def test_joint_feature_hand_computed():
    fm = MulticlassFeatures().fit([np.array([1.0, 2.0])] * 3, ["a", "b", "c"])
    np.testing.assert_array_equal(fm.joint_feature(np.array([3.0, 4.0]), "b"),
                                  [0, 0, 3, 4, 0, 0])
    lam = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    fm = MulticlassFeatures(attributes=lam).fit([np.array([1.0, 2.0])] * 3, ["a", "b", "c"])
    # Λ(b) ⊗ φ(x) = [1, 1] ⊗ [3, 4]
    np.testing.assert_array_equal(fm.joint_feature(np.array([3.0, 4.0]), "b"), [3, 4, 3, 4])


def test_identity_attributes_give_the_one_hot_model():
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(40, 4)))
    Y = list(rng.integers(0, 3, size=40))
    # same learner and seed: it visits examples in random order, and several training
    # points sit exactly on a tie at the optimum (the one-hot default is multiclass_cd,
    # the attribute map's dual_cd: another path to the same objective)
    one_hot = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), C=1.0, tol=1e-7,
                            random_state=0, learner="dual_cd")
    ident = structsvm.fit(X, Y, feature_map=MulticlassFeatures(attributes=np.eye(3)), C=1.0,
                          tol=1e-7, random_state=0, learner="dual_cd")
    assert abs(one_hot.objective_ - ident.objective_) <= 1e-6 * one_hot.objective_
    np.testing.assert_allclose(one_hot.coef_, ident.coef_, atol=1e-4)
    assert one_hot.predict(X) == ident.predict(X)


def test_attribute_dict_allows_classes_unseen_in_training():
    attrs = {"cat": [1.0, 0.0], "dog": [0.0, 1.0], "cat-dog": [1.0, 1.0]}
    fm = MulticlassFeatures(attributes=attrs).fit([np.ones(2), np.zeros(2)], ["cat", "dog"])
    assert list(fm.classes_) == ["cat", "dog", "cat-dog"]
    assert fm.n_features_ == 2 * 2


def test_losses_hand_computed():
    assert ZeroOneLoss()(2, 2) == 0.0 and ZeroOneLoss()(2, 1) == 1.0
    assert HammingLoss()(np.array([0, 1, 2]), np.array([0, 2, 1])) == 2.0
    assert HammingLoss(normalize=True)(np.array([0, 1]), np.array([0, 0])) == 0.5
    np.testing.assert_array_equal(HammingLoss().part_losses(np.array([1, 0]), 3),
                                  [[1, 0, 1], [0, 1, 1]])
    np.testing.assert_array_equal(ZeroOneLoss().part_losses(1, 3), [1, 0, 1])
    with pytest.raises(ValueError, match="does not decompose"):
        ZeroOneLoss().part_losses(np.array([0, 1]), 2)
    with pytest.raises(ValueError, match="Unknown loss 'nope'"):
        get_loss("nope")
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        CallableLoss(lambda a, b: -1.0)(0, 1)


def test_exhaustive_refuses_non_enumerable():
    class Opaque:
        structure = "multiclass"
        enumerable = False

        def __len__(self):
            return 1

    with pytest.raises(TypeError, match="cannot enumerate"):
        exhaustive(Opaque())
