"""dual_cd's row pool, compacted: with the threshold lowered so that small problems
compact on every pass that leaves dead rows, training takes the same path to the
same certified optimum as a run that never compacts, and its saved state still
holds the dual point (a warm start from it certifies at once).

At the default threshold only corpus-sized runs compact; the
spy below asserts that the lowered run really compacts and that the reference run
does not, so neither comparison can pass vacuously.
"""
import numpy as np
import pytest

import structsvm
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.learners import DualCD
from structsvm._compiled import loops
from structsvm.learners import _dual_cd_pool


@pytest.fixture
def compactions(monkeypatch):
    """Every compaction of the pool: (entries before, entries after)."""
    seen = []
    jit = loops("structsvm.learners._dual_cd_jit")
    real = jit.compact_pool

    def spy(p_ind, p_dat, p_start, p_len, slot, *out):
        live = slot[slot >= 0]
        before = int(p_len[live].sum())
        used, nrows = real(p_ind, p_dat, p_start, p_len, slot, *out)
        assert used == before and nrows == live.size  # live rows only, all of them
        seen.append((int(p_start.size), int(nrows)))
        return used, nrows

    monkeypatch.setattr(jit, "compact_pool", spy)
    return seen


def sequences(seed=0, n=60, d=5, K=3):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(int(rng.integers(2, 9)), d)) for _ in range(n)]
    Y = [[("A", "B", "C")[int(np.argmax(r[:K] + rng.normal(size=K)))] for r in x]
         for x in X]
    return SequenceFeatures(), "viterbi", X, Y


def blobs(seed=0, n=80, k=4, d=6):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    y = rng.integers(0, k, size=n)
    return MulticlassFeatures(), "argmax", [centers[c] + rng.normal(size=d) for c in y], \
        [f"c{c}" for c in y]


@pytest.mark.parametrize("make", [sequences, blobs], ids=["sequence", "multiclass"])
@pytest.mark.parametrize("cache_size", [4, 16])
def test_compaction_keeps_the_path_and_the_optimum(make, cache_size, compactions,
                                                   monkeypatch):
    fm, decoder, X, Y = make()
    kw = dict(feature_map=fm, decoder=decoder, C=1.0, tol=1e-4, random_state=0,
              learner=DualCD(cache_size=cache_size), max_iter=300)
    ref = structsvm.StructuredSVM(**kw).fit(X, Y)
    assert not compactions  # the reference never compacts
    monkeypatch.setattr(_dual_cd_pool, "_COMPACT_SLACK", 0)
    got = structsvm.StructuredSVM(warm_start=True, **kw).fit(X, Y)
    assert len(compactions) >= 2  # compaction was reached, more than once
    assert all(rows_after < rows_before for rows_before, rows_after in compactions)
    assert ref.converged_ and got.converged_
    # the same rows in the same slot order: the same floating-point path
    assert got.n_iter_ == ref.n_iter_
    assert got.objective_curve_ == ref.objective_curve_
    np.testing.assert_array_equal(got.coef_, ref.coef_)
    # an independent learner certifies the same optimum
    cp = structsvm.StructuredSVM(**dict(kw, learner="one_slack")).fit(X, Y)
    assert got.objective_ == pytest.approx(cp.objective_, rel=2e-4)
    # the state saved after compactions is the dual point: a warm start certifies it
    state = got.learner_state_
    assert state["slot"].max() < state["start"].size
    got.fit(X, Y)
    assert got.converged_ and got.n_iter_ == 1
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
