"""Chains of order k: decoders against exhaustive search over every tag sequence,
certificates that never lie, the order-k feature map's invariants, its fused oracle
against the generic path, and first order unchanged."""
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.learners.problem import Problem
from structsvm.structures import HammingLoss, SequenceFeatures, get_decoder
from structsvm.structures.exhaustive import exhaustive
from structsvm.structures.sequence import (ChainPotentials, OrderKChainPotentials,
                                          pruned_viterbi)
from structsvm.structures.sequence import _order_jit
from structsvm.structures.sequence.viterbi import viterbi
from structsvm.testing import check_structure

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "fast", "."]


def _random_batch(rng, n_seq, max_len, K, k, pair=False, density=0.5, beam=None):
    """Random order-k potentials: every score normal, a random share of the tag
    n-grams of orders 2..k scored."""
    lengths = rng.integers(1, max_len + 1, size=n_seq)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    b = K + 1
    keys = [np.arange(b ** (m + 1)) + (0 if m == 2 else b ** 3) for m in range(2, k + 1)]
    keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    keys = keys[rng.random(keys.size) < density]
    n = int(offsets[-1])
    return OrderKChainPotentials(
        rng.normal(size=(n, K)), offsets, rng.normal(size=(K, K)), rng.normal(size=K),
        rng.normal(size=K), k, keys, rng.normal(size=keys.size),
        rng.normal(size=(n, K + 1, K)) if pair else None, beam)


def _brute_best(one, extra=None):
    """The highest-scoring path of a batch of one (plus a per-path ``extra``)."""
    return max(one.enumerate(),
               key=lambda y: one.score(y) + (0.0 if extra is None else extra(y)))


def _case(seed):
    rng = np.random.default_rng(seed)
    K, k = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    return rng, K, k, bool(rng.integers(0, 2))


# ----------------------------------------------------------------------- decoders
@pytest.mark.parametrize("seed", range(40))
def test_order_k_viterbi_equals_exhaustive(seed):
    # 40 seeds x 5 chains: orders 1-3, 1-4 tags, lengths 1-5, with emission pairs or not
    rng, K, k, pair = _case(seed)
    batch = _random_batch(rng, 5, 5, K, k, pair, density=float(rng.choice([.1, .5, .9])))
    paths, exact = pruned_viterbi(batch)
    assert exact.all()
    for i, y in enumerate(viterbi(batch)):
        best = _brute_best(batch[i])
        assert np.array_equal(y, best) and np.array_equal(paths[i], best), (seed, i)


@pytest.mark.parametrize("seed", range(30))
def test_loss_augmented_order_k_viterbi_equals_brute_force(seed):
    rng, K, k, pair = _case(1000 + seed)
    batch = _random_batch(rng, 5, 5, K, k, pair)
    Y = [rng.integers(0, K, size=n) for n in batch.lengths()]
    loss = HammingLoss()
    got = viterbi(batch.augment(Y, loss))
    for i, y in enumerate(Y):
        best = _brute_best(batch[i], lambda yy: loss(y, yy))
        assert np.array_equal(got[i], best), (seed, i)


@pytest.mark.parametrize("seed", range(30))
def test_dense_order_k_viterbi_equals_exhaustive(seed):
    """The exact Viterbi over every state (the decoder's fallback on near ties)."""
    rng, K, k, pair = _case(2000 + seed)
    batch = _random_batch(rng, 3, 5, K, k, pair, density=float(rng.choice([.05, .5, .95])))
    G1, keys, ngw = batch.bigram_table(), batch.ngrams, batch.ngram_weights
    slots, values = _order_jit.build_hash(keys)
    usable, ptr, first, weight, D2 = _order_jit.dense_tables(k, K, keys, ngw, K)
    assert usable
    for i in range(len(batch)):
        one = batch[i]
        path = np.empty(one.unary.shape[0], dtype=np.int64)
        pr = one.pair if pair else np.zeros((0, 0, 0))
        score = _order_jit._dense(np.ascontiguousarray(one.unary), pr, pair, k, G1, slots,
                                  values, ngw, ptr, first, weight, D2, path)
        best = _brute_best(one)
        assert one.score(path) == pytest.approx(one.score(best), abs=1e-9)
        assert score == pytest.approx(one.score(best), abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_a_certified_answer_is_the_best(seed):
    """With a beam the answer may be uncertified, never certified and wrong."""
    rng = np.random.default_rng(3000 + seed)
    K, k = int(rng.integers(3, 6)), int(rng.integers(1, 4))
    beam = int(rng.integers(1, 3))
    # scores from peaked (most tags far below the best) to flat
    batch = _random_batch(rng, 6, 5, K, k, bool(rng.integers(0, 2)), beam=beam)
    batch.unary *= float(rng.choice([1.0, 4.0, 12.0]))
    paths, exact = pruned_viterbi(batch)
    for i in range(len(batch)):
        one = batch[i]
        best = one.score(_brute_best(one))
        assert one.score(paths[i]) <= best + 1e-9
        if exact[i]:
            assert one.score(paths[i]) == pytest.approx(best, abs=1e-9), (seed, i)


def test_certificates_on_peaked_scores_and_the_beam_argument():
    rng = np.random.default_rng(7)
    batch = _random_batch(rng, 30, 6, 5, 2)
    batch.unary *= 500.0  # one tag per token far ahead: a beam of one loses nothing
    paths, exact = pruned_viterbi(batch, beam=1)
    assert exact.mean() > 0.8
    full, _ = pruned_viterbi(batch)
    for i in np.flatnonzero(exact):
        assert np.array_equal(paths[i], full[i])
    # the batch's own beam is the default; an explicit one wins
    batch.beam = 1
    assert all(np.array_equal(a, b) for a, b in zip(pruned_viterbi(batch)[0], paths))
    with pytest.raises(ValueError, match="beam must be None or an int >= 1"):
        pruned_viterbi(batch, beam=0)


def test_pruned_viterbi_of_a_first_order_batch_is_viterbi():
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 7, size=20)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    batch = ChainPotentials(rng.normal(size=(offsets[-1], 4)), offsets,
                            rng.normal(size=(4, 4)), rng.normal(size=4), rng.normal(size=4))
    paths, exact = pruned_viterbi(batch)
    assert exact.all()
    assert all(np.array_equal(a, b) for a, b in zip(paths, viterbi(batch)))


@pytest.mark.parametrize("seed", range(20))
def test_order_k_exclude_equals_exhaustive(seed):
    rng, K, k, pair = _case(4000 + seed)
    K = max(K, 2)
    batch = _random_batch(rng, 5, 4, K, k, pair)
    best = viterbi(batch)
    exclude = [b if i % 2 == 0 else rng.integers(0, K, size=len(b))
               for i, b in enumerate(best)]
    got = viterbi(batch, exclude=exclude)
    want = exhaustive(batch, exclude=exclude)
    for i in range(len(batch)):
        assert batch[i].score(got[i]) == pytest.approx(batch[i].score(want[i]))
        assert not np.array_equal(got[i], exclude[i]) or not np.array_equal(
            exclude[i], best[i])


@pytest.mark.parametrize("seed", range(10))
def test_vectorised_scores_equal_the_window_by_window_reference(seed):
    rng, K, k, pair = _case(5000 + seed)
    batch = _random_batch(rng, 8, 6, K, k, pair)
    Y = [rng.integers(0, K, size=n) for n in batch.lengths()]
    want = [batch[i]._score_one(0, y) for i, y in enumerate(Y)]
    np.testing.assert_allclose(batch.score(Y), want)


def test_a_hand_computed_trigram_path():
    # tags D=0, N=1, pad P=2; the trigram (P, D, N) weighs 2, (D, N, P) -1
    key = lambda a, b, c: (a * 3 + b) * 3 + c  # noqa: E731
    batch = OrderKChainPotentials(
        np.array([[1.0, 1.2], [0.5, 0.0]]), [0, 2], np.zeros((2, 2)), np.zeros(2),
        np.zeros(2), 2, np.array(sorted([key(2, 0, 1), key(0, 1, 2)])),
        np.array([-1.0, 2.0]) if key(0, 1, 2) < key(2, 0, 1) else np.array([2.0, -1.0]))
    # D N: 1 + 0 + 2 - 1 = 2; N D: 1.2 + 0.5 = 1.7; D D: 1.5; N N: 1.2
    assert batch.score(np.array([0, 1])) == pytest.approx(2.0)
    assert viterbi(batch)[0].tolist() == [0, 1]


def test_bad_potentials_are_refused():
    rng = np.random.default_rng(0)
    batch = _random_batch(rng, 2, 3, 3, 2)
    batch.ngrams = batch.ngrams[::-1].copy()
    with pytest.raises(ValueError, match="distinct sorted keys"):
        viterbi(batch)
    batch = _random_batch(rng, 2, 3, 3, 2, pair=True)
    batch.pair = batch.pair[:, :3]
    with pytest.raises(ValueError, match="pair must have shape"):
        viterbi(batch)
    batch = _random_batch(rng, 2, 3, 3, 2)
    batch.unary[0, 0] = np.nan
    with pytest.raises(ValueError, match="unary scores contain NaN"):
        viterbi(batch)


# ----------------------------------------------------------------------- the map
def _tokens(rng, n, K=3):
    X = [[WORDS[j] for j in rng.integers(0, len(WORDS), size=rng.integers(1, 9))]
         for _ in range(n)]
    Y = [[int(t) for t in rng.integers(0, K, size=len(x))] for x in X]
    return X, Y


def _matrices(rng, n, d=5, K=3):
    X, Y = [], []
    for i in range(n):
        T = 1 if i == 0 else int(rng.integers(2, 7))
        M = rng.normal(size=(T, d)) * (rng.random((T, d)) < 0.6)
        X.append(sp.csr_matrix(M) if i % 2 else M)
        Y.append([int(t) for t in rng.integers(0, K, size=T)])
    return X, Y


# (first order: tests/test_sequence_features.py)
@pytest.mark.parametrize("order, emission_order", [(1, 1), (2, 0), (2, 1), (3, 0), (3, 1)])
@pytest.mark.parametrize("data", ["tokens", "matrices"])
def test_score_equals_w_dot_phi(order, emission_order, data):
    rng = np.random.default_rng(10 * order + emission_order)
    X, Y = (_tokens if data == "tokens" else _matrices)(rng, 20)
    fm = SequenceFeatures(features="word", order=order,
                          emission_order=emission_order).fit(X, Y)
    w = rng.normal(size=fm.n_features_)
    Xe = fm.encode_inputs(X)
    batch = fm.batch_potentials(Xe, w)
    assert isinstance(batch, OrderKChainPotentials)
    Ye = fm.encode_outputs(Y)
    others = [rng.integers(0, fm.n_states_, size=len(y)) for y in Y]
    for P in (Ye, others):
        np.testing.assert_allclose(fm.joint_features(Xe, P) @ w, batch.score(P))
    for x, y in zip(X[:5], Y[:5]):
        assert w @ fm.joint_feature(x, y) == pytest.approx(
            fm.potentials(x, w).score(fm.encode_outputs([y])[0]))
    # δΦ from the differing parts only equals Φ(y) - Φ(ŷ)
    diff = fm.joint_feature_differences(Xe, Ye, others)
    full = fm.joint_features(Xe, Ye) - fm.joint_features(Xe, others)
    assert abs(diff - full).max() < 1e-12
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, Ye, others),
                               np.asarray(full.sum(axis=0)).ravel(), atol=1e-12)


def test_order_k_layout_and_names():
    X, Y = [["the", "dog", "ran"], ["a", "cat"]], [["D", "N", "V"], ["D", "N"]]
    fm = SequenceFeatures(features="word", order=2).fit(X, Y)
    K, d = fm.n_states_, fm.n_input_features_
    # padded windows: (P P D) (P D N) (D N V) (N V P) (D N P)
    assert fm.tag_ngrams_.size == 5
    assert fm.n_features_ == d * K + K * K + 2 * K + 5
    names = fm.feature_names_[-5:].tolist()
    assert sorted(names) == sorted(["transition:<s>-><s>->D", "transition:<s>->D->N",
                                    "transition:D->N->V", "transition:N->V-></s>",
                                    "transition:D->N-></s>"])
    w = np.zeros(fm.n_features_)
    w[-5:] = np.arange(1, 6)
    ngw, pair = fm.order_k_weights(w)
    assert ngw.tolist() == [1, 2, 3, 4, 5] and pair is None
    fm3 = SequenceFeatures(features="word", order=3, emission_order=1).fit(X, Y)
    _, pair = fm3.order_k_weights(np.zeros(fm3.n_features_))
    assert pair.shape == (d, K + 1, K)
    assert fm3.feature_names_[-1] == f"emission:{fm3.vocabulary_[-1]}:<s>->V"


@pytest.mark.parametrize("params, match", [
    (dict(order=4), "order must be 1, 2 or 3"),
    (dict(order=True), "order must be 1, 2 or 3"),
    (dict(emission_order=2), "emission_order must be 0 or 1"),
    (dict(beam=0), "beam must be None or an int >= 1"),
    (dict(beam=2.5), "beam must be None or an int >= 1"),
])
def test_bad_order_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        SequenceFeatures(features="word", **params).fit([["a"]], [["X"]])


def _both(problem, w, idx, augment):
    fused = problem.oracle(w, idx, augment=augment)
    saved = SequenceFeatures.has_fused_oracle
    SequenceFeatures.has_fused_oracle = False
    try:
        generic = problem.oracle(w, idx, augment=augment)
    finally:
        SequenceFeatures.has_fused_oracle = saved
    return fused, generic


@pytest.mark.parametrize("order, emission_order", [(1, 1), (2, 0), (2, 1), (3, 0)])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("beam", [None, 1])
def test_fused_order_k_oracle_equals_generic_path(order, emission_order, normalize, beam):
    rng = np.random.default_rng(order + 7 * emission_order)
    X, Y = _tokens(rng, 30)
    fm = SequenceFeatures(features="word", order=order, emission_order=emission_order,
                          beam=beam).fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    problem = Problem(Xe, Ye, fm, get_decoder("viterbi"), HammingLoss(normalize=normalize),
                      1.0)
    w = rng.normal(size=fm.n_features_)
    idx = rng.permutation(len(X))[:20]
    for augment in (True, False):
        fused, generic = _both(problem, w, idx, augment)
        assert all(np.array_equal(a, b) for a, b in zip(fused.y_hat, generic.y_hat))
        np.testing.assert_allclose(fused.loss, generic.loss)
        np.testing.assert_allclose(fused.margin, generic.margin, atol=1e-12)
        assert abs(fused.psi - generic.psi).max() < 1e-12
    # the aggregated 1-slack oracle is the sum of the rows
    v = problem.oracle(w)
    loss, psi, slack = fm.aggregate_violation(Xe, Ye, w, HammingLoss(normalize=normalize))
    assert loss == pytest.approx(v.loss.sum())
    np.testing.assert_allclose(psi, np.asarray(v.psi.sum(axis=0)).ravel(), atol=1e-12)
    np.testing.assert_allclose(slack, v.slack, atol=1e-12)
    part = fm.aggregate_violation(Xe, Ye, w, HammingLoss(normalize=normalize), idx=idx)
    np.testing.assert_allclose(part[1].toarray().ravel(),
                               np.asarray(v.psi[idx].sum(axis=0)).ravel(), atol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_training_counts_uncertified_decodes():
    rng = np.random.default_rng(5)
    X, Y = _tokens(rng, 40, K=4)
    exact = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word", order=2),
                          max_iter=5)
    fm = exact.feature_map_
    assert fm.n_decodes_ >= 40 and fm.n_uncertified_decodes_ == 0
    beamed = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word", order=2,
                                                              beam=1), max_iter=5)
    fm1 = beamed.feature_map_
    assert fm1.n_decodes_ >= 40
    assert 0 < fm1.n_uncertified_decodes_ <= fm1.n_decodes_
    # a fit counts on its own copy of the map: the map it was given keeps its counts
    counts = (fm1.n_decodes_, fm1.n_uncertified_decodes_)
    refit = structsvm.fit(X, Y, feature_map=fm1, max_iter=1)
    assert refit.feature_map_ is not fm1
    assert (fm1.n_decodes_, fm1.n_uncertified_decodes_) == counts
    assert refit.feature_map_.n_decodes_ < fm1.n_decodes_


def test_order_k_models_save_and_load(tmp_path):
    rng = np.random.default_rng(11)
    X, Y = _tokens(rng, 25)
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(
        features="word", order=3, emission_order=1, beam=2), max_iter=10)
    model.save(tmp_path / "m.npz")
    back = structsvm.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.coef_, model.coef_)
    fm, fb = model.feature_map_, back.feature_map_
    np.testing.assert_array_equal(fb.tag_ngrams_, fm.tag_ngrams_)
    assert (fb.order, fb.emission_order, fb.beam) == (3, 1, 2)
    assert (fb.n_decodes_, fb.n_uncertified_decodes_) == (fm.n_decodes_,
                                                          fm.n_uncertified_decodes_)
    assert back.predict(X) == model.predict(X)


@pytest.mark.parametrize("order, emission_order", [(2, 0), (3, 1), (1, 1)])
def test_order_k_map_fitted_from_partition_summaries_equals_one_fit(order,
                                                                  emission_order):
    rng = np.random.default_rng(order + 3)
    X, Y = _tokens(rng, 30, K=4)
    # tags as strings, one tag only in the last partition, partitions of any size
    Y = [[f"t{t}" for t in y] for y in Y]
    Y[-1] = ["t9"] * len(Y[-1])
    params = dict(features="word", order=order, emission_order=emission_order)
    whole = SequenceFeatures(**params).fit(X, Y)
    proto = SequenceFeatures(**params)
    parts = [proto.fit_summary(X[a:b], Y[a:b]) for a, b in ((0, 7), (7, 8), (8, 30))]
    merged = SequenceFeatures(**params).fit_from_summaries(parts)
    assert list(merged.tags_) == list(whole.tags_)
    np.testing.assert_array_equal(merged.tag_ngrams_, whole.tag_ngrams_)
    assert merged.n_features_ == whole.n_features_
    assert (merged.n_decodes_, merged.n_uncertified_decodes_) == (0, 0)
    Xe, Ye = whole.encode_inputs(X), whole.encode_outputs(Y)
    assert abs(merged.joint_features(merged.encode_inputs(X), merged.encode_outputs(Y))
               - whole.joint_features(Xe, Ye)).max() == 0


@pytest.mark.parametrize("params", [dict(order=2), dict(order=3),
                                    dict(order=1, emission_order=1)])
def test_order_k_maps_keep_the_structure_contract(params):
    rng = np.random.default_rng(2)
    X, Y = _tokens(rng, 6)
    check_structure(SequenceFeatures(features="word", **params), X, Y)


def test_second_order_learns_what_first_order_cannot():
    """Tags that depend on the tag two back: after 'x' the third token's tag copies
    the first's, which a first-order chain cannot see through the neutral middle."""
    rng = np.random.default_rng(0)
    X, Y = [], []
    for _ in range(200):
        a = str(rng.choice(["A", "B"]))
        X.append(["w" + a.lower(), "x", "y"])
        Y.append([a, "M", a + "2"])
    for x in X:  # the third word says nothing about its tag
        x[2] = "y"
    tests = [["wa", "x", "y"], ["wb", "x", "y"]]
    want = [["A", "M", "A2"], ["B", "M", "B2"]]
    first = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"), C=10.0)
    second = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word", order=2),
                           C=10.0)
    assert second.predict(tests) == want
    assert first.predict(tests) != want


# ----------------------------------------------------------------------- order 1
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_first_order_is_unchanged():
    """An order-1 map is the first-order map: its potentials, state and rows are the
    first-order ones, and retraining the first-order models that an earlier version
    saved (tests/model_files) gives their weights bit for bit."""
    fm = SequenceFeatures(features="word").fit([["a", "b"]], [["X", "Y"]])
    assert type(fm.batch_potentials(fm.encode_inputs([["a"]]),
                                    np.zeros(fm.n_features_))) is ChainPotentials
    assert sorted(fm.fitted_state()) == ["input_kind_", "n_features_",
                                         "n_input_features_", "tags_", "vocabulary_"]
    folder = Path(__file__).resolve().parent / "model_files"
    sys.path.insert(0, str(folder))
    try:
        from inputs import data
    finally:
        sys.path.remove(str(folder))
    specs = {"sequence": dict(feature_map=SequenceFeatures(features="pos")),
             "sequence_matrices": dict(feature_map=SequenceFeatures(),
                                       learner="one_slack")}
    for name, params in specs.items():
        X, Y, _ = data(name)
        model = structsvm.fit(X, Y, C=1.0, max_iter=30, **params)
        old = structsvm.load(folder / f"{name}.npz")
        np.testing.assert_array_equal(model.coef_, old.coef_, err_msg=name)
