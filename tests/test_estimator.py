"""StructuredSVM: scikit-learn contract, bad input, model files, digits vs LinearSVC."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.svm import LinearSVC

import structsvm
from structsvm import StructuredSVM
from structsvm.protocols import StructureMismatchError
from structsvm.structures import MulticlassFeatures
from structsvm.io import ModelFileError
from structsvm.learners import OneSlackCuttingPlane


def blobs(seed=0, n=60, d=3, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(scale=2.0, size=(k, d))[y] + rng.normal(size=(n, d))
    return list(X), [f"class{c}" for c in y]


# ------------------------------------------------------------------ sklearn contract
def test_clone_and_params_round_trip():
    est = StructuredSVM(feature_map=MulticlassFeatures(bias=1.0), decoder="argmax", C=3.0,
                        learner=OneSlackCuttingPlane(solver="osqp"))
    params = est.get_params()
    assert params["C"] == 3.0 and params["feature_map__bias"] == 1.0
    assert params["learner__solver"] == "osqp"
    twin = clone(est)
    assert twin.get_params()["learner__solver"] == "osqp" and twin.learner is not est.learner
    twin.set_params(C=0.5, learner__solver="clarabel", feature_map__bias=0.0)
    assert twin.C == 0.5 and twin.learner.solver == "clarabel"
    assert est.learner.solver == "osqp"  # the original is untouched


def test_fit_does_not_mutate_the_users_feature_map():
    fm = MulticlassFeatures()
    X, Y = blobs()
    model = structsvm.fit(X, Y, feature_map=fm)
    assert not hasattr(fm, "classes_")
    assert model.feature_map_ is not fm


def test_grid_search_over_lists_of_structures():
    X, Y = blobs(1, n=60)
    # random_state: the default learner (dual_cd) visits examples in a random order
    search = GridSearchCV(StructuredSVM(feature_map=MulticlassFeatures(), decoder="argmax",
                                        random_state=0),
                          {"C": [0.01, 1.0], "feature_map__bias": [0.0, 1.0]},
                          cv=KFold(3, shuffle=True, random_state=0))
    search.fit(X, Y)
    assert set(search.best_params_) == {"C", "feature_map__bias"}
    # best_score_ is the mean held-out score of the best setting, recomputed by hand
    cv = KFold(3, shuffle=True, random_state=0)
    best = StructuredSVM(feature_map=MulticlassFeatures(), decoder="argmax", random_state=0)
    best.set_params(**search.best_params_)
    fold_scores = []
    for tr, te in cv.split(X):
        m = clone(best).fit([X[i] for i in tr], [Y[i] for i in tr])
        fold_scores.append(m.score([X[i] for i in te], [Y[i] for i in te]))
    assert search.best_score_ == pytest.approx(np.mean(fold_scores), rel=1e-12)
    assert search.best_score_ == max(search.cv_results_["mean_test_score"])
    # the refitted model is the best setting trained on all the data
    np.testing.assert_allclose(search.best_estimator_.coef_, clone(best).fit(X, Y).coef_,
                               rtol=1e-12, atol=1e-14)


def test_score_is_one_minus_normalised_loss():
    X, Y = blobs(2)
    model = structsvm.fit(X, Y, C=1.0)
    pred = model.predict(X)
    acc = np.mean([p == y for p, y in zip(pred, Y)])
    assert model.score(X, Y) == pytest.approx(acc)


def test_verbose_logs_rounds(caplog):
    X, Y = blobs(3)
    with caplog.at_level("INFO", logger="structsvm"):
        structsvm.fit(X, Y, verbose=1)
    assert any("objective" in r.getMessage() and "gap" in r.getMessage()
               for r in caplog.records)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("bad_c", [0, -1.0, float("nan"), float("inf"), "1"])
def test_bad_C(bad_c):
    X, Y = blobs()
    with pytest.raises(ValueError, match="C must be a finite number > 0"):
        structsvm.fit(X, Y, C=bad_c)


def test_bad_input_messages():
    X, Y = blobs()
    with pytest.raises(ValueError, match="same length: X has 60 samples, Y has 59"):
        structsvm.fit(X, Y[:-1])
    with pytest.raises(ValueError, match="empty data set"):
        structsvm.fit([], [])
    Xnan = [x.copy() for x in X]
    Xnan[17][1] = np.nan
    with pytest.raises(ValueError, match="Sample 17: X contains NaN or infinite"):
        structsvm.fit(Xnan, Y)
    Xinf = [x.copy() for x in X]
    Xinf[3][0] = np.inf
    with pytest.raises(ValueError, match="Sample 3"):
        structsvm.fit(Xinf, Y)
    with pytest.raises(ValueError, match="Sample 1: has 2 features, sample 0 has 3"):
        structsvm.fit([np.ones(3), np.ones(2)], ["a", "b"])
    with pytest.raises(TypeError, match="Sample 0: expected a numeric feature vector"):
        structsvm.fit(["abc", "def"], ["a", "b"])
    with pytest.raises(ValueError, match="Unknown decoder 'viterbo'"):
        structsvm.fit(X, Y, decoder="viterbo")
    with pytest.raises(ValueError, match="Unknown learner 'sgd'"):
        structsvm.fit(X, Y, learner="sgd")
    with pytest.raises(ValueError, match="Unknown loss 'hinge'"):
        structsvm.fit(X, Y, loss="hinge")
    with pytest.raises(ValueError, match="Unknown QP solver 'mosek'"):
        structsvm.fit(X, Y, learner=OneSlackCuttingPlane(solver="mosek"))
    with pytest.raises(TypeError, match="not the string 'ranking'.*ranking, sequence"):
        structsvm.fit(X, Y, feature_map="ranking")
    with pytest.raises(ValueError, match="rescaling must be"):
        structsvm.fit(X, Y, rescaling="both")
    with pytest.raises(ValueError, match="max_iter must be a positive integer"):
        structsvm.fit(X, Y, max_iter=0)


def test_predict_errors():
    X, Y = blobs()
    model = structsvm.fit(X, Y)
    with pytest.raises(ValueError, match="X has 2 features per sample, the feature map "
                                         "was fitted with 3"):
        model.predict([np.ones(2)])
    with pytest.raises(ValueError, match="Sample 0: unknown label 'zzz'"):
        model.score(X[:1], ["zzz"])
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        StructuredSVM().predict(X)


def test_decoder_of_another_structure_is_refused():
    from structsvm.protocols import Decoder

    chain_only = Decoder(name="chain_thing", structure="chain", func=lambda b, exclude=None: [])
    X, Y = blobs()
    with pytest.raises(StructureMismatchError, match="decodes 'chain' structures but "
                                                     "MulticlassFeatures produces "
                                                     "'multiclass'"):
        structsvm.fit(X, Y, decoder=chain_only)


# ------------------------------------------------------------------ model files
def test_save_load_round_trip(tmp_path):
    X, Y = blobs(4)
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(bias=1.0), C=2.0,
                          learner=OneSlackCuttingPlane(solver="osqp"), loss="hamming")
    path = model.save(tmp_path / "model.npz")
    again = structsvm.load(path)
    assert again.predict(X) == model.predict(X)
    np.testing.assert_array_equal(again.coef_, model.coef_)
    assert again.get_params()["learner__solver"] == "osqp"
    assert again.objective_ == model.objective_
    assert again.objective_curve_ == model.objective_curve_
    assert list(again.feature_map_.classes_) == list(model.feature_map_.classes_)


def test_save_load_attribute_map_with_tuple_labels(tmp_path):
    attrs = {("animal", "cat"): [1.0, 0.0], ("animal", "dog"): [0.0, 1.0], 3: [1.0, 1.0]}
    X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]
    Y = [("animal", "cat"), ("animal", "dog"), 3]
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(attributes=attrs), C=10.0)
    again = structsvm.load(model.save(tmp_path / "m.npz"))
    assert again.predict(X) == model.predict(X)
    assert again.feature_map_.classes_.tolist() == model.feature_map_.classes_.tolist()


def test_damaged_model_files_are_refused(tmp_path):
    X, Y = blobs(5)
    path = structsvm.fit(X, Y).save(tmp_path / "model.npz")
    raw = path.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFileError, match="not a structsvm model file or is damaged"):
        structsvm.load(truncated)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, coef=np.ones(3))
    with pytest.raises(ModelFileError, match="not a structsvm model"):
        structsvm.load(foreign)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(ModelFileError):
        structsvm.load(text)
    with pytest.raises(FileNotFoundError, match="No model file"):
        structsvm.load(tmp_path / "missing.npz")


def test_flipped_byte_is_detected(tmp_path):
    import zipfile

    X, Y = blobs(6)
    path = structsvm.fit(X, Y).save(tmp_path / "model.npz")
    # rewrite the archive with one coefficient changed: the checksum must catch it
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    name = next(n for n in members if "coef" in n)
    blob = bytearray(members[name])
    blob[-1] ^= 0xFF
    members[name] = bytes(blob)
    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(bad, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    with pytest.raises(ModelFileError, match="checksum"):
        structsvm.load(bad)


def test_unsaveable_parameter_is_named(tmp_path):
    X, Y = blobs(7)
    model = structsvm.fit(X, Y, loss=lambda a, b: float(a != b))
    with pytest.raises(ValueError, match="Cannot save the model: loss is '<lambda>'"):
        model.save(tmp_path / "m.npz")


def test_fit_and_load_adopt_the_fitted_state_through_one_method(tmp_path, monkeypatch):
    """One method sets the fitted attributes: a fit, a resumed fit and structsvm.load
    each adopt the state once (and it alone writes them, see the next test)."""
    calls = []
    original = StructuredSVM._adopt

    def spy(self, fitted):
        calls.append(type(self).__name__)
        return original(self, fitted)

    monkeypatch.setattr(StructuredSVM, "_adopt", spy)
    X, Y = blobs(8)
    ck = tmp_path / "ck.npz"
    model = structsvm.fit(X, Y, checkpoint=ck)
    # a checkpoint keeps the default learner
    assert model.learner_.name == "multiclass_cd" and len(calls) == 1
    again = structsvm.load(ck)
    assert len(calls) == 2 and again.predict(X) == model.predict(X)
    assert (again.C_, again.tol_) == (model.C_, model.tol_) == (1.0, 5e-4)
    StructuredSVM().fit(X, Y, resume=ck)
    assert len(calls) == 3  # the resumed fit: the checkpoint is read as a state


def test_fitted_attributes_are_written_in_one_place():
    import ast
    import inspect

    import structsvm.estimator._checkpoints
    import structsvm.estimator._estimator
    import structsvm.estimator._saved_state
    import structsvm.estimator._training
    import structsvm.io

    fitted = {"coef_", "feature_map_", "decoder_", "loss_", "learner_", "objective_",
              "objective_curve_", "n_iter_", "duality_gap_", "converged_",
              "interrupted_", "C_", "tol_", "learner_state_"}
    where = []
    for mod in (structsvm.estimator._estimator, structsvm.estimator._training,
                structsvm.estimator._checkpoints, structsvm.estimator._saved_state,
                structsvm.io):
        tree = ast.parse(inspect.getsource(mod))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for node in ast.walk(func):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) \
                    else []
                for t in targets:
                    for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(el, ast.Attribute) and el.attr in fitted:
                            where.append((mod.__name__, func.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr":
                where.append((mod.__name__, "setattr"))
    assert set(where) == {("structsvm.estimator._estimator", "_adopt")}, where


def test_the_training_run_calls_nothing_private_of_the_estimator():
    """run_fit reads the parameters from a Resolution and returns a Fitted state: it
    neither imports the estimator nor reaches for a private member of any object but
    its own modules."""
    import ast
    import inspect

    import structsvm.estimator._training as training

    tree = ast.parse(inspect.getsource(training))
    modules = {a.asname or a.name.split(".")[-1] for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and "_estimator" in m for m in imported), imported
    private = {(n.value.id, n.attr) for n in ast.walk(tree)
               if isinstance(n, ast.Attribute) and n.attr.startswith("_")
               and not n.attr.startswith("__") and isinstance(n.value, ast.Name)
               and n.value.id not in modules}
    assert private == set(), private


# ------------------------------------------------------------------ digits vs LinearSVC
def test_digits_matches_linearsvc_crammer_singer():
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 16, y, random_state=0)
    model = structsvm.fit(list(Xtr), list(ytr), feature_map=MulticlassFeatures(),
                          decoder="argmax", C=0.1)
    ref = LinearSVC(multi_class="crammer_singer", C=0.1, fit_intercept=False, tol=1e-6,
                    max_iter=100000).fit(Xtr, ytr)
    # liblinear's objective, evaluated with our exact oracle at its weights
    from structsvm.learners.problem import Problem
    from structsvm.structures import get_decoder
    from structsvm.structures import get_loss

    fm = model.feature_map_
    problem = Problem(fm.encode_inputs(list(Xtr)), fm.encode_outputs(list(ytr)), fm,
                      get_decoder("argmax"), get_loss("zero_one"), 0.1)
    ref_obj = problem.primal_objective(ref.coef_.ravel())
    assert abs(model.objective_ - ref_obj) / ref_obj <= 1e-3
    acc, ref_acc = model.score(list(Xte), list(yte)), ref.score(Xte, yte)
    assert abs(acc - ref_acc) <= 0.005
