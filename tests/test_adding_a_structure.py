"""Adding a structure is one new folder plus one line elsewhere: the example folder
of the contributor's page (docs/adding_a_structure.md, tests/adding_a_structure/)
is copied into a copy of the package, its name added to the built-in list, and then
it trains, predicts, saves and loads, passes the conformance check, shows on the
Defaults page and keeps its files in its folder — with nothing else edited."""
import difflib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import structsvm

PACKAGE = Path(structsvm.__file__).resolve().parent
EXAMPLE = Path(__file__).resolve().parent / "adding_a_structure" / "multilabel"


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    """A copy of the package with the example folder added: (root, changed lines)."""
    root = tmp_path_factory.mktemp("house")
    shutil.copytree(PACKAGE, root / "structsvm",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(EXAMPLE, root / "structsvm" / "structures" / "multilabel")
    init = root / "structsvm" / "structures" / "__init__.py"
    before = init.read_text(encoding="utf-8")
    after = before.replace('"user", "dependency")', '"user", "dependency",\n'
                           '           "multilabel")')
    assert after != before, "the built-in list changed shape: update this test"
    init.write_text(after, encoding="utf-8")
    changed = [line for line in difflib.unified_diff(before.splitlines(),
                                                     after.splitlines(), lineterm="")
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    return root, changed


def _run(root, code):
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=root,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_the_new_structure_needs_one_line_outside_its_folder(house):
    _, changed = house
    # one line of the built-in list (its closing line re-wrapped to hold the name)
    assert len([c for c in changed if c.startswith("+")]) == 2, changed
    assert len([c for c in changed if c.startswith("-")]) == 1, changed


def test_the_new_structure_trains_predicts_saves_and_loads(house):
    root, _ = house
    out = _run(root, """
        import numpy as np, structsvm, tempfile, os
        from structsvm.registry import registered
        from structsvm.structures.multilabel import MultiLabelFeatures, subset_accuracy
        from structsvm.testing import check_structure

        assert structsvm.__file__.startswith(os.getcwd())
        assert registered("structure")["multilabel"] is MultiLabelFeatures
        rng = np.random.default_rng(0)
        A = rng.normal(size=(3, 4))
        X = list(rng.normal(size=(60, 4)))
        Y = [{l for l, v in zip("abc", A @ x) if v > 0} for x in X]
        model = structsvm.fit(X, Y, feature_map=MultiLabelFeatures())
        assert model.decoder_.name == "independent" and model.loss_.name == "hamming"
        assert model.learner_.name == "dual_cd" and model.converged_
        assert subset_accuracy(Y, model.predict(X)) > 0.9
        path = os.path.join(tempfile.mkdtemp(), "m.npz")
        again = structsvm.load(model.save(path))
        assert again.predict(X) == model.predict(X)
        check_structure(MultiLabelFeatures(), X[:12], Y[:12])
        print("ok")
    """)
    assert out.strip() == "ok"


def test_the_new_structure_shows_on_the_defaults_page(house):
    root, _ = house
    out = _run(root, """
        from structsvm.estimator._defaults import defaults_markdown
        print(defaults_markdown())
    """)
    row = next(line for line in out.splitlines() if "`MultiLabelFeatures`" in line)
    assert "`multilabel`" in row and "`independent`" in row and "`hamming`" in row


def test_the_new_structures_files_are_in_its_folder(house):
    root, _ = house
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(tests / "test_layout.py"), "-k",
         "folder or isinstance or class_check or cycle or decoders_import"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
