"""The alignment loss and alignment_scores: hand-computed answers, the batched loss
against the loss of one pair, errors."""
import numpy as np
import pytest

from structsvm.structures.alignment import AlignmentLoss
from structsvm.structures import get_loss
from structsvm.structures.alignment import alignment_scores


def test_known_answers():
    loss = get_loss("alignment")
    assert isinstance(loss, AlignmentLoss) and loss.decomposition == "cell"
    y = [(0, 0), (1, 1), (2, 2), (3, 4)]
    assert loss(y, y) == 0.0
    assert loss(y, []) == 1.0
    assert loss(y, [(0, 0), (1, 2), (3, 4)]) == 0.5          # 2 of 4 gold pairs found
    assert loss([], [(0, 0)]) == 0.0                          # nothing to miss
    assert loss.max_loss(y) == 1.0 and loss.max_loss(np.zeros((0, 2))) == 0.0
    assert loss.part_cost(y) == 0.25


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(0)
    Y, P = [], []
    for _ in range(50):
        n = int(rng.integers(0, 8))
        Y.append(np.column_stack([np.arange(n), np.sort(rng.choice(10, n, replace=False))]))
        k = int(rng.integers(0, 8))
        P.append(np.column_stack([np.arange(k), np.sort(rng.choice(10, k, replace=False))]))
    loss = AlignmentLoss()
    np.testing.assert_allclose(loss.batch(Y, P), [loss(a, b) for a, b in zip(Y, P)])
    # a pair of one example never counts for another
    assert loss.batch([[(0, 0)], [(1, 1)]], [[(1, 1)], [(0, 0)]]).tolist() == [1.0, 1.0]


def test_alignment_scores():
    Y = [[(0, 0), (1, 1), (2, 3)], [(0, 1)]]
    P = [[(0, 0), (2, 3), (3, 4)], []]
    # 2 of 4 gold pairs recovered; 2 of 3 predicted pairs are gold
    assert alignment_scores(Y, P) == {"Q": 0.5, "precision": 2 / 3}
    assert alignment_scores([[]], [[]]) == {"Q": 1.0, "precision": 1.0}
    with pytest.raises(ValueError, match="2 alignments"):
        alignment_scores(Y, P[:1])
    with pytest.raises(ValueError, match="Example 1"):
        alignment_scores(Y, [P[0], [(0, 1, 2)]])
