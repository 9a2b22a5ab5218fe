"""Sequence corpora: treebank, CoNLL-2000, svm_hmm format, synthetic HMM corpus."""
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp

from structsvm.corpora import (DataNotFoundError, find_data, load_conll2000, load_treebank,
                               make_hmm_corpus, read_conll, read_svm_hmm, require_data,
                               treebank_tagged_sents, write_svm_hmm)
from structsvm.corpora.treebank import _parse_mrg


def test_parse_mrg_known_answer():
    text = "( (S (NP-SBJ (NNP Mr.) (NNP X) ) (VP (VBZ is) (-NONE- *T*-1)) (. .) ))\n" \
           "( (S (NP (PRP It)) (VP (VBD ran)) ))"
    assert _parse_mrg(text, "t") == [
        [("Mr.", "NNP"), ("X", "NNP"), ("is", "VBZ"), ("*T*-1", "-NONE-"), (".", ".")],
        [("It", "PRP"), ("ran", "VBD")]]
    with pytest.raises(ValueError, match="unbalanced"):
        _parse_mrg("( (S (NN a) )", "bad.mrg")


def test_treebank_split(need_data):
    X_tr, Y_tr, X_te, Y_te = need_data(load_treebank)
    # 3,914 sentences: the data folder's README.md §1; split at 3000 (load_treebank's n_train);
    # 23,165 test tokens: counted from the files (the split is ours, not the README's)
    assert (len(X_tr), len(X_te)) == (3000, 914)
    assert sum(map(len, X_te)) == 23165
    assert all(len(x) == len(y) for x, y in zip(X_tr + X_te, Y_tr + Y_te))
    assert X_tr[0][:2] == ["Pierre", "Vinken"] and Y_tr[0][:2] == ["NNP", "NNP"]
    no_traces = treebank_tagged_sents(remove_traces=True)
    assert all(t != "-NONE-" for s in no_traces for _, t in s)


def test_treebank_equals_nltk_reader(need_data):
    ours = need_data(treebank_tagged_sents)
    import nltk.corpus as nltk_corpus

    try:
        ref = nltk_corpus.treebank.tagged_sents()
        len(ref)
    except (LookupError, PermissionError, OSError) as exc:
        if require_data():  # CI has the data: a reader error is a failure, not a skip
            pytest.fail(f"nltk cannot read the treebank from its search path: {exc}")
        pytest.skip("nltk cannot read the treebank from its own search path here")
    assert len(ref) == len(ours) == 3914  # the data folder's README.md §1 (verified count)
    assert all(list(r) == s for r, s in zip(ref, ours))


def test_missing_treebank_says_how_to_get_it(tmp_path):
    with pytest.raises(DataNotFoundError, match=r"nltk\.download\('treebank'\)"):
        load_treebank(tmp_path / "nowhere")


def test_conll2000(need_data):
    X_tr, Y_tr, X_te, Y_te = need_data(load_conll2000)
    # sentence and token counts, 11 chunk types: the data folder's README.md §2 (verified)
    assert (len(X_tr), len(X_te)) == (8936, 2012)
    assert (sum(map(len, X_tr)), sum(map(len, X_te))) == (211727, 47377)
    assert X_tr[0][0] == ("Confidence", "NN") and Y_tr[0][:2] == ["B-NP", "B-PP"]
    types = {t[2:] for y in Y_tr for t in y if t != "O"}
    assert len(types) == 11
    _, Y_np, _, _ = load_conll2000(chunk_types=["NP"])
    assert {t for y in Y_np for t in y} == {"B-NP", "I-NP", "O"}


def test_read_conll_columns():
    text = "a DT B-NP\nb NN I-NP\n\nc VB B-VP\n"
    assert read_conll(io.StringIO(text), n_columns=3) == [
        [("a", "DT", "B-NP"), ("b", "NN", "I-NP")], [("c", "VB", "B-VP")]]
    with pytest.raises(ValueError, match="line 2: expected 3 columns"):
        read_conll(io.StringIO("a DT B-NP\nb NN\n"), n_columns=3)


def _example7():
    return find_data("svm_hmm_example7", must_contain=("declaration_of_independence.dat",))


def test_svm_hmm_example7(need_data):
    root = need_data(_example7)
    X, Y, words = read_svm_hmm(root / "declaration_of_independence.dat",
                               return_comments=True)
    # 36 sequences, 1,486 tokens, 34 tags, features up to 4529; test file 10 sequences,
    # 290 tokens: the data folder's README.md §8 (verified)
    assert len(X) == 36 and sum(x.shape[0] for x in X) == 1486
    assert len({t for y in Y for t in y}) == 34 and X[0].shape[1] == 4529
    assert all(len(w) == len(y) for w, y in zip(words, Y))
    X2, Y2 = read_svm_hmm(root / "gettysburg_address.dat", n_features=4529)
    assert len(X2) == 10 and sum(map(len, Y2)) == 290 and X2[0].shape[1] == 4529


def test_svm_hmm_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = [sp.random(n, 7, density=0.4, random_state=i, format="csr")
         for i, n in enumerate([3, 1, 4])]
    Y = [list(rng.integers(1, 5, size=x.shape[0])) for x in X]
    Y = [[int(t) for t in y] for y in Y]
    path = tmp_path / "data.dat"
    write_svm_hmm(path, X, Y, comments=[[f"w{t}" for t in range(len(y))] for y in Y])
    X2, Y2, c2 = read_svm_hmm(path, n_features=7, return_comments=True)
    assert Y2 == Y and c2[2] == ["w0", "w1", "w2", "w3"]
    for a, b in zip(X, X2):
        np.testing.assert_allclose(a.toarray(), b.toarray())


@pytest.mark.parametrize("text, match", [
    ("x qid:1 1:1\n", "line 1: tag 'x' is not an integer"),
    ("0 qid:1 1:1\n", "tags must be positive"),
    ("1 1:1\n", "expected 'qid:N'"),
    ("1 qid:1 0:1\n", "feature numbers start at 1"),
    ("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n", "must be consecutive"),
])
def test_svm_hmm_errors(text, match):
    with pytest.raises(ValueError, match=match):
        read_svm_hmm(io.StringIO(text))


def test_svm_hmm_write_needs_integer_tags(tmp_path):
    with pytest.raises(ValueError, match="Sentence 0, token 0: svm_hmm tags are positive"):
        write_svm_hmm(tmp_path / "x", [sp.csr_matrix(np.ones((1, 2)))], [["NN"]])


def test_synthetic_corpus():
    X, Y = make_hmm_corpus(50, n_states=3, n_words=30, random_state=1)
    X2, Y2 = make_hmm_corpus(50, n_states=3, n_words=30, random_state=1)
    assert X == X2 and Y == Y2
    assert len(X) == 50 and all(len(x) == len(y) >= 1 for x, y in zip(X, Y))
    assert {t for y in Y for t in y} <= {"T0", "T1", "T2"}
    with pytest.raises(ValueError, match="n_words must be an int >= 3"):
        make_hmm_corpus(5, n_states=3, n_words=2)
    with pytest.raises(ValueError, match="ambiguity"):
        make_hmm_corpus(5, ambiguity=1.0)


def _data_root():
    root = os.environ.get("STRUCTSVM_DATA")
    if not root:
        if require_data():
            pytest.fail("STRUCTSVM_REQUIRE_DATA=1 but $STRUCTSVM_DATA is not set")
        pytest.skip("STRUCTSVM_DATA not set")
    return root


def test_data_env_is_honoured(need_data, monkeypatch):
    import nltk.data

    need_data(load_treebank)
    root = _data_root()
    # NLTK read $NLTK_DATA into nltk.data.path at import: hide both, so only
    # $STRUCTSVM_DATA can lead to the corpus
    monkeypatch.setenv("NLTK_DATA", "/nonexistent")
    monkeypatch.setattr(nltk.data, "path", ["/nonexistent"])
    assert len(treebank_tagged_sents()) == 3914  # the data folder's README.md §1
    # ... and it is the variable that finds it: without it the corpus is not found
    monkeypatch.delenv("STRUCTSVM_DATA")
    with pytest.raises(DataNotFoundError):
        treebank_tagged_sents()
    # NLTK's own variable alone finds it too (the search path's last resort)
    monkeypatch.setenv("NLTK_DATA", os.path.join(root, "nltk_data"))
    assert len(treebank_tagged_sents()) == 3914
