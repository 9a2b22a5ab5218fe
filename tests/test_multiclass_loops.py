"""The multiclass map's compiled δΦ rows and class scores against plain references.

References: δΦ_i = Λ(y_i) ⊗ x_i − Λ(ŷ_i) ⊗ x_i as a dense numpy kron (and the scipy
path ``joint_features(y) − joint_features(ŷ)`` the oracle used before), class scores
as scipy's ``X[idx] @ W.T``.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import structsvm
from structsvm.structures import MulticlassFeatures
from structsvm.structures import get_decoder
from structsvm.structures import get_loss
from structsvm.learners.problem import Problem
from structsvm.protocols import SparseRows, as_sequence


def _data(rng, n, d, K, sparse, zeros=False):
    X = sp.random(n, d, density=rng.uniform(0.05, 0.6), random_state=rng.integers(1 << 30),
                  format="csr")
    X.data = np.round(rng.normal(size=X.nnz), 1)  # some entries become stored zeros
    if not zeros:
        X.eliminate_zeros()
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)[:n]  # every class seen (when n ≥ K)
    return (X if sparse else X.toarray()), y


def _lam(fm):
    return np.eye(len(fm.classes_)) if fm.lambda_ is None else fm.lambda_


def _dense_reference(fm, Xe, y, yh, idx):
    X = Xe.toarray() if sp.issparse(Xe) else np.asarray(Xe)
    lam = _lam(fm)
    return np.array([np.kron(lam[a], X[i]) - np.kron(lam[b], X[i])
                     for i, a, b in zip(idx, y, yh)]).reshape(len(idx), fm.n_features_)


def _scipy_reference(fm, Xe, y, yh, idx):
    ref = sp.csr_matrix(fm.joint_features(Xe, y, idx) - fm.joint_features(Xe, yh, idx))
    ref.eliminate_zeros()
    ref.sort_indices()
    return ref


def _check_rows(fm, Xe, y, yh, idx):
    got = fm.joint_feature_differences(Xe, y, yh, idx)
    assert got.shape == (len(idx), fm.n_features_)
    # canonical CSR: sorted unique columns per row, no stored zeros
    assert np.all(got.data != 0)
    for r in range(got.shape[0]):
        cols = got.indices[got.indptr[r]:got.indptr[r + 1]]
        assert np.all(np.diff(cols) > 0)
    np.testing.assert_array_equal(got.toarray(), _dense_reference(fm, Xe, y, yh, idx))
    ref = _scipy_reference(fm, Xe, y, yh, idx)
    np.testing.assert_array_equal(got.indptr, ref.indptr)
    np.testing.assert_array_equal(got.indices, ref.indices)
    np.testing.assert_array_equal(got.data, ref.data)
    # rows with ŷ = y are empty
    assert np.all(np.diff(got.indptr)[np.asarray(y) == np.asarray(yh)] == 0)
    return got


@pytest.mark.parametrize("attributes", [False, True])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("bias", [0.0, 1.5])
@pytest.mark.parametrize("seed", range(6))
def test_differences_equal_truth_minus_prediction(attributes, sparse, bias, seed):
    rng = np.random.default_rng(seed)
    n, d, K = int(rng.integers(5, 40)), int(rng.integers(1, 15)), int(rng.integers(2, 7))
    X, y = _data(rng, n, d, K, sparse, zeros=sparse and seed % 2 == 0)
    attrs = None
    if attributes:
        attrs = np.round(rng.normal(size=(K, int(rng.integers(1, 5)))), 1)
        attrs[0, 0] = attrs[1, 0]  # equal attributes: an exact zero difference
    fm = MulticlassFeatures(attributes=attrs, bias=bias).fit(X, list(y))
    Xe = fm.encode_inputs(X)
    yh = rng.integers(0, K, size=n)
    same = rng.random(n) < 0.3
    yh[same] = y[same]
    for idx in (np.arange(n), rng.permutation(n)[: max(1, n // 2)],
                rng.integers(0, n, size=n)):  # repeats too
        _check_rows(fm, Xe, y[idx], yh[idx], idx)
    got = fm.joint_feature_differences(Xe, y, yh)  # idx=None: every example
    np.testing.assert_array_equal(got.toarray(),
                                  _dense_reference(fm, Xe, y, yh, np.arange(n)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_differences_hypothesis(seed, attributes, sparse):
    rng = np.random.default_rng(seed)
    n, d, K = int(rng.integers(1, 12)), int(rng.integers(1, 8)), int(rng.integers(2, 5))
    X, y = _data(rng, n, d, K, sparse)
    y = rng.integers(0, K, size=n)
    attrs = np.round(rng.normal(size=(K, 3)), 2) if attributes else None
    fm = MulticlassFeatures(attributes=attrs, classes=list(range(K))).fit(X, list(y))
    Xe = fm.encode_inputs(X)
    _check_rows(fm, Xe, y, rng.integers(0, K, size=n), np.arange(n))


def test_unsorted_and_duplicate_input_indices():
    # a CSR matrix with unsorted and duplicate column indices (both legal in scipy)
    data = np.array([1.0, 2.0, 3.0, -1.0, 4.0])
    indices = np.array([3, 0, 3, 2, 1])
    indptr = np.array([0, 3, 5])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 4))
    before = (X.indices.copy(), X.data.copy())
    fm = MulticlassFeatures().fit(X, ["a", "b"])
    Xe = fm.encode_inputs(X)
    np.testing.assert_array_equal(X.indices, before[0])  # the caller's matrix untouched
    np.testing.assert_array_equal(X.data, before[1])
    assert Xe.has_canonical_format
    np.testing.assert_array_equal(Xe.toarray(), X.toarray())
    y, yh = np.array([0, 1]), np.array([1, 0])
    for M in (Xe, X):  # a non-canonical Xe handed in directly is canonicalised too
        got = fm.joint_feature_differences(M, y, yh)
        np.testing.assert_array_equal(
            got.toarray(), [[2.0, 0, 0, 4.0, -2.0, 0, 0, -4.0],
                            [0, -4.0, 1.0, 0, 0, 4.0, -1.0, 0]])


@pytest.mark.parametrize("attributes", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_class_scores_equal_scipy_product(attributes, seed):
    rng = np.random.default_rng(seed)
    n, d, K = 60, 25, 5
    X, y = _data(rng, n, d, K, sparse=True)
    attrs = rng.normal(size=(K, 3)) if attributes else None
    fm = MulticlassFeatures(attributes=attrs, bias=1.0).fit(X, list(y))
    Xe = fm.encode_inputs(X)
    w = rng.normal(size=fm.n_features_)
    W = w.reshape(-1, fm.n_input_features_)
    for idx in (None, rng.permutation(n)[:17], np.array([3, 3, 0])):
        Xr = Xe if idx is None else Xe[idx]
        ref = np.asarray(Xr @ W.T)  # scipy: same sums in the same order
        if attributes:
            ref = ref @ attrs.T
        np.testing.assert_array_equal(fm.batch_potentials(Xe, w, idx).scores, ref)
        # and the invariant of every map: score(y) = w·Φ(x, y)
        rows = np.arange(n) if idx is None else idx
        phi = fm.joint_features(Xe, y[rows], rows)
        np.testing.assert_allclose(fm.batch_potentials(Xe, w, idx).score(y[rows]),
                                   phi @ w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("attributes", [False, True])
def test_oracle_rows_use_the_direct_differences(attributes):
    rng = np.random.default_rng(7)
    X, y = _data(rng, 80, 12, 4, sparse=True)
    attrs = rng.normal(size=(4, 2)) if attributes else None
    fm = MulticlassFeatures(attributes=attrs).fit(X, list(y))
    problem = Problem(fm.encode_inputs(X), fm.encode_outputs(list(y)), fm,
                      get_decoder("argmax"), get_loss("zero_one"), 1.0)
    assert problem._fast_differences
    w = rng.normal(size=fm.n_features_)
    v = problem.oracle(w)
    ref = _scipy_reference(fm, problem.Xe, y, np.asarray(v.y_hat), np.arange(80))
    np.testing.assert_array_equal(v.psi.toarray(), ref.toarray())
    np.testing.assert_allclose(v.margin, ref @ w, rtol=1e-12, atol=1e-12)


def test_difference_errors():
    X = np.eye(3)
    fm = MulticlassFeatures().fit(X, [0, 1, 2])
    Xe = sp.csr_matrix(fm.encode_inputs(X))
    with pytest.raises(ValueError, match="3 inputs but 2 and 3 outputs"):
        fm.joint_feature_differences(Xe, [0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match=r"Ye_hat holds a class index outside \[0, 3\)"):
        fm.joint_feature_differences(Xe, [0, 1, 2], [0, 1, 3])
    with pytest.raises(IndexError, match="idx out of range for 3 examples"):
        fm.joint_feature_differences(Xe, [0], [1], idx=[3])
    # negative indices count from the end, as in numpy
    np.testing.assert_array_equal(fm.joint_feature_differences(Xe, [2], [0], idx=[-1]).toarray(),
                                  fm.joint_feature_differences(Xe, [2], [0], idx=[2]).toarray())


def test_sparse_rows_behave_like_the_list_of_rows():
    X = sp.random(7, 4, density=0.5, random_state=0, format="csr")
    rows = as_sequence(X, "X")
    assert isinstance(rows, SparseRows) and len(rows) == 7
    listed = [X[i] for i in range(7)]
    for a, b in zip(rows, listed):  # iteration stops at the end
        np.testing.assert_array_equal(a.toarray(), b.toarray())
    np.testing.assert_array_equal(rows[-1].toarray(), X[6].toarray())
    assert len(rows[2:5]) == 3
    np.testing.assert_array_equal(rows[2:5][0].toarray(), X[2].toarray())
    with pytest.raises(IndexError, match="row 7 out of range for 7 samples"):
        rows[7]


def test_fit_on_a_sparse_matrix_equals_fit_on_its_rows():
    rng = np.random.default_rng(3)
    X, y = _data(rng, 40, 10, 3, sparse=True)
    a = structsvm.fit(X, list(y), feature_map=MulticlassFeatures(), C=1.0, tol=1e-6)
    b = structsvm.fit([X[i] for i in range(40)], list(y), feature_map=MulticlassFeatures(),
                      C=1.0, tol=1e-6)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.predict(X) == b.predict([X[i] for i in range(40)])


def test_augment_tables_are_kept_per_loss():
    from structsvm.structures import CallableLoss, HammingLoss, ZeroOneLoss

    rng = np.random.default_rng(11)
    X, y = _data(rng, 30, 6, 4, sparse=True)
    fm = MulticlassFeatures().fit(X, list(y))
    Xe = fm.encode_inputs(X)
    w = rng.normal(size=fm.n_features_)
    losses = [ZeroOneLoss(), CallableLoss(lambda a, b: abs(a - b) / 3), HammingLoss()]
    for _ in range(2):  # the second round reads the kept tables
        for loss in losses:
            batch = fm.batch_potentials(Xe, w, np.arange(10, 30))
            got = batch.augment(y[10:30], loss).scores
            ref = batch.scores + np.array([[loss(a, k) for k in range(4)] for a in y[10:30]])
            np.testing.assert_array_equal(got, ref)
            # a batch of one example shares the tables
            one = batch[3].augment([y[13]], loss).scores
            np.testing.assert_array_equal(one, ref[3:4])


def test_fitted_map_with_loss_tables_can_be_copied():
    import copy  # deepcopy goes through __getstate__, as joblib's process workers do

    rng = np.random.default_rng(5)
    X, y = _data(rng, 20, 5, 3, sparse=True)
    fm = MulticlassFeatures().fit(X, list(y))
    Xe = fm.encode_inputs(X)
    w = rng.normal(size=fm.n_features_)
    fm.batch_potentials(Xe, w).augment(y, get_loss("zero_one"))  # fills the cache
    for other in (copy.deepcopy(fm),):
        np.testing.assert_array_equal(
            other.batch_potentials(Xe, w).augment(y, get_loss("zero_one")).scores,
            fm.batch_potentials(Xe, w).augment(y, get_loss("zero_one")).scores)
