"""``structsvm learn --task alignment`` and ``structsvm classify`` on aligned pairs."""
import numpy as np
import pytest

import structsvm
from structsvm.cli import main
from structsvm.corpora import (read_alignment_pairs, simulate_alignment_pairs,
                               write_alignment_pairs)
from structsvm.structures.alignment import alignment_scores


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A model trained by the command line on 40 simulated pairs, and 12 test pairs."""
    folder = tmp_path_factory.mktemp("align")
    X, Y = simulate_alignment_pairs(52, length=(30, 50), divergence=0.5, random_state=0)
    train, test = folder / "train.txt", folder / "test.txt"
    write_alignment_pairs(train, X[:40], Y[:40])
    write_alignment_pairs(test, X[40:], Y[40:])
    model = folder / "model.npz"
    assert main(["learn", "--task", "alignment", "--max-iter", "30", str(train),
                 str(model)]) == 0
    return {"folder": folder, "train": train, "test": test, "model": model,
            "X": X[40:], "Y": Y[40:]}


def test_learn_writes_an_alignment_model(files):
    model = structsvm.load(files["model"])
    assert type(model.feature_map_).structure == "alignment"
    assert model.feature_map_.get_params() == structsvm.structures.AlignmentFeatures() \
        .get_params()
    assert model.max_iter == 30


def test_classify_writes_the_models_alignments_in_the_format(files, capsys):
    out = files["folder"] / "pred.txt"
    capsys.readouterr()
    assert main(["classify", str(files["model"]), str(files["test"]), str(out)]) == 0
    err = capsys.readouterr().err
    X2, P = read_alignment_pairs(out, require_alignment=True)
    assert X2 == files["X"]
    expected = structsvm.load(files["model"]).predict(files["X"])
    assert all(np.array_equal(p, e) for p, e in zip(P, expected))
    s = alignment_scores(files["Y"], P)
    assert f"Q {s['Q']:.4f}, precision {s['precision']:.4f} on 12 pairs" in err
    assert s["Q"] > 0.5  # learnt: far above chance at half the default divergence


def test_classify_aligns_pairs_without_a_gold_alignment(files, capsys):
    X = files["X"]
    test = files["folder"] / "unaligned.txt"
    # the first pair with its gold alignment, the others only to be aligned
    write_alignment_pairs(test, X, [files["Y"][0]] + [None] * (len(X) - 1))
    capsys.readouterr()
    assert main(["classify", str(files["model"]), str(test)]) == 0
    cap = capsys.readouterr()
    assert "(scored on the 1 pairs with a gold alignment) on 12 pairs" in cap.err
    pred_file = files["folder"] / "stdout.txt"
    pred_file.write_text(cap.out)
    X2, P = read_alignment_pairs(pred_file, require_alignment=True)
    expected = structsvm.load(files["model"]).predict(X)
    assert X2 == X and all(np.array_equal(p, e) for p, e in zip(P, expected))
    write_alignment_pairs(test, X, None)
    assert main(["classify", str(files["model"]), str(test), str(pred_file)]) == 0
    assert "no gold alignment to score on 12 pairs" in capsys.readouterr().err


def test_learn_refuses_pairs_without_alignment_and_bad_files(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("AC-D\nACED\n\nMKV\nMRV\n")
    assert main(["learn", "--task", "alignment", str(train),
                 str(tmp_path / "m.npz")]) == 2
    assert f"{train}, line 4: the pair has no alignment" in capsys.readouterr().err
    train.write_text("AC-D\nACE\n")
    assert main(["learn", "--task", "alignment", str(train),
                 str(tmp_path / "m.npz")]) == 2
    assert "line 2: the rows of an aligned pair" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


def test_classify_refuses_an_empty_test_file(files, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    assert main(["classify", str(files["model"]), str(empty)]) == 2
    assert "holds no examples" in capsys.readouterr().err
