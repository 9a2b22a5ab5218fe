"""Every python code block of README.md runs as written.

Blocks define the data they use (a reader copies them as they are). They run in
order, in one namespace, in a temporary folder (they may write files such as
``model.npz``).
"""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def test_readme_has_python_blocks():
    assert len(_blocks()) >= 1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for k, code in enumerate(_blocks()):
        exec(compile(code, f"README.md python block {k + 1}", "exec"), namespace)
    search = namespace.get("search")
    if search is not None:
        assert search.best_params_["learner__solver"] in ("auto", "clarabel")
