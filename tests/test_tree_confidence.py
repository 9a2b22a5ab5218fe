"""Max-marginals and k-best projective trees over Eisner's spans (unlabelled and
labelled, single root or not, with forbidden arcs) against enumeration of every
projective tree, and the tree decoders under constraints."""
import numpy as np
import pytest

from structsvm.structures.dependency import ArcPotentials
from structsvm.structures.dependency.spans import eisner_max_marginals, kbest_eisner


def random_arcs(rng, n_sent, max_words, L=1, forbid=0.0, ints=False):
    lengths = rng.integers(1, max_words + 1, size=n_sent)
    size = int(np.sum((lengths + 1) ** 2)) * L
    scores = rng.integers(0, 3, size=size).astype(float) if ints else rng.normal(size=size)
    scores[rng.random(size) < forbid] = -np.inf
    return ArcPotentials(scores, lengths, L)


def one_root(code, n):
    heads = np.asarray(code) % (n + 1)
    return int(np.sum(heads == 0)) == 1


def enumerate_trees(one, single_root):
    n = int(one.lengths()[0])
    out = []
    for y in one.enumerate():
        if single_root and not one_root(y, n):
            continue
        s = one.score(y)
        if s > -np.inf:
            out.append((np.asarray(y), s))
    return out


def _case(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.choice([1, 1, 2, 3]))
    forbid = float(rng.choice([0.0, 0.0, 0.2, 0.5]))
    return rng, random_arcs(rng, 3, 5 if L == 1 else 4, L, forbid), bool(seed % 3 == 0)


@pytest.mark.parametrize("seed", range(40))
def test_max_marginals_equal_enumeration(seed):
    # 40 seeds x 3 sentences of 1-5 words, 1-3 relations, some arcs forbidden
    rng, batch, single = _case(seed)
    tables, best = eisner_max_marginals(batch, single_root=single)
    for i in range(len(batch)):
        one = batch[i]
        n, L = int(one.lengths()[0]), batch.n_labels
        want = np.full((n, (n + 1) * L), -np.inf)
        trees = enumerate_trees(one, single)
        for y, s in trees:
            want[np.arange(n), y] = np.maximum(want[np.arange(n), y], s)
        np.testing.assert_allclose(tables[i], want, atol=1e-9)
        assert best[i] == pytest.approx(max((s for _, s in trees), default=-np.inf))


@pytest.mark.parametrize("seed", range(40))
def test_kbest_equals_enumeration(seed):
    rng, batch, single = _case(100 + seed)
    k = int(rng.integers(1, 9))
    found = kbest_eisner(batch, k, single_root=single)
    for i in range(len(batch)):
        one = batch[i]
        trees = enumerate_trees(one, single)
        scores = np.array([s for _, s in trees])
        order = np.argsort(-scores, kind="stable")[:k]
        ys, ss = found[i]
        assert len(ys) == order.size
        np.testing.assert_allclose(ss, scores[order], atol=1e-9)
        # continuous scores: no ties, the trees themselves are the top k
        for y, j in zip(ys, order):
            assert np.array_equal(y, trees[j][0])


@pytest.mark.parametrize("seed", range(15))
def test_kbest_with_ties(seed):
    """Integer arc scores tie often: the scores are the top k of enumeration, the
    trees distinct, each scoring what is reported, and every tree above the k-th
    score is listed."""
    rng = np.random.default_rng(700 + seed)
    batch = random_arcs(rng, 2, 4, int(rng.integers(1, 3)), ints=True)
    k = int(rng.integers(1, 15))
    for i, (ys, ss) in enumerate(kbest_eisner(batch, k)):
        one = batch[i]
        trees = enumerate_trees(one, False)
        want = np.sort([s for _, s in trees])[::-1][:k]
        np.testing.assert_allclose(ss, want)
        assert len({tuple(y) for y in ys}) == len(ys)
        assert all(one.score(y) == pytest.approx(s) for y, s in zip(ys, ss))
        listed = {tuple(y) for y in ys}
        assert all(tuple(y) in listed for y, s in trees if s > want[-1] + 1e-9)


def test_bad_arguments():
    batch = random_arcs(np.random.default_rng(0), 2, 3)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        kbest_eisner(batch, 0)
    with pytest.raises(TypeError, match="ArcPotentials"):
        eisner_max_marginals(object())
    bad = ArcPotentials(np.full(4, np.nan), [1])
    with pytest.raises(ValueError, match="Sample 0: arc scores contain NaN"):
        kbest_eisner(bad, 2)
