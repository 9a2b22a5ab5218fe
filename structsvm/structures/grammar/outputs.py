"""Encoded parse trees: the binarised tree's anchored nodes (what CKY returns, the
span loss compares and the grammar's Φ counts)."""
from __future__ import annotations

import numpy as np

__all__ = ["EncodedTree"]


class EncodedTree:
    """An encoded (binarised) parse tree: anchored nodes in pre-order, and its words.

    Parameters
    ----------
    nodes : ndarray of int64 of shape (2n - 1, 5)
        Rows ``(i, j, k, symbol, rule)``: the node covers words ``[i, j)``, splits at
        ``k`` (−1 for a word), carries grammar symbol ``symbol`` and was built by
        binary rule ``rule`` (−1 for a word or a rule the grammar lacks).
    words : tuple of str or None
        The sentence (so that the tree can be turned back into an ``nltk.Tree``).

    Examples
    --------
    >>> import numpy as np
    >>> t = EncodedTree(np.array([[0, 2, 1, 3, 0], [0, 1, -1, 1, -1],
    ...                           [1, 2, -1, 2, -1]]), ("a", "b"))
    >>> t.n_words, t.root
    (2, 3)
    """

    __slots__ = ("nodes", "words")

    def __init__(self, nodes, words=None):
        self.nodes = np.asarray(nodes, dtype=np.int64).reshape(-1, 5)
        self.words = None if words is None else tuple(words)

    @property
    def n_words(self):
        """Number of words of the sentence (leaves of the binary tree)."""
        return (len(self.nodes) + 1) // 2

    @property
    def root(self):
        """Symbol index of the root node."""
        return int(self.nodes[0, 3])

    def __len__(self):
        return len(self.nodes)

    def __eq__(self, other):
        return isinstance(other, EncodedTree) and np.array_equal(self.nodes, other.nodes)

    __hash__ = None

    def __repr__(self):
        return f"EncodedTree({self.n_words} words, root symbol {self.root})"
