"""Smoke test of examples/ud_dependency_parsing.py on a slice of UD English EWT: it
prints UAS and LAS, writes the parses as CoNLL-U with the test file's layout, and
saves a parser that loads back."""
import importlib.util
import re
from pathlib import Path

import pytest

import structsvm
from structsvm.corpora import load_ud_english_ewt
from structsvm.structures.dependency import read_conllu

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ud_dependency_parsing.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("ud_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("order", [[], ["--second-order", "--decoder",
                                         "chu_liu_edmonds_one_root"]])
def test_example_on_an_ewt_slice(order, need_data, capsys, tmp_path):
    need_data(load_ud_english_ewt, split="test")
    mod = _load_example()
    out_file = tmp_path / "parses.conllu"
    parser, every, no_punct = mod.main(order + [
        "--n-train", "150", "--n-test", "60", "--max-iter", "6", "--conllu",
        str(out_file), "--save", str(tmp_path / "parser.npz")])
    out = capsys.readouterr().out
    uas, las = (float(v) for v in re.search(r"Test UAS ([0-9.]+), LAS ([0-9.]+)",
                                            out).groups())
    assert (uas, las) == (round(every.uas, 4), round(every.las, 4))
    # 150 training sentences: UAS ~0.7, LAS ~0.65 on these 60; attaching every word
    # to the next one scores ~0.3 UAS
    assert las < uas and uas > 0.6 and las > 0.5
    assert "without punctuation UAS" in out and "loaded back, it parses the same" in out
    test = load_ud_english_ewt(split="test")
    written = read_conllu(out_file)
    assert written.layouts == test.layouts[:60]
    assert [list(zip(h, r)) for h, r in zip(written.heads, written.relations)] == \
        parser.predict(test.sentences[:60])
    assert structsvm.load(tmp_path / "parser.npz").feature_map_.siblings == bool(order)
