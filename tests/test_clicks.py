"""Click simulator, click-derived preferences, and learning a ranking from clicks."""
import numpy as np
import pytest

import structsvm
from structsvm.corpora.clicks import (click_preferences, make_ranking_problem,
                              preferences_from_clicks, simulate_clicks)
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking import ndcg_at_k


def test_rules_on_a_hand_made_session():
    shown = [10, 11, 12, 13, 14]
    clicks = [False, True, False, False, True]
    pairs = lambda rule: sorted(map(tuple, preferences_from_clicks(shown, clicks, rule)))
    assert pairs("skip_above") == [(11, 10), (14, 10), (14, 12), (14, 13)]
    assert pairs("last_click_skip_above") == [(14, 10), (14, 12), (14, 13)]
    assert pairs("skip_previous") == [(11, 10), (14, 13)]
    assert pairs("no_click_next") == [(11, 12)]
    assert pairs(["skip_previous", "no_click_next"]) == [(11, 10), (11, 12), (14, 13)]
    assert preferences_from_clicks(shown, [False] * 5).shape == (0, 2)
    with pytest.raises(ValueError, match="unknown rule"):
        preferences_from_clicks(shown, clicks, "click_everything")


def test_noise_free_cascade_clicks_only_relevant_results():
    rel = [np.array([0, 2, 0, 1, 0, 2])]
    logs = simulate_clicks([np.arange(6)], rel, n_sessions=50, noise=0.0, random_state=0)
    for log in logs:
        assert np.all(rel[0][log.shown[log.clicks]] > 0)
    # not vacuous: the first relevant result (position 1) is clicked in every session
    assert all(log.clicks[1] for log in logs)
    # pairs never prefer an irrelevant document
    prefs = click_preferences(logs, 1)[0]
    assert len(prefs) > 0
    for a, b in prefs:
        assert rel[0][a] > 0


def test_position_bias_lowers_click_rates_down_the_list():
    rel = [np.ones(10)]
    logs = simulate_clicks([np.arange(10)], rel, n_sessions=4000, model="position",
                           noise=0.0, eta=1.0, random_state=1)
    rate = np.mean([log.clicks for log in logs], axis=0)
    assert rate[0] > rate[2] > rate[5] > rate[9]
    assert rate[0] == pytest.approx(1.0) and rate[4] == pytest.approx(0.2, abs=0.03)


def test_simulator_errors():
    with pytest.raises(ValueError, match="Sample 0: the ranking must be a permutation"):
        simulate_clicks([[0, 0]], [[1, 0]])
    with pytest.raises(ValueError, match="noise"):
        simulate_clicks([[0, 1]], [[1, 0]], noise=0.7)


def test_learning_from_simulated_clicks_beats_the_initial_ranking():
    X, Y, _ = make_ranking_problem(60, 15, 8, random_state=0)
    train, test = slice(0, 40), slice(40, 60)
    rng = np.random.default_rng(0)
    initial = [rng.permutation(15) for _ in X]
    logs = simulate_clicks(initial[train], Y[train], n_sessions=4, noise=0.1,
                           random_state=2)
    pairs = click_preferences(logs, 40)
    model = structsvm.fit(X[train], pairs, feature_map=RankingFeatures(), decoder="sort",
                          C=0.1)
    before = ndcg_at_k(Y[test], initial[test])
    after = ndcg_at_k(Y[test], model.predict(X[test]))
    assert after > before + 0.2
