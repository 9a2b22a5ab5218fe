"""The svm_struct-style command line: learn, save, classify, on each file format."""
import numpy as np
import pytest

import structsvm
from structsvm.cli import main
from structsvm.corpora import find_data


def test_multiclass_learn_classify(tmp_path, capsys):
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=3, size=(3, 4))
    y = rng.integers(0, 3, size=60)
    X = centers[y] + rng.normal(size=(60, 4))
    train = tmp_path / "train.dat"
    train.write_text("".join(f"{c + 1} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in
                                                     enumerate(x)) + "\n"
                             for c, x in zip(y, X)))
    model = tmp_path / "model.npz"
    assert main(["learn", "--task", "multiclass", "-C", "1", str(train), str(model)]) == 0
    assert "model written" in capsys.readouterr().out
    out = tmp_path / "pred.txt"
    assert main(["classify", str(model), str(train), str(out)]) == 0
    pred = [int(v) for v in out.read_text().split()]
    fitted = structsvm.load(model)
    assert pred == [int(p) for p in fitted.predict([x for x in X])]
    assert "accuracy" in capsys.readouterr().err


def test_svmstruct_c_is_divided_by_n(tmp_path):
    train = tmp_path / "t.dat"
    train.write_text("1 1:1\n2 2:1\n1 1:0.9 2:0.1\n2 1:0.1 2:0.8\n")
    model = tmp_path / "m.npz"
    assert main(["learn", "--task", "multiclass", "--svmstruct-c", "8", str(train),
                 str(model)]) == 0
    assert structsvm.load(model).C == pytest.approx(2.0)


def test_sequence_and_ranking_files(need_data, tmp_path):
    hmm = need_data(find_data, "svm_hmm_example7",
                    must_contain=["declaration_of_independence.dat"])
    model = tmp_path / "hmm.npz"
    assert main(["learn", "--task", "sequence", "--max-iter", "30", "--tol", "0.3",
                 str(hmm / "declaration_of_independence.dat"), str(model)]) == 0
    out = tmp_path / "tags.txt"
    assert main(["classify", str(model), str(hmm / "gettysburg_address.dat"), str(out)]) == 0
    # one tag per token of the test file: 290 tokens (shared/data/README.md §8)
    assert len(out.read_text().split()) == 290
    rank = need_data(find_data, "svm_rank_example3", must_contain=["train.dat"])
    model = tmp_path / "rank.npz"
    assert main(["learn", "--task", "ranking", "-C", "1", str(rank / "train.dat"),
                 str(model)]) == 0
    out = tmp_path / "scores.txt"
    assert main(["classify", str(model), str(rank / "test.dat"), str(out)]) == 0
    assert len(out.read_text().split()) == 4  # test.dat: 1 query of 4 documents (README §7)


def test_errors_are_reported(tmp_path, capsys):
    assert main(["classify", str(tmp_path / "missing.npz"), "x"]) == 2
    assert "No model file" in capsys.readouterr().err
    bad = tmp_path / "bad.dat"
    bad.write_text("1 qid:1 x:1\n")
    assert main(["learn", "--task", "sequence", str(bad), str(tmp_path / "m.npz")]) == 2
    assert "error:" in capsys.readouterr().err
