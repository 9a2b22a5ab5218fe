"""The scores of a batch of binary examples, as the losses over the whole data set
read them."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...protocols import plugin_name

__all__ = ["BinaryPotentials"]


class BinaryPotentials:
    """Scores of a batch of examples under w, for labels ȳ_i ∈ {−1, +1}.

    With the map's Φ(X̄, Ȳ) = κ Σ_i ȳ_i x_i, the score of example i labelled ȳ_i is
    κ ȳ_i s_i, s_i = w·x_i; ``gains`` are what labelling an example positive rather
    than negative adds to w·Φ, 2κ s_i, the only thing the losses' most violated
    labellings read.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        s_i = w·x_i (the bias feature included).
    scale : float
        κ, the map's factor (1 / 2nR for a data set of n examples).
    """

    structure: ClassVar[str] = "binary"
    enumerable: ClassVar[bool] = True
    # no loss is added to these scores: a loss over the whole data set labels the
    # batch itself (its most_violated)
    augments: ClassVar[tuple] = ()

    def __init__(self, scores, scale):
        self.scores = np.asarray(scores, dtype=float).reshape(-1)
        self.scale = float(scale)

    def __len__(self):
        return self.scores.shape[0]

    def __getitem__(self, i):
        return BinaryPotentials(self.scores[[i]], self.scale)

    @property
    def gains(self):
        """score(+1) − score(−1) of every example: 2κ s_i."""
        return 2.0 * self.scale * self.scores

    def score(self, y):
        """κ ȳ s of one example (a label ±1, or a real coefficient), or the array
        κ ȳ_i s_i of every example for a labelling ``y`` of the batch."""
        if np.ndim(y) == 0:
            if len(self) != 1:
                raise ValueError("score(y) with one label needs a batch of one example")
            return float(self.scale * float(y) * self.scores[0])
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.size != len(self):
            raise ValueError(f"score: {len(self)} examples but {y.size} labels")
        return self.scale * y * self.scores

    def output_space_sizes(self):
        """Two labels for every example."""
        return [2] * len(self)

    def enumerate(self):
        """The two labels, −1 and +1 (for the exhaustive decoder)."""
        return iter((-1, 1))

    def augment(self, Y, loss):
        """Not available (raises TypeError): a binary batch adds no loss to its
        scores; a loss over the whole data set labels all examples at once."""
        raise TypeError(f"a binary batch adds no loss to its scores: loss "
                        f"{plugin_name(loss)!r} decomposes over "
                        f"{type(loss).decomposition}; the binary structure trains the "
                        "losses over the whole data set (error_rate, f1, prbep, "
                        "precision_at_k, recall_at_k, roc_auc)")
