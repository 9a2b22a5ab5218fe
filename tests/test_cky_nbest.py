"""k-best CKY against enumeration of every binary tree the grammar allows (scores
and order; ties stated), and through the estimator's decoder."""
import numpy as np
import pytest

from structsvm.structures import get_decoder
from structsvm.structures.grammar.cky import kbest_cky
from test_cky import all_trees, random_problem


def enumerate_parses(p):
    n = p.leaf_scores.shape[0]
    out = []
    for nodes, s in all_trees(p, 0, n, n):
        A = nodes[0][3]
        if p.grammar.root_ok[A]:
            out.append((nodes, s + p.root_scores[A]))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_kbest_cky_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    g, p = random_problem(rng, n, density=float(rng.choice([0.3, 0.7])))
    k = int(rng.integers(1, 9))
    trees, scores = kbest_cky(p, k)[0]
    parses = enumerate_parses(p)
    values = np.array([s for _, s in parses])
    order = np.argsort(-values, kind="stable")[:k]
    assert len(trees) == order.size
    np.testing.assert_allclose(scores, values[order], atol=1e-9)
    np.testing.assert_allclose([p.score(t) for t in trees], scores, atol=1e-9)
    for t, j in zip(trees, order):   # continuous scores: no ties
        assert t.nodes.tolist() == [list(x) for x in parses[j][0]]
    if trees:
        best = get_decoder("cky_exact")(p)[0]
        assert trees[0].nodes.tolist() == best.nodes.tolist()


@pytest.mark.parametrize("seed", range(10))
def test_kbest_cky_with_ties(seed):
    """Integer scores: the scores are the top k of enumeration, the trees distinct,
    and every tree above the k-th score is listed."""
    rng = np.random.default_rng(50 + seed)
    g, p = random_problem(rng, int(rng.integers(2, 5)), density=0.6)
    for name in ("leaf_scores", "span_scores", "rule_scores", "root_scores"):
        setattr(p, name, np.round(getattr(p, name)))
    k = int(rng.integers(1, 12))
    trees, scores = kbest_cky(p, k)[0]
    values = np.array([s for _, s in enumerate_parses(p)])
    want = np.sort(values)[::-1][:k]
    np.testing.assert_allclose(scores, want)
    listed = {tuple(map(tuple, t.nodes.tolist())) for t in trees}
    assert len(listed) == len(trees)
    assert all(tuple(map(tuple, nodes)) in listed
               for nodes, s in enumerate_parses(p) if s > want[-1] + 1e-9)


def test_k_must_be_positive():
    _, p = random_problem(np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        kbest_cky(p, 0)
    assert get_decoder("cky").nbest is not None
