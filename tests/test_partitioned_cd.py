"""The partitioned learner ('partitioned_cd') with its blocks in this process: the optimum of
the direct QP for any number of blocks, a dual that never decreases, the safe
per-column σ' (every round gains at least what the blocks promised), and the
pieces it stands on (feature supports, the map fitted from partition summaries,
the distinct columns of pool rows)."""
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.corpora import make_hmm_corpus
from structsvm.learners import PartitionedCD, DualCD
from structsvm.learners._dual_cd_pool import RowPool
from structsvm.structures import SequenceFeatures

from reference_qp import full_primal_qp
from test_dual_cd import PROBLEMS, primal_by_enumeration, raw_loss


def words_corpus(seed, n=40):
    """Tagged sentences of words (token lists), so that partitions hold different
    observation features."""
    X, Y = make_hmm_corpus(n_sentences=n, n_states=3, n_words=40, mean_length=5,
                           random_state=seed)
    return X, Y


@pytest.mark.parametrize("kind", sorted(PROBLEMS))
@pytest.mark.parametrize("K", [1, 2, 3])
def test_partitioned_cd_reaches_the_full_qp_optimum(kind, K):
    X, Y, outputs, fm = PROBLEMS[kind](K)
    C = 0.5
    model = structsvm.fit(X, Y, feature_map=fm, C=C, tol=1e-6, max_iter=5000,
                          learner=PartitionedCD(n_partitions=K, n_batches=2), random_state=K)
    ref, _ = full_primal_qp(model.feature_map_, X, Y, outputs, raw_loss(model), C)
    assert model.converged_ and model.learner_.name == "partitioned_cd"
    assert model.objective_ >= ref * (1 - 1e-7)
    assert model.objective_ - ref <= 1e-5 * ref
    assert model.objective_ == pytest.approx(primal_by_enumeration(model, X, Y, outputs, C),
                                             rel=1e-9)
    assert model.objective_ - ref <= model.duality_gap_ + 1e-7 * ref


def _solve(learner, X, Y, tol=1e-4, C=1.0, **fit):
    """The learner's result on the problem the estimator makes of X, Y."""
    from structsvm.estimator._resolution import Resolution
    from structsvm.learners.problem import Problem

    est = structsvm.StructuredSVM(C=C, **fit)
    res = Resolution(type(est), est.get_params(deep=False))
    fm = res.prototype()
    fm = type(fm)(**fm.get_params()).fit(X, Y)
    decoder, loss = res.plugins(fm)
    problem = Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y, X),
                      feature_map=fm, decoder=decoder, loss=loss, C=C)
    curve = []
    result = learner.solve(problem, np.zeros(fm.n_features_), max_iter=3000, tol=tol,
                           callback=lambda info: curve.append(
                               (info["objective"], info["gap"])))
    return result, curve


@pytest.mark.parametrize("seed", range(4))
def test_per_column_sigma_gains_what_the_blocks_promise(seed):
    # ω_j = the number of blocks whose examples hold column j: the sum of the local
    # subproblems' gains is a lower bound of the dual's (Cauchy-Schwarz per column),
    # so no round is ever undone and the dual never decreases
    X, Y = words_corpus(seed)
    learner = PartitionedCD(n_partitions=3, n_batches=4, local_passes=0.5)
    result, curve = _solve(learner, X, Y,
                           feature_map=SequenceFeatures(features="word"))
    extra = result.extra
    assert result.converged and extra["per_column_sigma"]
    assert extra["rejected_rounds"] == 0
    gains, promised = np.array(extra["dual_gain"]), np.array(extra["promised_gain"])
    assert np.all(gains >= promised - 1e-9 * (1 + np.abs(promised)))
    assert np.all(promised >= -1e-12)
    duals = [p - g for p, g in curve]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))


def test_uniform_sigma_undoes_rounds_that_overshoot():
    # without a map's feature support σ' is one number, started at K and following
    # the measured ρ; rounds that gain less than half their promise are undone, so
    # the dual never decreases either
    X, Y, outputs, fm = PROBLEMS["multiclass"](3)
    learner = PartitionedCD(n_partitions=4, n_batches=2, sigma=1.0)
    result, curve = _solve(learner, X, Y, tol=1e-6, feature_map=fm)
    assert result.converged and not result.extra["per_column_sigma"]
    assert result.extra["rejected_rounds"] >= 1
    duals = [p - g for p, g in curve]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))
    serial, _ = _solve(DualCD(), X, Y, tol=1e-6, feature_map=fm)
    assert result.objective == pytest.approx(serial.objective, rel=2e-6)


def test_blocks_in_this_process_give_the_same_model_every_time():
    X, Y = words_corpus(7)
    a = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"),
                      learner=PartitionedCD(n_partitions=3), random_state=1)
    b = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"),
                      learner=PartitionedCD(n_partitions=3), random_state=1)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("bad, match", [
    (dict(n_partitions=0), "n_partitions must be None or an int >= 1"),
    (dict(local_passes=0), "local_passes must be a number > 0"),
    (dict(sigma=0.5), "sigma must be 'auto' or a number >= 1"),
    (dict(cache_size=0), "cache_size must be an int >= 1"),
])
def test_bad_parameters(bad, match):
    X, Y, _, fm = PROBLEMS["multiclass"](0)
    with pytest.raises(ValueError, match=match):
        structsvm.fit(X, Y, feature_map=fm, learner=PartitionedCD(**bad))


def test_a_loss_over_the_whole_data_set_is_refused():
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(20, 3)))
    y = [1 if x[0] > 0 else -1 for x in X]
    with pytest.raises(ValueError, match="learner 'partitioned_cd' cannot train it"):
        structsvm.fit(X, y, feature_map=structsvm.structures.BinaryFeatures(),
                      loss="f1", learner="partitioned_cd")


# ----------------------------------------------------------------------- pieces
@pytest.mark.parametrize("seed", range(3))
def test_feature_support_holds_every_column_a_tagging_can_touch(seed):
    X, Y = words_corpus(seed, n=12)
    fm = SequenceFeatures(features="word").fit(X, Y)
    Xe = fm.encode_inputs(X)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(X), size=5, replace=False))
    support = set(fm.feature_support(Xe, idx).tolist())
    touched = set()
    for i in idx:
        for _ in range(20):  # random taggings of the sentence, and its own
            y = list(rng.choice(fm.tags_, size=len(X[i])))
            touched |= set(np.flatnonzero(fm.joint_feature(X[i], y)).tolist())
        touched |= set(np.flatnonzero(fm.joint_feature(X[i], Y[i])).tolist())
    assert touched <= support
    # and no more than the sentences' observation features times the tags
    K, d = fm.n_states_, fm.n_input_features_
    feats = np.unique(Xe.select(idx)[0].indices)
    assert len(support) == feats.size * K + K * K + 2 * K


@pytest.mark.parametrize("min_count", [1, 2])
def test_map_fitted_from_partition_summaries_equals_the_fit_on_all(min_count):
    X, Y = words_corpus(3, n=60)
    whole = SequenceFeatures(features="pos", min_count=min_count).fit(X, Y)
    parts = [(X[k::3], Y[k::3]) for k in range(3)]
    fm = SequenceFeatures(features="pos", min_count=min_count)
    fm.fit_from_summaries([fm.fit_summary(x, y) for x, y in parts])
    assert fm.n_features_ == whole.n_features_
    assert fm.tags_.tolist() == whole.tags_.tolist()
    assert set(fm.vocabulary_.tolist()) == set(whole.vocabulary_.tolist())
    # the same encoding up to the order of the columns
    perm = {s: j for j, s in enumerate(fm.vocabulary_.tolist())}
    cols = np.array([perm[s] for s in whole.vocabulary_.tolist()])
    a, b = whole.encode_inputs(X).X, fm.encode_inputs(X).X
    np.testing.assert_array_equal(a.toarray()[:, np.argsort(cols)], b.toarray())
    # one partition: exactly the fit on all
    one = SequenceFeatures(features="pos", min_count=min_count)
    one.fit_from_summaries([one.fit_summary(X, Y)])
    assert one.vocabulary_.tolist() == whole.vocabulary_.tolist()


def test_map_fitted_from_summaries_of_matrices():
    rng = np.random.default_rng(0)
    X = [sp.random(4, 30, density=0.1, format="csr", random_state=s) for s in range(9)]
    Y = [list(rng.choice(["A", "B"], size=4)) for _ in range(9)]
    whole = SequenceFeatures().fit(X, Y)
    fm = SequenceFeatures()
    fm.fit_from_summaries([fm.fit_summary(X[k::2], Y[k::2]) for k in range(2)])
    assert fm.n_features_ == whole.n_features_
    np.testing.assert_array_equal(fm.input_columns_, whole.input_columns_)
    with pytest.raises(ValueError, match="different feature widths"):
        fm.fit_from_summaries([fm.fit_summary(X[:2], Y[:2]),
                               fm.fit_summary([sp.random(4, 31, format="csr")],
                                              [["A"] * 4])])


def test_distinct_columns_of_pool_rows():
    rng = np.random.default_rng(0)
    pool = RowPool(50)
    M = sp.random(20, 50, density=0.2, format="csr", random_state=1)
    pool.append(M)
    mark = np.zeros(50, dtype=np.uint8)
    for _ in range(10):
        ids = rng.choice(20, size=int(rng.integers(0, 8)))
        got = pool.columns(ids, mark)
        assert sorted(got.tolist()) == np.unique(M[ids].indices).tolist()
        assert len(set(got.tolist())) == got.size and not mark.any()


def test_atomic_additions_from_two_threads_lose_none():
    # the additions workers sharing w in memory make: a plain read-add-write loses
    # one of two simultaneous additions to a column; the atomic one loses none
    import threading

    import numba

    from structsvm.learners._atomic_jit import atomic_add

    @numba.njit(nogil=True)
    def add_many(w, columns, value):
        for c in columns:
            atomic_add(w, c, value)

    w = np.zeros(3)
    columns = np.tile(np.array([0, 1, 0, 2]), 250_000)  # column 0 the hot one
    add_many(w, columns[:1], 0.0)  # compiled before the threads start
    threads = [threading.Thread(target=add_many, args=(w, columns, 0.5))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(w, [500_000.0, 250_000.0, 250_000.0])


def test_column_weights_count_the_blocks_that_step_at_once():
    # ω_j: the blocks whose examples hold column j, capped by the number of workers
    # stepping at the same time (in memory: the cores)
    from structsvm.learners._blocks import BlockSolver
    from structsvm.learners.partitioned_cd import InProcessBlocks, _column_weights

    X, Y = words_corpus(3, n=30)
    fm = SequenceFeatures(features="word")
    captured = {}

    class Capture(DualCD):
        def solve(self, problem, w0, **kw):
            captured["problem"] = problem
            return super().solve(problem, w0, **kw)

    structsvm.fit(X, Y, feature_map=fm, learner=Capture(), max_iter=1)
    problem = captured["problem"]
    K, D = 4, problem.n_features
    blocks = InProcessBlocks([BlockSolver(problem, np.arange(k, len(X), K), DualCD(), k)
                              for k in range(K)])
    support = [set(problem.feature_map.feature_support(problem.Xe,
                                                       np.arange(k, len(X), K)))
               for k in range(K)]
    counts = np.array([sum(j in s for s in support) for j in range(D)], dtype=float)
    np.testing.assert_array_equal(_column_weights(blocks, D), np.maximum(counts, 1))
    np.testing.assert_array_equal(_column_weights(blocks, D, at_once=2),
                                  np.clip(counts, 1, 2))
    assert counts.max() == K and _column_weights(blocks, D, at_once=1) is None
