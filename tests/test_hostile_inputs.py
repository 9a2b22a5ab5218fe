"""Small crafted inputs that ask for gigabytes, hang, or slip through a loader.

Every file is made here, in ``tmp_path``. The memory of a run is measured in a
child process forked from one that has done the run's imports: its peak resident
size (``ru_maxrss``) at the end against its size at the fork; the growth must stay
within a small multiple of the input file's size plus a fixed allowance.
"""
import json
import os
import struct
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import structsvm
from structsvm import limits
from structsvm.corpora import load_spam, read_conll2002, read_svm_hmm
from structsvm.corpora.svmlight import read_svm_light, read_svm_rank
from structsvm.corpora.treebank import (MAX_TREE_DEPTH, _parse_mrg, _read_mrg,
                                        treebank_parsed_sents, treebank_tagged_sents)
from structsvm.structures import MulticlassFeatures, SequenceFeatures

REPO = Path(structsvm.__file__).resolve().parents[1]
#: growth of a child's peak memory, beyond its imports, allowed on top of a small
#: multiple of the input's size (allocator arenas, numpy/scipy first calls)
SLACK = 16 * 2 ** 20


_SERVER = textwrap.dedent("""
    import json, os, resource, sys, time
    import importlib, pkgutil
    import numba, numpy, scipy.sparse, scipy.io
    import structsvm, structsvm.cli, structsvm.corpora, structsvm.structures
    import structsvm.corpora.treebank, structsvm.estimator, structsvm.learners
    # the loop modules too (the code imports them where a loop runs): their
    # numba dispatchers are imports, not the run's memory
    for module in pkgutil.walk_packages(structsvm.__path__, "structsvm."):
        if module.name.endswith("_jit"):
            importlib.import_module(module.name)
    for request in sys.stdin:
        pid = os.fork()
        if pid == 0:  # the run: its peak memory counts from the fork
            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            scope = {"structsvm": structsvm}
            t0 = time.perf_counter()
            exec(json.loads(request), scope)
            dt = time.perf_counter() - t0
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            sys.stdout.write(json.dumps([scope["out"], (peak - base) * 1024, dt]) + "\\n")
            sys.stdout.flush()
            os._exit(0)
        os.waitpid(pid, 0)
""")


@pytest.fixture(scope="module")
def measured():
    """``measured(code)``: run ``code`` (which sets ``out``) in a child process forked
    from one that has done the imports; return ``(out, growth of the peak resident
    size in bytes, seconds)``. One interpreter serves every test of the module."""
    if not hasattr(os, "fork"):
        pytest.skip("measuring a run needs os.fork")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)

    def run(code):
        proc.stdin.write(json.dumps(textwrap.dedent(code)) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        assert line, "the measuring process died"
        return json.loads(line)

    yield run
    proc.stdin.close()
    proc.wait(timeout=30)


def _cli(measured, argv):
    return measured(f"""
        import contextlib, io
        err, printed = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(printed):
            rc = structsvm.cli.main({argv!r})
        out = [rc, err.getvalue()]
    """)


# -- the memory budget ---------------------------------------------------------------

def _svm_light_bomb(tmp_path):
    lines = ["1 10000000:1"] + [f"{k} 1:1" for k in range(2, 21)]
    path = tmp_path / "bomb.dat"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size == 138
    return path


def _training_baseline(tmp_path, measured, task, text):
    """What training on a two-line file of the task grows a forked process by (the
    first calls of a fit: tens of MiB, whatever the data)."""
    small = tmp_path / "small.dat"
    small.write_text(text)
    (rc, err), grown, _ = _cli(measured, ["learn", "--task", task, str(small),
                                          str(tmp_path / "small.npz")])
    assert rc == 0, err
    return grown


def test_138_byte_svm_light_file_is_read_compactly(tmp_path, measured):
    """Feature 10,000,000 once: the weights cover the columns that hold a value (two
    here, x 20 classes), so the file trains to a valid model in kilobytes, where it
    asked for 1.49 GiB before."""
    path = _svm_light_bomb(tmp_path)
    model = tmp_path / "m.npz"
    base = _training_baseline(tmp_path, measured, "multiclass", "1 1:1\n2 2:1\n")
    (rc, err), grown, seconds = _cli(
        measured, ["learn", "--task", "multiclass", str(path), str(model)])
    assert rc == 0 and "Traceback" not in err, err
    assert seconds < 5 and grown < base + 2 * 2 ** 20, (seconds, grown, base)
    fitted = structsvm.load(model)
    assert fitted.coef_.size == 2 * 20 and fitted.feature_map_.n_features_in_ == 10**7
    assert fitted.feature_map_.input_columns_.tolist() == [0, 9_999_999]
    assert model.stat().st_size < 20_000
    (rc, err), grown, _ = _cli(measured, ["classify", str(model), str(path),
                                          str(tmp_path / "pred.txt")])
    assert rc == 0 and "accuracy" in err and grown < base, (err, grown)
    pred = (tmp_path / "pred.txt").read_text().split()
    # line 1 alone holds feature 10,000,000; lines 2-20 are one input (1:1)
    assert pred[0] == "1" and len(set(pred[1:])) == 1 and pred[1] != "1"


def test_31_byte_svm_hmm_file_is_read_compactly(tmp_path, measured):
    path = tmp_path / "bomb.hmm"
    path.write_text("1 qid:1 10000000:1\n2 qid:1 1:1\n")
    assert path.stat().st_size == 31
    base = _training_baseline(tmp_path, measured, "sequence",
                              "1 qid:1 1:1\n2 qid:1 2:1\n")
    (rc, err), grown, seconds = _cli(
        measured, ["learn", "--task", "sequence", str(path), str(tmp_path / "m.npz")])
    assert rc == 0 and "Traceback" not in err, err
    assert seconds < 5 and grown < base + 2 * 2 ** 20, (seconds, grown, base)
    fm = structsvm.load(tmp_path / "m.npz").feature_map_
    assert (fm.n_input_features_, fm.n_features_in_, fm.n_features_) == (2, 10**7, 12)


def test_a_fit_above_the_budget_is_refused_before_allocation(tmp_path, monkeypatch):
    """20 lines of two features each: 40 columns hold values, so 40 x 20 weights.
    Under a limit below their 6400 bytes the map refuses them in ``fit``; under one
    that holds them but not the fit's estimate, the fit is refused before the
    learner starts, the message naming the estimate and its parts."""
    path = tmp_path / "wide.dat"
    path.write_text("".join(f"{k} {25_000 * k}:1 {25_000 * k + 1}:1\n"
                            for k in range(1, 21)))
    X, y, _ = read_svm_light(path)
    rows = [X[i] for i in range(20)]
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "6000")
    with pytest.raises(limits.MemoryLimitError,
                       match=r"^the weights \(800 = 40 features x 20 classes\) need 6400 "
                             r"bytes \(6.25 KiB\), above the memory limit of 5.86 KiB "
                             r"\(STRUCTSVM_MAX_MEMORY=6000;"):
        structsvm.fit(rows, list(y))
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "30K")
    with pytest.raises(limits.MemoryLimitError,
                       match=r"^training multiclass_cd on 20 examples \(800 weights; data "
                             r"[^)]*, oracle [^)]*, weights 18.8 KiB, caches 12.5 KiB\) "
                             r"needs an estimated \d+ bytes \([\d.]+ KiB\), above the "
                             r"memory limit of 30 KiB"):
        structsvm.fit(rows, list(y))
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1M")
    assert structsvm.fit(rows, list(y)).coef_.size == 800


def test_the_budget_follows_the_machine(monkeypatch):
    monkeypatch.delenv("STRUCTSVM_MAX_MEMORY", raising=False)
    monkeypatch.setattr(limits, "machine_memory", lambda: (8 * 2 ** 30, 16 * 2 ** 30))
    assert limits.memory_limit() == 4 * 2 ** 30 == limits.MEMORY_FRACTION * 8 * 2 ** 30
    assert limits.describe_limit() == ("the memory limit of 4 GiB (half of the 8 GiB "
                                       "available; this machine has 16 GiB)")
    X = np.eye(6, 100_000)
    with pytest.raises(limits.MemoryLimitError) as info:
        monkeypatch.setattr(limits, "machine_memory", lambda: (2 ** 22, 2 ** 30))
        MulticlassFeatures().fit(list(X), [1, 2, 3, 4, 5, 6])
    assert str(info.value) == (
        "the weights (600000 = 100000 features x 6 classes) need 4800000 bytes (4.58 "
        "MiB), above the memory limit of 2 MiB (half of the 4 MiB available; this "
        "machine has 1 GiB); set STRUCTSVM_MAX_MEMORY (e.g. STRUCTSVM_MAX_MEMORY=1G) "
        "to allow more")
    monkeypatch.setattr(limits, "machine_memory", lambda: (None, None))
    assert limits.memory_limit() == limits.MAX_MEMORY
    for value, expected in (("512M", 2 ** 29), ("4G", 2 ** 32), ("1000", 1000),
                            ("0", None), ("2GiB", 2 ** 31)):
        monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", value)
        assert limits.memory_limit() == expected
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1G")
    assert MulticlassFeatures().fit(list(X), [1, 2, 3, 4, 5, 6]).n_features_ == 600_000
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="STRUCTSVM_MAX_MEMORY='lots' is not a size"):
        limits.memory_limit()
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1K")
    with pytest.raises(MemoryError, match=r"the weights \(2024 = 500 features x 4 tags\)"):
        SequenceFeatures().fit([np.eye(2, 500)] * 2, [[1, 2], [3, 4]])


def test_a_size_beyond_the_machine_says_so(monkeypatch):
    monkeypatch.delenv("STRUCTSVM_MAX_MEMORY", raising=False)
    monkeypatch.setattr(limits, "machine_memory", lambda: (2 ** 33, 2 ** 34))
    with pytest.raises(limits.MemoryLimitError,
                       match=r"x: y need 35184372088832 bytes \(32 TiB\), above the memory "
                             r"limit of 4 GiB .*; more than this machine's 16 GiB of memory"):
        limits.check_array_size((2 ** 42,), 8, "y", source="x")


def test_dense_ranking_arrays_are_checked_before_allocating(tmp_path):
    """10,000 documents x feature 10,000,000, dense: 800 GB, refused on any machine
    (sparse, the default, reads them in kilobytes)."""
    path = tmp_path / "rank.dat"
    path.write_text("1 qid:1 10000000:1\n" + "0 qid:1 1:1\n" * 9_999)
    with pytest.raises(limits.MemoryLimitError, match=r"rank.dat: dense features \(10000 "
                                                      r"documents x 10000000 features\)"):
        read_svm_rank(path, dense=True)
    assert read_svm_rank(path).X[0].shape == (10_000, 10_000_000)  # sparse: fine


def test_memory_error_is_never_a_traceback(tmp_path, monkeypatch, capsys):
    from structsvm import cli

    def exhausted(*args, **kwargs):
        raise MemoryError()

    path = tmp_path / "ok.dat"
    path.write_text("1 1:1\n2 2:1\n")
    monkeypatch.setattr(cli, "_read", exhausted)
    assert cli.main(["learn", "--task", "multiclass", str(path),
                     str(tmp_path / "m.npz")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}: out of memory: the input "
                                              "asks for more memory than this machine")


# -- the spam loader -------------------------------------------------------------------

def _spam_folder(tmp_path, X, y, n_words=1899):
    folder = tmp_path / "spam_ng_ex6"
    folder.mkdir(exist_ok=True)
    (folder / "vocab.txt").write_text("".join(f"{i + 1}\tw{i}\n" for i in range(n_words)))
    scipy.io.savemat(folder / "spamTrain.mat", {"X": X, "y": y}, do_compression=True)
    scipy.io.savemat(folder / "spamTest.mat",
                     {"Xtest": np.zeros((2, n_words), np.uint8),
                      "ytest": np.array([[0], [1]], np.uint8)}, do_compression=True)
    return folder


def test_spam_shape_is_checked_before_inflating(tmp_path, measured):
    folder = _spam_folder(tmp_path, np.zeros((2000, 50000), np.uint8),
                          np.zeros((2000, 1), np.uint8))
    train = folder / "spamTrain.mat"
    assert train.stat().st_size < 200_000
    code = f"""
        try:
            structsvm.corpora.load_spam({str(folder)!r})
            out = None
        except ValueError as exc:
            out = str(exc)
    """
    message, grown, seconds = measured(code)
    assert message == (f"{train}: X has 50000 columns, expected one per word of "
                       "vocab.txt (1899)")
    assert seconds < 5 and grown < 10 * train.stat().st_size + SLACK, (seconds, grown)


@pytest.mark.parametrize("y, match", [
    ([5, 0, 1], r"y holds 1 labels other than 0 and 1 \(the first, row 1: 5"),
    ([0, -3, 1], r"y holds 1 labels other than 0 and 1 \(the first, row 2: -3"),
    ([0, np.nan, 1], r"y holds 1 labels other than 0 and 1 \(the first, row 2: nan"),
])
def test_spam_labels_outside_0_1_are_refused(tmp_path, y, match):
    folder = _spam_folder(tmp_path, np.zeros((3, 1899)), np.array(y, float)[:, None])
    with pytest.raises(ValueError, match=f"spamTrain.mat: {match}"):
        load_spam(folder)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_spam_features_must_be_finite(tmp_path, bad):
    X = np.zeros((3, 1899))
    X[1, 7] = bad
    folder = _spam_folder(tmp_path, X, np.array([[0], [1], [0]]))
    with pytest.raises(ValueError, match="spamTrain.mat: X holds 1 values that are not "
                                         "finite"):
        load_spam(folder)


def test_spam_other_shapes_and_files_name_the_file(tmp_path):
    folder = _spam_folder(tmp_path, np.zeros((3, 1899)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"spamTrain.mat: y is 4x1, expected one label "
                                         r"per row of X \(3x1\)"):
        load_spam(folder)
    (folder / "spamTrain.mat").write_bytes(b"MATLAB 5.0 MAT-file" + b"\x00" * 40)
    with pytest.raises(ValueError, match="spamTrain.mat: not a MATLAB version 5 .mat"):
        load_spam(folder)
    header = b"MATLAB 5.0 MAT-file".ljust(124) + b"\x00\x01IM"
    (folder / "spamTrain.mat").write_bytes(header + struct.pack("<II", 15, 99) + b"?" * 99)
    with pytest.raises(ValueError, match="spamTrain.mat: a damaged compressed variable "
                                         "at byte 128"):
        load_spam(folder)
    (folder / "spamTrain.mat").write_bytes(header + struct.pack("<II", 14, 16) + b"?" * 16)
    with pytest.raises(ValueError, match="spamTrain.mat: a damaged variable header"):
        load_spam(folder)


# -- text readers --------------------------------------------------------------------

def test_conll2002_bad_byte_names_file_and_line(tmp_path):
    path = tmp_path / "ned.train"
    path.write_bytes(b"Jan N B-PER\ncaf\xff N O\n")
    with pytest.raises(ValueError, match=r"ned.train, line 2: byte 0xff at column 4 is "
                                         "not UTF-8"):
        read_conll2002(path)


def test_conll2002_long_malformed_line_is_quoted_cut(tmp_path):
    path = tmp_path / "ned.testa"
    path.write_text("Jan N B-PER\n" + "x" * 10_000_000 + " N\n")
    with pytest.raises(ValueError) as info:
        read_conll2002(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line 2: expected 3 columns (word POS tag), got 2")
    assert len(message) < 300 and "(10000002 characters)" in message


def test_every_text_reader_cuts_long_tokens(tmp_path):
    path = tmp_path / "long.dat"
    path.write_text("1 " + "7" * 1_000_000 + ":1\n")
    with pytest.raises(ValueError) as info:
        read_svm_light(path)
    assert "long.dat, line 1" in str(info.value) and len(str(info.value)) < 300


def _treebank(tmp_path, text):
    combined = tmp_path / "treebank" / "combined"
    combined.mkdir(parents=True, exist_ok=True)
    path = combined / "wsj_0001.mrg"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_parse_trees_are_read_as_strict_utf8(tmp_path):
    path = _treebank(tmp_path, "( (S (NP (NN café)) (VP (VBZ is))) )\n")
    (tree,) = treebank_parsed_sents(tmp_path / "treebank", clean=False)
    assert tree.leaves() == ["café", "is"]
    assert treebank_tagged_sents(tmp_path / "treebank") == [[("café", "NN"), ("is", "VBZ")]]
    path.write_bytes(b"( (S (NN a))\n (S (NN caf\xe9)) )\n")
    with pytest.raises(ValueError, match=r"wsj_0001.mrg, line 2: byte 0xe9 is not UTF-8"):
        treebank_parsed_sents(tmp_path / "treebank")


@pytest.mark.parametrize("text, match", [
    ("(S x (NN y))", r"line 1: a bracket after the word 'x' of \(S ...\)"),
    ("( (S (NN y)) )\n\nstray (S (NN y))", r"line 3: 'stray' is outside the brackets"),
    ("(S (NN y))\n(S (NN a b))", r"line 2: 'b' after the word 'a' of \(NN ...\); a "
                                 r"\(TAG word\) pair holds one word"),
    ("(S (NP (NN a))\n b)", r"line 2: 'b' is outside a \(TAG word\) pair"),
    ("(S (NN y) ())", r"line 1: empty bracketing"),
    ("\n(S (NN y)))", r"line 2: unbalanced '\)'"),
])
def test_malformed_trees_are_refused_with_file_and_line(tmp_path, text, match):
    _treebank(tmp_path, text)
    for reader in (treebank_parsed_sents, treebank_tagged_sents):
        with pytest.raises(ValueError, match=f"wsj_0001.mrg, {match}"):
            reader(tmp_path / "treebank")


def test_nested_brackets_need_memory_in_proportion(tmp_path, measured):
    n = 1_000_000
    path = _treebank(tmp_path, "(" * n + "(NN a)" + ")" * n)
    assert _read_mrg.__module__ == "structsvm.corpora.treebank"
    code = f"""
        from structsvm.corpora.treebank import treebank_tagged_sents
        try:
            treebank_tagged_sents({str(tmp_path / "treebank")!r})
            out = None
        except ValueError as exc:
            out = str(exc)
    """
    message, grown, seconds = measured(code)
    assert message == (f"{path}, line 1: brackets nested deeper than MAX_TREE_DEPTH = "
                       f"{MAX_TREE_DEPTH}")
    assert seconds < 5 and grown < 10 * path.stat().st_size + SLACK, (seconds, grown)
    deep = "(A " * MAX_TREE_DEPTH + "(NN a)" + ")" * MAX_TREE_DEPTH
    with pytest.raises(ValueError, match="nested deeper"):
        _parse_mrg(deep, "deep.mrg")
    assert _parse_mrg("(A " * (MAX_TREE_DEPTH - 1) + "(NN a)" + ")" * (MAX_TREE_DEPTH - 1),
                      "ok.mrg") == [[("a", "NN")]]


# -- only regular files are data -------------------------------------------------------

def _within(seconds, fifo, call):
    """Run ``call()`` in a thread; if it is still blocked after ``seconds``, open the
    FIFO's other end to release it and fail. Returns what ``call`` raised or returned."""
    result = {}

    def target():
        try:
            result["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # EOF for the reader
        thread.join(5)
        pytest.fail(f"{call} blocked on a FIFO")
    if "error" in result:
        raise result["error"]
    return result.get("value")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("reader", [read_svm_light, read_svm_hmm, read_conll2002,
                                    _read_mrg])
def test_a_fifo_is_refused_not_waited_on(tmp_path, reader):
    fifo = tmp_path / "train.dat"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=f"{fifo}: not a regular file \\(a FIFO\\)"):
        _within(2, fifo, lambda: reader(fifo))


def test_a_folder_is_not_data(tmp_path):
    with pytest.raises(ValueError, match=r"not a regular file \(a folder\)"):
        read_svm_light(tmp_path)
