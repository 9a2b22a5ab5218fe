"""What a fit and the command line show while they work: nothing by default, a
progress bar on a terminal, plain log lines elsewhere."""
import io
import logging
import os
import signal
import subprocess
import sys
import warnings

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
    from structsvm.estimator import _training

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


def _mid_bar(text, message):
    """The lines where ``message`` follows the bar's text on the same screen line (after
    the last carriage return): it landed in the middle of the bar."""
    return [ln for ln in text.split("\n") if message in ln
            and "|" in ln.split(message)[0].rsplit("\r", 1)[-1]]


def _plain_console(monkeypatch):
    """Warnings shown on standard error, as outside pytest's recording."""
    def show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
    monkeypatch.setattr(warnings, "showwarning", show)
    return show


def _log_to(stream):
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("[structsvm] %(message)s"))
    log = logging.getLogger("structsvm")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return lambda: (log.removeHandler(handler), log.setLevel(level))


def test_log_lines_and_warnings_under_a_bar_land_above_it(monkeypatch):
    """A real Ctrl-C (SIGINT) during a verbose fit on a terminal: the handler's log line,
    a log line and a warning written mid-training each start a line of their own, the
    bar is drawn again below them, and the hooks are restored afterwards."""
    from structsvm.estimator import _training

    terminal = fake_terminal(monkeypatch)
    plain_show = _plain_console(monkeypatch)
    undo = _log_to(sys.stderr)
    tracker_call = _training.RoundTracker.__call__

    def call(self, info):
        tracker_call(self, info)
        if self.rounds == 1:
            logging.getLogger("structsvm").info("a line from the learner")
            warnings.warn("a warning from the learner", UserWarning)
            os.kill(os.getpid(), signal.SIGINT)  # the first Ctrl-C: stop after this round

    monkeypatch.setattr(_training.RoundTracker, "__call__", call)
    X, Y = blobs(5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            model = structsvm.fit(X, Y, C=1.0, verbose=1, tol=1e-9, max_iter=50,
                                  learner="one_slack")
    finally:
        undo()
    text = terminal.getvalue()
    assert model.interrupted_
    for message in ("a line from the learner", "a warning from the learner",
                    "Ctrl-C: training stops after the current round"):
        assert message in text
        assert _mid_bar(text, message) == [], message
    after = text.split("a line from the learner")[1]
    assert "round" in after.split("\n", 1)[1]  # the bar was drawn again below
    assert warnings.showwarning is plain_show
    assert all(type(h).__name__ != "_TqdmLoggingHandler"
               for h in logging.getLogger("structsvm").handlers)


def test_without_the_redirect_the_check_sees_a_line_mid_bar():
    # what a bare handler writes while a tqdm bar is open on the same stream
    from tqdm import tqdm

    terminal = FakeTerminal()
    with tqdm(total=3, file=terminal, mininterval=0) as bar:
        bar.update(1)
        logging.StreamHandler(terminal).emit(logging.makeLogRecord({"msg": "mid"}))
    assert _mid_bar(terminal.getvalue(), "mid")


def test_warnings_under_a_bar_are_still_recorded(monkeypatch):
    from structsvm import _progress

    terminal = fake_terminal(monkeypatch)
    with pytest.warns(UserWarning, match="recorded"):
        bar = _progress.RoundBar("learner", total=3)
        bar.update(1, 1.0, 0.5)
        warnings.warn("recorded", UserWarning)
        bar.close()
    assert "recorded" not in terminal.getvalue()  # recorded, not written


def test_batches_bar_keeps_log_lines_above_it(monkeypatch):
    from structsvm import _progress

    terminal = fake_terminal(monkeypatch)
    undo = _log_to(sys.stderr)

    def predict(batch):
        logging.getLogger("structsvm").warning("batch of %d", len(batch))
        return batch

    try:
        out = _progress.in_batches(predict, list(range(25)), size=10, desc="classify")
    finally:
        undo()
    assert out == list(range(25))
    text = terminal.getvalue()
    assert text.count("batch of") == 3 and _mid_bar(text, "batch of") == []
