"""Encoded outputs of the binary structure.

The truth and every labelling are arrays of ȳ_i ∈ {−1, +1} (int8), one per example.
The ROC area's most violated output is no labelling of the examples but of the
positive-negative pairs (:class:`PairSwaps`); like every output it enters Φ through
one coefficient per example, so Φ(X̄, ·) = κ Σ_i coef_i x_i holds for both kinds and
the 1-slack oracle's Σ δΦ is one product with the data, never a sum over pairs.
"""
from __future__ import annotations

import numpy as np

from ...protocols import LazyOutputs

__all__ = ["PairSwaps"]


class PairSwaps(LazyOutputs):
    r"""A labelling of the positive-negative pairs of a data set, stored per example.

    For P positives and N negatives of n examples, a pair labelling c̄ sets
    c_ij = −1 for the pairs (i positive, j negative) it ranks the wrong way round
    ("swapped") and +1 for the others. Its constraint against the truth (every pair
    right) is

    .. math::

        w \cdot \frac{1}{PN} \sum_{(i,j)\ \mathrm{swapped}} (x_i - x_j)
        \;\ge\; \Delta(Y, \bar c) - \xi, \qquad
        \Delta(Y, \bar c) = \frac{\#\mathrm{swapped}}{PN},

    Joachims' (2005) ROC-area formulation normalised so that every pair asks for a
    margin w·(x_i − x_j) ≥ 1, as every example does under the other losses. With
    sw_i the number of swapped pairs example i is in, the difference is
    Σ_i y_i sw_i x_i / (PN) = κ Σ_i (y_i − coef_i) x_i for the map's κ = 1/(2n) and

    .. math::

        \mathrm{coef}_i = y_i \left(1 - \frac{2 n\, sw_i}{P N}\right),

    so the output is the sequence of these coefficients (``np.asarray`` gives them
    as an array).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The true labels, ±1.
    swapped : ndarray of int, shape (n_samples,)
        sw_i: swapped pairs example i is in.

    Attributes
    ----------
    n_swapped : int
        Number of swapped pairs, Σ of ``swapped`` over the positives.
    n_pairs : int
        P·N.
    coef : ndarray of shape (n_samples,)
    """

    def __init__(self, y, swapped):
        y = np.asarray(y).reshape(-1)
        swapped = np.asarray(swapped, dtype=np.int64).reshape(-1)
        if y.shape != swapped.shape:
            raise ValueError(f"PairSwaps: {y.size} labels but {swapped.size} counts")
        pos = y > 0
        n_pos, n_neg = int(pos.sum()), int(y.size - pos.sum())
        self.y = np.where(pos, 1, -1).astype(np.int8)
        self.swapped = swapped
        self.n_pairs = n_pos * n_neg
        self.n_swapped = int(swapped[pos].sum())
        if int(swapped[~pos].sum()) != self.n_swapped or np.any(swapped < 0) or \
                np.any(swapped[pos] > n_neg) or np.any(swapped[~pos] > n_pos):
            raise ValueError("PairSwaps: the counts are not those of a pair labelling")
        ratio = 2.0 * y.size / self.n_pairs if self.n_pairs else 0.0
        self.coef = self.y * (1.0 - ratio * swapped)

    def __len__(self):
        return self.coef.shape[0]

    def _item(self, i):
        return float(self.coef[i])

    def __array__(self, dtype=None, copy=None):
        return self.coef.astype(float if dtype is None else dtype, copy=True)

    def __repr__(self):
        return f"PairSwaps(n_swapped={self.n_swapped}, n_pairs={self.n_pairs})"
