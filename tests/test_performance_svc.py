"""PerformanceSVC: the scikit-learn classifier trained for a measure of the whole
data set (binary, one-vs-rest, multilabel), its parameters, model files and errors."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC

import structsvm
from structsvm.io import ModelFileError
from structsvm.structures import BinaryFeatures
from structsvm.structures.binary import FBetaLoss, PrecisionAtKLoss, ROCAreaLoss, metrics
from structsvm.svm import PerformanceSVC


def _text_like(n=240, d=400, seed=0, rare=0.15):
    """Sparse nonnegative rows; each positive (a fraction ``rare``) also has four of
    the first 40 words."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, random_state=seed, format="lil")
    y = (rng.random(n) < rare).astype(int)
    for i in np.flatnonzero(y):
        X[i, rng.choice(40, size=4, replace=False)] = 1.0
    return sp.csr_matrix(X), y


@pytest.fixture(scope="module")
def data():
    return _text_like()


def test_binary_fit_predicts_labels_and_scores_the_measure(data):
    X, y = data
    labels = np.where(y == 1, "rare", "common")
    clf = PerformanceSVC(loss="f1").fit(X, labels)
    assert clf.classes_.tolist() == ["common", "rare"]
    assert clf.coef_.shape == (1, X.shape[1]) and clf.intercept_.shape == (1,)
    f = clf.decision_function(X)
    assert f.shape == (X.shape[0],)
    np.testing.assert_allclose(f, X @ clf.coef_[0] + clf.intercept_[0])
    assert (clf.predict(X) == np.where(f > 0, "rare", "common")).all()
    assert clf.score(X, labels) == pytest.approx(
        metrics.f_beta_score(y, np.where(f > 0, 1, -1)))
    P = int(y.sum())
    assert clf.C_ == pytest.approx(1e4 * len(y) / (2 * P + 1)) and clf.n_iter_.shape == (1,)


def test_the_model_is_the_structured_svms(data):
    """The classifier's w and b are those of structsvm.fit on the binary map, in
    the data's units (w·x / R)."""
    X, y = data
    clf = PerformanceSVC(loss="f1", C=300.0, tol=1e-3).fit(X, y)
    model = structsvm.fit(X, np.where(y == 1, 1, -1),
                          feature_map=BinaryFeatures(positive_class=1), loss="f1",
                          C=300.0, tol=1e-3)
    R = model.feature_map_.scale_
    np.testing.assert_allclose(clf.coef_[0], model.coef_[:-1] / R)
    assert clf.intercept_[0] == pytest.approx(model.coef_[-1] / R)


def test_error_rate_is_linear_svc_with_C_over_n_r2(data):
    X, y = data
    n = X.shape[0]
    R2 = X.multiply(X).sum() / n + 1.0
    clf = PerformanceSVC(loss="error_rate", C=1e3, tol=1e-7, max_iter=5000).fit(X, y)
    peer = LinearSVC(C=1e3 / (n * R2), loss="hinge", tol=1e-9, max_iter=10 ** 6).fit(X, y)
    np.testing.assert_allclose(clf.coef_, peer.coef_, atol=1e-4)
    np.testing.assert_allclose(clf.intercept_, peer.intercept_, atol=1e-4)


@pytest.mark.parametrize("loss,k_of", [("roc_auc", "P"), ("prbep", "P"),
                                       ("precision_at_k", 10), ("recall_at_k", 50)])
def test_measures_of_a_ranking_put_the_threshold_at_their_k(data, loss, k_of):
    """Trained without a bias; the intercept labels as many training examples
    positive as the measure's labellings have (k, or the number of positives)."""
    X, y = data
    k = int(y.sum()) if k_of == "P" else k_of
    clf = PerformanceSVC(loss=loss, k=None if k_of == "P" else k_of).fit(X, y)
    assert int((clf.decision_function(X) > 0).sum()) == k
    ref = PerformanceSVC(loss=loss, k=None if k_of == "P" else k_of,
                         fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(ref.coef_, clf.coef_)   # the ranking is the same
    assert ref.intercept_[0] == 0.0


def test_score_is_the_trained_measure(data):
    X, y = data
    for loss, measure in (("roc_auc", metrics.roc_auc), ("prbep", metrics.prbep)):
        clf = PerformanceSVC(loss=loss).fit(X, y)
        assert clf.score(X, y) == pytest.approx(measure(y, clf.decision_function(X)))
    clf = PerformanceSVC(loss="precision_at_k", k=0.1).fit(X, y)
    assert clf.score(X, y) == pytest.approx(
        metrics.precision_at_k(y, clf.decision_function(X), k=0.1))


def test_one_vs_rest_beyond_two_classes(data):
    X, _ = data
    rng = np.random.default_rng(3)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=X.shape[0])]
    clf = PerformanceSVC(loss="f1", C=1e3).fit(X, y)
    assert clf.coef_.shape == (3, X.shape[1])
    f = clf.decision_function(X)
    assert f.shape == (X.shape[0], 3)
    assert (clf.predict(X) == clf.classes_[np.argmax(f, axis=1)]).all()
    for j, c in enumerate("abc"):  # each row is that class against the rest
        one = PerformanceSVC(loss="f1", C=1e3).fit(X, (y == c).astype(int))
        np.testing.assert_allclose(clf.coef_[j], one.coef_[0])
    per_class = [metrics.f_beta_score(y == c, np.where(f[:, j] > 0, 1, -1))
                 for j, c in enumerate("abc")]
    assert clf.score(X, y) == pytest.approx(np.mean(per_class))   # macro F1


def test_multilabel_indicator_and_one_vs_rest_classifier_agree(data):
    X, y = data
    total = np.asarray(X.sum(axis=1)).ravel()
    Y = np.stack([y, 1 - y, (total > np.median(total)).astype(int)], 1)
    clf = PerformanceSVC(loss="f1", C=1e3).fit(X, Y)
    assert clf.predict(X).shape == Y.shape and clf.classes_.tolist() == [0, 1, 2]
    ovr = OneVsRestClassifier(PerformanceSVC(loss="f1", C=1e3)).fit(X, Y)
    assert (ovr.predict(X) == clf.predict(X)).all()
    with pytest.warns(UserWarning, match="Label 1 is present in all"):
        const = PerformanceSVC(loss="f1", C=1e3).fit(X, np.stack([y, np.ones_like(y)], 1))
    assert (const.predict(X)[:, 1] == 1).all()


def test_grid_search_clone_and_params(data):
    X, y = data
    clf = PerformanceSVC(loss="precision_at_k", k=10, C=100.0)
    assert clone(clf).get_params() == clf.get_params()
    search = GridSearchCV(PerformanceSVC(loss="f1"), {"C": [1e2, 1e4], "beta": [1.0, 2.0]},
                          cv=3).fit(X, y)
    assert set(search.best_params_) == {"C", "beta"}
    # the default scoring is the trained measure (F_β with the best beta)
    best = search.best_estimator_
    assert best.score(X, y) == pytest.approx(metrics.f_beta_score(
        y, best.predict(X), beta=best.beta))


def test_loss_objects_are_accepted(data):
    X, y = data
    a = PerformanceSVC(loss=FBetaLoss(beta=2.0), C=1e3).fit(X, y)
    b = PerformanceSVC(loss="f1", beta=2.0, C=1e3).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    c = PerformanceSVC(loss=PrecisionAtKLoss(k=10)).fit(X, y)
    assert int((c.decision_function(X) > 0).sum()) == 10


def test_save_and_load_back_exactly(data, tmp_path):
    X, y = data
    for model in (PerformanceSVC(loss="roc_auc").fit(X, y),
                  PerformanceSVC(loss=FBetaLoss(beta=0.5), C=1e3).fit(
                      X, np.array(["x", "y", "z"])[y + (np.arange(len(y)) % 2)])):
        path = model.save(tmp_path / "clf.npz")
        back = PerformanceSVC.load(path)
        assert back.get_params() == model.get_params() or \
            repr(back.loss) == repr(model.loss)
        np.testing.assert_array_equal(back.decision_function(X),
                                      model.decision_function(X))
        assert (back.predict(X) == model.predict(X)).all()
        assert back.classes_.tolist() == model.classes_.tolist()
    other = structsvm.fit([np.array([0.0]), np.array([1.0])], ["a", "b"])
    other.save(tmp_path / "other.npz")
    with pytest.raises(ModelFileError, match="not a PerformanceSVC"):
        PerformanceSVC.load(tmp_path / "other.npz")
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes((tmp_path / "clf.npz").read_bytes()[:-40])
    with pytest.raises(ModelFileError):
        PerformanceSVC.load(damaged)


def test_bad_parameters_and_data_are_named(data):
    X, y = data
    with pytest.raises(ValueError, match="loss must be one of"):
        PerformanceSVC(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="decomposes over position"):
        PerformanceSVC(loss=structsvm.structures.HammingLoss()).fit(X, y)
    with pytest.raises(ValueError, match="C must be a finite number > 0"):
        PerformanceSVC(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="set them on the loss object"):
        PerformanceSVC(loss=ROCAreaLoss(), k=3).fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        PerformanceSVC().fit(X, np.zeros(X.shape[0]))
    Xn = X.copy()
    Xn.data[Xn.indptr[7]] = np.nan
    with pytest.raises(ValueError, match="Sample 7: X contains NaN"):
        PerformanceSVC().fit(Xn, y)
    with pytest.raises(ValueError, match="k=500 asks for the top 500 of 240"):
        PerformanceSVC(loss="precision_at_k", k=500).fit(X, y)
    clf = PerformanceSVC(C=1e3).fit(X, y)
    with pytest.raises(ValueError, match="X has 5 features, the classifier was fitted "
                                         "with 400"):
        clf.predict(np.zeros((2, 5)))
