"""Max-product against brute force (itertools.product) and its Python reference."""
import itertools

import numpy as np
import pytest

from structsvm.structures.graph.features import GraphPotentials
from structsvm.structures import get_decoder
from structsvm.structures.graph._max_product_jit import max_product_reference
from structsvm.structures.graph.max_product import max_product
from structsvm.structures import HammingLoss


def _forest(rng, n, keep=0.7):
    """Random forest on n nodes: random recursive tree, edges dropped, nodes permuted,
    random edge directions."""
    e = np.array([[rng.integers(0, i), i] for i in range(1, n)], dtype=np.int64)
    e = e.reshape(-1, 2)[rng.random(max(n - 1, 0)) < keep]
    e = rng.permutation(n)[e].reshape(-1, 2)
    flip = rng.random(len(e)) < 0.5
    e[flip] = e[flip][:, ::-1]
    return e


def _loopy(rng, n, p=0.5):
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return np.array(pairs, dtype=np.int64)[rng.random(len(pairs)) < p].reshape(-1, 2)


def _batch(rng, graphs, K, shared_tables):
    """GraphPotentials of several graphs (``graphs``: list of (n_nodes, local edges))."""
    sizes = [n for n, _ in graphs]
    n_of = np.concatenate([[0], np.cumsum(sizes)])
    e_of = np.concatenate([[0], np.cumsum([len(e) for _, e in graphs])])
    edges = np.concatenate([e + n_of[i] for i, (_, e) in enumerate(graphs)]).reshape(-1, 2)
    E = len(edges)
    if shared_tables:
        tables = rng.normal(size=(2, K, K))
        edge_table = rng.integers(0, 2, size=E)
    else:
        tables = rng.normal(size=(E, K, K))
        edge_table = np.arange(E)
    return GraphPotentials(rng.normal(size=(n_of[-1], K)), n_of, edges, e_of, tables,
                           edge_table)


def _brute(pot, extra=None):
    """Best labelling of a one-graph batch by itertools.product over all labellings."""
    n, K = pot.unary.shape
    best, best_val = None, -np.inf
    for y in itertools.product(range(K), repeat=n):
        y = np.array(y)
        val = pot.score(y) + (0.0 if extra is None else extra(y))
        if val > best_val:
            best, best_val = y, val
    return best, best_val


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("shared", [True, False])
def test_forests_equal_brute_force(seed, shared):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    graphs = []
    for _ in range(5):
        n = int(rng.integers(1, 7))
        graphs.append((n, _forest(rng, n, keep=1.0 if len(graphs) % 2 else 0.6)))
    batch = _batch(rng, graphs, K, shared)
    out = max_product(batch)
    assert out.exact.all() and out.converged.all()
    for i in range(len(batch)):
        best, _ = _brute(batch[i])
        assert np.array_equal(out[i], best)


@pytest.mark.parametrize("seed", range(20))
def test_loss_augmented_forests_equal_brute_force(seed):
    rng = np.random.default_rng(500 + seed)
    K = int(rng.integers(2, 4))
    graphs = [(n, _forest(rng, n)) for n in rng.integers(1, 7, size=4)]
    batch = _batch(rng, graphs, K, shared_tables=bool(seed % 2))
    Y = [rng.integers(0, K, size=n) for n, _ in graphs]
    for loss in (HammingLoss(), HammingLoss(normalize=True)):
        out = max_product(batch.augment(Y, loss))
        for i, y in enumerate(Y):
            best, _ = _brute(batch[i], extra=lambda yy, y=y: loss(y, yy))
            assert np.array_equal(out[i], best)


@pytest.mark.parametrize("seed", range(15))
def test_exclude_on_forests_gives_second_best(seed):
    rng = np.random.default_rng(900 + seed)
    K = int(rng.integers(2, 4))
    graphs = [(n, _forest(rng, n)) for n in rng.integers(1, 5, size=3)]
    batch = _batch(rng, graphs, K, shared_tables=False)
    best = max_product(batch)
    exclude = [b if i % 2 == 0 else rng.integers(0, K, size=len(b))
               for i, b in enumerate(best)]
    got = max_product(batch, exclude=exclude)
    for i in range(len(batch)):
        pot, ex = batch[i], exclude[i]
        want = max((np.array(y) for y in itertools.product(range(K), repeat=len(ex))
                    if not np.array_equal(y, ex)), key=pot.score)
        assert np.array_equal(got[i], want)


def test_loopy_graphs_match_rate_and_reference():
    """Loopy max-product is approximate: report how often it finds the optimum, and
    check the compiled kernel against the plain-Python reference (same schedule)."""
    rng = np.random.default_rng(7)
    n_match = n_graphs = n_conv = 0
    ratios = []
    for _ in range(40):
        K = int(rng.integers(2, 4))
        graphs = [(n, _loopy(rng, n)) for n in rng.integers(3, 7, size=2)]
        batch = _batch(rng, graphs, K, shared_tables=False)
        out = max_product(batch)
        for i in range(len(batch)):
            pot = batch[i]
            ref = max_product_reference(pot.unary, pot.edges, pot.tables, pot.edge_table)
            assert np.array_equal(ref[0], out[i])
            assert (ref[1], ref[2], ref[3]) == (out.exact[i], out.converged[i],
                                                out.n_iter[i])
            best, best_val = _brute(pot)
            n_graphs += 1
            n_match += np.array_equal(out[i], best)
            n_conv += bool(out.converged[i])
            ratios.append(pot.score(out[i]) - best_val)
    print(f"\nloopy max-product: optimum found on {n_match}/{n_graphs} graphs, converged "
          f"on {n_conv}/{n_graphs}, worst score shortfall {-min(ratios):.3g}")
    assert max(ratios) <= 1e-9  # never better than the optimum (scores are consistent)
    assert n_match >= n_graphs // 2  # a sanity floor far below what it reaches


def test_reference_on_forests_matches_kernel():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, K = int(rng.integers(1, 9)), int(rng.integers(1, 4))
        e = _forest(rng, n)
        pot = _batch(rng, [(n, e)], K, shared_tables=True)
        ref = max_product_reference(pot.unary, pot.edges, pot.tables, pot.edge_table)
        assert np.array_equal(ref[0], max_product(pot)[0]) and ref[1]


def test_registered_and_validates():
    dec = get_decoder("max_product")
    assert dec.structure == "graph"
    p = GraphPotentials(np.zeros((2, 2)), [0, 2], np.array([[0, 0]]), [0, 1],
                        np.zeros((1, 2, 2)), np.array([0]))
    with pytest.raises(ValueError, match="Graph 0: edge 0 .* self-loop"):
        max_product(p)
    p = GraphPotentials(np.full((2, 2), np.nan), [0, 2], np.zeros((0, 2)), [0, 0],
                        np.zeros((0, 2, 2)), np.zeros(0))
    with pytest.raises(ValueError, match="NaN"):
        max_product(p)
    with pytest.raises(TypeError, match="graph potentials"):
        max_product(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="damping"):
        max_product(GraphPotentials(np.zeros((1, 2)), [0, 1], np.zeros((0, 2)), [0, 0],
                                    np.zeros((0, 2, 2)), np.zeros(0)), damping=1.0)


def test_cycle_reports_not_exact():
    # a triangle with strong disagreeing pairwise scores: frustrated, loopy
    tables = np.array([[[0.0, 2.0], [2.0, 0.0]]])
    p = GraphPotentials(np.array([[0.1, 0.0], [0.0, 0.0], [0.0, 0.0]]), [0, 3],
                        np.array([[0, 1], [1, 2], [0, 2]]), [0, 3], tables,
                        np.zeros(3, dtype=int))
    out = max_product(p, max_iter=20)
    assert not out.exact[0]
    best, best_val = _brute(p)
    assert p.score(out[0]) <= best_val + 1e-12
