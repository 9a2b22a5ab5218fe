"""Every python code block of docs/confidence.md runs as written (in order, in one
namespace), on CoNLL-2000."""
import re
from pathlib import Path

import pytest

from structsvm.corpora import load_conll2000

PAGE = Path(__file__).resolve().parents[1] / "docs" / "confidence.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_confidence_page_blocks_run(need_data, tmp_path, monkeypatch, capsys):
    need_data(load_conll2000)
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    namespace = {}
    for k, code in enumerate(blocks):
        exec(compile(code, f"confidence.md block {k + 1}", "exec"), namespace)
    assert len(namespace["best5"][0]) == 5
    assert all(m.shape == (len(x),) for m, x in zip(namespace["margins"],
                                                      namespace["X_te"][:3]))
    assert 0 <= namespace["expected_calibration_error"](
        namespace["np"].concatenate(namespace["probs"]), namespace["right"]) < 0.05
