"""Confidence of fitted models: max-marginals, part and output margins and the k best
outputs of the estimator against enumeration of every output (chains of orders 1
and 2, classes), and the calibrators and calibration measures against direct
computations."""
import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

import structsvm
from structsvm.estimator.calibration import (CalibratedStructuredSVM, MarginCalibrator,
                                             expected_calibration_error,
                                             reliability_curve)
from structsvm.structures import MulticlassFeatures, OutputConstraints, SequenceFeatures

TAGGED = [("the dog ran".split(), ["B-NP", "I-NP", "B-VP"]),
          ("a cat sat down".split(), ["B-NP", "I-NP", "B-VP", "O"]),
          ("dogs ran".split(), ["B-NP", "B-VP"]),
          ("the old cat ran fast".split(), ["B-NP", "I-NP", "I-NP", "B-VP", "O"]),
          ("a dog sat".split(), ["B-NP", "I-NP", "B-VP"])]
NEW = ["the cat sat fast".split(), "old dogs ran".split(), "a".split()]


@pytest.fixture(scope="module", params=[1, 2], ids=["order1", "order2"])
def tagger(request):
    X, Y = [x for x, _ in TAGGED], [y for _, y in TAGGED]
    return structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word",
                                                            order=request.param), C=0.5)


def enumerate_outputs(model, x, constraints=None):
    """(raw output, score) of every output of x, by the fitted map's potentials."""
    fm = model.feature_map_
    pot = fm.potentials(x, model.coef_)
    out = []
    for y in pot.enumerate():
        raw = fm.decode_outputs([y])[0]
        s = pot.score(y)
        if constraints is not None:
            raw_ok = all(raw[t] == v for t, v in constraints.fixed.items())
            if not raw_ok:
                continue
        out.append((raw, s))
    return out


def brute_part_margins(outputs):
    best_y, best = max(outputs, key=lambda o: o[1])
    m = []
    for t in range(len(best_y)):
        other = [s for y, s in outputs if y[t] != best_y[t]]
        m.append(best - max(other) if other else np.inf)
    return best_y, np.array(m)


def test_chain_margins_and_nbest_equal_enumeration(tagger):
    tags = list(tagger.feature_map_.tags_)
    mm = tagger.predict_max_marginals(NEW)
    parts = tagger.predict_margins(NEW)
    whole = tagger.predict_margins(NEW, level="output")
    lists = tagger.predict_nbest(NEW, k=4)
    for i, x in enumerate(NEW):
        outputs = enumerate_outputs(tagger, x)
        want = np.full((len(x), len(tags)), -np.inf)
        for y, s in outputs:
            for t, tag in enumerate(y):
                want[t, tags.index(tag)] = max(want[t, tags.index(tag)], s)
        np.testing.assert_allclose(mm[i], want, atol=1e-9)
        best_y, m = brute_part_margins(outputs)
        np.testing.assert_allclose(parts[i], m, atol=1e-9)
        scores = sorted((s for _, s in outputs), reverse=True)
        assert whole[i] == pytest.approx(scores[0] - scores[1], abs=1e-9)
        np.testing.assert_allclose([s for _, s in lists[i]], scores[:4], atol=1e-9)
        assert lists[i][0][0] == best_y == tagger.predict([x])[0]
        for y, s in lists[i]:
            assert any(y == yy and s == pytest.approx(ss) for yy, ss in outputs)


def test_chain_margins_under_constraints(tagger):
    c = OutputConstraints(fixed={0: "B-NP"})
    parts = tagger.predict_margins(NEW, constraints=c)
    for i, x in enumerate(NEW):
        outputs = enumerate_outputs(tagger, x, c)
        _, m = brute_part_margins(outputs)
        assert parts[i][0] == np.inf    # the fixed token cannot change
        np.testing.assert_allclose(parts[i], m, atol=1e-9)


def test_class_margins_and_nbest_equal_enumeration():
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(60, 3)))
    Y = [["a", "b", "c", "d"][int(np.argmax(x[:2] @ np.array([[1, -1, 0.5, 0],
                                                              [0, 1, -1, 0.3]])))]
         for x in X]
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), C=1.0)
    W = model.coef_.reshape(len(model.feature_map_.classes_), -1)
    test = list(rng.normal(size=(10, 3)))
    scores = np.array([W @ x for x in test])
    top = np.sort(scores, axis=1)[:, ::-1]
    np.testing.assert_allclose(np.vstack(model.predict_max_marginals(test)), scores)
    np.testing.assert_allclose(np.concatenate(model.predict_margins(test)),
                               top[:, 0] - top[:, 1])
    np.testing.assert_allclose(model.predict_margins(test, level="output"),
                               top[:, 0] - top[:, 1])
    classes = model.feature_map_.classes_
    for i, pairs in enumerate(model.predict_nbest(test, k=3)):
        assert [c for c, _ in pairs] == list(classes[np.argsort(-scores[i])[:3]])
        np.testing.assert_allclose([s for _, s in pairs], top[i, :3])


def test_level_and_decoders_without_a_search():
    X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    model = structsvm.fit(X, ["a", "b"], C=10.0)
    with pytest.raises(ValueError, match="level must be 'part' or 'output'"):
        model.predict_margins(X, level="token")
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        model.predict_nbest(X, k=0)
    ex = structsvm.fit(X, ["a", "b"], C=10.0, decoder="exhaustive")
    with pytest.raises(TypeError, match="decoder 'exhaustive' .* declares no "
                                        "max-marginals search"):
        ex.predict_max_marginals(X)
    # no max-marginal search: margins by decoding again with the choice forbidden
    np.testing.assert_allclose(np.concatenate(ex.predict_margins(X)),
                               np.concatenate(model.predict_margins(X)))
    # enumeration: the same k best lists
    assert [[c for c, _ in p] for p in ex.predict_nbest(X, k=2)] == \
        [[c for c, _ in p] for p in model.predict_nbest(X, k=2)]
    rank = structsvm.fit([np.eye(3)], [np.array([2.0, 1.0, 0.0])],
                         feature_map=structsvm.structures.RankingFeatures())
    with pytest.raises(TypeError, match="declares no max-marginals search, and "
                                        "RankingFeatures takes no constraints"):
        rank.predict_margins([np.eye(3)])


# ------------------------------------------------------------------ calibration
def test_isotonic_calibrator_is_isotonic_regression():
    rng = np.random.default_rng(1)
    m = rng.exponential(size=500)
    right = rng.random(500) < 1 - np.exp(-2 * m)
    cal = MarginCalibrator("isotonic").fit(m, right)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(m, right)
    grid = np.linspace(0, 5, 50)
    np.testing.assert_allclose(cal.predict_proba(grid), ref.predict(grid))
    assert cal.predict_proba(np.array([np.inf]))[0] == 1.0


def test_sigmoid_calibrator_recovers_a_logistic_law():
    """Margins whose correctness follows σ(1.5 m − 0.5): Platt's fit finds the slope
    and offset (its smoothed targets move them by O(1/n))."""
    rng = np.random.default_rng(2)
    m = rng.exponential(scale=1.5, size=40000)
    right = rng.random(m.size) < 1 / (1 + np.exp(-(1.5 * m - 0.5)))
    cal = MarginCalibrator("sigmoid").fit(m, right)
    assert cal.a_ == pytest.approx(1.5, abs=0.08) and cal.b_ == pytest.approx(-0.5,
                                                                            abs=0.08)
    # the fit minimises the log loss with smoothed targets: its gradient vanishes there
    n_pos, n_neg = right.sum(), (~right).sum()
    t = np.where(right, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    p = cal.predict_proba(m)
    assert abs(np.mean(p - t)) < 1e-5 and abs(np.mean((p - t) * m)) < 1e-5


def test_calibrator_needs_both_outcomes_and_a_method():
    with pytest.raises(ValueError, match="both right and wrong"):
        MarginCalibrator().fit([0.1, 0.5], [True, True])
    with pytest.raises(ValueError, match="method must be"):
        MarginCalibrator("beta").fit([0.1, 0.5], [True, False])
    with pytest.raises(ValueError, match="2 margins but 3"):
        MarginCalibrator().fit([0.1, 0.5], [True, False, True])


def test_reliability_curve_and_ece_by_hand():
    p = np.array([0.05, 0.1, 0.45, 0.5, 0.55, 0.95, 1.0])
    y = np.array([0, 1, 0, 1, 1, 1, 1])
    conf, acc, n = reliability_curve(p, y, n_bins=4)
    assert n.tolist() == [2, 1, 2, 2]
    np.testing.assert_allclose(conf, [0.075, 0.45, 0.525, 0.975])
    np.testing.assert_allclose(acc, [0.5, 0.0, 1.0, 1.0])
    want = (2 * 0.425 + 1 * 0.45 + 2 * 0.475 + 2 * 0.025) / 7
    assert expected_calibration_error(p, y, n_bins=4) == pytest.approx(want)
    with pytest.raises(ValueError, match="lie in \\[0, 1\\]"):
        reliability_curve([1.2], [1])


@pytest.mark.parametrize("method", ["isotonic", "sigmoid"])
def test_calibrated_classes_are_calibrated_on_new_data(method):
    """Noisy two-class data: held-out calibration makes the confidence of fresh
    predictions match their accuracy (ECE small, smaller than the raw sigmoid of
    the margin's)."""
    rng = np.random.default_rng(3)

    def draw(n):
        X = rng.normal(size=(n, 2))
        p = 1 / (1 + np.exp(-3 * X[:, 0]))
        return list(X), list(np.where(rng.random(n) < p, "a", "b"))

    (Xtr, Ytr), (Xcal, Ycal), (Xte, Yte) = draw(300), draw(3000), draw(3000)
    model = structsvm.fit(Xtr, Ytr, C=1.0)
    cal = CalibratedStructuredSVM(model, method=method).fit(Xcal, Ycal)
    prob = np.concatenate(cal.predict_proba(Xte))
    right = np.array(cal.predict(Xte)) == np.array(Yte)
    raw = 1 / (1 + np.exp(-np.concatenate(model.predict_margins(Xte))))
    ece = expected_calibration_error(prob, right)
    assert ece < 0.03 and ece < expected_calibration_error(raw, right)
    out = CalibratedStructuredSVM(model, method=method, level="output").fit(Xcal, Ycal)
    assert out.predict_proba(Xte).shape == (3000,)


def test_calibrated_chains_give_a_probability_per_token(tagger):
    X, Y = [x for x, _ in TAGGED], [y for _, y in TAGGED]
    # held-out tags the model gets partly wrong
    cal = CalibratedStructuredSVM(tagger, method="sigmoid").fit(X + NEW[:2], Y + [
        ["O", "B-NP", "O", "B-VP"], ["B-VP", "I-NP", "B-NP"]])
    probs = cal.predict_proba(NEW)
    assert [p.shape for p in probs] == [(len(x),) for x in NEW]
    assert all(((p >= 0) & (p <= 1)).all() for p in probs)
    assert cal.margins_.size == cal.correct_.size == sum(map(len, X)) + 7


# ------------------------------------------------------------------ trees
from structsvm.structures.dependency import DependencyFeatures, is_tree  # noqa: E402
import itertools  # noqa: E402

X_TREES = [[("John", "NNP"), ("saw", "VBD"), ("Mary", "NNP"), (".", ".")],
           [("Ideas", "NNS"), ("sleep", "VBP"), ("furiously", "RB")],
           [("It", "PRP"), ("rains", "VBZ")]]
Y_TREES = [[(2, "nsubj"), (0, "root"), (2, "obj"), (2, "punct")],
           [(2, "nsubj"), (0, "root"), (2, "advmod")],
           [(2, "nsubj"), (0, "root")]]
NEW_TREES = [[("Mary", "NNP"), ("saw", "VBD"), ("ideas", "NNS")],
             [("John", "NNP"), ("sleep", "VBP"), ("furiously", "RB"), (".", ".")]]


@pytest.fixture(scope="module", params=["eisner", "chu_liu_edmonds"])
def parser(request):
    return structsvm.fit(X_TREES * 2, Y_TREES * 2, decoder=request.param,
                         feature_map=DependencyFeatures(n_hash=2 ** 12), C=1.0)


def tree_outputs(model, x):
    """(raw tree, score) of every tree of x the decoder searches (projective for
    eisner), every relation."""
    fm = model.feature_map_
    pot = fm.potentials(x, model.coef_)
    if model.decoder_.name == "eisner":
        codes = list(pot.enumerate())
    else:
        n, L = len(x), pot.n_labels
        codes = [np.array(h) + np.array(r) * (n + 1)
                 for h in itertools.product(range(n + 1), repeat=n) if is_tree(h)
                 for r in itertools.product(range(L), repeat=n)]
    m = len(x) + 1
    full = pot.matrix(0).reshape(m, m, -1)
    C = np.array(codes)
    scores = full[C % m, np.arange(1, m), C // m].sum(axis=1)
    raw = fm.decode_outputs(codes)
    return [(tuple(y), float(s)) for y, s in zip(raw, scores) if s > -np.inf]


def test_tree_margins_and_nbest_equal_enumeration(parser):
    parts = parser.predict_margins(NEW_TREES)
    whole = parser.predict_margins(NEW_TREES, level="output")
    lists = parser.predict_nbest(NEW_TREES, k=3)
    for i, x in enumerate(NEW_TREES):
        outputs = tree_outputs(parser, x)
        best_y, m = brute_part_margins(outputs)
        assert list(best_y) == parser.predict([x])[0]
        np.testing.assert_allclose(parts[i], m, atol=1e-9)
        scores = sorted((s for _, s in outputs), reverse=True)
        assert whole[i] == pytest.approx(scores[0] - scores[1], abs=1e-9)
        np.testing.assert_allclose([s for _, s in lists[i]], scores[:3], atol=1e-9)
    if parser.decoder_.name == "eisner":  # its max-marginals over (head, relation)
        fm = parser.feature_map_
        for i, x in enumerate(NEW_TREES):
            table = parser.predict_max_marginals([x])[0]
            n, rels = len(x), list(fm.relations_)
            want = np.full((n, (n + 1) * len(rels)), -np.inf)
            for y, s in tree_outputs(parser, x):
                for d, (h, r) in enumerate(y):
                    c = rels.index(r) * (n + 1) + h
                    want[d, c] = max(want[d, c], s)
            np.testing.assert_allclose(table, want, atol=1e-9)


def test_tree_predictions_under_constraints(parser):
    c = OutputConstraints(fixed={0: 2}, forbidden={2: [(2, "obj")]})
    got = parser.predict(NEW_TREES, constraints=c)
    parts = parser.predict_margins(NEW_TREES, constraints=c)
    for i, x in enumerate(NEW_TREES):
        ok = [(y, s) for y, s in tree_outputs(parser, x)
              if y[0][0] == 2 and y[2] != (2, "obj")]
        best_y, m = brute_part_margins(ok)
        assert [tuple(p) for p in got[i]] == list(best_y)
        np.testing.assert_allclose(parts[i], m, atol=1e-9)
