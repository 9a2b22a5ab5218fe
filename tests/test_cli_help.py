"""The command line explains itself: every argument has help, choices are listed,
--version works, and contradictory options are refused naming both."""
import argparse
import re

import pytest

import structsvm
from structsvm.cli import build_parser, main
from structsvm.learners import QP_SOLVERS as SOLVERS
from structsvm.registry import registered


def _parsers(parser, words=()):
    """(command words, parser) of the parser and every subcommand below it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*words, name))


PARSERS = list(_parsers(build_parser()))


def test_every_command_is_listed():
    assert {" ".join(w) for w, _ in PARSERS} == {
        "", "learn", "classify", "info", "data", "data list", "data verify", "data fetch"}


@pytest.mark.parametrize("words", [w for w, _ in PARSERS], ids=" ".join)
def test_every_argument_has_plain_help(words, capsys):
    parser = dict(PARSERS)[words]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert choice.help, f"{words} {choice.dest}: no help"
            continue
        assert action.help and action.help != argparse.SUPPRESS, \
            f"structsvm {' '.join(words)}: {action.option_strings or action.dest} " \
            "has no help text"
    with pytest.raises(SystemExit) as exc:
        main([*words, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    # no reST markup: double back-quotes or Sphinx roles
    assert "``" not in out and not re.search(r":[a-z]+:`", out), out
    assert parser.description, f"structsvm {' '.join(words)} has no description"


def test_learn_help_lists_choices_and_task_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["learn", "--help"])
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "{" + ",".join(s.lower() for s in SOLVERS) + "}" in flat
    for name in registered("learner"):
        assert name in out
    # the per-task defaults are the feature maps' own
    from structsvm.structures import SequenceFeatures

    defaults = out[out.index("defaults when"):]
    row = re.search(r"^\s+sequence\s+(\S+)\s+(\S+)\s+(\S+)", defaults, re.MULTILINE)
    assert float(row.group(1)) == SequenceFeatures.default_C
    assert float(row.group(2)) == SequenceFeatures.default_tol
    assert row.group(3) == SequenceFeatures.default_learners[0][0]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"structsvm {structsvm.__version__}"


def test_python_dash_m_runs_the_command_line():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "structsvm", "--version"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"structsvm {structsvm.__version__}"


def test_c_and_svmstruct_c_together_are_refused(tmp_path, capsys):
    train = tmp_path / "train.dat"
    train.write_text("1 1:1\n2 2:1\n")
    with pytest.raises(SystemExit) as exc:
        main(["learn", "--task", "multiclass", "-C", "1", "--svmstruct-c", "2",
              str(train), str(tmp_path / "m.npz")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "-C" in err and "--svmstruct-c" in err
    assert not (tmp_path / "m.npz").exists()


def test_solver_with_a_learner_without_one_is_refused(tmp_path, capsys):
    train = tmp_path / "train.dat"
    train.write_text("1 1:1\n2 2:1\n")
    code = main(["learn", "--task", "multiclass", "--learner", "pegasos", "--solver",
                 "smo", str(train), str(tmp_path / "m.npz")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--solver smo" in err and "--learner pegasos" in err
    assert not (tmp_path / "m.npz").exists()


def test_unknown_solver_is_refused_with_the_choices(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["learn", "--task", "multiclass", "--solver", "gurobi", "a", "b"])
    err = capsys.readouterr().err
    assert "gurobi" in err and "clarabel" in err


def test_info_reports_versions_and_the_compiled_loops(capsys):
    from structsvm import _compiled

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"structsvm {structsvm.__version__} ")
    import numpy

    assert re.search(rf"^\s+numpy\s+{re.escape(numpy.__version__)}$", out, re.MULTILINE)
    in_use, reason = _compiled.extension_status()
    assert f"compiled loops: {'in use' if in_use else 'not in use'}: {reason}" in out


def test_info_says_why_the_compiled_loops_are_unused(monkeypatch, capsys):
    monkeypatch.setenv("STRUCTSVM_AOT", "0")
    assert main(["info"]) == 0
    assert "compiled loops: not in use: STRUCTSVM_AOT=0 is set" in capsys.readouterr().out
