"""Viterbi against exhaustive search and the numpy references (many random chains)."""
import numpy as np
import pytest

from structsvm.structures.sequence.features import ChainPotentials
from structsvm.structures import get_decoder
from structsvm.structures.sequence import _viterbi_jit
from structsvm.structures.exhaustive import exhaustive
from structsvm.structures.sequence.viterbi import viterbi
from structsvm.structures import HammingLoss


def _random_batch(rng, n_seq, max_len, n_states, scale=1.0):
    lengths = rng.integers(1, max_len + 1, size=n_seq)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return ChainPotentials(rng.normal(scale=scale, size=(offsets[-1], n_states)), offsets,
                           rng.normal(size=(n_states, n_states)),
                           rng.normal(size=n_states), rng.normal(size=n_states))


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("seed", range(40))
def test_viterbi_equals_exhaustive(seed):
    # 40 seeds x 6 chains = 240 random potentials, lengths 1..5 (T = 1 included)
    rng = np.random.default_rng(seed)
    batch = _random_batch(rng, 6, 5, int(rng.integers(1, 4)))
    assert _same(viterbi(batch), exhaustive(batch))


@pytest.mark.parametrize("seed", range(40))
def test_loss_augmented_viterbi_equals_brute_force(seed):
    rng = np.random.default_rng(1000 + seed)
    K = int(rng.integers(2, 4))
    batch = _random_batch(rng, 6, 4, K)
    Y = [rng.integers(0, K, size=n) for n in batch.lengths()]
    loss = HammingLoss()
    got = viterbi(batch.augment(Y, loss))
    for i, y in enumerate(Y):
        pot = batch[i]
        # brute force: argmax of score + Hamming loss over every path
        best = max(pot.enumerate(), key=lambda yy: pot.score(yy) + loss(y, yy))
        assert np.array_equal(got[i], best)


@pytest.mark.parametrize("seed", range(30))
def test_exclude_equals_exhaustive(seed):
    rng = np.random.default_rng(2000 + seed)
    K = int(rng.integers(2, 4))
    batch = _random_batch(rng, 6, 4, K)
    best = viterbi(batch)
    # exclude the best path for half the chains (forces the second best), random ones else
    exclude = [b if i % 2 == 0 else rng.integers(0, K, size=len(b))
               for i, b in enumerate(best)]
    assert _same(viterbi(batch, exclude=exclude), exhaustive(batch, exclude=exclude))


@pytest.mark.parametrize("seed", range(20))
def test_kernel_matches_numpy_reference(seed):
    rng = np.random.default_rng(3000 + seed)
    K = int(rng.integers(1, 8))
    batch = _random_batch(rng, 5, 30, K)
    paths = viterbi(batch)
    for i, path in enumerate(paths):
        pot = batch[i]
        ref = _viterbi_jit.viterbi_reference(pot.unary, pot.transition, pot.start, pot.end)
        assert np.array_equal(path, ref)
        if K > 1:
            second = viterbi(pot, exclude=[ref])[0]
            ref2 = _viterbi_jit.second_best_reference(pot.unary, pot.transition, pot.start,
                                                      pot.end, ref)
            assert np.array_equal(second, ref2)
            assert not np.array_equal(second, ref)


def test_textbook_hmm_path():
    # Known answer: the classic "healthy/fever" HMM (log-probabilities), observations
    # normal, cold, dizzy: the most likely state path is healthy, healthy, fever.
    start = np.log([0.6, 0.4])
    trans = np.log([[0.7, 0.3], [0.4, 0.6]])
    emit = np.log([[0.5, 0.4, 0.1], [0.1, 0.3, 0.6]])  # states x (normal, cold, dizzy)
    unary = emit[:, [0, 1, 2]].T
    path = viterbi(ChainPotentials(unary, [0, 3], trans, start, np.zeros(2)))[0]
    assert path.tolist() == [0, 0, 1]


def test_registry_and_empty_sequences():
    dec = get_decoder("viterbi")
    assert dec.structure == "sequence"
    batch = ChainPotentials(np.zeros((2, 2)), [0, 0, 2], np.zeros((2, 2)), np.zeros(2),
                            np.zeros(2))
    out = dec(batch)
    assert out[0].size == 0 and out[1].size == 2


def test_hamming_fast_path_matches_part_losses():
    rng = np.random.default_rng(7)
    batch = _random_batch(rng, 5, 6, 4)
    Y = [rng.integers(0, 4, size=n) for n in batch.lengths()]
    for normalize in (False, True):
        loss = HammingLoss(normalize=normalize)
        fast = batch.augment(Y, loss).unary
        slow = batch.unary + np.concatenate([loss.part_losses(y, 4).reshape(-1, 4)
                                             for y in Y])
        np.testing.assert_allclose(fast, slow)


def test_bad_potentials_and_exclude():
    ok = ChainPotentials(np.zeros((3, 2)), [0, 3], np.zeros((2, 2)), np.zeros(2),
                         np.zeros(2))
    with pytest.raises(ValueError, match="transition"):
        viterbi(ChainPotentials(np.zeros((3, 2)), [0, 3], np.zeros((3, 3)), np.zeros(2),
                                np.zeros(2)))
    with pytest.raises(ValueError, match="unary scores contain NaN"):
        viterbi(ChainPotentials(np.full((3, 2), np.nan), [0, 3], np.zeros((2, 2)),
                                np.zeros(2), np.zeros(2)))
    with pytest.raises(ValueError, match="offsets"):
        viterbi(ChainPotentials(np.zeros((3, 2)), [0, 2], np.zeros((2, 2)), np.zeros(2),
                                np.zeros(2)))
    with pytest.raises(ValueError, match="Sample 0: exclude path has 2 states for 3"):
        viterbi(ok, exclude=[np.array([0, 1])])
    one = ChainPotentials(np.zeros((2, 1)), [0, 2], np.zeros((1, 1)), np.zeros(1),
                          np.zeros(1))
    with pytest.raises(ValueError, match="Sample 0: no path other"):
        viterbi(one, exclude=[np.array([0, 0])])
    with pytest.raises(TypeError, match="chain potentials"):
        viterbi(np.zeros((2, 2)))


@pytest.mark.parametrize("seed", range(5))
def test_batch_scores_equal_hand_sums(seed):
    rng = np.random.default_rng(seed)
    batch = _random_batch(rng, 7, 5, 3)
    lengths = np.r_[batch.lengths()[:3], 0, batch.lengths()[3:]]  # with an empty one
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    batch = ChainPotentials(batch.unary, offsets, batch.transition, batch.start, batch.end)
    Y = [rng.integers(0, 3, size=n) for n in lengths]
    expected = [0.0 if y.size == 0 else
                batch.start[y[0]] + batch.end[y[-1]]
                + sum(batch.unary[offsets[i] + t, y[t]] for t in range(y.size))
                + sum(batch.transition[y[t - 1], y[t]] for t in range(1, y.size))
                for i, y in enumerate(Y)]
    np.testing.assert_allclose(batch.score(Y), expected)
    np.testing.assert_allclose([batch[i].score(y) for i, y in enumerate(Y)], expected)
    with pytest.raises(ValueError, match="Sample 1: path of length 9"):
        batch.score([Y[0], np.zeros(9, int)] + Y[2:])


@pytest.mark.parametrize("seed", range(12))
def test_pruned_forward_keeps_the_reference_paths_with_ties_and_minus_inf(seed):
    # peaked unaries prune most previous states; integer scores make exact ties, which
    # must still go to the lowest state; -inf scores forbid states and transitions
    rng = np.random.default_rng(4000 + seed)
    K = int(rng.choice([2, 5, 46]))
    lengths = rng.integers(1, 25, size=6)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    unary = rng.integers(-3, 4, size=(offsets[-1], K)).astype(float) * (10 if seed % 2 else 1)
    trans = rng.integers(-2, 3, size=(K, K)).astype(float)
    start, end = rng.integers(-1, 2, size=K).astype(float), np.zeros(K)
    if seed % 3 == 0:
        trans[rng.random((K, K)) < 0.2] = -np.inf
        unary[rng.random(unary.shape) < 0.1] = -np.inf
    batch = ChainPotentials(unary, offsets, trans, start, end)
    paths = viterbi(batch)
    for i, path in enumerate(paths):
        pot = batch[i]
        with np.errstate(invalid="ignore"):
            ref = _viterbi_jit.viterbi_reference(pot.unary, pot.transition, pot.start,
                                                 pot.end)
        assert np.array_equal(path, ref)


def test_row_maxima_equals_numpy():
    rng = np.random.default_rng(5)
    trans = rng.normal(size=(7, 7))
    trans[2] = -np.inf
    np.testing.assert_array_equal(_viterbi_jit.row_maxima(trans), trans.max(axis=1))
