"""Smoke tests of the graph examples and benchmark on small slices (figures: docs/)."""
import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(folder, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_collective_example_runs(capsys):
    out = _load("examples", "collective").main(["--n-train", "2", "--n-test", "2",
                                                "--decoders", "max_product"])
    printed = capsys.readouterr().out
    assert "LinearSVC per node" in printed and "max_product" in printed
    # node accuracy 0.85 with the edges, 0.61 for LinearSVC per node (no edges)
    acc = out["structsvm, edges, max_product"][0]
    assert acc > 0.8 and acc > out["LinearSVC per node"][0] + 0.15


def test_certificate_bounds_the_objective():
    import structsvm
    from structsvm.structures import GraphFeatures

    ex = _load("examples", "collective")
    X, Y = ex.planted_partition(2, seed=5, sizes=(10, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = structsvm.fit(X, Y, feature_map=GraphFeatures(), decoder="lp", max_iter=12)
    c = ex.certificate(model, X, Y)
    # the LP over-generates: its objective bounds the reported (rounded-LP) one above
    assert c["primal_lp"] >= model.objective_ - 1e-6
    assert c["dual"] <= c["primal_lp"] + 1e-6


def _ner_data_or_skip(ex):
    from structsvm.corpora import DataNotFoundError, require_data

    try:
        ex.load("testa")
    except DataNotFoundError as exc:
        if require_data():
            pytest.fail(f"required data missing: {exc}")
        pytest.skip(f"data not available: {exc}")


def test_skip_chain_ner_example_reports_both_f1(capsys):
    ex = _load("examples", "skip_chain_ner")
    _ner_data_or_skip(ex)
    out = ex.main(["--n-train-docs", "8", "--n-test-docs", "3", "--test", "testa",
                   "--max-iter", "25"])
    printed = capsys.readouterr().out
    assert "chain" in printed and "skip-chain" in printed and "F1" in printed
    assert set(out) == {"chain", "skip-chain"}
    # entity F1 0.55 (chain) and 0.60 (skip-chain) on this slice; tagging every token
    # O (the majority tag) finds no entity: F1 0
    assert out["chain"]["f1"] > 0.5 and out["skip-chain"]["f1"] > 0.55
    for s in out.values():  # the printed scores are conlleval's, consistent with each other
        p, r = s["precision"], s["recall"]
        assert s["f1"] > 0 and s["f1"] == pytest.approx(2 * p * r / (p + r))
        assert f"F1 {s['f1']:.4f}" in printed
    assert out["skip-chain"]["skip_edges"] > 0 and out["chain"]["skip_edges"] == 0
    assert out["chain"]["exact"] == 1.0  # chains are forests: max-product is exact


def test_skip_chain_private_reader_matches_the_file(tmp_path):
    ex = _load("examples", "skip_chain_ner")
    f = tmp_path / "ned.testa"
    f.write_text("-DOCSTART- -DOCSTART- O\nDe Art O\nJan N B-PER\n\nZag V O\n\n"
                 "-DOCSTART- -DOCSTART- O\nJan N B-PER\n", encoding="utf-8")
    X, Y, doc = ex._read_ned(f)
    assert X == [[("De", "Art"), ("Jan", "N")], [("Zag", "V")], [("Jan", "N")]]
    assert Y == [["O", "B-PER"], ["O"], ["B-PER"]]
    np.testing.assert_array_equal(doc, [0, 0, 1])
    edges = ex._skip_edges(["Jan", "zag", "Jan", "De", "Jan"], {0, 3})
    np.testing.assert_array_equal(edges, [[2, 4]])  # sentence starts are left out


def test_bench_graphs_small_slice(capsys):
    bench = _load("benchmarks", "bench_graphs")
    out = bench.main(["--seeds", "1", "--n-train", "2", "--n-test", "2", "--decoders",
                      "max_product", "--skip", "ner"])
    printed = capsys.readouterr().out
    assert "| model | test accuracy |" in printed and "certified gap" in printed
    assert "structsvm, edges, max_product" in out["collective"]
