"""Smoke test of examples/dependency_parsing.py on a small slice of the treebank."""
import importlib.util
import re
from pathlib import Path

import structsvm
from structsvm.corpora import load_dependency_treebank
from structsvm.structures.dependency import read_conllu

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dependency_parsing.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("dependency_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_on_treebank_slice(need_data, capsys, tmp_path, monkeypatch):
    data = need_data(load_dependency_treebank, split="files")
    mod = _load_example()
    monkeypatch.setattr(mod, "load_dependency_treebank", lambda *a, **k: data)
    out_file = tmp_path / "parses.conllu"
    parser = mod.main(["--n-train", "80", "--n-test", "60", "--sentence",
                       "The dog barks .", "--conllu", str(out_file),
                       "--save", str(tmp_path / "parser.npz")])
    out = capsys.readouterr().out
    # UAS without punctuation on these 60 sentences: ~0.74 with gold tags, a little
    # less with the tagger's; every word attached to the next one: ~0.3
    gold = float(re.search(r"gold tags: ([0-9.]+) without", out).group(1))
    tagged = float(re.search(r"predicted tags: ([0-9.]+) without", out).group(1))
    assert gold > 0.68 and tagged > 0.6
    assert "sentences/s" in out and "Parse:" in out
    lines = out.split("Parse:\n", 1)[1].splitlines()[:4]
    assert [line.split()[1] for line in lines] == ["The", "dog", "barks", "."]
    written = read_conllu(out_file)
    assert written.heads == parser.predict(data[2][:60])
    assert structsvm.load(tmp_path / "parser.npz").predict(data[2][:5]) == \
        parser.predict(data[2][:5])
