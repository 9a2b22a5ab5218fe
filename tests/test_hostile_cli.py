"""The command line never writes over its inputs, and reads only regular files.

Each refusal comes before any training or prediction, so these tests need no model:
an existing file stands in for one where only its path matters.
"""
import hashlib
import os

import pytest

from structsvm.cli import _files as _cli_files
from structsvm.cli import main


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("train.dat", "test.dat"):
        (tmp_path / name).write_text("1 1:1\n2 2:1\n")
    (tmp_path / "model.npz").write_bytes(b"stands in for a model")
    return tmp_path


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("argv, message", [
    (["learn", "--task", "multiclass", "train.dat", "train.dat"],
     "train.dat: the model would overwrite the training data (train.dat)"),
    (["learn", "--task", "multiclass", "--checkpoint", "train.dat", "train.dat", "m.npz"],
     "train.dat: the checkpoint would overwrite the training data (train.dat)"),
    (["learn", "--task", "multiclass", "--checkpoint", "c.npz", "train.dat", "c.npz"],
     "c.npz: the model would overwrite the checkpoint (c.npz)"),
    (["learn", "--task", "multiclass", "--resume", "model.npz", "train.dat", "model.npz"],
     "model.npz: the model would overwrite the checkpoint to resume (model.npz)"),
    (["learn", "--task", "multiclass", "./sub/../train.dat", "train.dat"],
     "train.dat: the model would overwrite the training data (./sub/../train.dat)"),
    (["classify", "model.npz", "test.dat", "test.dat"],
     "test.dat: the predictions would overwrite the test data (test.dat)"),
    (["classify", "model.npz", "test.dat", "model.npz"],
     "model.npz: the predictions would overwrite the model (model.npz)"),
])
def test_an_output_over_an_input_is_refused(files, capsys, argv, message):
    (files / "sub").mkdir()
    before = _digests(files)
    assert main(argv) == 2
    assert capsys.readouterr().err == f"error: {message}; choose another output path\n"
    assert _digests(files) == before


def test_a_link_to_an_input_counts_as_the_input(files, capsys):
    os.symlink("test.dat", files / "alias.txt")
    os.link(files / "model.npz", files / "hard.npz")
    assert main(["classify", "model.npz", "test.dat", "alias.txt"]) == 2
    assert "alias.txt: the predictions would overwrite the test data" in \
        capsys.readouterr().err
    assert main(["classify", "model.npz", "test.dat", "hard.npz"]) == 2
    assert "hard.npz: the predictions would overwrite the model" in capsys.readouterr().err


def test_predictions_replace_a_symlink_and_never_follow_it(tmp_path):
    victim = tmp_path / "elsewhere.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "pred.txt"
    os.symlink(victim, link)
    _cli_files.write_predictions(str(link), ["1", "2"])
    assert not link.is_symlink() and link.read_text() == "1\n2\n"
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.txt", "pred.txt"]


def test_predictions_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    out = tmp_path / "pred.txt"
    out.write_text("old\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_cli_files.os, "replace", fail)
    with pytest.raises(OSError, match=f"cannot write the predictions to {out}: No space"):
        _cli_files.write_predictions(str(out), ["1"])
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pred.txt"]  # no temp file


def test_messages_name_what_was_being_written(files, capsys):
    assert main(["classify", "model.npz", "test.dat", "no/such/pred.txt"]) == 2
    assert "cannot write the predictions to no/such/pred.txt: folder" in \
        capsys.readouterr().err
    assert main(["learn", "--task", "multiclass", "--checkpoint", "nope/c.npz",
                 "train.dat", "m.npz"]) == 2
    assert "cannot write the checkpoint to nope/c.npz" in capsys.readouterr().err
    assert main(["learn", "--task", "multiclass", "train.dat", str(files)]) == 2
    assert f"cannot write the model to {files}: it is a folder" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_never_opened_as_data(files, capsys):
    os.mkfifo(files / "fifo")
    assert main(["learn", "--task", "multiclass", "fifo", "m.npz"]) == 2
    assert capsys.readouterr().err == ("error: fifo: not a regular file (a FIFO); data is "
                                       "read only from regular files\n")
    assert main(["classify", "fifo", "test.dat"]) == 2
    assert capsys.readouterr().err == "error: fifo: the model is not a regular file\n"
    assert main(["learn", "--task", "multiclass", "--resume", "fifo", "train.dat",
                 "m.npz"]) == 2
    assert "fifo: the checkpoint to resume is not a regular file" in capsys.readouterr().err
    assert main(["classify", "model.npz", "test.dat", "fifo"]) == 2
    assert "cannot write the predictions to fifo: it is not a regular file" in \
        capsys.readouterr().err
    assert (files / "fifo").exists() and not (files / "fifo").is_file()
