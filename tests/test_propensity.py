"""Position-bias estimation (swaps, several rankers) and Propensity SVM-Rank's targets,
against hand-computed answers, brute-force maximum likelihood and the simulator's
true propensities."""
import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from structsvm.corpora.clicks import (ClickLog, ClickLogs, click_probabilities,
                                      examination_probabilities, simulate_click_logs)
from structsvm.structures.ranking import (PropensityCurve, harvest_position_pairs,
                                          propensities_from_rankers,
                                          propensities_from_swaps, propensity_preferences)
from structsvm.structures.ranking.propensity import _bradley_terry


def tiny_log():
    """Query 0: document 5 at position 1 (twice, one click) and at 2 (four times, one
    click); document 6 at 2 (twice, two clicks) and at 1 (four times, none)."""
    s = [ClickLog(0, [5, 6], [True, True]), ClickLog(0, [5, 6], [False, True])]
    s += [ClickLog(0, [6, 5], [False, k == 0]) for k in range(4)]
    return ClickLogs.from_sessions(s)


def test_harvested_pairs_by_hand():
    H = harvest_position_pairs(tiny_log(), 2)
    # document 5: n = (2, 4), u = 2·2·4/6 = 8/3, rates 1/2 at 1 and 1/4 at 2;
    # document 6: n = (4, 2), u = 8/3, rates 0 at 1 and 1 at 2
    u = 8 / 3
    assert H.shape == (1, 2, 2)
    assert H[0, 0, 1] == pytest.approx(u * 0.5 + u * 0.0)      # position-1 side
    assert H[0, 1, 0] == pytest.approx(u * 0.25 + u * 1.0)     # position-2 side
    assert H[0, 0, 0] == 0 and H[0, 1, 1] == 0
    curve = propensities_from_swaps(tiny_log(), 2, n_boot=20, random_state=0)
    assert curve.propensity.tolist() == pytest.approx([1.0, 1.25 / 0.5])


def test_harvested_pairs_equal_a_direct_count():
    """Every (query, document) shown at both positions, counted by brute force."""
    rng = np.random.default_rng(0)
    parts = [simulate_click_logs([rng.permutation(6) for _ in range(5)],
                                 [rng.integers(0, 3, size=6) for _ in range(5)],
                                 n_sessions=int(rng.integers(1, 6)), eta=1.0,
                                 random_state=s) for s in range(3)]
    logs = ClickLogs.concatenate(parts)
    H = harvest_position_pairs(logs, 4)
    want = np.zeros_like(H)
    pos = logs.positions
    for q, d in itertools.product(range(5), range(6)):
        at = (logs.entry_query == q) & (logs.shown == d)
        n = np.array([np.sum(at & (pos == k + 1)) for k in range(4)], dtype=float)
        c = np.array([np.sum(at & (pos == k + 1) & logs.clicks) for k in range(4)], dtype=float)
        for k, m in itertools.permutations(range(4), 2):
            if n[k] and n[m]:
                want[q, k, m] += 2 * n[k] * n[m] / (n[k] + n[m]) * c[k] / n[k]
    assert np.allclose(H, want)


def test_bradley_terry_is_the_maximum_likelihood():
    rng = np.random.default_rng(1)
    X = rng.gamma(2.0, 5.0, size=(5, 5))
    np.fill_diagonal(X, 0)
    X[0, 3] = X[3, 0] = 0.0   # a pair without comparisons

    def nll(t):
        t = np.concatenate([[0.0], t])
        d = t[:, None] - t[None, :]
        return float(np.sum(X * np.logaddexp(0.0, -d)))

    ref = minimize(nll, np.zeros(4), method="BFGS", options=dict(gtol=1e-10)).x
    got = _bradley_terry(X)
    assert np.allclose(np.log(got[1:]), ref, atol=1e-5)
    # only pairs with the top position: the ratios themselves
    star = np.zeros((4, 4))
    star[0, 1:] = [3.0, 5.0, 2.0]
    star[1:, 0] = [1.5, 1.0, 0.5]
    assert np.allclose(_bradley_terry(star), [1.0, 0.5, 0.2, 0.25])
    # not connected, or a position without clicks: no estimate
    split = np.zeros((4, 4))
    split[0, 1] = split[1, 0] = split[2, 3] = split[3, 2] = 1.0
    assert _bradley_terry(split) is None
    assert _bradley_terry(star * np.array([1.0, 1.0, 0.0, 1.0])[:, None]) is None


def mq_like(n_queries, seed):
    rng = np.random.default_rng(seed)
    return [rng.choice(3, size=int(rng.integers(10, 25)), p=[0.7, 0.2, 0.1])
            for _ in range(n_queries)]


@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_swap_estimates_are_within_ten_percent_and_intervals_cover(eta):
    rel = mq_like(150, 2)
    logger = [np.argsort(-(r + np.random.default_rng(q).normal(size=r.size)))
              for q, r in enumerate(rel)]
    logs = simulate_click_logs(logger, rel, n_sessions=1000, eta=eta, swap=10,
                               random_state=3)
    curve = propensities_from_swaps(logs, 10, n_boot=200, random_state=0)
    truth = examination_probabilities(10, eta)
    assert np.all(np.abs(curve.propensity / truth - 1) <= 0.10), curve.propensity / truth
    assert np.all(curve.lower <= curve.propensity) and np.all(curve.propensity <= curve.upper)
    assert np.mean((curve.lower <= truth) & (truth <= curve.upper)) >= 0.8
    assert curve.decay == pytest.approx(eta, rel=0.05)


def test_harvesting_several_rankers_recovers_the_curve():
    rel = mq_like(150, 4)
    rng = np.random.default_rng(5)
    parts = [simulate_click_logs([rng.permutation(r.size) for r in rel], rel,
                                 n_sessions=150, eta=1.0, random_state=10 + s)
             for s in range(3)]
    logs = ClickLogs.concatenate(parts)
    curve = propensities_from_rankers(logs, 10, n_boot=100, random_state=0)
    truth = examination_probabilities(10, 1.0)
    assert np.all(np.abs(curve.propensity / truth - 1) <= 0.10), curve.propensity / truth
    # one ranker alone intervenes nowhere: no document at two positions
    with pytest.raises(ValueError, match="no document was shown at two of positions "
                                         "1..10 in the 150 sessions"):
        propensities_from_rankers(simulate_click_logs([np.arange(r.size) for r in rel], rel,
                                                      n_sessions=1, random_state=0), 10)
    # swaps without enough sessions: a position never clicked
    few = simulate_click_logs([np.arange(r.size) for r in rel[:2]], rel[:2], n_sessions=3,
                              eta=2.0, swap=10, noise=0.0, random_state=0)
    with pytest.raises(ValueError, match="position [2-9]0?: no click on a document also "
                                         "shown at position 1 among the 6 sessions"):
        propensities_from_swaps(few, 10)


def test_interval_coverage_over_repetitions():
    """95% intervals of p_3 / p_1 from 40 independent swap experiments."""
    rel = mq_like(60, 6)
    truth = examination_probabilities(3, 1.0)[2]
    covered = 0
    for rep in range(40):
        logs = simulate_click_logs([np.arange(r.size) for r in rel], rel, n_sessions=150,
                                   eta=1.0, swap=3, random_state=100 + rep)
        c = propensities_from_swaps(logs, 3, n_boot=300, random_state=rep)
        covered += c.lower[2] <= truth <= c.upper[2]
    assert covered >= 34   # 95%: 38 expected; below 34 has probability < 1%


def test_curve_beyond_the_estimated_positions_and_plot():
    curve = PropensityCurve([1.0, 0.5, 1 / 3, 0.25], [1, .4, .3, .2], [1, .6, .4, .3],
                            level=0.9, method="swaps", n_sessions=10)
    assert curve.decay == pytest.approx(1.0)
    assert curve.at([1, 3, 8]).tolist() == pytest.approx([1.0, 1 / 3, 0.125])
    assert curve.at([8], beyond="last").tolist() == [0.25]
    with pytest.raises(ValueError, match="position 8 is beyond the 4 estimated"):
        curve.at([8], beyond="error")
    with pytest.raises(ValueError, match="positions start at 1"):
        curve.at([0])
    import matplotlib
    matplotlib.use("Agg")
    ax = curve.plot(truth=[1, 0.5, 1 / 3, 0.25])
    assert ax.get_xlabel() == "position k" and len(ax.lines) == 2


# ----------------------------------------------------------------------- targets
def test_propensity_preferences_by_hand():
    logs = [ClickLog(0, [2, 0, 1], [False, True, True], [1.0, 0.5, 0.25]),
            ClickLog(0, [0, 2, 1], [True, False, False], [1.0, 0.5, 0.25]),
            ClickLog(1, [1, 0], [False, False], [1.0, 0.5])]
    naive, ips, clipped = (propensity_preferences(logs, [3, 2], propensities=p, clip=c,
                                                  normalize=False)
                           for p, c in ((None, None), ("logged", None), ("logged", 3)))
    # query 0: document 0 clicked at positions 2 and 1 (1/p = 2 + 1), document 1 at 3
    assert naive[0].pairs.tolist() == [[0, 1], [0, 2], [1, 2], [1, 0]]
    assert naive[0].weights_of_pairs().tolist() == [2, 2, 1, 1]
    assert ips[0].weights_of_pairs().tolist() == [3, 3, 4, 4]
    assert clipped[0].weights_of_pairs().tolist() == [3, 3, 3, 3]
    assert ips[1].n_pairs == 0
    # normalised by the mean number of sessions per query (3 / 2)
    norm = propensity_preferences(logs, [3, 2], propensities="logged")
    assert norm[0].weights_of_pairs() == pytest.approx(ips[0].weights_of_pairs() / 1.5)
    # a curve of positions
    curve = propensity_preferences(logs, [3, 2], propensities=[1.0, 0.5, 0.25],
                                   normalize=False)
    assert curve[0] == ips[0]


def test_inverse_propensity_weights_estimate_click_relevance():
    """Σ over sessions of 1/p_k per click, divided by the sessions: ρ_d on average, for
    every document whatever its position; unweighted, position bias shows."""
    rel = [np.array([2, 0, 1, 2, 0, 0, 1, 2])]
    S = 20000
    logs = simulate_click_logs([np.arange(8)], rel, n_sessions=S, eta=1.0, random_state=4)
    rho = click_probabilities(rel)[0]
    ips = propensity_preferences(logs, [8], propensities="logged")[0]
    naive = propensity_preferences(logs, [8])[0]

    def per_doc(y):
        w = np.zeros(8)
        w[y.pairs[:, 0]] = y.weights_of_pairs()
        return w

    exam = examination_probabilities(8, 1.0)
    se = np.sqrt(rho * (1 - rho * exam) / (exam * S))
    assert np.all(np.abs(per_doc(ips) - rho) <= 4 * se)
    assert np.allclose(per_doc(naive), rho * exam, atol=4 * np.max(se))


@pytest.mark.parametrize("kwargs, match", [
    (dict(propensities="logged"), "the log has no propensities"),
    (dict(propensities=[1.0]), "session 0: position 2 is beyond the 1 propensities"),
    (dict(propensities=[1.0, 0.0]), "propensity of position 2 is 0.0"),
    (dict(propensities="true"), "propensities must be None, 'logged'"),
    (dict(clip=0.5), "clip must be a number >= 1"),
])
def test_propensity_preferences_errors(kwargs, match):
    logs = [ClickLog(0, [1, 0], [False, True])]
    with pytest.raises(ValueError, match=match):
        propensity_preferences(logs, [2], **kwargs)


def test_propensity_preferences_index_errors():
    with pytest.raises(ValueError, match="session 0: query 1 is outside the 1 queries"):
        propensity_preferences([ClickLog(1, [0], [True])], [2])
    with pytest.raises(ValueError, match="session 0: document 4 is outside the 2 "
                                         "documents of query 0"):
        propensity_preferences([ClickLog(0, [4], [True])], [2])
