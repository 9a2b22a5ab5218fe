"""Every python code block of README.md runs as written.

Blocks may use ``X, y`` (a small multiclass data set: a list of feature vectors and
their labels) and ``sentences, tags`` (a small tagged corpus); README.md says so in
a comment above its first python block. Blocks run in order, in one namespace, in a
temporary folder (they may write files such as ``model.npz``).
"""
import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def _preamble():
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=3.0, size=(3, 5))
    labels = rng.integers(0, 3, size=30)
    X = [centers[k] + rng.normal(size=5) for k in labels]
    y = [["ant", "bee", "cat"][k] for k in labels]
    words = {"DT": ["The", "a", "the"], "NN": ["cat", "dog", "mat"], "VB": ["sat", "ran"],
             ".": ["."]}
    sentences, tags = [], []
    for _ in range(20):
        seq = ["DT", "NN", "VB", "."] if rng.random() < 0.5 else ["DT", "NN", "VB", "DT",
                                                                  "NN", "."]
        tags.append(seq)
        sentences.append([words[t][rng.integers(len(words[t]))] for t in seq])
    return {"X": X, "y": y, "sentences": sentences, "tags": tags}


def test_readme_has_python_blocks():
    assert len(_blocks()) >= 1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = _preamble()
    for k, code in enumerate(_blocks()):
        exec(compile(code, f"README.md python block {k + 1}", "exec"), namespace)
    search = namespace.get("search")
    if search is not None:
        assert search.best_params_["learner__solver"] in ("auto", "clarabel")
