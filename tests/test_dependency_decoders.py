"""Eisner and Chu-Liu-Edmonds against brute force over every tree of short
sentences, plain and loss-augmented; the trees' counts; errors."""
import itertools

import numpy as np
import pytest

from structsvm.structures import HammingLoss
from structsvm.structures.dependency import (ArcPotentials, chu_liu_edmonds,
                                             count_projective_trees, eisner,
                                             is_projective, is_tree, projective_trees)
from structsvm.structures.exhaustive import exhaustive
from structsvm.registry import lookup


def all_trees(n):
    """Every head vector of n words that is a tree (brute force over (n + 1)^n)."""
    return [np.array(h) for h in itertools.product(range(n + 1), repeat=n) if is_tree(h)]


TREES = {n: all_trees(n) for n in range(1, 6)}
PROJECTIVE = {n: [t for t in ts if is_projective(t)] for n, ts in TREES.items()}


def one_root(trees):
    return [t for t in trees if np.count_nonzero(t == 0) == 1]


def test_tree_counts_against_brute_force():
    # Cayley: (n + 1)^(n - 1) trees rooted at node 0; projective ones C(3n, n) / (2n + 1)
    for n, trees in TREES.items():
        assert len(trees) == (n + 1) ** (n - 1)
        assert len(PROJECTIVE[n]) == count_projective_trees(n)
        assert sorted(map(tuple, PROJECTIVE[n])) == \
            sorted(tuple(t) for t in projective_trees(n))


def test_is_tree_and_is_projective_known_answers():
    assert is_tree([0]) and is_tree([2, 0, 2]) and is_tree([0, 0, 0])
    assert not is_tree([1]) and not is_tree([2, 1]) and not is_tree([2, 3, 1])
    assert not is_tree([4, 0]) and not is_tree([-1, 0])
    assert is_projective([2, 0, 2]) and not is_projective([3, 4, 0, 1])
    assert not is_projective([0, 4, 1, 0])  # 1 -> 3 crosses 0 -> 4... and 2 -> 4
    assert is_projective([0, 3, 1])


def random_batch(rng, lengths, integer=False):
    scores = [rng.normal(size=(n + 1) ** 2) for n in lengths]
    if integer:  # many ties
        scores = [np.round(2 * s) for s in scores]
    return ArcPotentials(np.concatenate(scores), lengths)


@pytest.mark.parametrize("decoder, space", [(eisner, PROJECTIVE), (chu_liu_edmonds, TREES)])
@pytest.mark.parametrize("single_root", [False, True])
def test_decoders_equal_brute_force(decoder, space, single_root):
    rng = np.random.default_rng(1)
    lengths = [1, 2, 3, 4, 5] * 12
    for integer in (False, True):
        batch = random_batch(rng, lengths, integer)
        out = decoder(batch, single_root=single_root)
        for i, (n, y) in enumerate(zip(lengths, out)):
            trees = one_root(space[n]) if single_root else space[n]
            p = batch[i]
            best = max(p.score(t) for t in trees)
            assert is_tree(y) and any(np.array_equal(y, t) for t in trees), (i, y)
            assert p.score(y) == pytest.approx(best, abs=1e-12), (i, y)


@pytest.mark.parametrize("decoder, space", [(eisner, PROJECTIVE), (chu_liu_edmonds, TREES)])
def test_loss_augmented_decoding_equals_brute_force(decoder, space):
    """argmax_y Δ(y*, y) + s(y) over every tree, with the Hamming loss over heads
    (plain and normalised) added by the batch."""
    rng = np.random.default_rng(2)
    lengths = [1, 2, 3, 4, 5] * 8
    batch = random_batch(rng, lengths)
    truth = [space[n][rng.integers(len(space[n]))] for n in lengths]
    for loss in (HammingLoss(), HammingLoss(normalize=True)):
        out = decoder(batch.augment(truth, loss))
        for i, (n, y) in enumerate(zip(lengths, out)):
            p, t = batch[i], truth[i]
            best = max(loss(t, c) + p.score(c) for c in space[n])
            assert loss(t, y) + p.score(y) == pytest.approx(best, abs=1e-12)


def test_augment_with_a_part_loss_table_equals_counting():
    """A loss without counts_wrong_parts goes through part_losses: the same scores."""
    class TableHamming(HammingLoss):
        counts_wrong_parts = False

    rng = np.random.default_rng(3)
    batch = random_batch(rng, [3, 4, 2])
    truth = [np.array([2, 0, 2]), np.array([0, 1, 2, 3]), np.array([2, 0])]
    a = batch.augment(truth, HammingLoss())
    b = batch.augment(truth, TableHamming())
    for i in range(3):  # the arcs (column 0 and the diagonal are none)
        arcs = ~np.eye(len(truth[i]) + 1, dtype=bool)
        arcs[:, 0] = False
        assert np.allclose(a.matrix(i)[arcs], b.matrix(i)[arcs])
        assert not np.allclose(a.matrix(i)[arcs], batch.matrix(i)[arcs])


def test_exhaustive_decoder_enumerates_projective_trees():
    rng = np.random.default_rng(4)
    batch = random_batch(rng, [1, 3, 4])
    for y, z in zip(exhaustive(batch), eisner(batch)):
        assert np.array_equal(y, z) or batch[0].score(y) == batch[0].score(z)
    assert batch.output_space_sizes() == [1, 12, 55]


def test_eisner_known_answer_and_crossing_tree():
    S = np.full((5, 5), 0.0)
    S[0, 3], S[3, 1], S[4, 2], S[1, 4] = 5, 2, 2, 2  # best tree crosses: 3->1->4->2
    p = ArcPotentials(S.ravel(), [4])
    assert chu_liu_edmonds(p)[0].tolist() == [3, 4, 0, 1]
    y = eisner(p)[0]
    assert is_projective(y) and p.score(y) < p.score([3, 4, 0, 1])


def test_long_sentence_decoders_agree_on_projective_optimum():
    """On scores whose best tree is projective (a chain's arcs score highest), both
    decoders find it, also for a long sentence."""
    n = 120
    S = np.random.default_rng(5).normal(scale=0.1, size=(n + 1, n + 1))
    for d in range(1, n + 1):
        S[d - 1, d] += 10.0  # the chain 0 -> 1 -> 2 -> ...
    p = ArcPotentials(S.ravel(), [n])
    chain = np.arange(n)
    assert np.array_equal(eisner(p)[0], chain)
    assert np.array_equal(chu_liu_edmonds(p)[0], chain)


def test_registered_decoders():
    for name in ("eisner", "chu_liu_edmonds", "eisner_one_root",
                 "chu_liu_edmonds_one_root"):
        assert lookup("decoder", name).structure == "dependency"
    S = np.zeros((4, 4))
    S[0, 1] = S[0, 2] = S[0, 3] = 1.0
    p = ArcPotentials(S.ravel(), [3])
    assert lookup("decoder", "eisner")(p)[0].tolist() == [0, 0, 0]
    assert np.count_nonzero(lookup("decoder", "eisner_one_root")(p)[0] == 0) == 1
    assert np.count_nonzero(lookup("decoder", "chu_liu_edmonds_one_root")(p)[0] == 0) == 1


def test_decoder_errors():
    p = ArcPotentials(np.zeros(9), [2])
    with pytest.raises(ValueError, match="cannot exclude a tree"):
        eisner(p, exclude=[np.array([0, 1])])
    bad = ArcPotentials(np.array([0.0, np.nan, 0, 0, 0, 0, 0, 0, 0]), [2])
    with pytest.raises(ValueError, match="Sample 0: arc scores contain NaN"):
        chu_liu_edmonds(bad)
    with pytest.raises(TypeError, match="decodes dependency potentials"):
        eisner(np.zeros(4))
    with pytest.raises(ValueError, match="need 9"):
        ArcPotentials(np.zeros(8), [2])
    with pytest.raises(ValueError, match="Sample 0: 3 heads for a sentence of 2 words"):
        p.score([[0, 1, 2]])
