"""Second-order dependency decoding against brute force over every projective tree
of short sentences: sibling and grandparent factors, with relations, one root or
several, loss-augmented, pruned; the max-marginals of the pruning; the
non-projective rearrangement search; the second-order features against the scores
of trees."""
import itertools

import numpy as np
import pytest

from structsvm.structures import HammingLoss
from structsvm.structures.dependency import (ArcPotentials, DenseFactors,
                                             DependencyFeatures, SecondOrderPotentials,
                                             UnlabelledAttachmentLoss, chu_liu_edmonds,
                                             eisner, grandparent_factors, is_projective,
                                             is_tree, projective_trees, sibling_factors)
from structsvm.structures.dependency import _factors_jit, _second_order_jit

KINDS = [(True, False), (False, True), (True, True)]  # (siblings, grandparents)


def random_batch(rng, lengths, n_labels=1, siblings=True, grandparents=True,
                 max_heads=None, integer=False):
    def draw(*shape):
        a = rng.normal(size=shape)
        return np.round(2 * a) if integer else a
    arcs = ArcPotentials(np.concatenate([draw((n + 1) ** 2 * n_labels) for n in lengths]),
                         lengths, n_labels)
    sib = [draw(n + 1, n + 1, n + 1) for n in lengths] if siblings else None
    grand = [draw(n + 1, n + 1, n + 1) for n in lengths] if grandparents else None
    return SecondOrderPotentials(arcs, DenseFactors(sib, grand), siblings=siblings,
                                 grandparents=grandparents, max_heads=max_heads)


def brute_score(arcs, sib, grand, heads, rels):
    """A tree's score from the dense arrays, by the factors' definitions."""
    m = len(heads) + 1
    A = arcs.reshape(m, m, -1)
    total = sum(A[h, d, r] for d, (h, r) in enumerate(zip(heads, rels), start=1))
    if sib is not None:
        total += sum(sib[f] for f in sibling_factors(heads))
    if grand is not None:
        total += sum(grand[f] for f in grandparent_factors(heads))
    return total


def test_factors_of_a_tree_by_hand():
    # 0 -> 2; 2 -> 1, 2 -> 4; 4 -> 3; 4 -> 5
    heads = [2, 0, 4, 2, 4]
    assert sibling_factors(heads) == [(2, 2, 1), (0, 0, 2), (4, 4, 3), (2, 2, 4),
                                      (4, 4, 5)]
    assert grandparent_factors(heads) == [(0, 2, 1), (2, 4, 3), (0, 2, 4), (2, 4, 5)]
    # two right dependents of the root: the second has the first as its sibling
    assert sibling_factors([0, 0, 0]) == [(0, 0, 1), (0, 1, 2), (0, 2, 3)]


@pytest.mark.parametrize("siblings, grandparents", KINDS)
@pytest.mark.parametrize("single_root", [False, True])
def test_second_order_eisner_equals_brute_force(siblings, grandparents, single_root):
    """The best projective tree (with its relations) under arc, sibling and
    grandparent scores, over every projective tree and relation assignment; scores
    with many ties too."""
    rng = np.random.default_rng(10 + 2 * siblings + grandparents)
    for n_labels, integer, lengths in ((1, False, [1, 2, 3, 4, 5, 6] * 2),
                                       (2, False, [1, 2, 3, 4] * 3),
                                       (1, True, [2, 3, 4, 5, 6] * 2)):
        batch = random_batch(rng, lengths, n_labels, siblings, grandparents,
                             integer=integer)
        out = eisner(batch, single_root=single_root)
        for i, (n, y) in enumerate(zip(lengths, out)):
            p = batch[i]
            trees = [t for t in p.enumerate()
                     if not single_root or np.count_nonzero(t % (n + 1) == 0) == 1]
            best = max(p.score(t) for t in trees)
            assert is_tree(y % (n + 1)) and is_projective(y % (n + 1))
            assert p.score(y) == pytest.approx(best, abs=1e-9), (i, n, y)


@pytest.mark.parametrize("siblings, grandparents", KINDS)
def test_scores_of_trees_equal_their_factors(siblings, grandparents):
    """SecondOrderPotentials.score against the factors summed by hand."""
    rng = np.random.default_rng(3)
    batch = random_batch(rng, [4, 5], 2, siblings, grandparents)
    for i, n in enumerate([4, 5]):
        p = batch[i]
        sib = p.factors.siblings[0] if siblings else None
        grand = p.factors.grandparents[0] if grandparents else None
        for heads in list(projective_trees(n))[:40]:
            rels = rng.integers(0, 2, size=n)
            code = rels * (n + 1) + heads
            assert p.score(code) == pytest.approx(
                brute_score(p.arcs.scores, sib, grand, heads, rels))


@pytest.mark.parametrize("siblings, grandparents", KINDS)
@pytest.mark.parametrize("loss", [HammingLoss(), HammingLoss(normalize=True),
                                  UnlabelledAttachmentLoss()])
def test_loss_augmented_second_order_equals_brute_force(siblings, grandparents, loss):
    """argmax_y Δ(y*, y) + s(y) over every labelled projective tree: the labelled
    (Hamming over heads and relations) and unlabelled attachment losses."""
    rng = np.random.default_rng(20)
    lengths = [1, 2, 3, 4] * 3
    batch = random_batch(rng, lengths, 2, siblings, grandparents)
    truth = []
    for n in lengths:
        trees = list(projective_trees(n))
        heads = trees[rng.integers(len(trees))]
        truth.append(rng.integers(0, 2, size=n) * (n + 1) + heads)
    out = eisner(batch.augment(truth, loss))
    for i, y in enumerate(out):
        p, t = batch[i], truth[i]
        best = max(loss(t, c) + p.score(c) for c in p.enumerate())
        assert loss(t, y) + p.score(y) == pytest.approx(best, abs=1e-9)


def test_max_marginals_equal_brute_force():
    """The best score of a projective tree through every arc (the pruning's
    criterion), against every projective tree."""
    rng = np.random.default_rng(4)
    for n in range(1, 7):
        m = n + 1
        S = rng.normal(size=m * m)
        out = np.empty(m * m)
        _second_order_jit.max_marginals(S, m, out)
        best = np.full((m, m), -np.inf)
        for t in projective_trees(n):
            v = sum(S[h * m + d] for d, h in enumerate(t, start=1))
            for d, h in enumerate(t, start=1):
                best[h, d] = max(best[h, d], v)
        np.testing.assert_allclose(out.reshape(m, m), best, atol=1e-12)


@pytest.mark.parametrize("max_heads, margin", [(1, np.inf), (2, np.inf), (3, np.inf),
                                               (4, 1.0)])
def test_pruned_search_equals_brute_force_over_the_kept_arcs(max_heads, margin):
    """With ``max_heads`` the search is exact over the trees of the kept arcs; the
    kept arcs hold every word's best ``max_heads`` arcs by max-marginal (those
    within ``prune_margin`` of its best), the best first-order tree and the
    included (true) arcs."""
    rng = np.random.default_rng(30 + max_heads)
    lengths = [3, 4, 5, 6, 7] * 3
    batch = random_batch(rng, lengths, 1, True, True, max_heads=max_heads)
    batch.prune_margin = margin
    truth = [np.zeros(n, dtype=np.int64) for n in lengths]  # every word on the root
    for aug in (batch, batch.augment(truth, HammingLoss())):
        out = eisner(aug)
        kept = aug.kept()
        for i, (n, y) in enumerate(zip(lengths, out)):
            m = n + 1
            K = kept[aug.arc_off[i]:aug.arc_off[i + 1]].reshape(m, m)
            S = aug.arcs.matrix(i)
            mm = np.empty(m * m)
            _second_order_jit.max_marginals(np.ascontiguousarray(S.ravel()), m, mm)
            mm = mm.reshape(m, m)
            best_first = eisner(aug.arcs[i])[0]
            for d in range(1, m):
                cand = np.array([h for h in range(m) if h != d])
                vals = mm[cand, d]
                kth = np.sort(vals)[::-1][min(max_heads, cand.size) - 1]
                within = vals >= vals.max() - margin
                assert K[cand[(vals > kth) & within], d].all()
                extra = {best_first[d - 1]} | ({0} if aug is not batch else set())
                kept_here = set(np.flatnonzero(K[:, d])) - extra
                assert len(kept_here) <= min(max_heads, cand.size)
                assert all(mm[h, d] >= vals.max() - margin for h in kept_here)
            assert K[best_first, np.arange(1, m)].all()
            if aug is not batch:
                assert K[0, 1:].all()  # the true arcs
            p = aug[i]
            trees = [t for t in projective_trees(n) if K[t, np.arange(1, m)].all()]
            best = max(p.score(t) for t in trees)
            assert K[y, np.arange(1, m)].all()
            assert p.score(y) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("siblings, grandparents", KINDS)
def test_rearrangement_search_is_a_local_optimum(siblings, grandparents):
    """The non-projective second-order search returns a tree at least as good as
    the projective one, which no change of one word's head improves."""
    rng = np.random.default_rng(40)
    lengths = [2, 3, 4, 5, 6] * 4
    batch = random_batch(rng, lengths, 1, siblings, grandparents)
    proj = eisner(batch)
    out = chu_liu_edmonds(batch)
    improved = 0
    for i, (n, y, z) in enumerate(zip(lengths, out, proj)):
        p = batch[i]
        assert is_tree(y)
        assert p.score(y) >= p.score(z) - 1e-12
        improved += p.score(y) > p.score(z) + 1e-9
        for d in range(1, n + 1):
            for h in range(n + 1):
                other = y.copy()
                other[d - 1] = h
                if h != d and is_tree(other):
                    assert p.score(other) <= p.score(y) + 1e-9
    assert improved > 0  # non-projective trees were found better


def test_rearrangement_with_one_root_keeps_one_root():
    rng = np.random.default_rng(41)
    batch = random_batch(rng, [4, 5, 6] * 5, 1, True, True)
    for y in chu_liu_edmonds(batch, single_root=True):
        assert is_tree(y) and np.count_nonzero(y == 0) == 1


def test_second_order_non_projective_exact_on_small_trees_is_no_claim():
    """All trees of 4 words are enumerated to show the search is approximate but
    never worse than the best projective tree (a documented property, measured)."""
    rng = np.random.default_rng(42)
    lengths = [4] * 30
    batch = random_batch(rng, lengths, 1, True, False)
    trees = [np.array(h) for h in itertools.product(range(5), repeat=4) if is_tree(h)]
    proj = eisner(batch)
    found = chu_liu_edmonds(batch)
    for i in range(len(lengths)):
        p = batch[i]
        best_all = max(p.score(t) for t in trees)
        assert p.score(proj[i]) <= p.score(found[i]) + 1e-12 <= best_all + 2e-12


# ------------------------------------------------------------------ the features
X_TOY = [[{"form": "John", "lemma": "John", "upos": "PROPN", "xpos": "NNP",
           "feats": {"Number": "Sing"}},
          {"form": "sees", "lemma": "see", "upos": "VERB", "xpos": "VBZ",
           "feats": {"Number": "Sing", "Person": "3"}},
          {"form": "Mary", "lemma": "Mary", "upos": "PROPN", "xpos": "NNP",
           "feats": None},
          {"form": "today", "lemma": "today", "upos": "NOUN", "xpos": "NN",
           "feats": None},
          {"form": ".", "lemma": ".", "upos": "PUNCT", "xpos": ".", "feats": None}],
         [{"form": "Dogs", "lemma": "dog", "upos": "NOUN", "xpos": "NNS",
           "feats": {"Number": "Plur"}},
          {"form": "bark", "lemma": "bark", "upos": "VERB", "xpos": "VBP",
           "feats": None}]]
Y_TOY = [[(2, "nsubj"), (0, "root"), (2, "obj"), (2, "obl"), (2, "punct")],
         [(2, "nsubj"), (0, "root")]]


@pytest.mark.parametrize("siblings, grandparents", KINDS)
def test_compiled_factor_tables_equal_the_columns_of_every_factor(siblings,
                                                                 grandparents):
    """Every kept sibling and grandparent factor's score in the decoder's tables is
    Σ w over the columns of its blocks (taken one factor at a time)."""
    fm = DependencyFeatures(n_hash=4099, siblings=siblings, grandparents=grandparents,
                            max_heads=None)
    Xe = fm.fit_encode(X_TOY, Y_TOY)
    w = np.random.default_rng(5).normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    _, _, kept, sib, sib_off, grand, grand_off = batch.tables()
    blocks = np.empty(_factors_jit.MAX_BLOCKS, dtype=np.int64)
    flags = fm._flags
    for s in range(len(X_TOY)):
        n, base = len(X_TOY[s]), int(Xe.off[s])
        m = n + 1
        dense_sib = np.zeros((m, m, m))
        dense_grand = np.zeros((m, m, m))
        for h in range(m):
            for d in range(1, m):
                if h == d:
                    continue
                dd = _factors_jit.direction_distance(h, d)
                for q in range(m):
                    between = q == h or min(h, d) < q < max(h, d)
                    if siblings and between:
                        k = _factors_jit.sibling_blocks(Xe.tok, base, h, q, d, flags,
                                                        fm.n_features_, blocks)
                        dense_sib[h, q, d] = w[blocks[:k]].sum() + w[blocks[:k] + dd].sum()
                    if grandparents and h >= 1 and q != h:
                        k = _factors_jit.grand_blocks(Xe.tok, base, q, h, d, flags,
                                                      fm.n_features_, blocks)
                        dense_grand[q, h, d] = w[blocks[:k]].sum() + w[blocks[:k] + dd].sum()
        ref = DenseFactors([dense_sib] if siblings else None,
                           [dense_grand] if grandparents else None)
        one = batch[s]
        ref_sib, ref_grand = ref.tables(one, kept[batch.arc_off[s]:batch.arc_off[s + 1]],
                                        np.array([0, sib_off[s + 1] - sib_off[s]]),
                                        np.array([0, grand_off[s + 1] - grand_off[s]]))
        if siblings:
            np.testing.assert_allclose(sib[sib_off[s]:sib_off[s + 1]], ref_sib,
                                       rtol=1e-12, atol=1e-12)
        if grandparents:
            np.testing.assert_allclose(grand[grand_off[s]:grand_off[s + 1]], ref_grand,
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("siblings, grandparents", KINDS)
@pytest.mark.parametrize("labelled", [False, True])
def test_phi_of_second_order_trees_equals_their_scores(siblings, grandparents, labelled):
    """w · Φ(x, y) = score(y) for the true and the decoded trees, and the feature
    differences and their weighted sum against Φ."""
    fm = DependencyFeatures(n_hash=2 ** 14, siblings=siblings,
                            grandparents=grandparents)
    Y = Y_TOY if labelled else [[h for h, _ in y] for y in Y_TOY]
    Xe = fm.fit_encode(X_TOY, Y)
    Ye = fm.encode_outputs(Y, X_TOY)
    w = np.random.default_rng(6).normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    pred = eisner(batch)
    for trees in (Ye, pred):
        np.testing.assert_allclose(fm.joint_features(Xe, trees) @ w, batch.score(trees),
                                   rtol=1e-10, atol=1e-9)
    diff = (fm.joint_features(Xe, Ye) - fm.joint_features(Xe, pred)).toarray()
    np.testing.assert_allclose(fm.joint_feature_differences(Xe, Ye, pred).toarray(), diff,
                               atol=1e-12)
    weights = np.array([0.5, 2.0])
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, Ye, pred,
                                                               weights=weights),
                               weights @ diff, atol=1e-12)
    for x, y in zip(X_TOY, Y):
        assert fm.joint_feature(x, y) @ w == pytest.approx(fm.potentials(x, w).score(
            fm.encode_outputs([y], [x])[0]))


def test_the_kernels_read_the_vocabularies_reserved_ids():
    """The "no sibling" id the factor templates read is the one the vocabularies
    reserve (the compiled loops cannot import the map)."""
    from structsvm.structures.dependency import features

    assert _factors_jit.NONE == features.NONE
    assert features.NONE not in (features.UNK, features.ROOT, features.BOS, features.EOS)
    assert features._FIRST_ID > features.NONE
