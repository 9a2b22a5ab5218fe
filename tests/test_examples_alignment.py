"""Smoke tests of examples/alignment.py and benchmarks/bench_alignment.py on small
slices (the full runs and their figures: docs/benchmarks.md)."""
import importlib.util
from pathlib import Path

import numpy as np
from Bio import Align
from Bio.Align import substitution_matrices

from structsvm.corpora import simulate_alignment_pairs, write_alignment_pairs
from structsvm.structures.alignment import alignment_scores

ROOT = Path(__file__).resolve().parents[1]


def _load(folder, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_alignment_example_small(capsys):
    ex = _load("examples", "alignment")
    out = ex.main(["--n-train", "30", "--n-test", "20"])
    names = [r[0] for r in out["rows"]]
    assert names[0].startswith("structsvm default call [") and len(names) == 3
    assert names[1].startswith("identity") and names[2].startswith("BLOSUM62")
    for _, q, p, _ in out["rows"]:
        assert 0.0 < q <= 1.0 and 0.0 < p <= 1.0
    # the learnt model beats identity scoring even from 30 pairs
    assert out["rows"][0][1] > out["rows"][1][1]
    assert "learnt scores: I-L" in capsys.readouterr().out


def test_fixed_weights_score_like_the_matrix():
    """The example's fixed scoring decodes what the matrix scores: on pairs of
    identical sequences, identity scoring with costly gaps aligns the diagonal."""
    ex = _load("examples", "alignment")
    X, Y = simulate_alignment_pairs(3, length=(10, 20), random_state=0)
    fm = ex.AlignmentFeatures().fit(X, Y)
    w = ex.fixed_weights(fm, lambda a, b: 1.0 if a == b else -1.0, -3.0, -1.0)
    same = [(s, s) for s, _ in X]
    for (s, _), y in zip(same, ex.decode(fm, same, w)):
        np.testing.assert_array_equal(y, np.c_[np.arange(len(s)), np.arange(len(s))])
    # w · Φ(x, y) is the matrix's score of the alignment (sum over pairs + gap costs)
    (s, t), y = X[0], Y[0]
    phi = fm.joint_feature((s, t), y)
    by_hand = sum(1.0 if s[i] == t[j] else -1.0 for i, j in y)
    for seq, col in ((s, 0), (t, 1)):
        un = np.setdiff1d(np.arange(len(seq)), y[:, col])
        runs = np.split(un, np.flatnonzero(np.diff(un) > 1) + 1) if un.size else []
        by_hand += sum(-3.0 - 1.0 * (len(r) - 1) for r in runs)
    assert abs(w @ phi - by_hand) < 1e-9


def test_alignment_example_reads_files(tmp_path):
    ex = _load("examples", "alignment")
    X, Y = simulate_alignment_pairs(30, length=(20, 40), random_state=1)
    write_alignment_pairs(tmp_path / "tr.txt", X[:20], Y[:20])
    write_alignment_pairs(tmp_path / "te.txt", X[20:], Y[20:])
    out = ex.main(["--train", str(tmp_path / "tr.txt"), "--test", str(tmp_path / "te.txt")])
    assert len(out["rows"]) == 3


def test_bench_alignment_small_slice(capsys):
    bench = _load("benchmarks", "bench_alignment")
    out = bench.run(n_train=20, n_test=10, seed=0, repeats=2)
    printed = capsys.readouterr().out
    assert "peer grid: best (open, extend, end gaps)" in printed
    structsvm_row, peer = out["rows"]
    assert structsvm_row["name"] == "structsvm" and peer["name"] == "biopython"
    # the peer row is Biopython's own answer: re-align with the chosen parameters
    X, Y = simulate_alignment_pairs(30, random_state=0)
    o, e, end = out["params"]
    aligner = Align.PairwiseAligner(
        mode="global", substitution_matrix=substitution_matrices.load("BLOSUM62"),
        open_gap_score=o, extend_gap_score=e)
    if end == "free":
        aligner.end_gap_score = 0.0
    pairs = [bench.biopython_pairs(aligner.align(s, t)[0]) for s, t in X[20:]]
    s = alignment_scores(Y[20:], pairs)
    assert abs(s["Q"] - peer["Q"]) < 1e-12 and abs(s["precision"] - peer["precision"]) \
        < 1e-12
    assert 0.3 < peer["Q"] < 0.9  # the data are hard for a fixed matrix
    assert structsvm_row["decode_seconds"] > 0 and peer["decode_seconds"] > 0
    assert abs(out["decode_ratio"] - structsvm_row["decode_seconds"] /
               peer["decode_seconds"]) < 1e-12


def test_biopython_pairs_known_answer():
    bench = _load("benchmarks", "bench_alignment")
    aligner = Align.PairwiseAligner(mode="global", match_score=1, mismatch_score=-1,
                                    open_gap_score=-2, extend_gap_score=-1)
    # ACDEF vs ADEF: the best global alignment drops C
    pairs = bench.biopython_pairs(aligner.align("ACDEF", "ADEF")[0])
    assert pairs.tolist() == [[0, 0], [2, 1], [3, 2], [4, 3]]
