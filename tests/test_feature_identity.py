"""Φ/score identity of every feature map, and Φ against a test-side construction.

For every map, ``w @ joint_feature(x, y) == potentials(x, w).score(y_encoded)``
(DESIGN.md's invariant), on random inputs drawn by hypothesis: random trees with
every leaf for taxonomies, several seeds and every output kind (grades, explicit
pairs, orderings) for rankings. Φ itself is also rebuilt here from the documented
layout (one-hot ⊗ φ(x), path indicators ⊗ φ(x), emission/transition/start/end
counts, pair differences), so the identity is not only the map agreeing with itself.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structsvm.structures import (MulticlassFeatures,
    RankingFeatures,
    SequenceFeatures,
    TaxonomyFeatures)

from reference_qp import random_tree, tree_paths

seeds = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=30)


@SETTINGS
@given(seed=seeds, K=st.integers(2, 5), d=st.integers(1, 4), bias=st.sampled_from([0.0, 2.0]))
def test_multiclass_identity_and_layout(seed, K, d, bias):
    rng = np.random.default_rng(seed)
    labels = [f"c{k}" for k in range(K)]
    X = list(rng.normal(size=(K, d)))
    fm = MulticlassFeatures(bias=bias).fit(X, labels)
    w = rng.normal(size=fm.n_features_)
    x = rng.normal(size=d)
    phi_x = np.append(x, bias) if bias > 0 else x
    for k, y in enumerate(labels):
        phi = fm.joint_feature(x, y)
        np.testing.assert_allclose(phi, np.kron(np.eye(K)[k], phi_x))
        ye = fm.encode_outputs([y])[0]
        assert fm.potentials(x, w).score(ye) == pytest.approx(w @ phi, rel=1e-12, abs=1e-12)


@SETTINGS
@given(seed=seeds, d=st.integers(1, 4), bias=st.sampled_from([0.0, 1.0]))
def test_taxonomy_identity_on_random_trees_for_every_leaf(seed, d, bias):
    rng = np.random.default_rng(seed)
    children, root = random_tree(rng)
    paths = tree_paths(children, root)
    leaves = [p[-1] for p in paths]
    X = list(rng.normal(size=(len(leaves), d)))
    fm = TaxonomyFeatures(tree=children, bias=bias).fit(X, leaves)
    names = list(fm.tree_.names)
    w = rng.normal(size=fm.n_features_)
    x = rng.normal(size=d)
    phi_x = np.append(x, bias) if bias > 0 else x
    for leaf, path in zip(leaves, paths):   # every leaf of the tree
        phi = fm.joint_feature(x, leaf)
        on_path = np.array([name in path for name in names], dtype=float)
        np.testing.assert_allclose(phi, np.kron(on_path, phi_x))
        ye = fm.encode_outputs([leaf])[0]
        assert fm.potentials(x, w).score(ye) == pytest.approx(w @ phi, rel=1e-12, abs=1e-12)


def _sequence_phi(x, y, tags):
    """Σ_t x_t ⊗ e_{y_t}, transition counts, e_{y_1}, e_{y_T} in the map's layout."""
    K = len(tags)
    k = [tags.index(t) for t in y]
    W = sum(np.outer(x[t], np.eye(K)[k[t]]) for t in range(len(y)))
    A = np.zeros((K, K))
    for t in range(1, len(y)):
        A[k[t - 1], k[t]] += 1
    return np.concatenate([W.ravel(), A.ravel(), np.eye(K)[k[0]], np.eye(K)[k[-1]]])


@SETTINGS
@given(seed=seeds, K=st.integers(1, 3), d=st.integers(1, 3),
       lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_sequence_identity_and_layout_matrix_inputs(seed, K, d, lengths):
    rng = np.random.default_rng(seed)
    tags = [f"t{k}" for k in range(K)]
    X = [rng.normal(size=(T, d)) for T in lengths]
    Y = [[tags[j] for j in rng.integers(0, K, size=T)] for T in lengths]
    Y[0][0] = tags[-1]
    Y[-1][-1] = tags[0]
    fm = SequenceFeatures().fit(X + [np.ones((K, d))], Y + [tags])  # every tag seen
    w = rng.normal(size=fm.n_features_)
    for x, y in zip(X, Y):
        phi = fm.joint_feature(x, y)
        np.testing.assert_allclose(phi, _sequence_phi(x, y, list(fm.tags_)))
        ye = fm.encode_outputs([y], [x])[0]
        assert fm.potentials(x, w).score(ye) == pytest.approx(w @ phi, rel=1e-10, abs=1e-10)


@SETTINGS
@given(seed=seeds, features=st.sampled_from(["word", "pos"]))
def test_sequence_identity_token_inputs(seed, features):
    rng = np.random.default_rng(seed)
    vocab = ["the", "Dog", "runs", "fast", "42", "a-b"]
    X = [[vocab[j] for j in rng.integers(0, len(vocab), size=int(rng.integers(1, 6)))]
         for _ in range(4)]
    Y = [[["D", "N", "V"][j] for j in rng.integers(0, 3, size=len(x))] for x in X]
    fm = SequenceFeatures(features=features).fit(X + [["x", "y", "z"]], Y + [["D", "N", "V"]])
    w = rng.normal(size=fm.n_features_)
    for x, y in zip(X, Y):
        ye = fm.encode_outputs([y], [x])[0]
        assert fm.potentials(x, w).score(ye) == pytest.approx(w @ fm.joint_feature(x, y),
                                                              rel=1e-10, abs=1e-10)


@SETTINGS
@given(seed=seeds)
def test_ranking_identity_every_output_kind(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 4))
    queries = [rng.normal(size=(int(rng.integers(1, 6)), d)) for _ in range(3)]
    grades = [rng.integers(0, 3, size=q.shape[0]).astype(float) for q in queries]
    fm = RankingFeatures().fit(queries, grades)
    w = rng.normal(size=d)
    for q, g in zip(queries, grades):
        m = q.shape[0]
        pairs = [(a, b) for a in range(m) for b in range(m) if g[a] > g[b]]
        expected = sum((q[a] - q[b] for a, b in pairs), np.zeros(d))
        explicit = (np.array(pairs[::2], dtype=np.intp).reshape(-1, 2)
                    if pairs else np.zeros((0, 2), dtype=np.intp))
        for y, phi_ref in ((g, expected),
                           (explicit, sum((q[a] - q[b] for a, b in explicit), np.zeros(d)))):
            phi = fm.joint_feature(q, y)
            np.testing.assert_allclose(phi, phi_ref, atol=1e-12)
            ye = fm.encode_outputs([y], [q])[0]
            assert fm.potentials(q, w).score(ye) == pytest.approx(w @ phi, abs=1e-10)
        # an ordering (best first) scores Σ over its ranked pairs of s_a − s_b
        order = rng.permutation(m)
        s = q @ w
        by_pairs = sum(s[order[i]] - s[order[j]] for i in range(m) for j in range(i + 1, m))
        assert fm.potentials(q, w).score(order) == pytest.approx(by_pairs, abs=1e-10)
