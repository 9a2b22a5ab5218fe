"""The dependency map: Φ against the arc scores, the compiled scores against the
columns of every arc, the batched rows against Φ, input forms, errors, the
conformance check, model files and a small training run."""
import numpy as np
import pytest
import scipy.sparse as sp

import structsvm
from structsvm.corpora import load_dependency_treebank
from structsvm.structures import HammingLoss
from structsvm.structures.dependency import (DependencyFeatures, attachment_scores,
                                             eisner, from_dependency_graphs, is_tree,
                                             to_dependency_graphs)
from structsvm.structures.dependency import _arcs_jit
from structsvm.structures.dependency._arcs_jit import TAG, WORD
from structsvm.structures.dependency.features import BOS, EOS
from structsvm.testing import check_structure

X_TOY = [[("John", "NNP"), ("saw", "VBD"), ("Mary", "NNP"), (".", ".")],
         [("Colourless", "JJ"), ("ideas", "NNS"), ("sleep", "VBP"), ("furiously", "RB")],
         [("It", "PRP"), ("rains", "VBZ")],
         [("Yes", "UH")]]
Y_TOY = [[2, 0, 2, 2], [2, 3, 0, 3], [2, 0], [0]]


@pytest.fixture
def treebank(need_data):
    X_tr, Y_tr, X_te, Y_te = need_data(load_dependency_treebank)
    return X_tr[:120], Y_tr[:120], X_te[:60], Y_te[:60]


def test_phi_equals_the_scores_of_the_trees(treebank):
    """w · Φ(x, y) = Σ_d s(y_d → d) for random w and the true and random trees."""
    X, Y = treebank[0][:40], treebank[1][:40]
    fm = DependencyFeatures(n_hash=2 ** 16)
    Xe = fm.fit_encode(X, Y)
    rng = np.random.default_rng(0)
    w = rng.normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    Ye = fm.encode_outputs(Y, X)
    other = eisner(batch)  # another tree per sentence
    for trees in (Ye, other):
        np.testing.assert_allclose(fm.joint_features(Xe, trees) @ w, batch.score(trees),
                                   rtol=1e-10, atol=1e-9)
    for x, y in zip(X[:5], Y[:5]):  # the public, raw-data pair
        assert fm.joint_feature(x, y) @ w == pytest.approx(fm.potentials(x, w).score(y))


def test_compiled_scores_equal_the_sum_over_every_arcs_columns():
    """Every arc of every sentence: the score is Σ w over arc_columns (the factored
    unigram sums and head partial hashes change the order of the sum only)."""
    fm = DependencyFeatures(n_hash=4099)  # not a power of two
    Xe = fm.fit_encode(X_TOY, Y_TOY)
    w = np.random.default_rng(1).normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    out = np.empty(2 * (60 + 10), dtype=np.int64)
    for s in range(len(X_TOY)):
        n, base = len(X_TOY[s]), Xe.off[s]
        S = batch.matrix(s)
        for h in range(n + 1):
            for d in range(1, n + 1):
                if h == d:
                    continue
                k = _arcs_jit.arc_columns(Xe.tok, Xe.feats, base, n, h, d, 0, 0, 1,
                                          BOS, EOS, fm.n_features_, out)
                cols = out[:k]
                assert cols.min() >= 0 and cols.max() < fm.n_features_
                assert S[h, d] == pytest.approx(w[cols].sum(), rel=1e-12, abs=1e-12)
                # the templates of McDonald et al.: 2 x (5 + 5 + 13 + 4 + between)
                # for long words; fewer where neither word is longer than 5 letters
                between = abs(h - d) - 1
                assert 2 * (3 + 3 + 7 + 4 + between) <= k <= 2 * (27 + between)


def test_columns_of_an_arc_by_hand():
    """"ideas" -> "Colourless": 2 x (3 head unigrams + 5 dependent unigrams (long word)
    + 7 pairs + 6 prefix pairs + 4 context), no word between; the direction/distance
    column of each is its plain column + 8 (dependent left of its head, distance 1)."""
    fm = DependencyFeatures(n_hash=2 ** 20).fit(X_TOY, Y_TOY)
    Xe = fm.encode_inputs(X_TOY[1:2])
    out = np.empty(100, dtype=np.int64)
    k = _arcs_jit.arc_columns(Xe.tok, Xe.feats, 0, 4, 2, 1, 0, 0, 1, BOS, EOS,
                              fm.n_features_, out)
    assert k == 2 * (3 + 5 + 7 + 6 + 4)
    assert _arcs_jit.direction_distance(2, 1) == 8
    assert np.array_equal(out[1:k:2] - out[0:k:2], np.full(k // 2, 8))
    # the same template values from another sentence give the same columns
    fm2 = DependencyFeatures(n_hash=2 ** 20).fit(X_TOY, Y_TOY)
    Xe2 = fm2.encode_inputs([[("Colourless", "JJ"), ("ideas", "NNS"), ("sleep", "VBP"),
                              ("furiously", "RB")]])
    out2 = np.empty(100, dtype=np.int64)
    _arcs_jit.arc_columns(Xe2.tok, Xe2.feats, 0, 4, 2, 1, 0, 0, 1, BOS, EOS,
                          fm2.n_features_, out2)
    assert np.array_equal(out[:k], out2[:k])


def test_difference_rows_and_sums(treebank):
    X, Y = treebank[0][:30], treebank[1][:30]
    fm = DependencyFeatures(n_hash=2 ** 18)
    Xe = fm.fit_encode(X, Y)
    Ye = fm.encode_outputs(Y, X)
    w = np.random.default_rng(2).normal(size=fm.n_features_)
    idx = np.array([3, 1, 7, 20, 5])
    Y_hat = eisner(fm.batch_potentials(Xe, w, idx))
    Y_sel = [Ye[i] for i in idx]
    full = fm.joint_features(Xe, Y_sel, idx) - fm.joint_features(Xe, Y_hat, idx)
    diff = fm.joint_feature_differences(Xe, Y_sel, Y_hat, idx)
    assert sp.isspmatrix_csr(diff) and abs(full - diff).max() < 1e-12
    weights = np.array([1.0, 0.5, 2.0, -1.0, 3.0])
    dense = fm.joint_feature_difference_sum(Xe, Y_sel, Y_hat, idx, weights)
    np.testing.assert_allclose(dense, weights @ diff.toarray(), atol=1e-12)


def test_input_forms_encode_alike():
    """(word, tag) pairs, CoNLL-U token dicts and nltk DependencyGraphs."""
    fm = DependencyFeatures(n_hash=2 ** 12).fit(X_TOY, Y_TOY)
    dicts = [[{"form": w, "lemma": None, "upos": "X", "xpos": t} for w, t in x]
             for x in X_TOY]
    upos_only = [[{"form": w, "upos": t} for w, t in x] for x in X_TOY]
    graphs = to_dependency_graphs(X_TOY, Y_TOY)
    ref = fm.encode_inputs(X_TOY)
    for X in (dicts, upos_only, graphs):
        enc = fm.encode_inputs(X)
        for a, b in zip(ref.arrays(), enc.arrays()):
            assert np.array_equal(a, b)
    assert [y.tolist() for y in fm.encode_outputs(graphs, graphs)] == Y_TOY
    back = from_dependency_graphs(graphs)
    assert back.heads == Y_TOY and [t["form"] for t in back.sentences[0]] == \
        ["John", "saw", "Mary", "."]


def test_unknown_words_and_tags_encode_as_unknown():
    fm = DependencyFeatures(n_hash=2 ** 12, min_count=2).fit(X_TOY, Y_TOY)
    assert fm.words_.tolist() == []  # every word is seen once
    fm = DependencyFeatures(n_hash=2 ** 12).fit(X_TOY, Y_TOY)
    enc = fm.encode_inputs([[("Zebras", "NNS"), ("sleep", "XYZ")]])
    assert enc.tok[1:, WORD].tolist() == [0, fm._word_id["sleep"]]
    assert enc.tok[:, TAG].tolist() == [1, fm._tag_id["NNS"], 0]


@pytest.mark.parametrize("X, Y, match", [
    (X_TOY[:1], [[2, 0, 2]], r"Sample 0: 3 heads for a sentence of 4 words"),
    (X_TOY[:1], [[2, 0, 2, 5]], r"Sample 0, token 4: head 5 is not 0"),
    (X_TOY[:1], [[2, 1, 2, 2]], r"Sample 0: the heads .* do not form a tree"),
    (X_TOY[:1], [[1, 0, 2, 2]], r"Sample 0: the heads .* do not form a tree"),
    (X_TOY[:1], [["a", 0, 2, 2]], r"Sample 0: heads must be a list of integers"),
    ([[("John", "NNP")], []], [[0], []], r"Sample 1: empty sentence"),
    ([[("John", None)]], [[0]], r"Sample 0, token 1: the tag must be a non-empty"),
    ([[{"form": "John"}]], [[0]], r"Sample 0, token 1: no tag"),
    ([["John"]], [[0]], r"Sample 0, token 1: expected a \(word, tag\) pair"),
])
def test_bad_inputs_are_refused_with_their_place(X, Y, match):
    with pytest.raises((ValueError, TypeError), match=match):
        DependencyFeatures(n_hash=64).fit(X, Y)


@pytest.mark.parametrize("params, match", [
    ({"n_hash": 8}, "n_hash must be an int from 16"),
    ({"n_hash": 2 ** 40}, "n_hash must be an int from 16"),
    ({"min_count": 0}, "min_count must be an int from 1"),
    ({"tag_key": 3}, "tag_key must be a str")])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        DependencyFeatures(**params).fit(X_TOY, Y_TOY)


def test_check_structure_passes():
    """The conformance check: Φ, argmax and loss-augmented argmax (Eisner) against
    every projective tree of these short sentences, the loss, parameters, save/load."""
    check_structure(DependencyFeatures(n_hash=2 ** 12), X_TOY, Y_TOY)


def test_saved_model_loads_without_trusted(tmp_path, treebank):
    X, Y, X_te, _ = treebank
    model = structsvm.fit(X[:40], Y[:40], feature_map=DependencyFeatures(n_hash=2 ** 16),
                          max_iter=5)
    path = tmp_path / "parser.npz"
    model.save(path)
    back = structsvm.load(path)  # a built-in map: no trusted= needed
    np.testing.assert_array_equal(back.coef_, model.coef_)
    for a, b in zip(model.predict(X_te), back.predict(X_te)):
        assert a == b
    assert back.decoder_.name == "eisner"


def test_default_call_learns_on_a_small_slice(treebank):
    """120 training sentences, the default call: every prediction is a projective
    tree, and held-out attachment beats attaching every word to its neighbour toward
    the sentence's verb-free baseline (each word headed by the next word: UAS ~0.3)
    by far. (The full split: benchmarks/bench_dependency.py.)"""
    X, Y, X_te, Y_te = treebank
    model = structsvm.fit(X, Y, feature_map=DependencyFeatures())
    assert model.learner_.name == "dual_cd" and model.decoder_.name == "eisner"
    assert model.loss_.name == "hamming" and model.converged_
    pred = model.predict(X_te)
    assert all(isinstance(p, list) and is_tree(p) for p in pred)
    uas = attachment_scores(Y_te, pred, X_te, exclude_punctuation=True).uas
    base = attachment_scores(Y_te, [[d + 1 if d < len(y) else 0 for d in range(1, len(y) + 1)]
                                    for y in Y_te], X_te, exclude_punctuation=True).uas
    assert base < 0.4 and uas > 0.7


def test_hamming_loss_over_heads_is_the_default_loss():
    assert DependencyFeatures.default_loss == "hamming"
    loss = HammingLoss()
    assert loss(np.array([2, 0, 2]), np.array([0, 0, 2])) == 1.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_chu_liu_edmonds_trains_and_its_trees_score_at_least_eisners(treebank):
    """Training with the non-projective decoder; at the learnt w its trees score at
    least Eisner's (it searches a superset), and equal where its tree is projective."""
    X, Y, X_te, Y_te = treebank
    model = structsvm.fit(X[:60], Y[:60], feature_map=DependencyFeatures(n_hash=2 ** 18),
                          decoder="chu_liu_edmonds", max_iter=10)
    assert model.decoder_.name == "chu_liu_edmonds"
    pred = model.predict(X_te)
    assert all(is_tree(p) for p in pred)
    assert attachment_scores(Y_te, pred, X_te, exclude_punctuation=True).uas > 0.6
    fm = model.feature_map_
    batch = fm.batch_potentials(fm.encode_inputs(X_te), model.coef_)
    cle, proj = batch.score(fm.encode_outputs(pred, X_te)), batch.score(eisner(batch))
    assert np.all(cle >= proj - 1e-9)
    from structsvm.structures.dependency import is_projective
    same = np.array([is_projective(p) for p in pred])
    np.testing.assert_allclose(cle[same], proj[same], rtol=1e-12, atol=1e-9)
