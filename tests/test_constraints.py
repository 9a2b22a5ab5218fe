"""Constraints on w (``StructuredSVM(constraints=f)``) against a direct cvxpy solve.

The reference writes out every constraint of the structural SVM (all outputs
enumerated with ``itertools.product``, Φ from ``joint_feature`` on raw data), adds the
same user constraints and solves the full primal with cvxpy: no working set, no
oracle, no decoder. Each case's constraint changes the solution (the unconstrained
optimum violates it), so ignoring the constraints fails the test.
"""
import itertools

import cvxpy as cp
import numpy as np
import pytest

import structsvm
from structsvm.structures import (GrammarFeatures,
    GraphFeatures,
    MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.learners import NSlackCuttingPlane, OneSlackCuttingPlane


def constrained_full_primal(fm, X, Y, outputs_of, loss, C, constraints=None):
    """(optimal value, w) of ½‖w‖² + C Σ ξ_i over all outputs, plus the constraints."""
    rows, losses, owner = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        truth = fm.joint_feature(x, y)
        for o in outputs_of(x):
            d = loss(y, o)
            if d > 0:
                rows.append(truth - fm.joint_feature(x, o))
                losses.append(d)
                owner.append(i)
    D = np.array(rows)
    w = cp.Variable(D.shape[1])
    xi = cp.Variable(len(X), nonneg=True)
    cons = [D @ w >= np.array(losses) - xi[owner]]
    if constraints is not None:
        cons += constraints(w, fm)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal", prob.status
    return prob.value, w.value


def max_violation(constraints, fm, w_value):
    w = cp.Variable(len(w_value))
    w.value = w_value
    return max(float(np.max(c.violation(), initial=0.0)) for c in constraints(w, fm))


def multiclass_data(seed, n=24, d=3, k=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    labels = ["a", "b", "c"][:k]
    return list(X), [labels[j] for j in y], labels


def sequence_data(seed, n=10, tags=("A", "B", "C")):
    rng = np.random.default_rng(seed)
    words = ["x", "y", "z", "w"]
    X, Y = [], []
    for _ in range(n):
        T = int(rng.integers(1, 4))
        X.append([words[j] for j in rng.integers(0, len(words), size=T)])
        Y.append([tags[j] for j in rng.integers(0, len(tags), size=T)])
    return X, Y, list(tags)


def zero_one(a, b):
    return float(a != b)


def hamming(a, b):
    return float(sum(p != q for p, q in zip(a, b)))


# ------------------------------------------------------------------ constraint sets
def nonneg_block_a(w, fm):
    return [w[fm.feature_index("a:*")] >= 0]


def block_fixed_at_zero(w, fm):
    return [w[fm.feature_index(["b:x0", "c:x1"])] == 0]


def monotone_over_ordered_labels(w, fm):
    """w_a[x1] ≤ w_b[x1] ≤ w_c[x1]: a score that grows with the label's rank."""
    i = [fm.feature_index(f"{c}:x1")[0] for c in ("a", "b", "c")]
    return [w[i[0]] <= w[i[1]], w[i[1]] <= w[i[2]]]


def nonneg_transitions(w, fm):
    return [w[fm.feature_index("transition:*")] >= 0]


LEARNERS = [OneSlackCuttingPlane(), NSlackCuttingPlane(), OneSlackCuttingPlane(cache_size=3),
            OneSlackCuttingPlane(solver="osqp")]


@pytest.mark.parametrize("constraints", [nonneg_block_a, block_fixed_at_zero,
                                         monotone_over_ordered_labels])
@pytest.mark.parametrize("learner", LEARNERS[:3])
def test_multiclass_constrained_fit_equals_direct_solve(constraints, learner):
    X, Y, labels = multiclass_data(0)
    C = 1.0
    fm = MulticlassFeatures().fit(X, Y)
    _, w_free = constrained_full_primal(fm, X, Y, lambda x: labels, zero_one, C)
    assert max_violation(constraints, fm, w_free) > 1e-3  # the constraint binds
    ref, w_ref = constrained_full_primal(fm, X, Y, lambda x: labels, zero_one, C,
                                         constraints)
    model = structsvm.fit(X, Y, feature_map=MulticlassFeatures(), decoder="argmax", C=C,
                          learner=learner, tol=1e-8, max_iter=500, constraints=constraints)
    assert model.converged_
    assert max_violation(constraints, model.feature_map_, model.coef_) <= 1e-8
    assert model.objective_ == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(model.coef_, w_ref, atol=2e-3)
    # the certificate brackets the constrained optimum
    assert model.objective_ - model.duality_gap_ <= ref * (1 + 1e-7)


@pytest.mark.parametrize("learner", [LEARNERS[0], LEARNERS[1], LEARNERS[3]])
def test_sequence_constrained_fit_equals_direct_solve(learner):
    X, Y, tags = sequence_data(1)
    C = 2.0
    fm = SequenceFeatures(features="word").fit(X, Y)

    def outputs_of(x):
        return [list(p) for p in itertools.product(tags, repeat=len(x))]

    _, w_free = constrained_full_primal(fm, X, Y, outputs_of, hamming, C)
    assert max_violation(nonneg_transitions, fm, w_free) > 1e-3
    ref, w_ref = constrained_full_primal(fm, X, Y, outputs_of, hamming, C,
                                         nonneg_transitions)
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"),
                          decoder="viterbi", C=C, learner=learner, tol=1e-8, max_iter=500,
                          constraints=nonneg_transitions)
    assert model.converged_
    assert max_violation(nonneg_transitions, model.feature_map_, model.coef_) <= 1e-8
    assert model.objective_ == pytest.approx(ref, rel=1e-6)
    np.testing.assert_allclose(model.coef_, w_ref, atol=2e-3)


def test_warm_start_with_constraints_stays_feasible_and_optimal():
    X, Y, labels = multiclass_data(2)
    kw = dict(feature_map=MulticlassFeatures(), decoder="argmax", C=1.0,
              constraints=nonneg_block_a)
    model = structsvm.StructuredSVM(tol=1e-2, warm_start=True, **kw).fit(X, Y)
    model.set_params(tol=1e-8)
    model.fit(X, Y)
    ref, _ = constrained_full_primal(model.feature_map_, X, Y, lambda x: labels, zero_one,
                                     1.0, nonneg_block_a)
    assert model.objective_ == pytest.approx(ref, rel=1e-6)
    assert max_violation(nonneg_block_a, model.feature_map_, model.coef_) <= 1e-8


@pytest.mark.parametrize("learner", ["pegasos", "frank_wolfe", "perceptron"])
def test_learners_that_cannot_honour_constraints_refuse(learner):
    X, Y, _ = multiclass_data(3)
    with pytest.raises(ValueError, match=f"{learner}.*cannot honour.*n_slack, one_slack"):
        structsvm.fit(X, Y, learner=learner, constraints=nonneg_block_a)


def test_constraint_function_errors_name_the_problem():
    X, Y, _ = multiclass_data(4)
    with pytest.raises(TypeError, match="constraints must be a callable"):
        structsvm.fit(X, Y, constraints=[1])
    with pytest.raises(TypeError, match=r"\[0\] is a bool"):
        structsvm.fit(X, Y, constraints=lambda w, fm: [True])
    other = cp.Variable(2)
    with pytest.raises(ValueError, match="variable other than w"):
        structsvm.fit(X, Y, constraints=lambda w, fm: [other >= 0])
    with pytest.raises(structsvm.protocols.QPError, match="feasible"):
        structsvm.fit(X, Y, constraints=lambda w, fm: [w[0] >= 1, w[0] <= -1])


# ------------------------------------------------------------------ feature names
def _tree(text):
    from nltk import Tree

    return Tree.fromstring(text)


def _tree_data():
    rng = np.random.default_rng(5)
    X = list(rng.normal(size=(6, 2)))
    Y = [("animal", "dog"), ("animal", "cat"), ("plant", "tree")] * 2
    return X, Y


@pytest.mark.parametrize("make", [
    lambda: (MulticlassFeatures(bias=1.0), *multiclass_data(6)[:2]),
    lambda: (MulticlassFeatures(attributes={"a": [1, 0], "b": [0, 1], "c": [1, 1]}),
             *multiclass_data(6)[:2]),
    lambda: (TaxonomyFeatures(), *_tree_data()),
    lambda: (SequenceFeatures(features="word"), *sequence_data(7)[:2]),
    lambda: (SequenceFeatures(), *sequence_data(7)[:2]),
    lambda: (RankingFeatures(), [np.eye(3)[:, :2], np.ones((2, 2))], [[2, 1, 0], [1, 0]]),
    lambda: (GrammarFeatures(), [["a", "b"], ["b"]], [_tree("(S (X a) (Y b))"), _tree("(Y b)")]),
    lambda: (GraphFeatures(directed=("c",)),
             [(np.eye(3), {"c": np.array([[0, 1]]), "s": np.array([[1, 2]])})], [[0, 1, 1]]),
])
def test_feature_names_name_every_dimension_once(make):
    fm, X, Y = make()
    fm.fit(X, Y)
    names = fm.feature_names_
    assert names.shape == (fm.n_features_,)
    assert len(set(names.tolist())) == fm.n_features_
    for j in (0, fm.n_features_ // 2, fm.n_features_ - 1):
        assert fm.feature_index(names[j]).tolist() == [j]
    assert fm.feature_index("*").tolist() == list(range(fm.n_features_))


def test_feature_names_describe_the_joint_feature():
    fm = SequenceFeatures(features="word").fit([["x", "y"]], [["A", "B"]])
    phi = fm.joint_feature(["x", "y"], ["A", "B"])
    on = sorted(fm.feature_names_[np.flatnonzero(phi)].tolist())
    assert "transition:A->B" in on and "start:A" in on and "end:B" in on
    assert all(n.startswith(("emission:", "transition:", "start:", "end:")) for n in on)
    em = [n for n in on if n.startswith("emission:")]
    assert all(n.endswith(":A") for n in em if "w=x" in n)
    mc = MulticlassFeatures().fit([np.array([1.0, 2.0]), np.array([0.0, 1.0])], ["a", "b"])
    phi = mc.joint_feature(np.array([3.0, 4.0]), "b")
    np.testing.assert_array_equal(phi[mc.feature_index("b:*")], [3.0, 4.0])
    assert mc.feature_index("b:x1").tolist() == [3]


def test_feature_index_errors():
    fm = MulticlassFeatures().fit([np.array([1.0]), np.array([0.0])], ["a", "b"])
    with pytest.raises(ValueError, match="no feature named 'z:\\*'.*'a:x0'"):
        fm.feature_index("z:*")
    with pytest.raises(TypeError, match="feature_index takes"):
        fm.feature_index([1, 2])
    with pytest.raises(AttributeError, match="not fitted"):
        MulticlassFeatures().feature_names_
    fm.fit([np.array([1.0, 2.0]), np.array([0.0, 1.0])], ["a", "c"])  # refit: new names
    assert fm.feature_names_.tolist() == ["a:x0", "a:x1", "c:x0", "c:x1"]


def test_constrained_working_set_problem_is_compiled_once_per_capacity():
    from structsvm.learners._primal_qp import PrimalQP
    import scipy.sparse as sp

    fm = MulticlassFeatures().fit([np.array([1.0, 0.0]), np.array([0.0, 1.0])], ["a", "b"])
    qp = PrimalQP(fm.n_features_, 1, nonneg_block_a, fm)
    rng = np.random.default_rng(0)
    for m in range(1, 8):
        rows = sp.csr_matrix(rng.normal(size=(m, fm.n_features_)))
        w, alpha, value = qp.solve(rows, np.ones(m), np.zeros(m, dtype=int), 1.0)
        assert np.all(w[fm.feature_index("a:*")] >= -1e-9)
    assert qp.n_compiled == 1
