"""The learners' compiled loops against their plain numpy equivalents."""
import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.learners._sparse import aggregate_rows
from structsvm.learners._sparse_jit import (average_inplace, gather_dot, rows_dot,
                                            rows_scatter, scatter_add)
from structsvm.structures import HammingLoss


@pytest.mark.parametrize("seed", range(5))
def test_loops_equal_numpy(seed):
    rng = np.random.default_rng(seed)
    M = sp.random(7, 50, density=0.2, random_state=seed, format="csr")
    v = rng.normal(size=50)
    r = M[0]
    assert gather_dot(r.indices, r.data, v) == pytest.approx(float(r.data @ v[r.indices]))
    w = v.copy()
    scatter_add(w, r.indices, r.data, 0.5)
    ref = v.copy()
    ref[r.indices] += 0.5 * r.data
    np.testing.assert_allclose(w, ref)
    avg = rng.normal(size=50)
    expected = avg + 0.3 * (v - avg)
    average_inplace(avg, v, 0.3)
    np.testing.assert_allclose(avg, expected)
    out = np.empty(7)
    rows_dot(M.indptr, M.indices, M.data, v, out)
    np.testing.assert_allclose(out, M @ v, rtol=1e-14)
    coef = rng.normal(size=7)
    coef[2] = 0.0
    acc = v.copy()
    rows_scatter(M.indptr, M.indices, M.data, coef, acc)
    np.testing.assert_allclose(acc, v + coef @ M.toarray(), rtol=1e-14, atol=1e-15)
    weights = rng.normal(size=7)
    cols, vals = aggregate_rows(M, weights)
    dense = np.zeros(50)
    dense[cols] = vals
    np.testing.assert_allclose(dense, weights @ M.toarray(), atol=1e-12)
    assert np.all(np.diff(cols) > 0)


def test_hamming_batch_equals_per_example():
    rng = np.random.default_rng(0)
    Y = [rng.integers(0, 3, size=n) for n in (1, 4, 7)]
    P = [rng.integers(0, 3, size=n) for n in (1, 4, 7)]
    for loss in (HammingLoss(), HammingLoss(normalize=True)):
        np.testing.assert_allclose(loss.batch(Y, P), [loss(a, b) for a, b in zip(Y, P)])
