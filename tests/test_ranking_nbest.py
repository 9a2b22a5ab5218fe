"""The k best orderings of the sort decoder against every permutation (scores and
order; ties among equal document scores), and through the estimator."""
import itertools

import numpy as np
import pytest

import structsvm
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking.features import RankingPotentials
from structsvm.structures.ranking.outputs import order_coef
from structsvm.structures.ranking.sort import kbest_orderings, sort_decode


def all_orderings(s):
    perms = [np.array(p) for p in itertools.permutations(range(s.size))]
    return perms, np.array([order_coef(p) @ s for p in perms])


@pytest.mark.parametrize("seed", range(30))
def test_kbest_orderings_equal_enumeration(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, size=3)
    ints = seed % 3 == 0                               # equal scores: many ties
    scores = rng.integers(0, 3, size=lengths.sum()).astype(float) if ints else \
        rng.normal(size=lengths.sum())
    batch = RankingPotentials(scores, np.concatenate([[0], np.cumsum(lengths)]))
    k = int(rng.integers(1, 10))
    for i, (orders, got) in enumerate(kbest_orderings(batch, k)):
        s = batch.query_scores(i)
        perms, all_s = all_orderings(s)
        want = np.sort(all_s)[::-1][:k]
        np.testing.assert_allclose(got, want, atol=1e-9)
        assert len({tuple(o) for o in orders}) == len(orders)
        np.testing.assert_allclose([order_coef(o) @ s for o in orders], got, atol=1e-9)
        assert np.array_equal(orders[0], sort_decode(batch[i])[0])
        if not ints:   # no ties: the orderings themselves
            for o, j in zip(orders, np.argsort(-all_s, kind="stable")[:k]):
                assert np.array_equal(o, perms[j])
        listed = {tuple(o) for o in orders}
        assert all(tuple(p) in listed for p, v in zip(perms, all_s) if v > want[-1] + 1e-9)


def test_ranker_nbest_through_the_estimator():
    rng = np.random.default_rng(1)
    X = [rng.normal(size=(4, 3)) for _ in range(6)]
    Y = [x @ np.array([1.0, -1.0, 0.5]) for x in X]
    model = structsvm.fit(X, Y, feature_map=RankingFeatures())
    margins = model.predict_margins(X[:2], level="output")
    for x, pairs, m in zip(X[:2], model.predict_nbest(X[:2], k=3), margins):
        s = x @ model.coef_
        perms, all_s = all_orderings(s)
        top = np.sort(all_s)[::-1]
        np.testing.assert_allclose([v for _, v in pairs], top[:3])
        assert np.array_equal(pairs[0][0], model.predict([x])[0])
        assert m == pytest.approx(top[0] - top[1])   # from the k-best search


def test_bad_arguments():
    batch = RankingPotentials(np.array([1.0, np.nan]), [0, 2])
    with pytest.raises(ValueError, match="Sample 0: document scores contain NaN"):
        kbest_orderings(batch, 2)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        kbest_orderings(RankingPotentials(np.zeros(2), [0, 2]), 0)
