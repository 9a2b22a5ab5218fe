"""The parallel oracle's pool (structsvm.learners._parallel): behaviours the mutation run found
untested (see docs/testing.md, "Mutation testing")."""
import os

import joblib
import numpy as np

from structsvm.learners._parallel import ChunkPool


class Owner:
    """Shared data of a pool: a scale; its method sums a chunk times the weights."""

    def __init__(self, scale=2.0):
        self.scale = scale

    def compute(self, w, chunk):
        return float(chunk.sum() * self.scale * w.sum())

    def worker_copy(self):
        return Owner(self.scale)


def test_weights_of_a_new_size_replace_the_shared_file_and_close_removes_it():
    """Workers in other processes read the weights from a shared-memory file; weights
    of another size get a new file and the old one is removed at once (not left in
    /dev/shm until the pool closes); close() removes the last one."""
    owner = Owner()
    chunks = np.array_split(np.arange(40), 4)
    pool = ChunkPool(owner, n_jobs=2)
    try:
        with joblib.parallel_config(backend="loky"):
            got3 = pool.map("compute", np.ones(3), chunks)
            assert pool.in_process is False
            first = pool._weights.path
            assert os.path.exists(first)
            got5 = pool.map("compute", np.full(5, 0.5), chunks)
            second = pool._weights.path
            assert second != first and os.path.exists(second)
            assert not os.path.exists(first)
    finally:
        pool.close()
    assert not os.path.exists(second)
    assert got3 == [float(c.sum()) * 2.0 * 3.0 for c in chunks]
    assert got5 == [float(c.sum()) * 2.0 * 2.5 for c in chunks]
