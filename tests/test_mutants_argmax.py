"""The multiclass decoder (structsvm.structures.multiclass.argmax): behaviours the mutation run
found untested (see docs/testing.md, "Mutation testing")."""
import numpy as np

from structsvm.structures.multiclass.features import MulticlassPotentials
from structsvm.structures.multiclass.argmax import argmax


def test_exclude_leaves_the_callers_scores_alone():
    """Decoders are pure functions of the potentials: excluding a class masks it in a
    copy, never in the caller's array."""
    scores = np.array([[0.0, 2.0, 1.0], [3.0, 1.0, 2.0]])
    kept = scores.copy()
    batch = MulticlassPotentials(scores)
    assert argmax(batch, exclude=[1, 0]).tolist() == [2, 2]
    np.testing.assert_array_equal(scores, kept)
    np.testing.assert_array_equal(batch.scores, kept)
    assert argmax(batch).tolist() == [1, 0]
