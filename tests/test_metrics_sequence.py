"""Sequence metrics: accuracies, conlleval-compatible chunk scores vs NLTK's ChunkScore."""
import numpy as np
import pytest

from structsvm.structures.sequence import (chunk_f1,
    chunk_scores,
    iob_chunks,
    sentence_accuracy,
    token_accuracy)


def test_accuracies_known_answers():
    Y = [["D", "N", "V"], ["P"]]
    P = [["D", "V", "V"], ["P"]]
    assert token_accuracy(Y, P) == 0.75
    assert sentence_accuracy(Y, P) == 0.5
    # a tag never seen in training is just a mismatch
    assert token_accuracy([["NEW"]], [["N"]]) == 0.0


@pytest.mark.parametrize("f", [token_accuracy, sentence_accuracy, chunk_scores])
def test_length_errors_name_the_sentence(f):
    with pytest.raises(ValueError, match="Sentence 1: 2 true tags but 1 predicted"):
        f([["O"], ["O", "O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="Y_true has 2 sentences but Y_pred has 1"):
        f([["O"], ["O"]], [["O"]])


def test_iob_chunks_known_answers():
    # IOB2
    assert iob_chunks(["B-NP", "I-NP", "O", "B-VP", "B-NP"]) == [
        ("NP", 0, 2), ("VP", 3, 4), ("NP", 4, 5)]
    # IOB1: I- starts a chunk after O; B- separates adjacent chunks of one type
    assert iob_chunks(["I-NP", "I-NP", "B-NP", "O", "I-VP"]) == [
        ("NP", 0, 2), ("NP", 2, 3), ("VP", 4, 5)]
    # type change without B-
    assert iob_chunks(["B-NP", "I-VP"]) == [("NP", 0, 1), ("VP", 1, 2)]
    # IOBES
    assert iob_chunks(["S-NP", "B-VP", "E-VP", "I-VP"]) == [
        ("NP", 0, 1), ("VP", 1, 3), ("VP", 3, 4)]
    with pytest.raises(ValueError, match="chunk tag 'NP' is not"):
        iob_chunks(["NP"])


def test_chunk_scores_known_answer():
    s = chunk_scores([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "I-NP", "O", "B-NP"]])
    assert (s["n_true"], s["n_pred"], s["n_correct"]) == (2, 2, 1)
    assert s["f1"] == 0.5 and s["per_type"]["NP"]["precision"] == 0.5
    assert s["per_type"]["VP"]["recall"] == 0.0
    assert chunk_f1([["O"]], [["O"]]) == 0.0
    with pytest.raises(ValueError, match="Sentence 0: chunk tag"):
        chunk_scores([["X"]], [["O"]])


@pytest.mark.parametrize("seed", range(5))
def test_chunk_scores_match_nltk_chunkscore(seed):
    """Independent reference: NLTK's conlltags2tree + ChunkScore on random IOB tags."""
    from nltk.chunk.util import ChunkScore, conlltags2tree

    rng = np.random.default_rng(seed)
    tags = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "B-PP", "I-PP"]
    Y, P = [], []
    for _ in range(30):
        n = int(rng.integers(1, 12))
        y = [tags[j] for j in rng.integers(0, len(tags), n)]
        p = [t if rng.random() < 0.7 else tags[rng.integers(0, len(tags))] for t in y]
        Y.append(y)
        P.append(p)
    score = ChunkScore()
    for y, p in zip(Y, P):
        words = [(f"w{i}", "X") for i in range(len(y))]
        score.score(conlltags2tree([(w, t, c) for (w, t), c in zip(words, y)]),
                    conlltags2tree([(w, t, c) for (w, t), c in zip(words, p)]))
    ours = chunk_scores(Y, P)
    assert ours["precision"] == pytest.approx(score.precision())
    assert ours["recall"] == pytest.approx(score.recall())
    assert ours["f1"] == pytest.approx(score.f_measure())
