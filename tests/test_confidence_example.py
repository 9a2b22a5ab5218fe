"""Smoke tests of examples/chunking_confidence.py and benchmarks/bench_confidence.py
on small slices of CoNLL-2000 (the figures: benchmarks/results/confidence.md)."""
import importlib.util
from pathlib import Path

import numpy as np

from structsvm.corpora import load_conll2000

ROOT = Path(__file__).resolve().parents[1]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_on_a_slice(need_data, capsys, tmp_path):
    need_data(load_conll2000)
    plot = tmp_path / "reliability.png"
    load("examples/chunking_confidence.py", "chunking_confidence").main(
        ["--n-train", "300", "--held-out", "300", "--n-test", "100", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "Viterbi, BIO-valid" in out and "0 tags breaking BIO" in out
    # the sentence's chunks with a confidence each, and 5 chunkings, best first
    lines = out.splitlines()
    chunk_lines = [line for line in lines if "confidence" in line and "margin" in line]
    assert chunk_lines and all(0 <= float(line.split()[-1]) <= 1 for line in chunk_lines)
    k = lines.index("its 5 best chunkings (BIO-valid):")
    scores = [float(line.split()[0]) for line in lines[k + 1:k + 6]]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)
    assert plot.stat().st_size > 0


def test_benchmark_on_a_slice(need_data, capsys):
    need_data(load_conll2000)
    out = load("benchmarks/bench_confidence.py", "bench_confidence").main(
        ["--max-train", "300", "--held-out", "300", "--max-test", "150",
         "--no-crfsuite"])
    text = capsys.readouterr().out
    assert "structsvm BIO-valid, isotonic" in text and "| decoding |" in text
    assert 0.0 <= out["ece"] < 0.1 and np.isfinite(out["delta_f1"])
    assert 0 < out["in_k"] <= 1
