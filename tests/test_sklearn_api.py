"""scikit-learn's estimator contract on StructuredSVM, with several feature maps.

scikit-learn's own checks (``sklearn.utils.estimator_checks``, public functions)
run where they apply: those that need no data on every configuration, and those
that fit numeric 2-D arrays on the multiclass estimator (X as rows is a list of
vectors). The rest of the contract is checked here on structured data, for every
map: fit returns self; no attribute is set in ``__init__`` and the parameters are
not changed by ``fit``; the attributes ``fit`` adds end in ``_``; the user's
inputs and plugin objects are not mutated; ``NotFittedError`` before fit;
``clone`` gives an unfitted copy with the same parameters that fits the same
model; ``repr`` and ``get_params``/``set_params`` through nested plugins.
"""
import copy
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import estimator_checks as checks

import structsvm
from structsvm.structures import (GraphFeatures,
    MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structure_examples import MultiLabel, multilabel_data


def _multiclass(rng):
    X = list(rng.normal(size=(30, 4)))
    Y = [["a", "b", "c"][int(np.argmax(x[:3]))] for x in X]
    return MulticlassFeatures(bias=0.5), X, Y


def _sequence(rng):
    words = {"D": ["the", "a"], "N": ["dog", "cat"], "V": ["runs", "sat"]}
    X, Y = [], []
    for _ in range(20):
        tags = ["D", "N", "V"][: int(rng.integers(1, 4))]
        X.append([words[t][int(rng.integers(2))] for t in tags])
        Y.append(tags)
    return SequenceFeatures(features="pos"), X, Y


def _ranking(rng):
    w = rng.normal(size=3)
    X = [rng.normal(size=(int(rng.integers(2, 6)), 3)) for _ in range(12)]
    return RankingFeatures(), X, [np.round(q @ w) for q in X]


def _taxonomy(rng):
    tree = {"root": ["animal", "plant"], "animal": ["cat", "dog"], "plant": ["oak", "fern"]}
    X = list(rng.normal(size=(30, 4)))
    Y = [["cat", "dog", "oak", "fern"][int(np.argmax(x))] for x in X]
    return TaxonomyFeatures(tree=tree), X, Y


def _graph(rng):
    X, Y = [], []
    for _ in range(15):
        m = int(rng.integers(2, 5))
        x = rng.normal(size=(m, 3))
        chain = np.array([(i, i + 1) for i in range(m - 1)], dtype=np.int64).reshape(-1, 2)
        X.append((x, {"chain": chain}))
        Y.append(np.array(["ab"[int(r[0] > 0)] for r in x]))
    return GraphFeatures(directed=("chain",)), X, Y


def _structure(rng):
    X, Y = multilabel_data(n=30, seed=int(rng.integers(100)))
    return MultiLabel(n_labels=3), X, Y


MAPS = {"multiclass": _multiclass, "sequence": _sequence, "ranking": _ranking,
        "taxonomy": _taxonomy, "graph": _graph, "structure": _structure}


def make(name, **params):
    fm, X, Y = MAPS[name](np.random.default_rng(0))
    return structsvm.StructuredSVM(feature_map=fm, C=1.0, max_iter=5, random_state=0,
                                   **params), X, Y


def quiet_fit(est, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, Y)


# ------------------------------------------------------------------ scikit-learn's checks
DATA_FREE = [checks.check_parameters_default_constructible,
             checks.check_no_attributes_set_in_init,
             checks.check_get_params_invariance,
             checks.check_set_params,
             checks.check_estimator_repr,
             checks.check_estimator_cloneable,
             checks.check_do_not_raise_errors_in_init_or_set_params,
             checks.check_valid_tag_types,
             checks.check_estimator_tags_renamed,
             checks.check_mixin_order]

# these fit 2-D float arrays with integer targets: the multiclass estimator's data
NUMERIC = [checks.check_estimators_fit_returns_self,
           checks.check_fit_check_is_fitted,
           checks.check_dont_overwrite_parameters,
           checks.check_estimators_overwrite_params,
           checks.check_estimators_unfitted,
           checks.check_dict_unchanged,
           checks.check_fit_idempotent,
           checks.check_methods_subset_invariance,
           checks.check_methods_sample_order_invariance,
           checks.check_non_transformer_estimators_n_iter,
           checks.check_estimators_dtypes,
           checks.check_readonly_memmap_input]


def _id(f):
    return f.__name__.removeprefix("check_")


@pytest.mark.parametrize("check", DATA_FREE, ids=_id)
@pytest.mark.parametrize("name", [None] + list(MAPS))
def test_sklearn_checks_without_data(check, name):
    est = structsvm.StructuredSVM() if name is None else make(name)[0]
    check(type(est).__name__, est)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("check", NUMERIC, ids=_id)
@pytest.mark.parametrize("params", [{}, {"feature_map": MulticlassFeatures(bias=0.5),
                                         "learner": "one_slack", "max_iter": 20}],
                         ids=["default", "one_slack"])
def test_sklearn_checks_on_numeric_multiclass_data(check, params):
    check("StructuredSVM", structsvm.StructuredSVM(**params))


# ------------------------------------------------------------------ structured data
def same(a, b):
    """Deep equality of nested inputs (arrays by value, dtype and shape)."""
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and a.shape == b.shape \
            and (a != b).nnz == 0
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) \
            and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and \
            all(same(u, v) for u, v in zip(a, b))
    return type(a) is type(b) and a == b


def read_only(obj):
    """Make every array inside ``obj`` read-only (an in-place write then raises)."""
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
    elif isinstance(obj, dict):
        for v in obj.values():
            read_only(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            read_only(v)
    return obj


@pytest.mark.parametrize("name", list(MAPS))
def test_fit_returns_self_and_adds_only_trailing_underscore_attributes(name):
    est, X, Y = make(name)
    before = dict(vars(est))
    params = joblib.hash(est.get_params(deep=True))
    with pytest.raises(NotFittedError):
        est.predict(X)
    assert quiet_fit(est, X, Y) is est
    added = set(vars(est)) - set(before)
    assert added and all(a.endswith("_") and not a.startswith("_") for a in added), added
    assert {"coef_", "feature_map_", "n_iter_", "objective_"} <= added
    assert joblib.hash(est.get_params(deep=True)) == params  # parameters unchanged
    assert all(vars(est)[k] is v for k, v in before.items())
    assert len(est.predict(X)) == len(X)


@pytest.mark.parametrize("name", list(MAPS))
def test_not_fitted_error_before_fit(name):
    est, X, Y = make(name)
    for call in (lambda: est.predict(X), lambda: est.score(X, Y),
                 lambda: est.joint_feature(X[0], Y[0]), lambda: est.save("unused.npz")):
        with pytest.raises(NotFittedError):
            call()


@pytest.mark.parametrize("name", list(MAPS))
def test_users_inputs_and_plugins_are_not_mutated(name):
    est, X, Y = make(name)
    X, Y = read_only(X), read_only(Y)
    X0, Y0 = copy.deepcopy(X), copy.deepcopy(Y)
    fm = est.feature_map
    fm_state = copy.deepcopy(vars(fm))
    quiet_fit(est, X, Y)
    est.predict(X)
    est.score(X, Y)
    assert same(X, X0) and same(Y, Y0)
    assert est.feature_map is fm and est.feature_map_ is not fm  # fitted: a clone
    assert same(vars(fm), fm_state)  # the user's map is not fitted in place


@pytest.mark.parametrize("name", list(MAPS))
def test_clone_is_unfitted_and_fits_the_same_model(name):
    est, X, Y = make(name)
    quiet_fit(est, X, Y)
    twin = clone(est)
    assert "coef_" not in vars(twin)
    with pytest.raises(NotFittedError):
        twin.predict(X)
    assert joblib.hash(twin.get_params(deep=True)) == joblib.hash(est.get_params(deep=True))
    assert twin.feature_map is not est.feature_map
    quiet_fit(twin, X, Y)
    np.testing.assert_array_equal(twin.coef_, est.coef_)  # fit is deterministic
    quiet_fit(est, X, Y)  # and idempotent
    np.testing.assert_array_equal(est.coef_, twin.coef_)


@pytest.mark.parametrize("name", list(MAPS))
def test_repr_and_nested_parameters(name):
    est, X, Y = make(name)
    fm = est.feature_map
    text = repr(est)
    assert text.startswith("StructuredSVM(") and type(fm).__name__ in text
    assert "C=1.0" in text and "max_iter=5" in text
    deep = est.get_params(deep=True)
    own = fm.get_params(deep=False)
    assert all(deep[f"feature_map__{k}"] is v for k, v in own.items())
    assert est.set_params(C=3.0) is est and est.C == 3.0
    if own:  # RankingFeatures has no parameters
        key, value = next(iter(own.items()))
        new = 2.5 if isinstance(value, float) else value
        assert est.set_params(**{f"feature_map__{key}": new}) is est
        assert est.get_params()[f"feature_map__{key}"] == new
    with pytest.raises(ValueError, match="no_such_parameter"):
        est.set_params(feature_map__no_such_parameter=1)
