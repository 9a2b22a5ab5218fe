"""SequenceFeatures: the score invariant, observation features against a slow reference."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from structsvm.structures import SequenceFeatures
from structsvm.structures.sequence._observations import FEATURE_SETS
from structsvm.structures.exhaustive import exhaustive
from structsvm.structures.sequence.viterbi import viterbi

WORDS = ["the", "The", "dog", "runs", "fast", "U.S.", "1987", "well-known", "a", "Cat"]


def _corpus(rng, n, tags="ABC", words=WORDS):
    X = [[words[j] for j in rng.integers(0, len(words), size=rng.integers(1, 7))]
         for _ in range(n)]
    Y = [[tags[j] for j in rng.integers(0, len(tags), size=len(x))] for x in X]
    return X, Y


def _reference_strings(sent, t, name):
    """Slow, per-token construction of the named feature set's strings."""
    _, roles = FEATURE_SETS[name]
    out = []
    for off, fn in roles:
        if isinstance(off, tuple):  # conjunction: atoms of the tokens at t + o joined
            atoms = [fn(sent[t + o]) if 0 <= t + o < len(sent) else
                     ("<BOS>" if t + o < 0 else "<EOS>") for o in off]
            out.append(",".join(f"{o:+d}" for o in off) + "|" + "&".join(atoms))
            continue
        j = t + off
        if 0 <= j < len(sent):
            out += [f"{off:+d}|{f}" for f in fn(sent[j]) if f is not None]
        else:
            out.append(f"{off:+d}|<{'BOS' if off < 0 else 'EOS'}>")
    return out


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("kind", ["pos", "hash", "matrix", "callable"])
def test_score_equals_w_dot_phi(seed, kind):
    rng = np.random.default_rng(seed)
    X, Y = _corpus(rng, 8)
    if kind == "matrix":
        X = [sp.random(len(x), 5, density=0.5, random_state=seed + i, format="csr")
             for i, x in enumerate(X)]
        fm = SequenceFeatures()
    elif kind == "hash":
        fm = SequenceFeatures(n_hash=64)
    elif kind == "callable":
        fm = SequenceFeatures(features=lambda s, t: ["w=" + s[t], "len=%d" % len(s[t])])
    else:
        fm = SequenceFeatures()
    fm.fit(X, Y)
    w = rng.normal(size=fm.n_features_)
    for x, y in zip(X, Y):
        pot = fm.potentials(x, w)
        ye = fm.encode_outputs([y])[0]
        assert np.isclose(w @ fm.joint_feature(x, y), pot.score(ye))
    # the batched map agrees with the per-sentence one
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    idx = np.array([5, 1, 3])
    J = fm.joint_features(Xe, [Ye[i] for i in idx], idx).toarray()
    for r, i in enumerate(idx):
        np.testing.assert_allclose(J[r], fm.joint_feature(X[i], Y[i]))
    scores = fm.batch_potentials(Xe, w, idx).score([Ye[i] for i in idx])
    np.testing.assert_allclose(scores, J @ w)


def test_viterbi_on_map_equals_exhaustive():
    rng = np.random.default_rng(0)
    X, Y = _corpus(rng, 10)
    fm = SequenceFeatures().fit(X, Y)
    batch = fm.batch_potentials(fm.encode_inputs(X), rng.normal(size=fm.n_features_))
    assert all(np.array_equal(a, b) for a, b in zip(viterbi(batch), exhaustive(batch)))


TAGS = ["DT", "NN", "VBZ", "RB", "NNP", "CD", "JJ"]


def _ragged(w):  # an extractor whose tuples differ in length (the map pads them)
    return ("w=" + w,) if len(w) < 3 else ("w=" + w, "s=" + w[-2:], None)


@pytest.mark.parametrize("name", ["pos", "chunk", "word", "ragged"])
def test_observation_rows_match_slow_reference(name, monkeypatch):
    monkeypatch.setitem(FEATURE_SETS, "ragged", ("str", (
        (0, _ragged), (-1, _ragged), (2, _ragged), ((-1, 0, 1), str.lower))))
    rng = np.random.default_rng(1)
    X, Y = _corpus(rng, 12)
    if name == "chunk":  # (word, tag) pairs; a word may carry several tags
        X = [[(w, TAGS[j]) for w, j in zip(x, rng.integers(0, len(TAGS), len(x)))]
             for x in X]
    fm = SequenceFeatures(features=name).fit(X[:8], Y[:8])
    vocab = {s: j for j, s in enumerate(fm.vocabulary_)}
    Xe = fm.encode_inputs(X)  # sentences 8.. hold strings unseen in training
    for i, x in enumerate(X):
        rows = Xe[i]
        for t in range(len(x)):
            expected = np.zeros(fm.n_input_features_)
            for s in _reference_strings(x, t, name):
                if s in vocab:
                    expected[vocab[s]] += 1
            np.testing.assert_array_equal(rows[t].toarray().ravel(), expected)


def test_pos_features_known_answer():
    fm = SequenceFeatures().fit([["The", "well-known", "dog"]], [["D", "J", "N"]])
    vocab = set(fm.vocabulary_)
    for s in ["+0|w=well-known", "+0|p4=well", "+0|s2=wn", "+0|H", "+0|b", "+0|T",
              "-1|l=the", "-1|s3=the", "+1|l=dog", "-2|<BOS>", "+2|<EOS>", "+1|<EOS>",
              "-2|l=the", "+2|l=dog"]:
        assert s in vocab, s
    assert "+0|U" not in vocab  # no all-upper word


def test_chunk_features_take_word_tag_pairs():
    X = [[("He", "PRP"), ("reckons", "VBZ")], [("the", "DT")]]
    Y = [["B-NP", "B-VP"], ["B-NP"]]
    fm = SequenceFeatures(features="chunk").fit(X, Y)
    vocab = set(fm.vocabulary_)
    for s in ["+1|t=VBZ", "+0|lt=he|PRP", "-1,+0|<BOS>&l=he", "+0,+1|t=PRP&t=VBZ",
              "-2,-1,+0|<BOS>&<BOS>&t=PRP", "+0,+1,+2|t=PRP&t=VBZ&<EOS>",
              "+0,+1,+2|t=DT&<EOS>&<EOS>", "-1,+0,+1|<BOS>&t=DT&<EOS>"]:
        assert s in vocab, s
    with pytest.raises(TypeError, match=r"Sentence 1, token 0: expected a \(word, tag\)"):
        fm.encode_inputs([[("a", "DT")], ["the"]])
    # an unhashable token (a list, not a tuple) is named by its place too
    with pytest.raises(TypeError, match=r"Sentence 1, token 1: expected a \(word, tag\)"):
        fm.encode_inputs([[("a", "DT")], [("b", "NN"), ["the", "DT"]]])


def test_min_count_hashing_and_unseen_words():
    X = [["a", "b", "a"], ["a", "c"]]
    Y = [["x", "y", "x"], ["x", "y"]]
    full = SequenceFeatures(features="word").fit(X, Y)
    pruned = SequenceFeatures(features="word", min_count=2).fit(X, Y)
    assert set(full.vocabulary_) == {"+0|b", "+0|w=a", "+0|w=b", "+0|w=c"}
    assert set(pruned.vocabulary_) == {"+0|b", "+0|w=a"}
    # an unseen word keeps only its known features (here the bias)
    row = pruned.encode_inputs([["zzz"]]).X.toarray().ravel()
    bias = list(pruned.vocabulary_).index("+0|b")
    assert row.sum() == 1.0 and row[bias] == 1.0
    hashed = SequenceFeatures(features="word", n_hash=16).fit(X, Y)
    assert hashed.vocabulary_ is None and hashed.n_input_features_ == 16
    assert hashed.encode_inputs([["zzz"]]).X.sum() == 2.0  # bias + hashed word


def test_unseen_tag_is_a_clear_error():
    fm = SequenceFeatures(features="word").fit([["a", "b"]], [["x", "y"]])
    with pytest.raises(ValueError, match=r"Sentence 1, token 1: tag 'z' was not seen"):
        fm.encode_outputs([["x"], ["y", "z"]])


@pytest.mark.parametrize("X, Y, exc, match", [
    ([["a", "b"], ["c"]], [["x", "y"], ["x", "y"]], ValueError,
     "Sentence 1: x has 1 tokens but y has 2 tags"),
    ([["a"], []], [["x"], []], ValueError, "Sentence 1 is empty"),
    ([["a", 3]], [["x", "y"]], TypeError, "Sentence 0, token 1: expected a string, got int"),
    ([["a"], "ab"], [["x"], ["x", "y"]], TypeError, "Sentence 1: expected a list of tokens"),
    ([["a"]], [["x"], ["y"]], ValueError, "X has 1 sentences but Y has 2"),
    ([], [], ValueError, "X is empty"),
])
def test_bad_input_names_the_sentence(X, Y, exc, match):
    with pytest.raises(exc, match=match):
        SequenceFeatures().fit(X, Y)


def test_bad_params():
    with pytest.raises(ValueError, match="features must be one of"):
        SequenceFeatures(features="nope").fit([["a"]], [["x"]])
    with pytest.raises(ValueError, match="min_count"):
        SequenceFeatures(min_count=0).fit([["a"]], [["x"]])


def test_fitted_state_round_trip_and_json_params():
    rng = np.random.default_rng(3)
    X, Y = _corpus(rng, 6)
    fm = SequenceFeatures(min_count=1).fit(X, Y)
    json.dumps(fm.get_params())
    state = fm.fitted_state()
    twin = clone(fm).load_fitted_state(state)
    a, b = fm.encode_inputs(X), twin.encode_inputs(X)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.offsets, b.offsets)
    assert twin.decode_outputs(fm.encode_outputs(Y)) == [list(y) for y in Y]
    user = SequenceFeatures(features=lambda s, t: ["w=" + s[t]]).fit(X, Y)
    with pytest.raises(TypeError, match="cannot be saved"):
        user.fitted_state()


def test_split_weights_layout():
    fm = SequenceFeatures(features="word").fit([["a", "b"]], [["x", "y"]])
    w = np.arange(fm.n_features_, dtype=float)
    W, A, s, e = fm.split_weights(w)
    d, K = fm.n_input_features_, 2
    assert W.shape == (d, K) and A.shape == (K, K) and s.shape == e.shape == (K,)
    assert e[-1] == fm.n_features_ - 1
    with pytest.raises(ValueError, match="w has 3 entries"):
        fm.split_weights(np.zeros(3))


@pytest.mark.parametrize("seed", range(5))
def test_feature_differences_equal_difference_of_features(seed):
    rng = np.random.default_rng(seed)
    X, Y = _corpus(rng, 12)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    Yh = [np.where(rng.random(len(y)) < 0.3, rng.integers(0, 3, len(y)), y) for y in Ye]
    for idx in (None, np.array([4, 0, 7])):
        sub = Ye if idx is None else [Ye[i] for i in idx]
        subh = Yh if idx is None else [Yh[i] for i in idx]
        ref = fm.joint_features(Xe, sub, idx) - fm.joint_features(Xe, subh, idx)
        got = fm.joint_feature_differences(Xe, sub, subh, idx)
        np.testing.assert_allclose(got.toarray(), ref.toarray())


@pytest.mark.parametrize("seed", range(5))
def test_difference_sum_equals_weighted_sum_of_rows(seed):
    rng = np.random.default_rng(seed)
    X, Y = _corpus(rng, 12)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    Yh = [np.where(rng.random(len(y)) < 0.3, rng.integers(0, 3, len(y)), y) for y in Ye]
    om = rng.random(len(X))
    ref = fm.joint_features(Xe, Ye) - fm.joint_features(Xe, Yh)
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, Ye, Yh, weights=om),
                               om @ ref.toarray())
    idx = np.array([4, 0, 7])
    sub, subh = [Ye[i] for i in idx], [Yh[i] for i in idx]
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, sub, subh, idx),
                               ref.toarray()[idx].sum(axis=0))
    with pytest.raises(ValueError, match="2 weights for 3 sentences"):
        fm.joint_feature_difference_sum(Xe, sub, subh, idx, weights=np.ones(2))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("loss", ["hamming", "hamming_normalized", "zero_one_parts"])
def test_aggregate_oracle_equals_per_sentence_oracle(seed, loss):
    from structsvm.learners.problem import Problem
    from structsvm.structures import BaseLoss, HammingLoss

    class ScaledHamming(BaseLoss):  # over positions, no count of wrong parts: the tables
        decomposition = "position"

        def __call__(self, a, b):
            return 2.0 * float(np.sum(np.asarray(a) != np.asarray(b)))

        def max_loss(self, y):
            return 2.0 * len(y)

        def part_losses(self, y, K):
            out = np.full((len(y), K), 2.0)
            out[np.arange(len(y)), y] = 0.0
            return out.ravel()

    rng = np.random.default_rng(seed)
    X, Y = _corpus(rng, 15)
    fm = SequenceFeatures().fit(X, Y)
    Xe, Ye = fm.encode_inputs(X), fm.encode_outputs(Y)
    lo = {"hamming": HammingLoss(), "hamming_normalized": HammingLoss(normalize=True),
          "zero_one_parts": ScaledHamming()}[loss]
    w = rng.normal(size=fm.n_features_)
    v = Problem(Xe=Xe, Ye=Ye, feature_map=fm, decoder=viterbi, loss=lo, C=1.0).oracle(w)
    loss_sum, psi, slack = fm.aggregate_violation(Xe, Ye, w, lo)
    assert np.isclose(loss_sum, v.loss.sum())
    np.testing.assert_allclose(slack, v.slack, atol=1e-9)
    np.testing.assert_allclose(psi, np.asarray(v.psi.sum(axis=0)).ravel(), atol=1e-12)
    assert fm.aggregate_violation(Xe, Ye, w, lo)[0] == loss_sum  # cached targets


@pytest.mark.parametrize("features", ["pos", "chunk"])
@pytest.mark.parametrize("min_count,n_hash", [(1, None), (12, None), (1, 997)])
def test_fit_encode_equals_fit_then_encode(features, min_count, n_hash):
    """The training shortcut builds the feature strings once: same vocabulary and
    the same token rows as fit() followed by encode_inputs()."""
    rng = np.random.default_rng(min_count)
    X, Y = _corpus(rng, 40)
    if features == "chunk":  # (word, POS) tokens
        X = [[(w, "NN" if len(w) > 3 else "DT") for w in x] for x in X]
    a = SequenceFeatures(features=features, min_count=min_count, n_hash=n_hash)
    b = SequenceFeatures(features=features, min_count=min_count, n_hash=n_hash)
    Xa = a.fit(X, Y).encode_inputs(X)
    Xb = b.fit_encode(X, Y)
    assert a.n_features_ == b.n_features_
    if n_hash is None:
        assert a.vocabulary_.tolist() == b.vocabulary_.tolist()
        if min_count > 1:  # something was pruned, so the remapping is exercised
            assert len(b.vocabulary_) < len(SequenceFeatures(features=features).fit(
                X, Y).vocabulary_)
    np.testing.assert_array_equal(Xa.offsets, Xb.offsets)
    assert (Xa.X != Xb.X).nnz == 0 and Xa.X.shape == Xb.X.shape
    np.testing.assert_array_equal(Xa.X.indptr, Xb.X.indptr)
    np.testing.assert_array_equal(Xa.X.indices, Xb.X.indices)


@pytest.mark.parametrize("features", ["pos", "word"])
@pytest.mark.parametrize("min_count", [1, 2])
def test_direct_columns_equal_the_feature_strings(features, min_count):
    from structsvm.structures.sequence._observations import TokenFeaturizer

    rng = np.random.default_rng(0)
    words = ["the", "The", "THE", "", "İstanbul", "ABC-12", "x²", "²", "-", "a-b", "Hello",
             "dogs", "running", "ran", "1999", "3.14", "ÉCOLE", "straße", "Ǆemal", "ǅ", "'s",
             ",", ".", "U.S.", "co-operate", "x" * 12]
    train = [list(rng.choice(words[:18], size=int(rng.integers(1, 9)))) for _ in range(60)]
    test = [list(rng.choice(words, size=int(rng.integers(1, 9)))) for _ in range(60)]
    fz = TokenFeaturizer(features).fit(train, min_count)
    n = len(fz.vocabulary)
    for sents in (train, test, [["zzz"]], [["the"]]):
        got, off = fz._gather(sents)  # straight from the vocabulary
        # the strings, mapped by a copy of the vocabulary (new strings: absent)
        want, off2 = fz._gather(sents, grow=dict(fz.vocabulary))
        np.testing.assert_array_equal(got, np.where(want >= n, -1, want))
        np.testing.assert_array_equal(off, off2)
    assert len(fz.vocabulary) == n


def test_shared_unaries_equal_the_sparse_product():
    from structsvm.structures.sequence._jit import shared_unaries

    rng = np.random.default_rng(1)
    n_types, width, d, K, n = 6, 4, 30, 5, 40
    table = rng.integers(-1, d, size=(n_types, width))
    rows = rng.integers(0, n_types, size=n)
    tail = [rng.integers(0, d, size=int(rng.integers(0, 4))) for _ in range(n)]
    lists = [np.concatenate([table[r][table[r] >= 0], t]) for r, t in zip(rows, tail)]
    indptr = np.concatenate([[0], np.cumsum([len(c) for c in lists])])
    X = sp.csr_matrix((np.ones(indptr[-1]), np.concatenate(lists), indptr), shape=(n, d))
    W = rng.normal(size=(d, K))
    np.testing.assert_array_equal(shared_unaries(table, rows, X.indptr, X.indices, W),
                                  X @ W)


def test_potentials_of_encoded_tokens_equal_the_sparse_product():
    rng = np.random.default_rng(2)
    words = ["a", "b", "Cc", "d-1", "ee", "F"]
    X = [list(rng.choice(words, size=int(rng.integers(1, 7)))) for _ in range(30)]
    Y = [list(rng.choice(["N", "V", "D"], size=len(x))) for x in X]
    fm = SequenceFeatures().fit(X, Y)
    w = rng.normal(size=fm.n_features_)
    W = fm.split_weights(w)[0]
    Xe = fm.encode_inputs(X + [["unseen", "a", "Zz9"]])
    assert Xe.shared is not None
    for idx in (None, np.arange(3, 12), np.array([30, 4, 0])):
        Xs, _ = Xe.select(idx)
        np.testing.assert_array_equal(fm.batch_potentials(Xe, w, idx).unary, Xs @ W)


def test_direct_columns_without_known_words():
    from structsvm.structures.sequence._observations import TokenFeaturizer

    for train in ([["a", "b"], ["b", "c"]], [["ab", "cb"], ["db"]]):
        fz = TokenFeaturizer("pos").fit(train, min_count=3)
        assert not any(s.startswith("+0|w=") for s in fz.vocabulary)
        got, _ = fz._gather([["ab", "cb"], ["b"]])
        want, _ = fz._gather([["ab", "cb"], ["b"]], grow=dict(fz.vocabulary))
        np.testing.assert_array_equal(got, np.where(want >= len(fz.vocabulary), -1, want))
