"""What an oracle call returns: :class:`Violation`, the most violated constraints of
a set of examples, and the outputs of a chunked call joined into one sequence.

Private: :mod:`structsvm.learners.problem` is the public interface (``Violation`` is exported
there).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..structures.ranking.outputs import LazyOutputs

if TYPE_CHECKING:  # annotations only
    import scipy.sparse as sp

__all__ = ["Violation", "JoinedOutputs"]


@dataclass
class Violation:
    """The most violated constraints of a set of examples under ``w``.

    Attributes
    ----------
    idx : ndarray of int
        Example indices.
    y_hat : sequence
        Loss-augmented argmax ŷ_i (encoded): a list, or a read-only sequence that
        builds its items on access.
    loss : ndarray of shape (len(idx),)
        Δ(y_i, ŷ_i).
    psi : csr_matrix of shape (len(idx), n_features)
        δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i).
    margin : ndarray of shape (len(idx),)
        w·δΦ_i.
    slack : ndarray of shape (len(idx),)
        ξ_i at ``w``: max(0, Δ − w·δΦ) (margin) or max(0, Δ(1 − w·δΦ)) (slack).
    """

    idx: np.ndarray
    y_hat: Sequence
    loss: np.ndarray
    psi: sp.csr_matrix
    margin: np.ndarray
    slack: np.ndarray


class JoinedOutputs(LazyOutputs):
    """The outputs of an oracle call's chunks, one sequence (indexed lazily)."""

    def __init__(self, parts):
        self.parts = parts
        self.ends = np.cumsum([len(p) for p in parts])

    def __len__(self):
        return int(self.ends[-1]) if len(self.ends) else 0

    def _item(self, i):
        k = int(np.searchsorted(self.ends, i, side="right"))
        return self.parts[k][i - (int(self.ends[k - 1]) if k else 0)]

