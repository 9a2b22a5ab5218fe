"""Readers of svm_hmm, svm_light/svm_rank, CoNLL, treebank and QC files on bad input.

Every malformed input is a ValueError naming the file and the line; nothing else
escapes (no UnicodeDecodeError, OverflowError, MemoryError, scikit-learn or scipy
messages), whatever the bytes.
"""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from structsvm.cli import main
from structsvm.corpora import read_conll, read_qc, read_svm_hmm, read_svm_rank
from structsvm.corpora.svmlight import MAX_FEATURE_NUMBER, read_svm_light
from structsvm.corpora.treebank import _read_mrg

READERS = {
    "svm_hmm": read_svm_hmm,
    "svm_light": read_svm_light,
    "svm_rank": read_svm_rank,
    "conll": read_conll,
    "treebank": _read_mrg,
    "qc": read_qc,
}


def _write(tmp_path, data, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# ------------------------------------------------------------------ the issue's cases
@pytest.mark.parametrize("text, match", [
    ("1 qid:1 3:1 3:5\n", "line 1: feature 3 after feature 3 \\(repeated"),
    ("1 qid:1 1:1\n2 qid:1 5:1 3:1\n", "line 2: feature 3 after feature 5 \\(decreasing"),
    ("1 qid:1 99999999999:1\n", "line 1: feature number '99999999999' is above "
                                "MAX_FEATURE_NUMBER = 10000000"),
    (f"{2 ** 63} qid:1 1:1\n", "line 1: tag 9223372036854775808 is larger than 2\\^63"),
    ("1 qid:12345678901234567890123 1:1\n", "line 1: malformed 'qid:N'"),
    ("1 qid:1 1:nan\n", "line 1: value of feature 1 'nan' is not a finite"),
    ("1 qid:1 1:1e999\n", "line 1: value of feature 1 '1e999' is not a finite"),
    ("1 qid:1 ٣:1\n", "line 1: expected FEAT:VALUE"),
    ("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n", "line 3: qid 1 appeared before"),
])
def test_svm_hmm_issue_cases(tmp_path, text, match):
    path = _write(tmp_path, text, "hmm.dat")
    with pytest.raises(ValueError, match=re.escape(str(path)) + ", " + match):
        read_svm_hmm(path)


def test_non_utf8_bytes_name_the_line(tmp_path):
    path = _write(tmp_path, b"1 qid:1 1:1 # ok\n2 qid:1 2:1 # caf\xe9\n", "latin.dat")
    for reader in (read_svm_hmm, read_svm_rank, read_svm_light, read_conll):
        with pytest.raises(ValueError, match="latin.dat, line 2: byte 0xe9 at column 18 "
                                             "is not UTF-8"):
            reader(path)
    mrg = _write(tmp_path, b"( (S (NN a) ))\n( (S (NN \xff) ))\n", "t.mrg")
    with pytest.raises(ValueError, match="t.mrg, line 2: byte 0xff is not UTF-8"):
        _read_mrg(mrg)


def test_svm_light_and_rank_errors_name_file_and_line(tmp_path):
    cases = [("1 qid:1 1:1\n0 qid:1 2:1 2:3\n", "line 2: feature 2 after feature 2"),
             ("1 qid:1 1:1\n0 2:1\n", "line 2: no 'qid:'"),
             ("x qid:1 1:1\n", "line 1: target 'x' is not a number"),
             ("1 qid:-3 1:1\n", "line 1: qid '-3' is not an integer"),
             ("1 qid:1 1:1 bad\n", "line 1: expected FEAT:VALUE .* got 'bad'"),
             ("1 qid:1 0:1\n", "line 1: feature numbers start at 1")]
    for text, match in cases:
        path = _write(tmp_path, text, "rank.dat")
        with pytest.raises(ValueError, match="rank.dat, " + match):
            read_svm_rank(path)
    path = _write(tmp_path, "1 1:1\n2 qid:3 1:1\n", "mixed.dat")
    with pytest.raises(ValueError, match="mixed.dat, line 2: a 'qid:' field, but earlier"):
        read_svm_light(path)


def test_svm_light_reader_known_answer(tmp_path):
    path = _write(tmp_path, "# c\n3 1:0.5 4:2 # doc a\n\n-1 2:1e-3\n", "ok.dat")
    X, y, qid = read_svm_light(path)
    assert X.toarray().tolist() == [[0.5, 0, 0, 2.0], [0, 1e-3, 0, 0]]
    assert y.tolist() == [3.0, -1.0] and qid is None
    X, _, _ = read_svm_light(path, n_features=6)
    assert X.shape == (2, 6)
    with pytest.raises(ValueError, match="line 2: feature number '4' is above "
                                         "n_features = 3"):
        read_svm_light(path, n_features=3)
    assert MAX_FEATURE_NUMBER == 10_000_000


def test_cli_multiclass_file_errors_name_the_line(tmp_path, capsys):
    path = _write(tmp_path, "1 1:1\n2 1:1 1:2\n", "mc.dat")
    assert main(["learn", "--task", "multiclass", str(path), str(tmp_path / "m.npz")]) == 2
    assert "mc.dat, line 2: feature 1 after feature 1" in capsys.readouterr().err


def test_conll_treebank_qc_errors(tmp_path):
    path = _write(tmp_path, "a DT B-NP\nb NN I-NP\n\nc VB\n", "c.txt")
    with pytest.raises(ValueError, match="c.txt, line 4: earlier lines have 3 columns"):
        read_conll(path)
    mrg = _write(tmp_path, "( (S (NP (NN a)) stray ))\n", "w.mrg")
    with pytest.raises(ValueError, match="w.mrg, line 1: 'stray' is outside a"):
        _read_mrg(mrg)
    mrg = _write(tmp_path, "( (S (NN a)\n\n", "u.mrg")
    with pytest.raises(ValueError, match="u.mrg, line 1: unbalanced brackets"):
        _read_mrg(mrg)
    assert _read_mrg(_write(tmp_path, "( (S (NP (DT a) (NN b)) (. .)) )\n", "ok.mrg")) == \
        [[("a", "DT"), ("b", "NN"), (".", ".")]]
    qc = _write(tmp_path, "NUM:date When ?\nNUM date\n", "qc.txt")
    with pytest.raises(ValueError, match="qc.txt, line 2: expected 'COARSE:fine"):
        read_qc(qc)


# ------------------------------------------------------------------ property tests
def _only_our_errors(reader, path):
    try:
        reader(path)
    except ValueError as exc:
        msg = str(exc)
        assert type(exc) is ValueError, type(exc)
        assert str(path) in msg and "line" in msg, msg


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600), reader=st.sampled_from(sorted(READERS)))
def test_random_bytes(tmp_path, data, reader):
    _only_our_errors(READERS[reader], _write(tmp_path, data, "random.dat"))


_NUMBERS = st.one_of(
    st.integers(-3, 60).map(str),
    st.sampled_from(["0", "99999999999", str(2 ** 63), str(2 ** 64), "1" * 23, "+1", "-0",
                     "1_0", "٣", "1e999", "nan", "inf", "-inf", "0x1f", "", " ", "1.5",
                     "1e-310", "\xff", "\x00"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr))
_TOKENS = st.one_of(
    st.tuples(_NUMBERS, _NUMBERS).map(lambda p: f"{p[0]}:{p[1]}"),
    _NUMBERS.map(lambda n: f"qid:{n}"),
    st.sampled_from(["#", "# comment", ":", "::", "1:2:3", "qid:", "(", ")", "(NN",
                     "word", "B-NP", "NUM:date", "\t", "\r"]),
    _NUMBERS)


@st.composite
def _near_valid_file(draw):
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        head = draw(st.sampled_from(["1 qid:1", "2 qid:1", "1 qid:2", "3", "( (S",
                                     "a DT B-NP", "NUM:date What is"]))
        toks = draw(st.lists(_TOKENS, max_size=6))
        if draw(st.booleans()):
            toks = sorted(set(toks))
        lines.append(" ".join([head] + toks))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n", ")"]))
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()) and data:
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(min_size=1, max_size=3)) + data[pos:]
    return data


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_near_valid_file(), reader=st.sampled_from(sorted(READERS)))
def test_near_valid_lines(tmp_path, data, reader):
    _only_our_errors(READERS[reader], _write(tmp_path, data, "near.dat"))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3),
                               st.dictionaries(st.integers(1, 50),
                                               st.floats(-1e6, 1e6, allow_nan=False),
                                               max_size=5)),
                     min_size=1, max_size=12))
def test_valid_svm_hmm_files_read_back_exactly(tmp_path, rows):
    rows = sorted(rows, key=lambda r: r[1])  # the lines of a qid are consecutive
    text = "".join(f"{tag} qid:{q} " + " ".join(f"{j}:{v!r}" for j, v in sorted(f.items()))
                   + "\n" for tag, q, f in rows)
    X, Y = read_svm_hmm(_write(tmp_path, text, "ok.dat"), n_features=50)
    assert [t for y in Y for t in y] == [r[0] for r in rows]
    dense = np.vstack([x.toarray() for x in X])
    for k, (_, _, f) in enumerate(rows):
        expect = np.zeros(50)
        for j, v in f.items():
            expect[j - 1] = v
        np.testing.assert_array_equal(dense[k], expect)
