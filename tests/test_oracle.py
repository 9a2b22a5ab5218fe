"""The one oracle: aggregated (1-slack) and per-example forms agree."""
import numpy as np
import pytest

from structsvm.learners.problem import Problem
from structsvm.structures import MulticlassFeatures
from structsvm.structures import get_decoder
from structsvm.structures import CallableLoss, get_loss


def problem(seed, rescaling="margin", loss=None, sparse=False, attributes=False, n=50):
    loss = get_loss("zero_one") if loss is None else loss
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = list(rng.integers(0, 4, size=n))
    lam = rng.normal(size=(4, 3)) if attributes else None
    fm = MulticlassFeatures(attributes=lam).fit(list(X), Y)
    Xe = fm.encode_inputs(list(X))
    if sparse:
        import scipy.sparse as sp

        Xe = sp.csr_matrix(Xe)
    return Problem(Xe, fm.encode_outputs(Y), fm, get_decoder("argmax"), loss, 0.7,
                   rescaling=rescaling), rng.normal(size=fm.n_features_)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rescaling", ["margin", "slack"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("attributes", [False, True])
def test_oracle_sum_equals_summed_rows(seed, rescaling, sparse, attributes):
    loss = get_loss("zero_one") if seed % 2 else CallableLoss(lambda a, b: abs(a - b) / 2.0)
    p, w = problem(seed, rescaling, loss, sparse, attributes)
    v = p.oracle(w)
    loss_sum, psi, slack = p.oracle_sum(w)
    weights = v.loss if rescaling == "slack" else np.ones(len(v.idx))
    np.testing.assert_allclose(slack, v.slack, atol=1e-10)
    assert loss_sum == pytest.approx(v.loss.sum())
    np.testing.assert_allclose(psi.toarray().ravel(), weights @ v.psi.toarray(), atol=1e-10)
    # the margins are w·δΦ_i of the returned rows
    for i in range(5):
        d = v.psi[i].toarray().ravel()
        assert v.margin[i] == pytest.approx(w @ d)


def test_parallel_oracle_sum_equals_serial(monkeypatch):
    # MIN_CHUNK 25: 300 examples in 4 chunks; MIN_REMOTE 0: a pool for a small problem
    monkeypatch.setattr("structsvm.learners.problem.MIN_CHUNK", 25)
    monkeypatch.setattr("structsvm.learners.problem.MIN_REMOTE", 0)
    p, w = problem(3, n=300)
    assert len(p._chunks(np.arange(300))) > 1  # the chunked path is really taken
    p.n_jobs = 2
    a = p.oracle_sum(w)
    assert p._pool is not None  # ... on the workers
    p.n_jobs = 1
    b = p.oracle_sum(w)
    assert a[0] == b[0]
    np.testing.assert_allclose(a[1].toarray(), b[1].toarray())
    np.testing.assert_allclose(a[2], b[2])
