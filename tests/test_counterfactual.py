"""Counterfactual (IPS) evaluation from logged clicks: hand-computed values, the true
value of simulations, and the coverage of its confidence interval."""
import numpy as np
import pytest

from structsvm.corpora.clicks import (ClickLog, click_probabilities,
                                      simulate_click_logs)
from structsvm.structures.ranking import (PropensityCurve, expected_click_metric,
                                          ips_estimate)


def test_ips_estimate_by_hand():
    logs = [ClickLog(0, [2, 0, 1], [False, True, True], [1.0, 0.5, 0.25]),
            ClickLog(0, [0, 2, 1], [True, False, False], [1.0, 0.5, 0.25]),
            ClickLog(1, [1, 0], [False, False], [1.0, 0.5])]
    new = [np.array([1, 2, 0]), np.array([0, 1])]   # ranks: doc 0 → 3, doc 1 → 1
    # session terms: 3/0.5 + 1/0.25 = 10; 3/1 = 3; 0
    est = ips_estimate(logs, new, metric="rank")
    terms = np.array([10.0, 3.0, 0.0])
    assert est.value == pytest.approx(terms.mean())
    assert est.stderr == pytest.approx(terms.std(ddof=1) / np.sqrt(3))
    assert est.lower == pytest.approx(est.value - 1.959964 * est.stderr, rel=1e-6)
    assert est.n_sessions == 3 and est.level == 0.95
    dcg = ips_estimate(logs, new, metric="dcg")
    g = lambda r: 1 / np.log2(1 + r)
    assert dcg.value == pytest.approx(np.mean([g(3) / 0.5 + g(1) / 0.25, g(3), 0.0]))
    cut = ips_estimate(logs, new, metric="dcg", k=2)
    assert cut.value == pytest.approx(np.mean([g(1) / 0.25, 0.0, 0.0]))
    # the propensities of a curve, and clipped weights
    curve = PropensityCurve([1.0, 0.5, 0.25], [1] * 3, [1] * 3, level=0.9,
                            method="swaps", n_sessions=3)
    assert ips_estimate(logs, new, metric="rank", propensities=curve).value == est.value
    assert ips_estimate(logs, new, metric="rank", clip=2.0).value == \
        pytest.approx(np.mean([3 * 2 + 1 * 2, 3.0, 0.0]))


def simulated_world(seed=0, n_queries=30, n_docs=10):
    rng = np.random.default_rng(seed)
    rel = [rng.choice(3, size=n_docs, p=[0.6, 0.25, 0.15]) for _ in range(n_queries)]
    logger = [rng.permutation(n_docs) for _ in range(n_queries)]
    # the new ranker: better than random, worse than the truth
    new = [np.argsort(-(r + rng.normal(scale=1.0, size=n_docs)), kind="stable")
           for r in rel]
    return rel, logger, new


@pytest.mark.parametrize("metric", ["dcg", "rank"])
def test_interval_covers_the_true_value_in_at_least_90_of_100_repetitions(metric):
    """100 independent logs of 3,000 sessions each (100 per query, η = 1): the 95%
    interval V̂ ± 1.96 SE covers the true value — Σ_d ρ_d λ(rank) averaged over
    queries, from the simulator's own click probabilities — at least 90 times; and
    the estimates average to the truth (no bias)."""
    rel, logger, new = simulated_world()
    truth = expected_click_metric(new, click_probabilities(rel), metric=metric)
    covered, values = 0, []
    for rep in range(100):
        logs = simulate_click_logs(logger, rel, n_sessions=100, eta=1.0,
                                   random_state=1000 + rep)
        est = ips_estimate(logs, new, metric=metric)
        covered += est.lower <= truth <= est.upper
        values.append(est.value)
    assert covered >= 90, covered
    # the mean of 100 estimates is within 4 standard errors of that mean
    assert abs(np.mean(values) - truth) <= 4 * np.std(values) / 10
    # not vacuous: the naive (unweighted) estimate is biased and its interval misses
    naive = ips_estimate(logs, new, metric=metric, propensities=np.ones(10))
    assert not naive.lower <= truth <= naive.upper


def test_true_value_and_errors():
    assert expected_click_metric([[1, 0]], [[0.5, 1.0]], metric="rank") == 2.0
    assert expected_click_metric([[1, 0], [0]], [[0.5, 1.0], [1.0]], metric="rank",
                                 query_weights=[3, 1]) == pytest.approx((3 * 2.0 + 1) / 4)
    with pytest.raises(ValueError, match="metric must be one of"):
        expected_click_metric([[0]], [[1.0]], metric="ndcg")
    with pytest.raises(ValueError, match="Sample 0: a ranking must be a permutation"):
        ips_estimate([ClickLog(0, [0], [True], [1.0])], [[0, 0]])
    with pytest.raises(ValueError, match="session 0: document 3 is outside the 2"):
        ips_estimate([ClickLog(0, [3], [True], [1.0])], [[0, 1]])
    with pytest.raises(ValueError, match="session 0: query 2 is outside the 1 rankings"):
        ips_estimate([ClickLog(2, [0], [True], [1.0])], [[0, 1]])
    with pytest.raises(ValueError, match="the log has no sessions"):
        ips_estimate([], [[0, 1]])
    with pytest.raises(ValueError, match="k \\(a cut-off\\) applies to metric='dcg'"):
        ips_estimate([ClickLog(0, [0], [True], [1.0])], [[0, 1]], metric="rank", k=3)


def test_interval_with_estimated_propensities_includes_their_error():
    """Propensities estimated from a small swap experiment (1,200 sessions) are off by
    several percent: an interval of the click noise alone then misses the truth
    about half the time; with the spread of the curve's bootstrap replicates added
    it covers it at least 90% of the time (50 repetitions)."""
    from structsvm.structures.ranking import propensities_from_swaps

    rel, logger, new = simulated_world()
    truth = expected_click_metric(new, click_probabilities(rel), metric="dcg")
    covered = covered_bare = 0
    for rep in range(50):
        swaps = simulate_click_logs(logger, rel, n_sessions=40, eta=1.0, swap=10,
                                    random_state=5000 + rep)
        curve = propensities_from_swaps(swaps, 10, n_boot=200, random_state=rep)
        assert curve.replicates.shape == (200, 10)
        logs = simulate_click_logs(logger, rel, n_sessions=200, eta=1.0,
                                   random_state=9000 + rep)
        est = ips_estimate(logs, new, propensities=curve)
        bare = ips_estimate(logs, new, propensities=curve.propensity)
        assert est.value == pytest.approx(bare.value) and est.stderr > bare.stderr
        covered += est.lower <= truth <= est.upper
        covered_bare += bare.lower <= truth <= bare.upper
    assert covered >= 45, covered
    assert covered_bare <= 40, covered_bare
