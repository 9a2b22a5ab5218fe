"""The alignment simulator and the aligned-pairs text format (reader and writer)."""
import io
import os
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg import expm

from structsvm.corpora import (read_alignment_pairs, simulate_alignment_pairs,
                               write_alignment_pairs)
from structsvm.corpora import alignment as al
from structsvm.corpora.alignment import (AMINO_ACID_GROUPS, AMINO_ACIDS,
                                         BACKGROUND_FREQUENCIES, substitution_rate_matrix)


def _valid(X, Y):
    for (s, t), y in zip(X, Y):
        assert y.dtype.kind == "i" and y.ndim == 2 and y.shape[1] == 2
        if len(y):
            assert (np.diff(y, axis=0) > 0).all()
            assert y[:, 0].max() < len(s) and y[:, 1].max() < len(t) and y.min() >= 0


# ------------------------------------------------------------------- the simulator
def test_rate_matrix_is_reversible_normalised_and_grouped():
    pi = BACKGROUND_FREQUENCIES
    assert abs(pi.sum() - 1) < 1e-12 and len(pi) == 20 == len(set(AMINO_ACIDS))
    # Robinson & Robinson's figures (per thousand, before renormalising)
    assert abs(pi[AMINO_ACIDS.index("L")] / pi[AMINO_ACIDS.index("W")] - 90.19 / 13.30) \
        < 1e-12
    assert sorted("".join(AMINO_ACID_GROUPS)) == sorted(AMINO_ACIDS)
    Q = substitution_rate_matrix(5.0)
    F = pi[:, None] * Q
    np.testing.assert_allclose(F, F.T, atol=1e-15)           # detailed balance
    np.testing.assert_allclose(Q.sum(axis=1), 0, atol=1e-12)
    assert abs(-pi @ np.diag(Q) - 1) < 1e-12                 # one substitution per unit
    np.testing.assert_allclose(pi @ expm(Q * 0.7), pi, atol=1e-12)  # stationary
    a, b, c = (AMINO_ACIDS.index(x) for x in "ILF")  # I, L in a group; F outside
    assert Q[a, b] / pi[b] == pytest.approx(5.0 * Q[a, c] / pi[c])


def test_same_seed_same_pairs_and_valid_alignments():
    X1, Y1 = simulate_alignment_pairs(5, random_state=3)
    X2, Y2 = simulate_alignment_pairs(5, random_state=np.random.RandomState(3))
    X3, _ = simulate_alignment_pairs(5, random_state=4)
    assert X1 == X2 and all(np.array_equal(a, b) for a, b in zip(Y1, Y2))
    assert X1 != X3
    _valid(X1, Y1)
    assert all(set(s + t) <= set(AMINO_ACIDS) for s, t in X1)


def test_no_indels_gives_the_diagonal_and_no_substitutions_identical_residues():
    X, Y = simulate_alignment_pairs(4, length=(30, 40), indel_rate=0.0, random_state=0)
    for (s, t), y in zip(X, Y):
        assert 30 <= len(s) == len(t) <= 40
        np.testing.assert_array_equal(y, np.c_[np.arange(len(s)), np.arange(len(s))])
    # (almost) no substitutions: every gold pair joins two copies of one residue, and
    # the unaligned residues are exactly the insertions and deletions
    X, Y = simulate_alignment_pairs(20, divergence=1e-9, indel_rate=0.2, random_state=1)
    _valid(X, Y)
    assert any(len(s) != len(t) for s, t in X)
    for (s, t), y in zip(X, Y):
        assert all(s[i] == t[j] for i, j in y)


def test_identity_matches_the_substitution_process():
    """The share of identical residues among gold pairs is Σ_a π_a P(2t)_aa (the two
    branches of length t joined through the ancestor; reversibility)."""
    t = 0.6
    X, Y = simulate_alignment_pairs(200, divergence=t, random_state=0)
    same = np.concatenate([[s[i] == u[j] for i, j in y] for (s, u), y in zip(X, Y)])
    expected = float(BACKGROUND_FREQUENCIES @ np.diag(expm(substitution_rate_matrix() *
                                                            2 * t)))
    se = np.sqrt(expected * (1 - expected) / same.size)
    assert abs(same.mean() - expected) < 4 * se


def test_indel_lengths_are_geometric_with_the_given_mean():
    """Without substitutions, a deletion in one descendant only shows as a run of
    unaligned positions; with a small rate runs rarely merge, so their mean length is
    close to mean_indel_length."""
    X, Y = simulate_alignment_pairs(300, divergence=1e-9, indel_rate=0.01,
                                    mean_indel_length=4.0, random_state=2)
    runs = []
    for (s, _), y in zip(X, Y):
        gaps = np.diff(np.r_[-1, y[:, 0], len(s)]) - 1
        runs += gaps[gaps > 0].tolist()
    assert len(runs) > 200 and 3.5 < np.mean(runs) < 4.6


@pytest.mark.parametrize("kwargs, match", [
    ({"n_pairs": 0}, "n_pairs must be an int >= 1, got 0"),
    ({"n_pairs": True}, "n_pairs must be an int"),
    ({"n_pairs": 2.0}, "n_pairs must be an int"),
    ({"length": (10, 5)}, r"length\[1\] must be an int >= 10, got 5"),
    ({"length": 10}, "length must be a pair"),
    ({"divergence": 0.0}, "divergence must be a number > 0"),
    ({"divergence": float("inf")}, "divergence must be a number"),
    ({"indel_rate": 1.5}, r"indel_rate must be a number >= 0 and <= 1"),
    ({"mean_indel_length": 0.5}, "mean_indel_length must be a number >= 1"),
    ({"group_bias": -1.0}, "group_bias must be a positive number"),
])
def test_simulator_validates_its_arguments(kwargs, match):
    args = {"n_pairs": 2, **kwargs}
    n = args.pop("n_pairs")
    with pytest.raises(ValueError, match=match):
        simulate_alignment_pairs(n, **args)


# ------------------------------------------------------------------ the text format
def test_known_answer_and_pairs_to_be_aligned():
    text = ("# comment\nACD-EF\n  A-DGEF  \n\n\n# another\nMKV--LLA\n# inside\nMKVQILL-\r\n"
            "\nMKVLLA\nMRVLA\n\n--\nAB\n")
    X, Y = read_alignment_pairs(io.StringIO(text))
    assert X == [("ACDEF", "ADGEF"), ("MKVLLA", "MKVQILL"), ("MKVLLA", "MRVLA"),
                 ("", "AB")]
    assert Y[0].tolist() == [[0, 0], [2, 1], [3, 3], [4, 4]]
    assert Y[1].tolist() == [[0, 0], [1, 1], [2, 2], [3, 5], [4, 6]]
    assert Y[2] is None and Y[3].shape == (0, 2)
    with pytest.raises(ValueError, match="line 11: the pair has no alignment"):
        read_alignment_pairs(io.StringIO(text), require_alignment=True)


def test_round_trip_of_simulated_and_unaligned_pairs(tmp_path):
    X, Y = simulate_alignment_pairs(30, length=(5, 60), indel_rate=0.15,
                                    random_state=0)
    X += [("ABC", "ABD"), ("A", "A"), ("", "XY"), ("QQ", ""), ("", "")]
    Y += [np.c_[[0, 1, 2], [0, 1, 2]], None, np.zeros((0, 2), int),
          np.zeros((0, 2), int), np.zeros((0, 2), int)]
    path = tmp_path / "pairs.txt"
    write_alignment_pairs(path, X, Y)
    X2, Y2 = read_alignment_pairs(path)
    assert X2 == X
    for y, y2 in zip(Y, Y2):
        assert (y is None and y2 is None) or np.array_equal(y, y2)
    text = path.read_text()
    assert "ABC-\nABD-\n" in text  # no gap needed: a final column of two gaps


@settings(max_examples=60)
@given(st.data())
def test_round_trip_of_random_alignments(data):
    n_s = data.draw(st.integers(0, 12))
    n_t = data.draw(st.integers(0, 12))
    s = data.draw(st.text("ACGTé*", min_size=n_s, max_size=n_s))
    t = data.draw(st.text("ACGTé*", min_size=n_t, max_size=n_t))
    cells = sorted(data.draw(st.sets(st.tuples(st.integers(0, max(n_s - 1, 0)),
                                               st.integers(0, max(n_t - 1, 0))))))
    y, last = [], (-1, -1)
    for i, j in cells:  # a chain increasing in both columns
        if i > last[0] and j > last[1] and i < n_s and j < n_t:
            y.append((i, j))
            last = (i, j)
    y = np.array(y, dtype=int).reshape(-1, 2)
    out = io.StringIO()
    write_alignment_pairs(out, [(s, list(t))], [y])
    X2, Y2 = read_alignment_pairs(io.StringIO(out.getvalue()))
    assert X2 == [(s, t)] and np.array_equal(Y2[0], y)
    # the rows show the alignment: a column of two symbols is exactly a pair
    a, b = out.getvalue().split("\n")[:2]
    assert len(a) == len(b) and sum(p != "-" and q != "-" for p, q in zip(a, b)) == len(y)


def _write(tmp_path, data, name="pairs.txt"):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


@pytest.mark.parametrize("text, match", [
    ("ACD\n", "line 1: a pair is a block of two rows, this block has 1"),
    ("AC-\nACD\nAAA\n", "line 1: a pair is a block of two rows, this block has 3"),
    ("AC-D\nACD\n", "line 2: the rows of an aligned pair .* same length; line 1 has 4 "
                    "columns, line 2 has 3"),
    ("AC D\nACD\n", "line 1: white space inside the row"),
    ("ACD\nA#CD\n", "line 2: the character '#' cannot be a symbol"),
    ("ACD\nA\x01CD\n", "line 2: the character '\\\\x01' cannot be a symbol"),
])
def test_malformed_files_name_the_line(tmp_path, text, match):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ", " + match):
        read_alignment_pairs(path)


def test_hostile_inputs_are_bounded(tmp_path, monkeypatch):
    path = _write(tmp_path, b"ACD\nA\xffC\n")
    with pytest.raises(ValueError, match="line 2: byte 0xff at column 2 is not UTF-8"):
        read_alignment_pairs(path)
    long_line = "A" * (al.MAX_ROW_LENGTH + 1)
    with pytest.raises(ValueError, match=f"line 1: a row of {al.MAX_ROW_LENGTH + 1} "
                                         "symbols is longer than MAX_ROW_LENGTH"):
        read_alignment_pairs(_write(tmp_path, long_line + "\nA\n"))
    # a line without end is read in bounded pieces, never whole
    huge = _write(tmp_path, "A" * (4 * al.MAX_ROW_LENGTH + 10))
    with pytest.raises(ValueError, match="line 1: longer than 400002 bytes"):
        read_alignment_pairs(huge)
    monkeypatch.setattr(al, "MAX_PAIRS", 2)
    with pytest.raises(ValueError, match="line 7: more than MAX_PAIRS = 2 pairs"):
        read_alignment_pairs(io.StringIO("A\nA\n\nB\nB\n\nC\nC\n"))
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match="not a regular file \\(a FIFO\\)"):
            read_alignment_pairs(fifo)
    with pytest.raises(ValueError, match="not a regular file \\(a folder\\)"):
        read_alignment_pairs(tmp_path)


def test_binary_file_objects_and_empty_files(tmp_path):
    X, Y = read_alignment_pairs(io.BytesIO(b"A-C\nABC\n"))
    assert X == [("AC", "ABC")] and Y[0].tolist() == [[0, 0], [1, 2]]
    assert read_alignment_pairs(_write(tmp_path, "# only a comment\n\n")) == ([], [])


@pytest.mark.parametrize("X, Y, match", [
    ([("A-C", "AC")], None, "Pair 0: s: the symbol '-' cannot be written"),
    ([("AC", ["A", "BC"])], None, "Pair 0: t: the text format writes one-character"),
    ([("AC", "A C")], None, "Pair 0: t: the symbol ' ' cannot be written"),
    ([("", "AC")], None, "Pair 0: an empty sequence can be written only in an aligned"),
    ([("ACD", "AC")], [np.array([[1, 1], [0, 0]])], "Pair 0: the aligned pairs must "
                                                    "increase strictly"),
    ([("ACD", "AC")], [np.array([[0, 0], [1, 2]])], "Pair 0: an aligned pair lies "
                                                    "outside the sequences"),
    ([("ACD", "AC")], [np.array([0.0, 1.0])], "Pair 0: y must be an integer array"),
    ([("ACD", "AC")], [], "X has 1 pairs but Y has 0"),
    (["ACD"], None, "Pair 0: x must be a pair"),
])
def test_writer_validates(X, Y, match):
    with pytest.raises(ValueError, match=match):
        write_alignment_pairs(io.StringIO(), X, Y)
