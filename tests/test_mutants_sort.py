"""The ranking decoder's helpers (structsvm.structures.ranking.sort): behaviours the mutation run
found untested (see docs/testing.md, "Mutation testing")."""
import numpy as np
import pytest

from structsvm.structures.ranking.sort import violated_pair_counts


def _brute(scores, thresholds, grades, offsets):
    up, down = np.zeros(len(scores), int), np.zeros(len(scores), int)
    for q in range(len(offsets) - 1):
        docs = range(offsets[q], offsets[q + 1])
        for a in docs:
            for b in docs:
                if grades[a] > grades[b] and scores[a] < thresholds[b]:
                    up[a] += 1
                    down[b] += 1
    return up, down


def test_counts_equal_brute_force_and_queries_stay_apart():
    rng = np.random.default_rng(3)
    s = rng.normal(size=9)
    t, g = s + 0.5, rng.integers(0, 3, size=9).astype(float)
    for offsets in ([0, 9], [0, 4, 9], [0, 0, 3, 3, 9]):
        up, down = violated_pair_counts(s, t, g, offsets)
        ref_up, ref_down = _brute(s, t, g, offsets)
        np.testing.assert_array_equal(up, ref_up)
        np.testing.assert_array_equal(down, ref_down)


@pytest.mark.parametrize("offsets", [[], [1, 9], [0, 8], [0, 10], [0, 5, 4, 9]])
def test_offsets_that_do_not_rise_from_0_to_n_are_refused(offsets):
    s = np.arange(9.0)
    with pytest.raises(ValueError, match="offsets must increase from 0 to 9"):
        violated_pair_counts(s, s + 1, s, offsets)
