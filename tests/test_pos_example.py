"""Smoke test of examples/pos_tagging.py on small slices (with and without the treebank)."""
import importlib.util
import re
from pathlib import Path

import pytest

from structsvm.corpora import DataNotFoundError, load_treebank

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pos_tagging.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("pos_tagging_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _token_accuracy(out):
    return float(re.search(r"Test token accuracy:\s+([0-9.]+)", out).group(1))


ARGS = ["--n-train", "150", "--n-test", "40", "--max-iter", "2", "--sentence",
        "The dog barks ."]


def test_example_on_treebank_slice(need_data, capsys, tmp_path):
    need_data(load_treebank)
    model = _load_example().main(ARGS + ["--save", str(tmp_path / "m")])
    out = capsys.readouterr().out
    assert "NLTK treebank sample" in out and "Test token accuracy" in out
    assert "unknown words" in out and "tokens/s" in out and "Tagged: The/" in out
    # --max-iter 2 with the default learner (dual_cd): one curve entry per certified pass
    assert model.learner_.name == "dual_cd" and "Trained with dual_cd" in out
    assert model.n_iter_ <= 2 and 1 <= len(model.objective_curve_) <= model.n_iter_
    # 0.849 on these 40 test sentences; tagging every token NN scores 0.123, and the
    # most frequent tag of each word in the 150 training sentences 0.670
    assert _token_accuracy(out) > 0.82


def test_example_without_treebank_uses_synthetic_corpus(monkeypatch, capsys):
    mod = _load_example()

    def absent(*args, **kwargs):
        raise DataNotFoundError("Data set 'treebank' not found; nltk.download('treebank')")

    monkeypatch.setattr(mod, "load_treebank", absent)
    mod.main(ARGS + ["--learner", "perceptron"])
    out = capsys.readouterr().out
    assert "synthetic corpus" in out and "nltk.download('treebank')" in out
    # 0.729 with the perceptron on this slice; the most frequent tag scores 0.146
    assert _token_accuracy(out) > 0.69
