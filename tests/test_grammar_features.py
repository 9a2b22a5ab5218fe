"""GrammarFeatures: w·Φ = potentials.score on random trees, tree round trips, the
feature-difference shortcuts, training (one_slack, pegasos), save/load, bad input,
bracket scores."""
import numpy as np
import pytest
from nltk import Tree

import structsvm
from structsvm.structures import GrammarFeatures
from structsvm.structures.grammar._trees import binarize, clean_tree, unbinarize
from structsvm.structures.grammar import bracket_scores

LABELS = ["S", "NP", "VP", "PP", "ADJP"]
TAGS = ["DT", "NN", "VB", "IN", "JJ"]
WORDS = ["the", "dog", "cat", "sees", "on", "big", "mat", "a", "runs"]


def random_tree(rng, n_words, depth=0):
    """A random tree over ``n_words`` words: n-ary nodes, unary chains, preterminals."""
    if n_words == 1 and (depth > 0 or rng.random() < 0.5):
        pre = Tree(str(rng.choice(TAGS)), [str(rng.choice(WORDS))])
        return Tree(str(rng.choice(LABELS)), [pre]) if rng.random() < 0.3 else pre
    if n_words == 1:
        return Tree(str(rng.choice(LABELS)),
                    [Tree(str(rng.choice(TAGS)), [str(rng.choice(WORDS))])])
    m = int(rng.integers(2, min(n_words, 4) + 1))
    cuts = np.sort(rng.choice(np.arange(1, n_words), size=m - 1, replace=False))
    sizes = np.diff(np.concatenate([[0], cuts, [n_words]]))
    node = Tree(str(rng.choice(LABELS)), [random_tree(rng, int(s), depth + 1)
                                          for s in sizes])
    if rng.random() < 0.2:
        node = Tree(str(rng.choice(LABELS)), [node])
    return node


def corpus(seed, n=30, tagged=False):
    rng = np.random.default_rng(seed)
    Y = [clean_tree(random_tree(rng, int(rng.integers(1, 8)))) for _ in range(n)]
    X = [t.pos() if tagged else t.leaves() for t in Y]
    return X, Y


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("markov", [0, 1])
def test_binarize_round_trip(seed, markov):
    _, Y = corpus(seed)
    for t in Y:
        nodes = binarize(t, markov)
        assert len(nodes) == 2 * len(t.leaves()) - 1
        assert unbinarize(nodes, t.leaves()) == t


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("tagged", [False, True])
def test_score_equals_w_dot_phi_on_random_trees(seed, tagged):
    X, Y = corpus(seed, tagged=tagged)
    fm = GrammarFeatures(markov=seed % 2).fit(X, Y)
    rng = np.random.default_rng(seed)
    w = rng.normal(size=fm.n_features_)
    Xe = fm.encode_inputs(X)
    Ye = fm.encode_outputs(Y, X)
    batch = fm.batch_potentials(Xe, w)
    Phi = fm.joint_features(Xe, Ye)
    np.testing.assert_allclose(Phi @ w, batch.score(Ye), rtol=1e-10, atol=1e-9)
    for x, y, ye in zip(X[:5], Y[:5], Ye[:5]):
        assert w @ fm.joint_feature(x, y) == pytest.approx(fm.potentials(x, w).score(ye))
    # predicted trees: same identity, and the shortcuts agree with Φ(y) − Φ(ŷ)
    Y_hat = structsvm.structures.get_decoder("cky")(batch)
    np.testing.assert_allclose(fm.joint_features(Xe, Y_hat) @ w, batch.score(Y_hat),
                               rtol=1e-10, atol=1e-9)
    D = (Phi - fm.joint_features(Xe, Y_hat)).toarray()
    np.testing.assert_allclose(fm.joint_feature_differences(Xe, Ye, Y_hat).toarray(), D)
    weights = rng.random(len(X))
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, Ye, Y_hat, None, weights),
                               weights @ D, atol=1e-12)
    idx = np.array([3, 1, 4])
    np.testing.assert_allclose(fm.joint_features(Xe, [Ye[i] for i in idx], idx).toarray(),
                               Phi[idx].toarray())
    # the decoder's trees decode to nltk trees over the input words
    for t, x in zip(fm.decode_outputs(Y_hat), X):
        assert t.leaves() == [w_ if isinstance(w_, str) else w_[0] for w_ in x]


def test_clean_tree_removes_traces_and_function_tags():
    raw = Tree.fromstring(
        "( (S (NP-SBJ-1 (NNP John)) (VP (VBD tried) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB win))))) (. .)) )")
    assert clean_tree(raw) == Tree.fromstring(
        "(S (NP (NNP John)) (VP (VBD tried) (S (VP (TO to) (VP (VB win))))) (. .))")


def test_default_call_learns_the_training_trees_and_saves(tmp_path):
    X, Y = corpus(11, n=25, tagged=True)
    model = structsvm.fit(X, Y, feature_map=GrammarFeatures(), decoder="cky", C=10.0,
                          tol=1e-3)
    P = model.predict(X)
    assert bracket_scores(Y, P, count_root=True).f1 > 0.95
    assert isinstance(P[0], Tree) and P[0].leaves() == Y[0].leaves()
    path = model.save(tmp_path / "parser.npz")
    again = structsvm.load(path)
    assert again.predict(X) == P
    np.testing.assert_array_equal(again.coef_, model.coef_)


@pytest.mark.parametrize("learner", ["one_slack", "pegasos"])
def test_learners_train_it(learner):
    X, Y = corpus(5, n=25)
    base = GrammarFeatures().fit(X, Y)
    model = structsvm.fit(X, Y, feature_map=GrammarFeatures(), decoder="cky",
                          learner=learner, C=1.0, max_iter=60 if learner == "pegasos" else None,
                          random_state=0, tol=1e-3)
    # far better than the untrained model (w = 0 gives one fixed bracketing)
    zero = structsvm.structures.get_decoder("cky")(
        base.batch_potentials(base.encode_inputs(X), np.zeros(base.n_features_)))
    f_zero = bracket_scores(Y, base.decode_outputs(zero), count_root=True).f1
    f_model = bracket_scores(Y, model.predict(X), count_root=True).f1
    assert f_model > max(0.8, f_zero + 0.2)


def test_bad_input_names_the_sample():
    X, Y = corpus(2, n=5)
    with pytest.raises(ValueError, match="Sample 1: empty sentence"):
        GrammarFeatures().fit([X[0], []], Y[:2])
    wrong = [X[0], list(X[1][:-1]) + ["zebra"]]
    with pytest.raises(ValueError, match="Sample 1: the tree's leaves"):
        GrammarFeatures().fit(wrong, Y[:2])
    fm = GrammarFeatures().fit(X, Y)
    new = Tree("XYZ", [Tree("DT", ["the"]), Tree("NN", ["dog"])])
    with pytest.raises(ValueError, match="Sample 1: label 'XYZ' was never seen"):
        fm.encode_outputs([Y[0], new])
    with pytest.raises(ValueError, match="Sample 0: empty sentence"):
        fm.encode_inputs([[]])
    with pytest.raises(TypeError, match="Sample 0: the map was fitted on lists of words"):
        fm.encode_inputs([[("the", "DT")]])
    with pytest.raises(TypeError, match="Sample 2: expected an nltk.Tree"):
        GrammarFeatures().fit(X[:3], Y[:2] + ["(S x)"])
    with pytest.raises(ValueError, match="markov"):
        GrammarFeatures(markov=-1).fit(X, Y)


def test_bracket_scores_hand_example():
    gold = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ sees) (NP (DT a) (NN cat)))"
                           " (. .))")
    pred = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ sees) (DT a)) (NP (NN cat))"
                           " (. .))")
    # gold brackets (root ignored): NP(0,2) VP(2,5) NP(3,5); pred: NP(0,2) VP(2,4) NP(4,5)
    s = bracket_scores([gold], [pred])
    assert (s.matched, s.gold, s.predicted) == (1, 3, 3)
    assert s.f1 == pytest.approx(1 / 3)
    # with the root S(0,5) counted: 2 of 4; the final '.' never counts
    assert bracket_scores([gold], [pred], count_root=True).f1 == pytest.approx(0.5)
    moved = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ sees) (NP (DT a) (NN cat))"
                            " (. .)))")
    assert bracket_scores([gold], [moved]).f1 == 1.0  # punctuation attachment ignored
    with pytest.raises(ValueError, match="Sample 0: the gold and predicted trees"):
        bracket_scores([gold], [Tree.fromstring("(S (NN x))")])


# ------------------------------------------------------------------ feature names
def _names_fixture(tagged=False):
    t = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    x = t.pos() if tagged else t.leaves()
    return GrammarFeatures().fit([x], [t]), x, t


@pytest.mark.parametrize("tagged", [False, True])
def test_feature_names_one_per_column_unique(tagged):
    X, Y = corpus(3, tagged=tagged)
    fm = GrammarFeatures(markov=1).fit(X, Y)
    names = fm.feature_names_
    assert names.shape == (fm.n_features_,)
    assert len(set(names.tolist())) == fm.n_features_
    g = fm.grammar_
    assert fm.feature_index("rule:*").size == g.n_rules
    assert fm.feature_index("root:*").size == g.n_symbols
    W_leaf, W_span, _, _ = fm.split_weights(np.zeros(fm.n_features_))
    assert fm.feature_index("leaf:*").size == W_leaf.size
    assert fm.feature_index("span:*").size == W_span.size


def test_feature_names_of_a_rule_and_a_root_sit_at_their_columns():
    fm, _, _ = _names_fixture()
    sym = fm.symbols_.tolist()
    k = fm.grammar_.rule_index[(sym.index("S"), sym.index("NP"), sym.index("VP+VBZ"))]
    w = np.zeros(fm.n_features_)
    _, _, rules, roots = fm.split_weights(w)
    rules[k] = 1.0
    roots[sym.index("S")] = 2.0
    assert fm.feature_names_[w == 1.0].tolist() == ["rule:S -> NP VP+VBZ"]
    assert fm.feature_names_[w == 2.0].tolist() == ["root:S"]


def test_feature_names_of_the_active_columns_describe_the_tree():
    """The names of Φ(x, y)'s non-zero columns, written out by hand for one tree."""
    fm, x, t = _names_fixture()
    phi = fm.joint_feature(x, t)
    on = set(fm.feature_names_[np.flatnonzero(phi)].tolist())
    # untagged: a word's class is its shape ("x" for lower-case words)
    dog = {"bias", "word[0]=dog", "suf1[0]=g", "suf2[0]=og", "suf3[0]=dog",
           "shape[0]=x", "cls[0]=x", "cls[-1]=x", "cls[+1]=x", "word[-1]=the",
           "word[+1]=barks", "cls[-1]=x&cls[0]=x", "cls[0]=x&cls[+1]=x"}
    assert {n[len("leaf:NN:"):] for n in on if n.startswith("leaf:NN:")} == dog
    the_dog = {"bias", "len=2", "word[first]=the", "word[last]=dog",
               "word[before]=<BOS>", "word[after]=barks", "cls[first]=x", "cls[last]=x",
               "cls[before]=<BOS>", "cls[after]=x", "suf3[last]=dog", "shape[first]=x",
               "shape[last]=x", "cls[before]=<BOS>&cls[first]=x",
               "cls[last]=x&cls[after]=x", "cls[first]=x&cls[last]=x",
               "len=2&cls[first]=x", "len=2&cls[last]=x"}
    assert {n[len("span:NP:"):] for n in on if n.startswith("span:NP:")} == the_dog
    assert {n for n in on if n.startswith(("rule:", "root:"))} == {
        "rule:S -> NP VP+VBZ", "rule:NP -> DT NN", "root:S"}
    # 3 words x 13 word templates, 2 phrases x 18 span templates, 2 rules, 1 root
    assert len(on) == np.count_nonzero(phi) == 3 * 13 + 2 * 18 + 2 + 1


def test_feature_names_follow_a_refit_and_a_model_file(tmp_path):
    fm, x, t = _names_fixture(tagged=True)
    assert "leaf:NN:cls[0]=NN" in fm.feature_names_
    model = structsvm.fit([x], [t], feature_map=GrammarFeatures(), decoder="cky",
                          learner="perceptron", max_iter=2)
    before = model.feature_map_.feature_names_.tolist()
    assert before == fm.feature_names_.tolist()
    loaded = structsvm.load(model.save(tmp_path / "m.npz"))
    assert loaded.feature_map_.feature_names_.tolist() == before
    fm.fit([["a", "b"]], [Tree.fromstring("(S (X a) (Y b))")])
    assert "root:Y" in fm.feature_names_ and len(fm.feature_names_) == fm.n_features_
