"""The LP relaxation decoder: an upper bound on MAP, exact where integral and on trees."""
import itertools

import numpy as np
import pytest

from structsvm.structures.graph.features import GraphPotentials
from structsvm.structures import get_decoder
from structsvm.structures.graph.lp import lp, lp_relaxation
from structsvm.structures import HammingLoss

from test_max_product import _batch, _brute, _forest, _loopy


@pytest.mark.parametrize("seed", range(8))
def test_lp_bound_never_below_brute_force(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 4))
    graphs = [(n, _loopy(rng, n, p=0.6)) for n in rng.integers(3, 6, size=4)]
    batch = _batch(rng, graphs, K, shared_tables=False)
    out = lp(batch)
    for i in range(len(batch)):
        best, best_val = _brute(batch[i])
        assert out.bound[i] >= best_val - 1e-7
        score = batch[i].score(out[i])
        assert score <= best_val + 1e-9
        if out.exact[i]:  # integral: the LP optimum is a labelling, hence MAP
            assert score == pytest.approx(best_val, abs=1e-7)
            assert out.bound[i] == pytest.approx(best_val, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_lp_is_tight_on_forests(seed):
    rng = np.random.default_rng(100 + seed)
    K = int(rng.integers(2, 4))
    graphs = [(n, _forest(rng, n)) for n in rng.integers(1, 7, size=4)]
    batch = _batch(rng, graphs, K, shared_tables=True)
    Y = [rng.integers(0, K, size=n) for n, _ in graphs]
    aug = batch.augment(Y, HammingLoss())
    out = lp(aug)
    assert out.exact.all() and out.exact_fraction == 1.0
    for i, y in enumerate(Y):
        best, best_val = _brute(batch[i], extra=lambda yy, y=y: HammingLoss()(y, yy))
        assert np.array_equal(out[i], best)
        assert out.bound[i] == pytest.approx(best_val, abs=1e-6)


def test_frustrated_cycle_is_fractional():
    # an odd cycle that wants every edge to disagree: the local polytope's optimum is
    # μ = 1/2 everywhere (score 3), above every labelling (at most 2 edges disagree)
    tables = np.array([[[0.0, 1.0], [1.0, 0.0]]])
    p = GraphPotentials(np.zeros((3, 2)), [0, 3], np.array([[0, 1], [1, 2], [0, 2]]),
                        [0, 3], tables, np.zeros(3, dtype=int))
    mu_n, mu_e, bound, _ = lp_relaxation(p)
    assert bound[0] == pytest.approx(3.0, abs=1e-6)
    np.testing.assert_allclose(mu_n, 0.5, atol=1e-6)
    out = lp(p)
    assert not out.exact[0] and out.exact_fraction == 0.0
    assert _brute(p)[1] == pytest.approx(2.0)


def test_registered_and_exclude():
    assert get_decoder("lp").structure == "graph"
    rng = np.random.default_rng(5)
    graphs = [(3, _forest(rng, 3, keep=1.0)), (2, _forest(rng, 2, keep=1.0))]
    batch = _batch(rng, graphs, 2, shared_tables=False)
    best = lp(batch)
    got = lp(batch, exclude=list(best))
    for i in range(len(batch)):
        pot = batch[i]
        want = max((np.array(y) for y in itertools.product(range(2), repeat=len(best[i]))
                    if not np.array_equal(y, best[i])), key=pot.score)
        assert np.array_equal(got[i], want)
