"""Smoke tests of the benchmark scripts on small slices (figures: docs/benchmarks.md)."""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_multiclass_small_slice(capsys):
    rows = load("bench_multiclass").main(["--data", "digits", "--repeats", "1",
                                          "--max-train", "200"])["digits"]
    out = capsys.readouterr().out
    assert "LinearSVC crammer_singer" in out and "structsvm default call [multiclass_cd]" in out
    assert "structsvm dual_cd [dual_cd]" in out  # the dual_cd row the docs quote
    ref = rows["LinearSVC crammer_singer, tol=1e-6"]["obj"]
    for name, row in rows.items():
        if name.startswith("structsvm"):  # certified within the default tol 5e-4
            assert -1e-6 <= (row["obj"] - ref) / ref <= 1e-3


def test_bench_chunking_small_slice(need_data, capsys):
    """The default call on 150 CoNLL-2000 sentences, scored on the whole test set:
    the F1 it prints is conlleval's, consistent with the chunk counts beside it."""
    from structsvm.corpora import load_conll2000
    from structsvm.structures.sequence import iob_chunks

    need_data(load_conll2000)
    rows = load("bench_chunking").main(["--systems", "default", "--max-train", "150"])
    out = capsys.readouterr().out
    (row,) = rows
    assert row["name"] == "structsvm default call [dual_cd]" and row["name"] in out
    n_true = sum(len(iob_chunks(y)) for y in load_conll2000()[3])
    assert 0 < row["correct"] <= min(n_true, row["predicted"])
    assert abs(row["f1"] - 2 * row["correct"] / (n_true + row["predicted"])) < 1e-12
    # 150 sentences: 0.873, clearly learnt, not yet the full F1 (0.94); the most
    # frequent chunk tag of each POS tag scores 0.70-0.80 on slices of this test set
    assert 0.85 < row["f1"] < 0.95
    assert f"{row['f1']:.5f}" in out


def test_bench_tagging_small_slice(need_data, capsys):
    from structsvm.corpora import load_treebank

    need_data(load_treebank)
    rows = load("bench_tagging").main(["--max-train", "60", "--repeats", "1",
                                       "--crf-iterations", "3", "--markdown"])
    out = capsys.readouterr().out
    names = [r["name"] for r in rows]
    assert names == ["structsvm predict", "structsvm tag_sents", "sklearn-crfsuite",
                     "NLTK PerceptronTagger"]
    assert rows[0]["acc"] == rows[1]["acc"]  # the same model behind both interfaces
    # token accuracy on this slice: structsvm 0.868, NLTK's perceptron 0.754,
    # sklearn-crfsuite after its 3 iterations 0.515; tagging every token NN: ~0.13
    least = {"structsvm predict": 0.84, "structsvm tag_sents": 0.84,
             "sklearn-crfsuite": 0.45, "NLTK PerceptronTagger": 0.72}
    for r in rows:
        assert least[r["name"]] < r["acc"] <= 1.0 and r["speed"] > 0 and r["name"] in out


def test_bench_first_call_small(capsys):
    """Fresh processes, an empty numba cache for the first run: the digits job's
    figures and ratios, and the import time, as the markdown table prints them."""
    med = load("bench_first_call").main(["--repeats", "1", "--jobs", "import", "digits",
                                         "own", "--markdown"])
    out = capsys.readouterr().out
    for key in ("import.first", "import.second", "digits.first", "digits.second",
                "digits.linearsvc.first", "digits.linearsvc.second"):
        assert med[key] > 0, key
    # one repeat: the median of one process's ratio is that ratio
    assert med["digits.first_vs_linearsvc"] == (med["digits.first"]
                                                / med["digits.linearsvc.first"])
    assert med["import.ratio"] == med["import.first"] / med["import.second"]
    assert "| `import structsvm` |" in out and "| digits `fit` |" in out
    assert f"{med['digits.first']:.3f} s" in out
    assert "(structsvm._compiled._aot) in use: " in out
    # a small own structure trains without numba, in the first run as in the second
    assert med["own.first"] > 0 and med["own.second"] > 0
    assert med["own.first_numba"] == med["own.second_numba"] == 0.0
    assert "| own structure `fit`" in out


def test_bench_first_call_loops(capsys):
    """The compile-time table: in a fresh process with an empty cache, the digits fit
    compiles multiclass_cd's one loop (its sweep; the certification runs in numpy),
    each row a positive CPU time and the total their sum. (The main-job slice of the
    same job compiles the sequence loops: ~20 s of CPU, run by the benchmark, not
    here.)"""
    med = load("bench_first_call").main(["--repeats", "1", "--jobs", "loops",
                                         "--loop-sentences", "0", "--markdown"])
    out = capsys.readouterr().out
    assert not any(k.startswith("loops.main.") for k in med)
    digits = {k.split(".", 2)[2]: v for k, v in med.items()
              if k.startswith("loops.digits.")}
    assert set(digits) == {"structsvm.learners._multiclass_cd_jit:sweep"}
    assert med["loops.setup"] > 0 and all(v > 0 for v in digits.values())
    assert f"| digits fit | all | {sum(digits.values()):.2f} |" in out
    assert "| main job |" not in out


def test_bench_performance_small_slice(need_data, capsys, tmp_path):
    """Each loss's own measure for LinearSVC and PerformanceSVC on a slice of spam
    and of two newsgroups; the PerformanceSVC figure is that of an independent fit,
    the scaling table has its 4 sizes, and the results file holds the same figures."""
    import json

    from structsvm.corpora import load_mini_newsgroups, load_spam
    from structsvm.structures.binary import metrics
    from structsvm.svm import PerformanceSVC

    need_data(load_spam)
    need_data(load_mini_newsgroups)
    bench = load("bench_performance")
    out = bench.main(["--data", "spam", "newsgroups", "--max-train", "400",
                      "--categories", "2", "--losses", "f1", "roc_auc", "precision_at_k",
                      "--repeats", "1", "--scaling", "f1", "--markdown",
                      "--results", str(tmp_path / "results" / "performance.json")])
    text = capsys.readouterr().out
    assert "| f1 |" in text and "| roc_auc |" in text and "per 1000" in text
    spam = out["spam"]
    (name, X, y, Xt, yt), = bench.load("spam", 400)
    f1 = metrics.f_beta_score(yt, PerformanceSVC(loss="f1").fit(X, y).predict(Xt))
    assert spam["summary"]["f1"]["measure"]["PerformanceSVC"] == pytest.approx(f1)
    for ds in ("spam", "newsgroups"):
        for loss, s in out[ds]["summary"].items():
            assert all(0.0 <= v <= 1.0 for v in s["measure"].values()), (ds, loss)
            assert s["time"] > 0 and s["time_svc"] > 0 and s["rounds"] >= 1
        sizes = [row["n"] for row in out[ds]["scaling"]]
        assert sizes == sorted(sizes) and len(sizes) == 4 and sizes[-1] == 400
    assert len(out["newsgroups"]["rows"]) == 2   # one binary problem per group
    saved = json.loads((tmp_path / "results" / "performance.json").read_text())
    assert saved["argv"][:2] == ["--data", "spam"] and len(saved["load_average"]) == 3
    for ds in ("spam", "newsgroups"):
        for loss, s in out[ds]["summary"].items():
            assert saved["data"][ds]["summary"][loss]["measure"] == pytest.approx(
                s["measure"])
        assert [r["n"] for r in saved["data"][ds]["scaling"]] == [
            r["n"] for r in out[ds]["scaling"]]
