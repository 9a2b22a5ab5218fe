"""Attachment losses between encoded dependency trees: labelled (a word is wrong when
its head or its relation is) and unlabelled (its head only).

An encoded tree of n words holds one code per word, ``relation * (n + 1) + head``
(:func:`structsvm.structures.dependency.encode_tree`; the head alone for trees
without relations). Both losses are sums over the words, so loss-augmented
decoding adds them to the arc scores (with their relations) and runs the ordinary
decoder.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..losses import BaseLoss, HammingLoss

__all__ = ["LabelledAttachmentLoss", "UnlabelledAttachmentLoss"]


class LabelledAttachmentLoss(HammingLoss):
    """Δ(y, ŷ) = the number of words whose head or relation is wrong (1 − LAS, times
    the number of words; divided by it when ``normalize``).

    The Hamming loss over the words' codes: on trees without relations it counts
    wrong heads.

    Parameters
    ----------
    normalize : bool, default=False
        Divide by the number of words.

    Examples
    --------
    >>> from structsvm.structures.dependency import encode_tree
    >>> y = encode_tree([2, 0, 2], [0, 1, 2])
    >>> LabelledAttachmentLoss()(y, encode_tree([2, 0, 2], [0, 1, 0]))
    1.0
    """

    name = "las"

    def __repr__(self):
        return f"LabelledAttachmentLoss(normalize={self.normalize})"


class UnlabelledAttachmentLoss(BaseLoss):
    """Δ(y, ŷ) = the number of words whose head is wrong, whatever the relations (1 −
    UAS, times the number of words; divided by it when ``normalize``).

    Parameters
    ----------
    normalize : bool, default=False
        Divide by the number of words.

    Notes
    -----
    It decomposes over the words (``decomposition = "position"``): the loss of word
    d taking code c (head ``c % (n + 1)``) is ``part_losses(y, L (n + 1))[d - 1,
    c]``, 1 where that head is not y's.

    Examples
    --------
    >>> from structsvm.structures.dependency import encode_tree
    >>> y = encode_tree([2, 0, 2], [0, 1, 2])
    >>> UnlabelledAttachmentLoss()(y, encode_tree([2, 0, 1], [0, 1, 0]))
    1.0
    """

    name = "uas"
    decomposition: ClassVar[str] = "position"

    def __init__(self, normalize=False):
        self.normalize = normalize

    @staticmethod
    def _heads(y):
        c = np.atleast_1d(np.asarray(y, dtype=np.int64)).ravel()
        return c % (c.size + 1)

    def __call__(self, y_true, y_pred):
        a, b = self._heads(y_true), self._heads(y_pred)
        if a.shape != b.shape:
            raise ValueError(f"uas loss: trees of {a.size} and {b.size} words")
        d = float(np.count_nonzero(a != b))
        return d / a.size if self.normalize and a.size else d

    def max_loss(self, y_true):
        """The number of words (1 when normalised)."""
        return 1.0 if self.normalize else float(np.size(y_true))

    def part_losses(self, y_true, n_states):
        """1 where a code's head differs from the true head, shape ``(n_words,
        n_states)`` (``n_states`` = L (n + 1) codes per word)."""
        heads = self._heads(y_true)
        m = heads.size + 1
        if n_states % m:
            raise ValueError(f"uas loss: {n_states} codes per word is no multiple of "
                             f"{m} heads")
        out = (np.arange(n_states)[None, :] % m != heads[:, None]).astype(float)
        if self.normalize and heads.size:
            out /= heads.size
        return out

    def __repr__(self):
        return f"UnlabelledAttachmentLoss(normalize={self.normalize})"
