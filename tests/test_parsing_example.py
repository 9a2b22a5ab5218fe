"""Smoke test of examples/parsing.py on a small slice of the treebank."""
import importlib.util
import re
from pathlib import Path

from nltk import Tree

import structsvm
from structsvm.corpora.treebank import load_treebank_trees

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "parsing.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("parsing_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_on_treebank_slice(need_data, capsys, tmp_path, monkeypatch):
    data = need_data(load_treebank_trees)
    X_tr, Y_tr, X_te, Y_te = data
    assert (len(X_tr), len(X_te)) == (1778, 198)  # the fixed split, length-filtered
    assert all(len(x) <= 25 for x in X_tr) and all(len(x) <= 15 for x in X_te)
    assert all(Tree.leaves(t) == [w for w, _ in x] for x, t in zip(X_tr[:50], Y_tr))
    mod = _load_example()
    monkeypatch.setattr(mod, "load_treebank_trees", lambda *a, **k: data)  # read once
    parser = mod.main(["--n-train", "60", "--n-test", "20", "--max-iter", "15",
                                   "--sentence", "The dog barks .",
                                   "--save", str(tmp_path / "parser.npz")])
    out = capsys.readouterr().out
    # labelled-bracket F1 on these 20 sentences: 0.712 with gold tags, 0.652 with the
    # tagger's; a right-branching tree scores 0.120, a flat one 0.0
    gold = float(re.search(r"gold tags: P [0-9.]+  R [0-9.]+  F1 ([0-9.]+)", out).group(1))
    tagged = float(re.search(r"predicted tags: F1 ([0-9.]+)", out).group(1))
    assert gold > 0.67 and tagged > 0.6
    assert "sentences/s" in out and "Parse:" in out
    printed = Tree.fromstring(out.split("Parse:\n", 1)[1].split("Parser saved")[0])
    assert printed.leaves() == ["The", "dog", "barks", "."]  # a tree over the input
    again = structsvm.load(tmp_path / "parser.npz")
    assert again.predict(X_te[:5]) == parser.predict(X_te[:5])


def test_bench_parsing_small_slice(need_data, capsys, monkeypatch):
    X_tr, Y_tr, X_te, Y_te = need_data(load_treebank_trees)
    spec = importlib.util.spec_from_file_location(
        "bench_parsing", EXAMPLE.parents[1] / "benchmarks" / "bench_parsing.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    small = (X_tr[:40], Y_tr[:40], X_te[:6], Y_te[:6])
    monkeypatch.setattr(bench, "load_treebank_trees", lambda *a, **k: small)
    f1 = bench.main(["--learner", "frank_wolfe", "--max-iter", "3", "--nltk-n", "2"])
    out = capsys.readouterr().out
    assert "structsvm frank_wolfe" in out and "nltk PCFG + ViterbiParser" in out
    # F1 on these 6 sentences: 0.45 for the 40-tree model (nltk's PCFG: 0.53); a
    # right-branching tree scores 0.10
    assert f1.shape == (2,) and f1[0] > 0.4
