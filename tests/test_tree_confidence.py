"""Max-marginals and k-best projective trees over Eisner's spans (unlabelled and
labelled, single root or not, with forbidden arcs) against enumeration of every
projective tree, and the tree decoders under constraints."""
import numpy as np
import pytest

from structsvm.structures.dependency import ArcPotentials
from structsvm.structures.dependency.spans import eisner_max_marginals, kbest_eisner


def random_arcs(rng, n_sent, max_words, L=1, forbid=0.0, ints=False):
    lengths = rng.integers(1, max_words + 1, size=n_sent)
    size = int(np.sum((lengths + 1) ** 2)) * L
    scores = rng.integers(0, 3, size=size).astype(float) if ints else rng.normal(size=size)
    scores[rng.random(size) < forbid] = -np.inf
    return ArcPotentials(scores, lengths, L)


def one_root(code, n):
    heads = np.asarray(code) % (n + 1)
    return int(np.sum(heads == 0)) == 1


def enumerate_trees(one, single_root):
    n = int(one.lengths()[0])
    out = []
    for y in one.enumerate():
        if single_root and not one_root(y, n):
            continue
        s = one.score(y)
        if s > -np.inf:
            out.append((np.asarray(y), s))
    return out


def _case(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.choice([1, 1, 2, 3]))
    forbid = float(rng.choice([0.0, 0.0, 0.2, 0.5]))
    return rng, random_arcs(rng, 3, 5 if L == 1 else 4, L, forbid), bool(seed % 3 == 0)


@pytest.mark.parametrize("seed", range(40))
def test_max_marginals_equal_enumeration(seed):
    # 40 seeds x 3 sentences of 1-5 words, 1-3 relations, some arcs forbidden
    rng, batch, single = _case(seed)
    tables, best = eisner_max_marginals(batch, single_root=single)
    for i in range(len(batch)):
        one = batch[i]
        n, L = int(one.lengths()[0]), batch.n_labels
        want = np.full((n, (n + 1) * L), -np.inf)
        trees = enumerate_trees(one, single)
        for y, s in trees:
            want[np.arange(n), y] = np.maximum(want[np.arange(n), y], s)
        np.testing.assert_allclose(tables[i], want, atol=1e-9)
        assert best[i] == pytest.approx(max((s for _, s in trees), default=-np.inf))


@pytest.mark.parametrize("seed", range(40))
def test_kbest_equals_enumeration(seed):
    rng, batch, single = _case(100 + seed)
    k = int(rng.integers(1, 9))
    found = kbest_eisner(batch, k, single_root=single)
    for i in range(len(batch)):
        one = batch[i]
        trees = enumerate_trees(one, single)
        scores = np.array([s for _, s in trees])
        order = np.argsort(-scores, kind="stable")[:k]
        ys, ss = found[i]
        assert len(ys) == order.size
        np.testing.assert_allclose(ss, scores[order], atol=1e-9)
        # continuous scores: no ties, the trees themselves are the top k
        for y, j in zip(ys, order):
            assert np.array_equal(y, trees[j][0])


@pytest.mark.parametrize("seed", range(15))
def test_kbest_with_ties(seed):
    """Integer arc scores tie often: the scores are the top k of enumeration, the
    trees distinct, each scoring what is reported, and every tree above the k-th
    score is listed."""
    rng = np.random.default_rng(700 + seed)
    batch = random_arcs(rng, 2, 4, int(rng.integers(1, 3)), ints=True)
    k = int(rng.integers(1, 15))
    for i, (ys, ss) in enumerate(kbest_eisner(batch, k)):
        one = batch[i]
        trees = enumerate_trees(one, False)
        want = np.sort([s for _, s in trees])[::-1][:k]
        np.testing.assert_allclose(ss, want)
        assert len({tuple(y) for y in ys}) == len(ys)
        assert all(one.score(y) == pytest.approx(s) for y, s in zip(ys, ss))
        listed = {tuple(y) for y in ys}
        assert all(tuple(y) in listed for y, s in trees if s > want[-1] + 1e-9)


def test_bad_arguments():
    batch = random_arcs(np.random.default_rng(0), 2, 3)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        kbest_eisner(batch, 0)
    with pytest.raises(TypeError, match="ArcPotentials"):
        eisner_max_marginals(object())
    bad = ArcPotentials(np.full(4, np.nan), [1])
    with pytest.raises(ValueError, match="Sample 0: arc scores contain NaN"):
        kbest_eisner(bad, 2)


# ------------------------------------------------------------------ constraints
from structsvm.structures.constraints import OutputConstraints  # noqa: E402
from structsvm.structures.dependency.constraints import constrain_heads  # noqa: E402
from structsvm.structures.dependency.decoders import (  # noqa: E402
    all_trees_nbest, chu_liu_edmonds, eisner)
from structsvm.structures.dependency import decode_tree, is_tree  # noqa: E402
import itertools  # noqa: E402


def random_tree_constraints(rng, n, L, relations):
    fixed, allowed, forbidden = {}, {}, {}
    for p in range(n):
        u = rng.random()
        head = int(rng.integers(0, n + 1))
        label = (head, relations[int(rng.integers(L))]) if L > 1 and rng.random() < 0.5 \
            else head
        if u < 0.15:
            fixed[p] = label
        elif u < 0.3:
            allowed[p] = [label, int(rng.integers(0, n + 1))]
        elif u < 0.5:
            forbidden[p] = [label]
    return OutputConstraints(fixed=fixed, allowed=allowed, forbidden=forbidden)


def obeys_tree(code, n, c, relations):
    heads, rels = decode_tree(code)
    label = [(int(h), relations[r]) if relations else int(h) for h, r in zip(heads, rels)]

    def match(lab, want):
        if isinstance(want, tuple):
            return lab == want
        return (lab[0] if isinstance(lab, tuple) else lab) == want
    return (all(match(label[p], v) for p, v in c.fixed.items())
            and all(any(match(label[p], v) for v in vs) for p, vs in c.allowed.items())
            and not any(match(label[p], v) for p, vs in c.forbidden.items() for v in vs))


def all_trees(one, n, L, single_root=False):
    for heads in itertools.product(range(n + 1), repeat=n):
        if not is_tree(heads) or (single_root and heads.count(0) != 1):
            continue
        for rels in itertools.product(range(L), repeat=n):
            yield np.array(heads) + (np.array(rels) * (n + 1) if L > 1 else 0)


@pytest.mark.parametrize("seed", range(40))
def test_constrained_tree_decoders_equal_enumeration(seed):
    """eisner, chu_liu_edmonds, the k best and the max-marginals of the constrained
    arcs against every tree (projective, or all) that obeys the rules."""
    rng = np.random.default_rng(1200 + seed)
    L = int(rng.choice([1, 2]))
    relations = [f"r{j}" for j in range(L)] if L > 1 else []
    batch = random_arcs(rng, 3, 4, L)
    n_words = batch.lengths()
    cons = [random_tree_constraints(rng, int(n), L, relations) for n in n_words]
    index = {r: j for j, r in enumerate(relations)}
    restricted = constrain_heads(relations, index, batch, cons)
    got_p, got_np = eisner(restricted), chu_liu_edmonds(restricted)
    tables, _ = eisner_max_marginals(restricted)
    k = int(rng.integers(1, 6))
    lists, lists_np = kbest_eisner(restricted, k), all_trees_nbest(restricted, k)
    for i in range(len(batch)):
        one, n = batch[i], int(n_words[i])
        proj = [(y, one.score(y)) for y, _ in enumerate_trees(one, False)
                if obeys_tree(y, n, cons[i], relations)]
        every = [(y, one.score(y)) for y in all_trees(one, n, L)
                 if obeys_tree(y, n, cons[i], relations)]
        for found, pool, k_list in ((got_p[i], proj, lists[i]),
                                    (got_np[i], every, lists_np[i])):
            if not pool:
                assert restricted[i].score(found) == -np.inf and k_list[0] == []
                continue
            scores = np.sort([s for _, s in pool])[::-1]
            assert obeys_tree(found, n, cons[i], relations)
            assert one.score(found) == pytest.approx(scores[0])
            np.testing.assert_allclose(k_list[1], scores[:k], atol=1e-9)
            assert all(obeys_tree(y, n, cons[i], relations) for y in k_list[0])
        want = np.full((n, (n + 1) * L), -np.inf)
        for y, s in proj:
            want[np.arange(n), y] = np.maximum(want[np.arange(n), y], s)
        np.testing.assert_allclose(tables[i], want, atol=1e-9)


def test_tree_constraint_errors():
    batch = random_arcs(np.random.default_rng(5), 2, 3)
    n = batch.lengths()
    with pytest.raises(ValueError, match="Sample 1: constraints: head 9 .* is not a "
                                         "node"):
        constrain_heads([], {}, batch, [None, OutputConstraints(fixed={0: 9})])
    with pytest.raises(ValueError, match=f"Sample 0: constraints name part {n[0]}"):
        constrain_heads([], {}, batch, [OutputConstraints(fixed={int(n[0]): 0}), None])
    with pytest.raises(ValueError, match="transitions constrain sequences"):
        constrain_heads([], {}, batch, [OutputConstraints(transitions="BIO"), None])
    with pytest.raises(ValueError, match="is no head"):
        constrain_heads([], {}, batch, [OutputConstraints(fixed={0: (0, "nsubj")}),
                                        None])
