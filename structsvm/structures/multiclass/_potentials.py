"""The class scores of a multiclass batch, and their loss augmentation."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

__all__ = ["MulticlassPotentials"]


class MulticlassPotentials:
    """Class scores of a batch: ``scores[i, k] = w·Φ(x_i, k)``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
    loss_tables : weakref.WeakKeyDictionary, optional
        Where :meth:`augment` keeps the table Δ(c, k) of each loss it has seen (the
        fitted map passes its own: the table is then built once per training run,
        not once per batch).
    """

    structure: ClassVar[str] = "multiclass"
    enumerable: ClassVar[bool] = True
    augments: ClassVar[tuple] = ("position", "whole")  # the loss decompositions augment adds

    def __init__(self, scores, loss_tables=None):
        self.scores = np.asarray(scores, dtype=float)
        self.loss_tables = loss_tables

    def __len__(self):
        return self.scores.shape[0]

    def __getitem__(self, i):
        return MulticlassPotentials(self.scores[i:i + 1], self.loss_tables)

    def score(self, y):
        """Score of class ``y`` (one example) or of ``Y[i]`` for every example."""
        if np.ndim(y) == 0:
            if len(self) != 1:
                raise ValueError("score(y) with one label needs a batch of one example")
            return float(self.scores[0, int(y)])
        y = np.asarray(y, dtype=np.intp)
        return self.scores[np.arange(len(self)), y]

    def output_space_sizes(self):
        """Number of classes, for every example."""
        return [int(self.scores.shape[1])] * len(self)

    def enumerate(self):
        """Every class index (for the exhaustive decoder)."""
        return iter(range(self.scores.shape[1]))

    def augment(self, Y, loss):
        """Scores plus Δ(y_i, k) for every class k (any loss: the table is small)."""
        n, k = self.scores.shape
        Y = np.asarray(Y, dtype=np.intp).reshape(n)
        table = self._loss_table(loss, k)
        return MulticlassPotentials(self.scores + table[Y], self.loss_tables)

    def _loss_table(self, loss, k):
        # Δ(y, ·) depends on y only: one row per class (the table is k × k)
        cache = self.loss_tables
        try:
            table = None if cache is None else cache.get(loss)
        except TypeError:  # a loss that cannot be weakly referenced or hashed
            cache, table = None, None
        if table is not None and table.shape == (k, k):
            return table
        if type(loss).decomposition == "position":
            rows = [np.asarray(loss.part_losses(c, k), dtype=float).reshape(k)
                    for c in range(k)]
        else:
            rows = [[loss(c, j) for j in range(k)] for c in range(k)]
        table = np.asarray(rows, dtype=float).reshape(k, k)
        table.setflags(write=False)
        if cache is not None:
            cache[loss] = table
        return table

