"""Max-product's second-best search (structsvm.structures.graph.max_product): behaviours the
mutation run found untested (see docs/testing.md, "Mutation testing")."""
import itertools

import numpy as np
import pytest

from structsvm.structures.graph.features import GraphPotentials
from structsvm.structures.graph.max_product import max_product
from test_max_product import _batch, _forest


@pytest.mark.parametrize("seed", range(6))
def test_exclude_with_tiny_potentials_gives_second_best(seed):
    """The clamping penalty must dominate whatever the scale of the potentials: with
    scores far below 1 the excluded labelling is still avoided exactly."""
    rng = np.random.default_rng(40 + seed)
    K = int(rng.integers(2, 4))
    graphs = [(n, _forest(rng, n)) for n in rng.integers(2, 5, size=2)]
    big = _batch(rng, graphs, K, shared_tables=False)
    batch = GraphPotentials(big.unary * 1e-3, big.node_offsets, big.edges,
                            big.edge_offsets, big.tables * 1e-3, big.edge_table)
    best = max_product(batch)
    got = max_product(batch, exclude=best)
    for i in range(len(batch)):
        pot, ex = batch[i], best[i]
        want = max((np.array(y) for y in itertools.product(range(K), repeat=len(ex))
                    if not np.array_equal(y, ex)), key=pot.score)
        assert not np.array_equal(got[i], ex)
        assert pot.score(got[i]) == pytest.approx(pot.score(want), abs=1e-12)
