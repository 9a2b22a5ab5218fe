"""What a fit and the command line show while they work: nothing by default, a
progress bar on a terminal, plain log lines elsewhere."""
import io
import logging
import subprocess
import sys

import numpy as np
import pytest

import structsvm
from structsvm.cli import main


class FakeTerminal(io.StringIO):
    """Standard error as a terminal would look to the program."""

    def isatty(self):
        return True


def blobs(seed=0, n=60, d=3, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(scale=2.0, size=(k, d))[y] + rng.normal(size=(n, d))
    return list(X), [f"class{c}" for c in y]


def fake_terminal(monkeypatch):
    """Called in the test's body: pytest's capture resets sys.stderr after fixtures."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    fake = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", fake)
    return fake


def test_a_default_fit_is_silent(capsys, caplog):
    X, Y = blobs()
    with caplog.at_level(logging.INFO, logger="structsvm"):
        structsvm.fit(X, Y, C=1.0)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_a_default_fit_is_silent_on_a_terminal(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    X, Y = blobs()
    structsvm.fit(X, Y, C=1.0)
    assert terminal.getvalue() == ""


def test_verbose_off_a_terminal_writes_plain_lines(capsys):
    X, Y = blobs(1)
    stream = io.StringIO()  # a file or a CI log: not a terminal
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("structsvm")
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.INFO)
    try:
        structsvm.fit(X, Y, C=1.0, verbose=1)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    text = stream.getvalue()
    assert "\r" not in text and "\r" not in capsys.readouterr().err
    lines = [ln for ln in text.splitlines() if ln.startswith("round")]
    assert lines and any("objective" in ln and "gap" in ln for ln in lines)


def test_verbose_on_a_terminal_shows_a_bar(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    X, Y = blobs(2)
    model = structsvm.fit(X, Y, C=1.0, verbose=1, tol=1e-3)
    text = terminal.getvalue()
    assert "\r" in text
    assert f"{model.n_iter_}round" in text  # the rounds done, at the end
    assert "objective" in text and "gap" in text and "tol 0.001" in text


def test_ci_or_a_dumb_terminal_gets_no_bar(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    X, Y = blobs(2)
    monkeypatch.setenv("CI", "true")
    structsvm.fit(X, Y, C=1.0, verbose=1)
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "dumb")
    structsvm.fit(X, Y, C=1.0, verbose=1)
    assert "\r" not in terminal.getvalue()


def test_the_bar_is_closed_after_an_interruption(monkeypatch):
    terminal = fake_terminal(monkeypatch)
    X, Y = blobs(3)
    from structsvm import _training

    tracker_call = _training.RoundTracker.__call__

    def call(self, info):  # Ctrl-C pressed twice during the first round
        tracker_call(self, info)
        raise KeyboardInterrupt

    monkeypatch.setattr(_training.RoundTracker, "__call__", call)
    with pytest.warns(Warning, match="interrupted"):
        model = structsvm.fit(X, Y, C=1.0, verbose=1)
    assert model.interrupted_
    assert terminal.getvalue().endswith("\n")  # the bar's line was ended


def _train_file(path):
    X, Y = blobs(4)
    path.write_text("".join(f"{y[-1]} " + " ".join(f"{j + 1}:{v:.6f}"
                                                   for j, v in enumerate(x)) + "\n"
                            for x, y in zip(X, Y)))
    return path


def test_cli_learn_shows_a_bar_on_a_terminal(tmp_path, monkeypatch):
    terminal = fake_terminal(monkeypatch)
    train = _train_file(tmp_path / "train.dat")
    model = tmp_path / "model.npz"
    assert main(["learn", "--task", "multiclass", "-C", "1", str(train), str(model)]) == 0
    text = terminal.getvalue()
    assert "\r" in text and "objective" in text and "gap" in text
    assert structsvm.load(model).verbose == 0  # the saved model as asked for


def test_cli_learn_off_a_terminal_is_quiet_without_v(tmp_path, capsys):
    train = _train_file(tmp_path / "train.dat")
    assert main(["learn", "--task", "multiclass", "-C", "1", str(train),
                 str(tmp_path / "m.npz")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "round" not in err


def test_import_does_not_load_tqdm():
    code = "import sys, structsvm; assert 'tqdm' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_classify_shows_a_bar_over_batches_on_a_terminal(tmp_path, monkeypatch):
    from structsvm import cli

    train = _train_file(tmp_path / "train.dat")
    model = tmp_path / "model.npz"
    assert main(["learn", "--task", "multiclass", "-C", "1", str(train), str(model)]) == 0
    plain = tmp_path / "plain.txt"
    assert main(["classify", str(model), str(train), str(plain)]) == 0
    monkeypatch.setattr(cli, "_BATCH", 7)
    terminal = fake_terminal(monkeypatch)
    batched = tmp_path / "batched.txt"
    assert main(["classify", str(model), str(train), str(batched)]) == 0
    text = terminal.getvalue()
    assert "\r" in text and "60/60" in text and "accuracy" in text
    assert batched.read_text() == plain.read_text()  # the same predictions
