"""Decoders against a test-side enumeration (itertools.product/permutations).

Not the library's exhaustive decoder, not ``Potentials.score`` nor its losses: every
output is enumerated here and scored by the textbook formula of its structure, and
losses are written here from their definitions. hypothesis draws the random inputs
(profile in conftest.py: derandomised, no deadline). Covered: argmax, viterbi, tree
and sort; plain, ``exclude=`` ("argmax over y ≠ y_i"), loss-augmented, and both
together; normalised Hamming and user-defined decomposable losses (per-part cost
tables given by a function); the sort decoder's refusal of ``exclude=``.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structsvm.structures.taxonomy.features import build_tree
from structsvm.structures.multiclass.features import MulticlassPotentials
from structsvm.structures.ranking.features import RankingPotentials
from structsvm.structures.sequence.features import ChainPotentials
from structsvm.structures.taxonomy.features import TreePotentials
from structsvm.structures import get_decoder
from structsvm.structures import BaseLoss, HammingLoss, ZeroOneLoss
from structsvm.structures.ranking import SwappedPairsLoss
from structsvm.structures.taxonomy import TreeDistanceLoss
from structsvm.structures.ranking.outputs import Preferences

from reference_qp import random_tree, tree_paths

seeds = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=100)


def _argbest(values):
    """Index of the largest value and whether it is unique beyond round-off."""
    values = np.asarray(values, dtype=float)
    k = int(np.argmax(values))
    others = np.delete(values, k)
    return k, (others.size == 0 or values[k] - others.max() > 1e-9)


class CostTableLoss(BaseLoss):
    """A user's decomposable loss: Δ(y, ŷ) = Σ_t M[y_t, ŷ_t] for a cost matrix given by
    a function (so the decoders see a loss that is neither zero-one nor Hamming)."""

    name = "cost_table"
    decomposition = "position"

    def __init__(self, cost):
        self.cost = cost  # callable (true state, predicted state) -> cost

    def table(self, K):
        return np.array([[self.cost(a, b) for b in range(K)] for a in range(K)], dtype=float)

    def __call__(self, y_true, y_pred):
        a, b = np.atleast_1d(y_true), np.atleast_1d(y_pred)
        return float(sum(self.cost(int(p), int(q)) for p, q in zip(a, b)))

    def part_losses(self, y_true, n_states):
        y = np.atleast_1d(np.asarray(y_true, dtype=np.intp))
        out = self.table(n_states)[y]
        return out if np.ndim(y_true) else out[0]


def _cost(a, b):
    return 0.0 if a == b else 0.5 + abs(a - b) ** 1.5


# --------------------------------------------------------------------------- argmax
def _multiclass_losses(K):
    # test-side definitions of each loss, on class indices
    return {
        "zero_one": (ZeroOneLoss(), lambda a, b: float(a != b)),
        "hamming_normalized": (HammingLoss(normalize=True), lambda a, b: float(a != b)),
        "cost_table": (CostTableLoss(_cost), _cost),
    }


@SETTINGS
@given(seed=seeds, n=st.integers(1, 5), K=st.integers(2, 5),
       loss_name=st.sampled_from(["zero_one", "hamming_normalized", "cost_table"]),
       augment=st.booleans(), exclude=st.booleans())
def test_argmax_equals_enumeration(seed, n, K, loss_name, augment, exclude):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, K))
    Y = rng.integers(0, K, size=n)
    loss, delta = _multiclass_losses(K)[loss_name]
    batch = MulticlassPotentials(S)
    if augment:
        batch = batch.augment(list(Y), loss)
    got = get_decoder("argmax")(batch, exclude=list(Y) if exclude else None)
    for i in range(n):
        cands = [k for k in range(K) if not (exclude and k == Y[i])]
        vals = [S[i, k] + (delta(Y[i], k) if augment else 0.0) for k in cands]
        k, unique = _argbest(vals)
        assert S[i, got[i]] + (delta(Y[i], got[i]) if augment else 0.0) == \
            pytest.approx(vals[k], abs=1e-12)
        if exclude:
            assert got[i] != Y[i]
        if unique:
            assert got[i] == cands[k]


# --------------------------------------------------------------------------- viterbi
def _chain_score(u, A, s, e, y):
    """start + Σ unary + Σ transitions + end, from the definition."""
    total = s[y[0]] + e[y[-1]] + sum(u[t, y[t]] for t in range(len(y)))
    return total + sum(A[y[t - 1], y[t]] for t in range(1, len(y)))


@SETTINGS
@given(seed=seeds, lengths=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       K=st.integers(1, 3),
       loss_name=st.sampled_from(["none", "hamming", "hamming_normalized", "cost_table"]),
       exclude=st.sampled_from(["none", "truth", "best"]))
def test_viterbi_equals_enumeration(seed, lengths, K, loss_name, exclude):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    U = rng.normal(size=(offsets[-1], K))
    A, s, e = rng.normal(size=(K, K)), rng.normal(size=K), rng.normal(size=K)
    Y = [rng.integers(0, K, size=T) for T in lengths]
    batch = ChainPotentials(U, offsets, A, s, e)
    losses = {"hamming": (HammingLoss(), lambda a, b: float(np.sum(a != b))),
              "hamming_normalized": (HammingLoss(normalize=True),
                                     lambda a, b: float(np.mean(a != b))),
              "cost_table": (CostTableLoss(_cost),
                             lambda a, b: sum(_cost(p, q) for p, q in zip(a, b)))}
    delta = None
    if loss_name != "none":
        loss, delta = losses[loss_name]
        batch = batch.augment(Y, loss)
    viterbi = get_decoder("viterbi")
    ex = None
    if exclude == "truth":
        ex = Y
    elif exclude == "best":
        ex = viterbi(batch)
    if ex is not None and K == 1:
        # one state: the excluded path is the only one
        with pytest.raises(ValueError, match="no path other than the excluded one"):
            viterbi(batch, exclude=ex)
        return
    got = viterbi(batch, exclude=ex)
    for i, T in enumerate(lengths):
        u = U[offsets[i]:offsets[i + 1]]
        paths = [np.array(p) for p in itertools.product(range(K), repeat=T)]
        if ex is not None:
            paths = [p for p in paths if not np.array_equal(p, ex[i])]

        def value(p):
            return _chain_score(u, A, s, e, p) + (delta(Y[i], p) if delta else 0.0)

        vals = [value(p) for p in paths]
        k, unique = _argbest(vals)
        assert value(got[i]) == pytest.approx(vals[k], abs=1e-9)
        if ex is not None:
            assert not np.array_equal(got[i], ex[i])
        if unique:
            np.testing.assert_array_equal(got[i], paths[k])


# --------------------------------------------------------------------------- tree
@SETTINGS
@given(seed=seeds, n=st.integers(1, 4),
       loss_name=st.sampled_from(["none", "zero_one", "tree_distance",
                                  "tree_distance_normalized", "depth_weighted"]),
       exclude=st.booleans())
def test_tree_decoder_equals_enumeration(seed, n, loss_name, exclude):
    rng = np.random.default_rng(seed)
    children, root = random_tree(rng)
    tree = build_tree(children)
    index = {name: v for v, name in enumerate(tree.names)}  # names are unique here
    paths = tree_paths(children, root)                        # enumerated test-side
    node_scores = rng.normal(size=(n, tree.n_nodes))
    truth = [paths[j] for j in rng.integers(0, len(paths), size=n)]

    def sym(a, b):
        return len(set(a) ^ set(b))

    def depth_weighted(a, b):  # a loss of the user's own: deeper mistakes cost less
        return sum(1.0 / (1 + k) for k in range(len(b)) if k >= len(a) or a[k] != b[k])

    defs = {"zero_one": (ZeroOneLoss(), lambda a, b: float(a != b)),
            "tree_distance": (TreeDistanceLoss(), sym),
            "tree_distance_normalized": (TreeDistanceLoss(normalize=True),
                                         lambda a, b: sym(a, b) / (len(a) + len(b))),
            "depth_weighted": (None, depth_weighted)}
    enc = [tuple(index[v] for v in p) for p in truth]
    batch = TreePotentials(node_scores, tree)
    delta = None
    if loss_name != "none":
        loss, delta = defs[loss_name]
        if loss is None:  # the user's loss on encoded paths, through the names
            names = tree.names

            class _User(BaseLoss):
                def __call__(self, a, b):
                    return depth_weighted(tuple(names[list(a)]), tuple(names[list(b)]))
            loss = _User()
        batch = batch.augment(enc, loss)
    if exclude and len(paths) < 2:
        return
    got = get_decoder("tree")(batch, exclude=enc if exclude else None)
    for i in range(n):
        cands = [p for p in paths if not (exclude and p == truth[i])]
        vals = [sum(node_scores[i, index[v]] for v in p)
                + (delta(truth[i], p) if delta else 0.0) for p in cands]
        k, unique = _argbest(vals)
        got_names = tuple(tree.names[list(got[i])])
        got_val = sum(node_scores[i, index[v]] for v in got_names) + \
            (delta(truth[i], got_names) if delta else 0.0)
        assert got_val == pytest.approx(vals[k], abs=1e-9)
        if exclude:
            assert got_names != truth[i]
        if unique:
            assert got_names == cands[k]


# --------------------------------------------------------------------------- sort
def _order_value(s, order):
    """w·Φ of a total order (best first): Σ over ranked pairs (a before b) of s_a − s_b."""
    return sum(s[order[i]] - s[order[j]] for i in range(len(order))
               for j in range(i + 1, len(order)))


@SETTINGS
@given(seed=seeds, sizes=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_sort_orders_equal_enumeration_of_permutations(seed, sizes):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    s = rng.normal(size=offsets[-1])
    got = get_decoder("sort")(RankingPotentials(s, offsets))
    for i, m in enumerate(sizes):
        si = s[offsets[i]:offsets[i + 1]]
        perms = list(itertools.permutations(range(m)))
        vals = [_order_value(si, p) for p in perms]
        k, unique = _argbest(vals)
        assert sorted(got[i].tolist()) == list(range(m))
        assert _order_value(si, got[i]) == pytest.approx(vals[k], abs=1e-9)
        if unique:
            assert tuple(got[i].tolist()) == perms[k]


def _random_preferences(rng, m, explicit):
    if explicit:  # click-style explicit pairs (duplicates count twice)
        k = int(rng.integers(0, 6))
        pairs = []
        while len(pairs) < k and m > 1:
            a, b = rng.choice(m, size=2, replace=False)
            pairs.append((int(a), int(b)))
        pairs = np.array(pairs, dtype=np.intp).reshape(-1, 2)
        return Preferences(m, pairs=pairs), [tuple(p) for p in pairs]
    grades = rng.integers(0, 3, size=m).astype(float)      # ties give no pair
    pairs = [(a, b) for a in range(m) for b in range(m) if grades[a] > grades[b]]
    return Preferences(m, grades=grades), pairs


@SETTINGS
@given(seed=seeds, sizes=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       explicit=st.booleans(), normalize=st.booleans(), scale=st.sampled_from([0.3, 1.0, 3.0]))
def test_loss_augmented_sort_equals_enumeration_of_labellings(seed, sizes, explicit,
                                                              normalize, scale):
    """max over labellings c ∈ {0,1}^P of Δ(c) + w·Φ(c), with Φ(c) = Σ_P c_ab (φ_a − φ_b)
    and Δ(c) = m · #swapped (m = 1 or 1/|P|), enumerated with itertools.product."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    s = scale * rng.normal(size=offsets[-1])
    Y, P = zip(*[_random_preferences(rng, m, explicit) for m in sizes])
    batch = RankingPotentials(s, offsets).augment(list(Y), SwappedPairsLoss(normalize))
    got = get_decoder("sort")(batch)
    for i, m in enumerate(sizes):
        si, pairs = s[offsets[i]:offsets[i + 1]], P[i]
        weight = (1.0 / len(pairs) if pairs else 0.0) if normalize else 1.0
        best_val, best_coef, count = -np.inf, None, 0
        for keep in itertools.product((1, 0), repeat=len(pairs)):
            coef = np.zeros(m)
            for (a, b), c in zip(pairs, keep):
                coef[a] += c
                coef[b] -= c
            val = weight * (len(pairs) - sum(keep)) + coef @ si
            if val > best_val + 1e-9:
                best_val, best_coef, count = val, coef, 1
            elif val > best_val - 1e-9:
                count += 1
        lab = got[i]
        assert weight * lab.n_swapped + lab.coef @ si == pytest.approx(best_val, abs=1e-9)
        if count == 1:
            np.testing.assert_allclose(lab.coef, best_coef)


def test_sort_refuses_exclude():
    sort = get_decoder("sort")
    batch = RankingPotentials(np.array([0.3, -1.0, 2.0]), [0, 3])
    with pytest.raises(ValueError, match="does not support exclude="):
        sort(batch, exclude=[np.array([2, 0, 1])])
    aug = batch.augment([Preferences(3, grades=[2, 1, 0])], SwappedPairsLoss())
    with pytest.raises(ValueError, match="does not support exclude="):
        sort(aug, exclude=[Preferences(3, grades=[2, 1, 0])])
