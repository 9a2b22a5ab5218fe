"""The sequence map's fused oracle (one compiled call per chunk) against the generic
path of Problem (batch_potentials → augment → viterbi → joint_feature_differences →
loss.batch), answer for answer."""
import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.structures import SequenceFeatures
from structsvm.structures import get_decoder
from structsvm.structures import HammingLoss, ZeroOneLoss
from structsvm.learners.problem import Problem

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "fast", "."]


def _tokens(rng, n, K=3):
    X = [[WORDS[j] for j in rng.integers(0, len(WORDS), size=rng.integers(1, 9))]
         for _ in range(n)]
    Y = [[int(k) for k in rng.integers(0, K, size=len(x))] for x in X]
    return X, Y


def _matrices(rng, n, d=7, K=4):
    """Real-valued (dense and sparse) token matrices, one of them a single token."""
    X, Y = [], []
    for i in range(n):
        T = 1 if i == 0 else int(rng.integers(2, 8))
        M = rng.normal(size=(T, d)) * (rng.random((T, d)) < 0.5)
        X.append(sp.csr_matrix(M) if i % 2 else M)
        Y.append([int(k) for k in rng.integers(0, K, size=T)])
    return X, Y


def _both(monkeypatch, problem, w, idx, augment):
    fused = problem.oracle(w, idx, augment=augment)
    with monkeypatch.context() as m:
        m.setattr(SequenceFeatures, "has_fused_oracle", False)
        generic = problem.oracle(w, idx, augment=augment)
    return fused, generic


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("data", ["tokens", "matrices"])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("augment", [True, False])
def test_fused_oracle_equals_generic_path(monkeypatch, seed, data, normalize, augment):
    rng = np.random.default_rng(seed)
    X, Y = (_tokens if data == "tokens" else _matrices)(rng, 25)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    problem = Problem(Xe, Ye, fm, get_decoder("viterbi"), HammingLoss(normalize), 1.0)
    for scale in (0.0, 0.3, 3.0):  # w = 0: ties everywhere; large w: few errors
        w = scale * rng.normal(size=fm.n_features_)
        for idx in (None, rng.permutation(25)[:11], np.array([3, 3, 0])):
            fused, generic = _both(monkeypatch, problem, w, idx, augment)
            assert len(fused.y_hat) == len(generic.y_hat)
            for a, b in zip(fused.y_hat, generic.y_hat):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(fused.loss, generic.loss)
            assert fused.psi.has_canonical_format
            assert fused.psi.shape == generic.psi.shape
            # equal up to the order in which duplicate entries are summed
            np.testing.assert_allclose(fused.psi.toarray(), generic.psi.toarray(),
                                       rtol=1e-13, atol=1e-14)
            assert np.all(fused.psi.data != 0)
            np.testing.assert_allclose(fused.margin, generic.margin, rtol=1e-12,
                                       atol=1e-12)
            np.testing.assert_allclose(fused.slack, generic.slack, rtol=1e-12,
                                       atol=1e-12)


def test_fused_oracle_margin_is_score_difference():
    """w·δΦ_i = s(y_i) − s(ŷ_i) on the plain potentials (independent of the rows)."""
    rng = np.random.default_rng(7)
    X, Y = _tokens(rng, 30)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    w = rng.normal(size=fm.n_features_)
    y_hat, loss, psi, margin = fm.fused_oracle(Xe, Ye, w, HammingLoss(),
                                               get_decoder("viterbi"), np.arange(30))
    batch = fm.batch_potentials(Xe, w)
    np.testing.assert_allclose(margin, batch.score(Ye) - batch.score(y_hat), atol=1e-10)
    np.testing.assert_array_equal(
        loss, [np.count_nonzero(np.asarray(a) != b) for a, b in zip(Ye, y_hat)])


def test_fused_oracle_declines_other_losses_and_decoders():
    rng = np.random.default_rng(1)
    X, Y = _tokens(rng, 6)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    w = np.zeros(fm.n_features_)

    class DoubleHamming(HammingLoss):  # counts wrong tokens, at another cost
        def part_cost(self, y_true):
            return 2.0

        def part_costs(self, Y_true):
            return np.full(len(Y_true), 2.0)

    class Tables(HammingLoss):  # declares no count of wrong parts: its tables
        counts_wrong_parts = False

    viterbi = get_decoder("viterbi")
    assert fm.fused_oracle(Xe, Ye, w, HammingLoss(), viterbi, [0]) is not None
    assert fm.fused_oracle(Xe, Ye, w, HammingLoss(normalize=True), viterbi,
                           [0]) is not None
    assert fm.fused_oracle(Xe, Ye, w, DoubleHamming(), viterbi, [0]) is None
    assert fm.fused_oracle(Xe, Ye, w, Tables(), viterbi, [0]) is None
    assert fm.fused_oracle(Xe, Ye, w, ZeroOneLoss(), viterbi, [0]) is None
    assert fm.fused_oracle(Xe, Ye, w, HammingLoss(), get_decoder("exhaustive"),
                           [0]) is None


def test_paths_of_a_chunked_call_index_like_a_list():
    """Violation.y_hat of a fused, chunked call: lazy, but indexes like the list of
    paths (negative indices, slices, iteration, IndexError past the end)."""
    rng = np.random.default_rng(3)
    X, Y = _tokens(rng, 600)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    problem = Problem(Xe, Ye, fm, get_decoder("viterbi"), HammingLoss(), 1.0)
    w = rng.normal(size=fm.n_features_)
    idx = rng.permutation(600)[:300]
    problem.chunk_size = 64
    assert len(problem._chunks(idx)) > 1
    v = problem.oracle(w, idx)
    ref = get_decoder("viterbi")(fm.batch_potentials(Xe, w, idx).augment(
        [Ye[i] for i in idx], HammingLoss()))
    got = list(v.y_hat)
    assert len(v.y_hat) == len(got) == 300
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    for i in (0, 1, 150, 299, -1, -300):
        np.testing.assert_array_equal(v.y_hat[i], ref[i])
    assert [len(p) for p in v.y_hat[10:20:3]] == [len(p) for p in ref[10:20:3]]
    for bad in (300, -301):
        with pytest.raises(IndexError):
            v.y_hat[bad]


def test_one_slack_oracle_uses_the_problems_decoder():
    """The sequence map's own 1-slack oracle implements Viterbi; a problem with
    another chain decoder must get that decoder's answers (it was ignored)."""
    from structsvm.protocols import Decoder

    rng = np.random.default_rng(5)
    X, Y = _tokens(rng, 20)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)

    def first_state(batch, exclude=None):  # a (bad) decoder: state 0 everywhere
        return [np.zeros(hi - lo, dtype=np.intp)
                for lo, hi in zip(batch.offsets[:-1], batch.offsets[1:])]

    dec = Decoder("first_state", "chain", first_state)
    w = rng.normal(size=fm.n_features_)
    loss_sum, psi, slack = Problem(Xe, Ye, fm, dec, HammingLoss(), 1.0).oracle_sum(w)
    zeros = [np.zeros(len(y), dtype=np.intp) for y in Ye]
    assert loss_sum == sum(np.count_nonzero(np.asarray(y)) for y in Ye)
    ref = fm.joint_features(Xe, Ye) - fm.joint_features(Xe, zeros)
    np.testing.assert_allclose(psi.toarray().ravel(), np.asarray(ref.sum(axis=0)).ravel(),
                               atol=1e-12)
    # the default decoder still takes the map's own path
    v = Problem(Xe, Ye, fm, get_decoder("viterbi"), HammingLoss(), 1.0)
    assert v._map_aggregates() and not Problem(Xe, Ye, fm, dec, HammingLoss(),
                                                1.0)._map_aggregates()


def test_oracle_refuses_indices_out_of_range():
    """The fused kernel does not check bounds: Problem.oracle does, for every map
    (an out-of-range index crashed the process before); negatives count from the end."""
    rng = np.random.default_rng(2)
    X, Y = _tokens(rng, 5)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    problem = Problem(Xe, Ye, fm, get_decoder("viterbi"), HammingLoss(), 1.0)
    w = rng.normal(size=fm.n_features_)
    for bad in ([5], [0, -6], [2, 99]):
        with pytest.raises(IndexError, match=r"example index (5|-6|99) out of range for 5"):
            problem.oracle(w, bad)
    neg, pos = problem.oracle(w, [-1, -5]), problem.oracle(w, [4, 0])
    np.testing.assert_array_equal(neg.idx, [4, 0])
    np.testing.assert_array_equal(neg.loss, pos.loss)
    assert len(problem.oracle(w, np.array([], dtype=int)).y_hat) == 0
    for bad in ([5], [-1]):  # the map's own public method checks too
        with pytest.raises(IndexError, match="sentence index -?[0-9]+ out of range"):
            fm.fused_oracle(Xe, Ye, w, HammingLoss(), get_decoder("viterbi"), bad)
