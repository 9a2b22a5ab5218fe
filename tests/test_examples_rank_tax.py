"""Smoke tests of the taxonomy, clickthrough and zero-shot examples on small slices."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_taxonomy_example_on_a_qc_slice(need_data):
    from structsvm.corpora import load_qc

    need_data(load_qc)
    res = load_example("taxonomy").qc(C=1.0, max_train=400)
    assert set(res) == {"flat multiclass", "taxonomy, zero-one loss",
                        "taxonomy, tree-distance loss"}
    for acc, dist, _ in res.values():
        # 0.61-0.63 on this slice; 50 classes: chance is 0.02, and the most frequent
        # class of the 400 training questions (HUM:ind) is 0.12 of the test set
        assert acc > 0.58
        # QC is a 2-level tree: a mistake is 2 (sibling) or 4 (other coarse class) apart,
        # so the mean tree distance lies between 2 and 4 times the error rate
        assert 2 * (1 - acc) - 1e-9 <= dist <= 4 * (1 - acc) + 1e-9


def test_clickthrough_example_learns_from_clicks():
    ex = load_example("clickthrough_ranking")
    X, Y, Xt, Yt, _ = ex.load(synthetic=True)
    curve, n_pairs = ex.run(X[:60], Y[:60], Xt[:30], Yt[:30], rounds=2, sessions=3)
    # NDCG@10 0.39 for the initial random ranking, 0.87-0.88 after learning from clicks
    assert n_pairs > 0 and curve[-1] > 0.8 and curve[-1] > curve[0] + 0.4


def test_zero_shot_example_synthetic_part():
    ex = load_example("zero_shot")
    X, y, attrs = ex.make_attribute_data()
    unseen = ("class3", "class7", "class10")
    gen, std = ex.zero_shot_accuracy(X, y, attrs, unseen)
    # a right answer among all classes is also right among the unseen ones only
    assert gen <= std
    # 0.68 among the 3 unseen classes (chance 1/3) and 0.35 among all 12 (chance 1/12)
    assert std > 0.6 and gen > 0.3


def test_unbiased_ranking_example_on_synthetic_queries(tmp_path):
    ex = load_example("unbiased_ranking")
    X, Y, Xt, Yt, _, column = ex.load(synthetic=True)
    res = ex.run(X[:80], Y[:80], Xt[:40], Yt[:40], column, eta=1.0, sessions=200,
                 interventions=40_000, test_sessions=200, save_log=tmp_path / "c.jsonl",
                 plot=tmp_path / "p.png")
    # propensities of 40,000 swap sessions: within 15% of (1/k) (measured: 8% at most)
    assert np.all(np.abs(res["propensities"] / res["truth"] - 1) <= 0.15)
    # NDCG@10 on this slice: logger (one feature) 0.62, naive 0.81, propensity 0.93,
    # true grades 0.93: the propensity weights recover what the position bias costs
    assert res["Propensity SVM-Rank"] > res["naive click SVM-Rank"] + 0.03
    assert res["SVM-Rank on the true grades"] - res["Propensity SVM-Rank"] < 0.05
    for name in ("naive click SVM-Rank", "Propensity SVM-Rank"):
        est, true = res["ips " + name]
        assert est.lower <= true <= est.upper
    assert (tmp_path / "c.jsonl").stat().st_size > 0 and (tmp_path / "p.png").exists()
