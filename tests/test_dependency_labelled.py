"""Trees with relations: labelled arc scores decoded against brute force over every
labelled tree (plain and loss-augmented, labelled and unlabelled attachment
losses), the encoding of trees, the map's relation templates against the scores,
predict's (head, relation) pairs, the conformance check, model files and CoNLL-U
written from a parser's output."""
import io
import itertools

import numpy as np
import pytest

import structsvm
from structsvm.registry import lookup
from structsvm.structures import HammingLoss
from structsvm.structures.dependency import (ArcPotentials, DependencyFeatures,
                                             LabelledAttachmentLoss,
                                             UnlabelledAttachmentLoss, attachment_scores,
                                             chu_liu_edmonds, decode_tree, eisner,
                                             encode_tree, is_projective, is_tree,
                                             read_conllu, write_conllu)
from structsvm.structures.dependency import _arcs_jit
from structsvm.structures.dependency.features import BOS, EOS
from structsvm.testing import check_structure

X_UD = [[{"form": "John", "lemma": "John", "upos": "PROPN", "xpos": "NNP",
          "feats": {"Number": "Sing"}},
         {"form": "sees", "lemma": "see", "upos": "VERB", "xpos": "VBZ",
          "feats": {"Number": "Sing", "Person": "3"}},
         {"form": "Mary", "lemma": "Mary", "upos": "PROPN", "xpos": "NNP",
          "feats": None},
         {"form": ".", "lemma": ".", "upos": "PUNCT", "xpos": ".", "feats": None}],
        [{"form": "Dogs", "lemma": "dog", "upos": "NOUN", "xpos": "NNS",
          "feats": "Number=Plur"},
         {"form": "bark", "lemma": "bark", "upos": "VERB", "xpos": "VBP", "feats": None}],
        [{"form": "Go", "lemma": "go", "upos": "VERB", "xpos": "VB",
          "feats": {"Mood": "Imp"}}]]
Y_UD = [[(2, "nsubj"), (0, "root"), (2, "obj"), (2, "punct")],
        [(2, "nsubj"), (0, "root")], [(0, "root")]]


def all_trees(n):
    return [np.array(h) for h in itertools.product(range(n + 1), repeat=n) if is_tree(h)]


def labelled(trees, n, L):
    return [encode_tree(t, r) for t in trees for r in itertools.product(range(L),
                                                                         repeat=n)]


def random_batch(rng, lengths, L):
    return ArcPotentials(np.concatenate([rng.normal(size=(n + 1) ** 2 * L)
                                         for n in lengths]), lengths, L)


def test_encoded_trees():
    code = encode_tree([2, 0, 2], [1, 0, 3])
    assert code.tolist() == [1 * 4 + 2, 0, 3 * 4 + 2]
    heads, rels = decode_tree(code)
    assert heads.tolist() == [2, 0, 2] and rels.tolist() == [1, 0, 3]
    assert encode_tree([2, 0]).tolist() == [2, 0]


@pytest.mark.parametrize("decoder, projective", [(eisner, True),
                                                 (chu_liu_edmonds, False)])
@pytest.mark.parametrize("single_root", [False, True])
def test_labelled_decoders_equal_brute_force(decoder, projective, single_root):
    """The best labelled tree: the best relation of every arc, then the best tree."""
    rng = np.random.default_rng(1)
    for L in (2, 3):
        lengths = [1, 2, 3, 4] * 3
        batch = random_batch(rng, lengths, L)
        out = decoder(batch, single_root=single_root)
        for i, (n, y) in enumerate(zip(lengths, out)):
            trees = [t for t in all_trees(n) if (is_projective(t) or not projective)
                     and (not single_root or np.count_nonzero(t == 0) == 1)]
            p = batch[i]
            best = max(p.score(c) for c in labelled(trees, n, L))
            assert p.score(y) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("loss", [HammingLoss(), LabelledAttachmentLoss(normalize=True),
                                  UnlabelledAttachmentLoss(),
                                  UnlabelledAttachmentLoss(normalize=True)])
@pytest.mark.parametrize("decoder, projective", [(eisner, True),
                                                 (chu_liu_edmonds, False)])
def test_loss_augmented_labelled_decoding_equals_brute_force(loss, decoder, projective):
    """argmax_y Δ(y*, y) + s(y) over every labelled tree: a wrong relation costs
    under the labelled loss and nothing under the unlabelled one."""
    rng = np.random.default_rng(2)
    L = 3
    lengths = [1, 2, 3, 4] * 3
    batch = random_batch(rng, lengths, L)
    truth = []
    for n in lengths:
        trees = [t for t in all_trees(n) if is_projective(t)]
        truth.append(encode_tree(trees[rng.integers(len(trees))],
                                 rng.integers(0, L, size=n)))
    out = decoder(batch.augment(truth, loss))
    for i, (n, y) in enumerate(zip(lengths, out)):
        trees = [t for t in all_trees(n) if is_projective(t) or not projective]
        p, t = batch[i], truth[i]
        best = max(loss(t, c) + p.score(c) for c in labelled(trees, n, L))
        assert loss(t, y) + p.score(y) == pytest.approx(best, abs=1e-12)


def test_losses_by_hand():
    y = encode_tree([2, 0, 2], [0, 1, 2])
    wrong_relation = encode_tree([2, 0, 2], [0, 1, 0])
    wrong_head = encode_tree([3, 0, 2], [0, 1, 2])
    assert LabelledAttachmentLoss()(y, wrong_relation) == 1.0
    assert UnlabelledAttachmentLoss()(y, wrong_relation) == 0.0
    assert UnlabelledAttachmentLoss()(y, wrong_head) == 1.0
    assert UnlabelledAttachmentLoss(normalize=True)(y, wrong_head) == pytest.approx(1 / 3)
    assert lookup("loss", "las") is LabelledAttachmentLoss
    assert lookup("loss", "uas") is UnlabelledAttachmentLoss
    table = UnlabelledAttachmentLoss().part_losses(y, 2 * 4)  # 2 relations, 4 heads
    assert table.shape == (3, 8) and table[0].tolist() == [1, 1, 0, 1] * 2


def test_relation_scores_equal_the_columns_of_every_labelled_arc():
    """Every (arc, relation) score of the compiled pass is Σ w over arc_columns with
    that relation (the relation templates' blocks are L columns wide)."""
    fm = DependencyFeatures(n_hash=4099, filter_relations=False)
    Xe = fm.fit_encode(X_UD, Y_UD)
    L = fm.n_labels_
    assert fm.columns_ == ("ctag", "lemma", "feats") and L == 4
    w = np.random.default_rng(3).normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    out = np.empty(400, dtype=np.int64)
    for s in range(len(X_UD)):
        n, base = len(X_UD[s]), int(Xe.off[s])
        S = batch.matrix(s)
        assert S.shape == (n + 1, n + 1, L)
        for h in range(n + 1):
            for d in range(1, n + 1):
                if h == d:
                    continue
                for r in range(L):
                    k = _arcs_jit.arc_columns(Xe.tok, Xe.feats, base, n, h, d, r,
                                              fm._flags, L, BOS, EOS, fm.n_features_,
                                              out)
                    cols = out[:k]
                    assert 0 <= cols.min() and cols.max() < fm.n_features_
                    assert S[h, d, r] == pytest.approx(w[cols].sum(), rel=1e-12,
                                                       abs=1e-12)


def test_relation_filter_allows_the_relations_seen_with_the_tags():
    """With the filter, an arc whose pair of coarse tags and direction training saw
    scores −inf on the relations it never had, the same as without elsewhere; an
    unseen pair allows every relation."""
    plain = DependencyFeatures(n_hash=4099, filter_relations=False)
    fm = DependencyFeatures(n_hash=4099)
    Xe = plain.fit_encode(X_UD, Y_UD)
    fm.fit(X_UD, Y_UD)
    w = np.random.default_rng(7).normal(size=fm.n_features_)
    a, b = plain.batch_potentials(Xe, w), fm.batch_potentials(Xe, w)
    seen = {}
    for x, y in zip(X_UD, Y_UD):
        for d, (h, r) in enumerate(y, start=1):
            key = ("ROOT" if h == 0 else x[h - 1]["upos"], x[d - 1]["upos"], h < d)
            seen.setdefault(key, set()).add(r)
    rels = fm.relations_.tolist()
    for s, x in enumerate(X_UD):
        A, B = a.matrix(s), b.matrix(s)
        tags = ["ROOT"] + [t["upos"] for t in x]
        for h in range(len(x) + 1):
            for d in range(1, len(x) + 1):
                if h == d:
                    continue
                allowed = seen.get((tags[h], tags[d], h < d), set(rels))
                for r, name in enumerate(rels):
                    assert B[h, d, r] == (A[h, d, r] if name in allowed else -np.inf)
    assert len(fm.relation_keys_) == len(set((k, r) for k, v in seen.items() for r in v))
    # decoding and enumeration stay within the allowed relations
    one = fm.potentials(X_UD[0], w)
    for y in list(one.enumerate())[:200] + eisner(one):
        assert one.score(y) > -np.inf


def test_phi_of_labelled_trees_equals_their_scores():
    fm = DependencyFeatures(n_hash=2 ** 14)
    Xe = fm.fit_encode(X_UD, Y_UD)
    Ye = fm.encode_outputs(Y_UD, X_UD)
    # relations by frequency: root, nsubj, obj, punct
    assert Ye[0].tolist() == [1 * 5 + 2, 0 * 5 + 0, 2 * 5 + 2, 3 * 5 + 2]
    w = np.random.default_rng(4).normal(size=fm.n_features_)
    batch = fm.batch_potentials(Xe, w)
    pred = eisner(batch)
    for trees in (Ye, pred):
        np.testing.assert_allclose(fm.joint_features(Xe, trees) @ w, batch.score(trees),
                                   rtol=1e-10, atol=1e-9)
    # a wrong relation alone changes the relation templates' columns only
    other = [y.copy() for y in Ye]
    other[0][2] = 0 * 5 + 2  # "obj" -> "root" on the arc 2 -> 3
    diff = fm.joint_feature_differences(Xe, Ye, other)
    assert diff[1:].nnz == 0 and diff[0].nnz > 0
    assert fm.decode_outputs(Ye) == Y_UD


def test_relations_in_and_out():
    fm = DependencyFeatures(n_hash=2 ** 12).fit(X_UD, Y_UD)
    assert fm.relations_.tolist() == ["root", "nsubj", "obj", "punct"]  # by frequency
    code = fm.encode_outputs([[(0, "vocative")]], X_UD[2:])[0]
    assert code.tolist() == [4 * 2 + 0]  # unseen: the id past the relations
    with pytest.raises(ValueError, match="a relation the map was not fitted on"):
        fm.joint_features(fm.encode_inputs(X_UD[2:]), [code])
    with pytest.raises(ValueError, match="Sample 0: the map was fitted on trees with "
                                         "relations"):
        fm.encode_outputs([[0]], X_UD[2:])
    with pytest.raises(ValueError, match="Sample 1: every tree has relations or none"):
        DependencyFeatures(n_hash=64).fit(X_UD[:2], [Y_UD[0], [2, 0]])
    with pytest.raises(ValueError, match="Sample 0, token 2: the relation must be"):
        DependencyFeatures(n_hash=64).fit(X_UD[1:2], [[(2, "nsubj"), (0, "")]])


@pytest.mark.parametrize("params", [{}, {"siblings": True, "grandparents": True,
                                         "max_heads": None}])
def test_check_structure_passes_with_relations(params):
    """Φ, argmax and loss-augmented argmax against every labelled projective tree,
    the loss, parameters, save and load (second order: every arc kept, the exact
    search)."""
    X = [X_UD[1], X_UD[2], X_UD[1][::-1]]
    Y = [[(2, "nsubj"), (0, "root")], [(0, "root")], [(0, "root"), (1, "nsubj")]]
    check_structure(DependencyFeatures(n_hash=2 ** 12, **params), X, Y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_labelled_second_order_parser_predicts_pairs_and_saves(tmp_path, need_data):
    """A labelled second-order parser on a slice of UD English EWT: predict gives
    (head, relation) pairs, a model file loads back predicting the same, and the
    parses go to CoNLL-U with their relations."""
    from structsvm.corpora import load_ud_english_ewt

    data = need_data(load_ud_english_ewt, split="dev")
    X = data.sentences[:150]
    Y = [list(zip(h, r)) for h, r in zip(data.heads[:150], data.relations[:150])]
    model = structsvm.fit(X, Y, feature_map=DependencyFeatures(
        n_hash=2 ** 18, siblings=True, grandparents=True), max_iter=6)
    X_te = data.sentences[150:200]
    pred = model.predict(X_te)
    assert all(isinstance(h, int) and isinstance(r, str) for p in pred for h, r in p)
    assert all(is_tree([h for h, _ in p]) for p in pred)
    gold = [list(zip(h, r)) for h, r in zip(data.heads[150:200],
                                            data.relations[150:200])]
    scores = attachment_scores(gold, pred)
    assert scores.las <= scores.uas and scores.las > 0.3
    path = tmp_path / "parser.npz"
    model.save(path)
    back = structsvm.load(path)
    assert back.predict(X_te) == pred
    assert back.feature_map_.relations_.tolist() == model.feature_map_.relations_.tolist()
    buf = io.StringIO()
    write_conllu(buf, X_te, pred)
    again = read_conllu(io.StringIO(buf.getvalue()))
    assert [list(zip(h, r)) for h, r in zip(again.heads, again.relations)] == pred


def test_long_sentences_are_checked_against_the_memory_budget(monkeypatch):
    """A sentence whose arcs would exceed the memory budget is refused before
    anything is allocated, naming what and how long; the second-order search of
    the longest sentence too."""
    from structsvm.limits import MemoryLimitError
    from structsvm.structures.dependency import DenseFactors, SecondOrderPotentials

    fm = DependencyFeatures(n_hash=2 ** 12).fit(X_UD, Y_UD)
    long_sentence = [X_UD[0][k % 4] for k in range(700)]
    w = np.zeros(fm.n_features_)
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "4M")
    with pytest.raises(MemoryLimitError, match=r"the arcs of 1 sentences \(700 words at "
                                               r"most\) need"):
        fm.batch_potentials(fm.encode_inputs([long_sentence]), w)
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "64M")
    n = 200
    arcs = ArcPotentials(np.zeros((n + 1) ** 2), [n])
    batch = SecondOrderPotentials(arcs, DenseFactors(None, None), siblings=False,
                                  grandparents=True, max_heads=None)
    batch._tables = (arcs.scores, arcs.relations, np.ones((n + 1) ** 2, dtype=bool),
                     np.zeros(0), np.zeros(2, np.int64), np.zeros(0),
                     np.zeros(2, np.int64))
    with pytest.raises(MemoryLimitError, match=r"the second-order search of the longest "
                                               r"sentence \(200 words\) need"):
        eisner(batch)
