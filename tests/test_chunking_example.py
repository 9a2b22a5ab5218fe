"""Smoke test of examples/chunking.py on a small slice of CoNLL-2000."""
import importlib.util
from pathlib import Path

from structsvm.corpora import load_conll2000

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "chunking.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("chunking_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_default_call_on_conll_slice(need_data, capsys):
    need_data(load_conll2000)
    model, scores = _load_example().main(["--n-train", "200", "--n-test", "50"])
    out = capsys.readouterr().out
    assert "chunks: precision" in out and "Chunked: He/PRP/" in out and "NP " in out
    assert model.learner_.name == "dual_cd" and model.converged_  # the default call
    # chunk F1 0.904 on these 50 sentences; the most frequent chunk tag of each POS
    # tag (in the 200 training sentences) scores 0.699, tagging every token B-NP 0.097
    assert 0.88 < scores["f1"] <= 1.0


def test_example_runs_a_named_learner(need_data, capsys):
    # a learner named with --learner reaches fit, and learns as well
    need_data(load_conll2000)
    model, scores = _load_example().main(["--n-train", "100", "--n-test", "50",
                                          "--learner", "one_slack", "--max-iter", "8"])
    assert model.learner_.name == "one_slack" and model.n_iter_ <= 8
    # 0.842 on these 50 sentences; the most frequent chunk tag of each POS tag (in the
    # 100 training sentences) scores 0.801, tagging every token B-NP 0.097
    assert 0.82 < scores["f1"] <= 1.0


def test_example_pegasos_runs_its_epochs(need_data, capsys):
    need_data(load_conll2000)
    model, scores = _load_example().main(["--n-train", "100", "--n-test", "50",
                                          "--learner", "pegasos", "--epochs", "10"])
    assert model.n_iter_ == 10 and "Chunked:" in capsys.readouterr().out
    # 0.854 after 10 epochs (0.198 after 2, 0.626 after 6); baselines as above: 0.801
    # for the most frequent chunk tag of each POS tag, 0.097 for B-NP everywhere
    assert 0.82 < scores["f1"] <= 1.0
