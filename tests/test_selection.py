"""Grid, line and subset search; σ and ε heuristics."""
import math

import numpy as np
import pytest
from sklearn.model_selection import KFold, cross_val_score

from structsvm.corpora.synthetic import make_two_spirals
from structsvm.structures import MulticlassFeatures
from structsvm.svm import KernelPegasosClassifier
from structsvm.svm import PegasosRegressor
from structsvm.model_selection import (cluster_sigma, cv_error, epsilon_from_residuals,
                                 golden_section, grid_search, line_search, subset_search)


def two_spirals(n, noise=0.15, seed=0):
    return make_two_spirals(n, noise=noise, random_state=seed)


@pytest.fixture(scope="module")
def spiral_searches():
    X, y = two_spirals(240, seed=0)
    est = KernelPegasosClassifier(max_iter=10, random_state=0)
    bounds = {"C": (0.1, 1000.0), "sigma": (0.02, 2.0)}
    grid = grid_search(est, X, y, {"C": np.logspace(-1, 3, 9),
                                   "sigma": np.logspace(math.log10(0.02), math.log10(2), 9)},
                       cv=3)
    line = line_search(est, X, y, bounds, cv=3, xtol=0.1)
    subset = subset_search(est, X, y, bounds, n_subset=80, cv=3, xtol=0.1)
    return X, y, est, grid, line, subset


def test_grid_surface_is_the_cv_error(spiral_searches):
    X, y, est, grid, _, _ = spiral_searches
    assert grid.errors.shape == (9, 9)
    assert grid.n_fits == 81 * 3
    i, j = 4, 2
    C, s = grid.grid["C"][i], grid.grid["sigma"][j]
    folds = KFold(3, shuffle=True, random_state=0)
    acc = cross_val_score(est.set_params(C=C, sigma=s), X, y, cv=folds)
    assert grid.errors[i, j] == pytest.approx(1 - acc.mean())
    assert grid.best_error == grid.errors.min()
    assert cv_error(est, X, y, grid.best_params, cv=3) == grid.best_error


def test_line_and_subset_search_near_grid_best_for_a_fraction_of_the_fits(spiral_searches):
    X, y, est, grid, line, subset = spiral_searches
    for res in (line, subset):
        assert res.best_error <= grid.best_error + 0.01   # within 1 point
        # the cost: CV error of the returned point, at fewer fits than the grid
        assert cv_error(est, X, y, res.best_params, cv=3) == pytest.approx(res.best_error)
    assert line.n_fits < 0.6 * grid.n_fits
    # the subset's fits are on 80 of the 240 points: compare in data units
    assert line.fit_samples < 0.6 * grid.fit_samples
    assert subset.fit_samples < 0.6 * grid.fit_samples
    assert grid.fit_samples == 81 * 2 * 240
    assert line.path[0] == {"C": pytest.approx(10.0), "sigma": pytest.approx(0.2)}


def test_subset_search_scales_C():
    X, y = two_spirals(120, seed=1)
    est = KernelPegasosClassifier(max_iter=5, random_state=0)
    res = subset_search(est, X, y, {"C": (1.0, 100.0), "sigma": (0.05, 1.0)}, n_subset=40,
                        cv=3, xtol=0.3, refine=None)
    sub_best = res.path[-2]
    assert res.best_params["C"] == pytest.approx(sub_best["C"] * 40 / 120)
    assert res.best_params["sigma"] == sub_best["sigma"]
    with pytest.raises(ValueError, match="n_subset"):
        subset_search(est, X, y, {"C": (1.0, 10.0)}, n_subset=500)


def test_golden_section_finds_minimum_and_never_worsens():
    x, fx = golden_section(lambda u: abs(u - 0.3), -2.0, 2.0, xtol=1e-8)
    assert x == pytest.approx(0.3, abs=1e-7)
    x, fx = golden_section(lambda u: 1.0, -1.0, 1.0, x0=5.0, f0=0.5)
    assert (x, fx) == (5.0, 0.5)
    with pytest.raises(ValueError, match="lo < hi"):
        golden_section(abs, 1.0, 0.0)


def test_works_with_structured_estimator_and_structured_scorer():
    import structsvm

    rng = np.random.RandomState(0)
    y = np.repeat([0, 1, 2], 12)
    X = np.array([[0, 0], [3, 0], [0, 3]])[y] + 1.5 * rng.randn(36, 2)
    X = np.c_[X, np.ones(36)]
    est = structsvm.StructuredSVM(feature_map=MulticlassFeatures(), decoder="argmax")

    def errors_scorer(model, Xs, Ys):   # a structured scorer on lists
        return float(np.mean([p == t for p, t in zip(model.predict(Xs), Ys)]))

    res = grid_search(est, list(X), list(y), {"C": [0.01, 1.0]}, cv=3,
                      scoring=errors_scorer)
    assert res.errors.shape == (2,)
    # the error of a setting is 1 − its mean held-out scorer value, recomputed by hand
    from sklearn.base import clone

    for k, C in enumerate([0.01, 1.0]):
        held_out = []
        for tr, te in KFold(3, shuffle=True, random_state=0).split(X):  # cv=3
            m = clone(est).set_params(C=C).fit(list(X[tr]), list(y[tr]))
            held_out.append(errors_scorer(m, list(X[te]), list(y[te])))
        assert res.errors[k] == pytest.approx(1 - np.mean(held_out))
    assert res.best_error == res.errors.min()
    assert res.best_error < 0.5   # well-separated blobs: far better than chance (2/3)


def test_cluster_sigma_recovers_blob_width():
    rng = np.random.RandomState(0)
    X = np.r_[rng.randn(300, 2) * 0.3, rng.randn(300, 2) * 0.3 + 8]
    s = cluster_sigma(X, n_clusters=2)
    assert s["min"] == pytest.approx(0.3, rel=0.15) and s["max"] == pytest.approx(0.3, rel=0.15)


@pytest.mark.parametrize("upsilon", [1.645, 1.96])
def test_epsilon_from_residuals(upsilon):
    rng = np.random.RandomState(0)
    X = rng.rand(200, 2)
    y = X @ [1.0, 2.0] + 0.2 * rng.randn(200)
    reg = PegasosRegressor(C=5.0, random_state=0)
    eps = epsilon_from_residuals(reg, X, y, upsilon=upsilon)
    fitted = PegasosRegressor(C=5.0, epsilon=0.0, random_state=0).fit(X, y)
    assert eps == pytest.approx(upsilon * np.std(y - fitted.predict(X)))
    assert 0.15 * upsilon < eps < 0.25 * upsilon
    assert epsilon_from_residuals(reg, X, y, upsilon=upsilon, cv=3) > 0
    # ε joins the grid like any other parameter
    res = grid_search(reg, X, y, {"C": [1.0, 10.0], "epsilon": [0.0, eps]}, cv=3)
    assert res.errors.shape == (2, 2)
