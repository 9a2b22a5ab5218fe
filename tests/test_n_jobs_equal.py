"""``fit(n_jobs=2)`` gives the model of ``n_jobs=1``, for every feature map and learner.

The oracle splits examples into chunks of at least ``structsvm.learners.problem.MIN_CHUNK``
examples (128 by default; the chunk boundaries depend on the number of examples only,
never on n_jobs); the tests lower it to 16 so that the 80 examples here are split and
the parallel path is really taken (the full-data oracle calls of every learner: the
1-slack and n-slack rounds, the per-epoch evaluations of the stochastic learners and
Frank-Wolfe's certificate).
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.protocols import capability
from structsvm.structures import (MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.registry import registered

N = 80  # with MIN_CHUNK = 8: four chunks of 20 examples


def _multiclass(rng):
    X = list(rng.normal(size=(N, 4)))
    Y = [["a", "b", "c"][int(np.argmax(x[:3] + 0.5 * rng.normal(size=3)))] for x in X]
    return MulticlassFeatures(), X, Y


def _taxonomy(rng):
    tree = {"r": ["p", "q"], "p": ["p1", "p2"], "q": ["q1", "q2", "q3"]}
    leaves = ["p1", "p2", "q1", "q2", "q3"]
    X = list(rng.normal(size=(N, 5)))
    Y = [leaves[int(np.argmax(x + 0.5 * rng.normal(size=5)))] for x in X]
    return TaxonomyFeatures(tree=tree), X, Y


def _sequence(rng):
    X = [rng.normal(size=(int(rng.integers(1, 5)), 3)) for _ in range(N)]
    Y = [[("A", "B", "C")[int(np.argmax(r + 0.5 * rng.normal(size=3)))] for r in x]
         for x in X]
    return SequenceFeatures(), X, Y


def _ranking(rng):
    w = rng.normal(size=3)
    X = [rng.normal(size=(int(rng.integers(2, 5)), 3)) for _ in range(N)]
    Y = [np.round(q @ w + 0.5 * rng.normal(size=len(q))) for q in X]
    return RankingFeatures(), X, Y


MAPS = {"multiclass": _multiclass, "taxonomy": _taxonomy, "sequence": _sequence,
        "ranking": _ranking}
# Documented in the learners' docstrings: with margin rescaling the sequence and ranking
# maps compute the 1-slack oracle themselves (has_aggregate_oracle), serially, so
# one_slack and Frank-Wolfe's certificate take no chunked path there.
SERIAL = {("sequence", "one_slack"), ("sequence", "frank_wolfe"),
          ("ranking", "one_slack"), ("ranking", "frank_wolfe"),
          ("multiclass", "multiclass_cd"),  # it never calls the oracle: serial by design
          # cccp trains a map without hidden part with the map's default learner
          ("multiclass", "cccp"), ("ranking", "cccp")}
# learners specialised to one map: on the others they refuse (tests/test_multiclass_cd.py)
ONLY = {"multiclass_cd": "multiclass"}
# few rounds/epochs: the point is equality of the two runs, not convergence
PARAMS = {"one_slack": dict(max_iter=15), "n_slack": dict(max_iter=5),
          "frank_wolfe": dict(max_iter=3), "pegasos": dict(max_iter=3),
          "perceptron": dict(max_iter=3)}


def _learners():
    return sorted(registered("learner"))


def _oracle_learners():
    """The learners whose n_jobs shares their oracle out; the partitioned learner
    ('runs_blocks') moves its whole work to worker processes with n_jobs=2, where it
    shares w in memory, run to run in another order (tests/test_partitioned.py
    compares its fits on workers with the serial optimum)."""
    return [n for n in _learners()
            if not capability(registered("learner")[n], "runs_blocks")]


@pytest.mark.parametrize("learner", _learners())
def test_fit_is_reproducible(learner):
    """Two fits with the same data and random_state give the same model (what the
    n_jobs comparison below relies on, and what the estimator's sklearn tags promise)."""
    fm, X, Y = _multiclass(np.random.default_rng(1))
    params = dict(PARAMS.get(learner, dict(max_iter=5)), C=1.0, tol=1e-6, random_state=0,
                  feature_map=fm, learner=learner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = structsvm.fit(X, Y, **params)
        b = structsvm.fit(X, Y, **params)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.objective_curve_ == b.objective_curve_


@pytest.mark.parametrize("learner", _oracle_learners())
@pytest.mark.parametrize("map_name", list(MAPS))
def test_two_jobs_fit_the_same_model_as_one(map_name, learner, monkeypatch):
    import joblib

    chunked = []

    class CountingParallel(joblib.Parallel):
        def __call__(self, iterable):
            chunked.append(1)
            return super().__call__(iterable)

    fm, X, Y = MAPS[map_name](np.random.default_rng(0))
    if ONLY.get(learner, map_name) != map_name:
        with pytest.raises(ValueError, match="cannot solve this problem"):
            structsvm.fit(X, Y, feature_map=fm, learner=learner, max_iter=2)
        return
    monkeypatch.setattr(joblib, "Parallel", CountingParallel)
    monkeypatch.setattr("structsvm.learners.problem.MIN_CHUNK", 8)  # N = 80: 4 chunks of 20
    monkeypatch.setattr("structsvm.learners.problem.MIN_REMOTE", 0)  # processes too
    params = dict(PARAMS.get(learner, dict(max_iter=5)), C=1.0, tol=1e-6, random_state=0,
                  feature_map=fm, learner=learner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = structsvm.fit(X, Y, n_jobs=1, **params)
        assert not chunked
        two = structsvm.fit(X, Y, n_jobs=2, **params)
    if (map_name, learner) not in SERIAL:
        assert chunked, "n_jobs=2 never split the oracle into chunks"
    # chunked sums may differ in the last bits; nothing else may differ
    np.testing.assert_allclose(two.coef_, one.coef_, rtol=1e-9, atol=1e-12)
    assert two.objective_ == pytest.approx(one.objective_, rel=1e-9)
    assert two.n_iter_ == one.n_iter_
    for a, b in zip(one.predict(X), two.predict(X)):
        np.testing.assert_array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
