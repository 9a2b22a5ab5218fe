"""Encoded sentences: one CSR row of observation features per token, sentences by
offsets; the selections of sentences the oracle and the potentials take."""
from __future__ import annotations

import queue

import numpy as np
import scipy.sparse as sp

from .._ragged import consecutive_run, gather_rows

__all__ = ["EncodedSequences"]


class EncodedSequences:
    """Observation features of a corpus: one CSR row per token, sentences by offsets.

    Parameters
    ----------
    X : csr_matrix of shape (n_tokens, n_input_features)
    offsets : ndarray of int of shape (n_sequences + 1,)
        Sentence i owns rows ``offsets[i]:offsets[i + 1]``.
    shared : tuple (table, rows) or None
        When X's entries are ones and token t's row starts with the columns
        ``table[rows[t]]`` (their entries >= 0, in order), tokens of the same type
        share that part of their unary scores (computed once per type).
    """

    def __init__(self, X, offsets, shared=None):
        self.X = X
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.shared = shared

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        return self.X[self.offsets[i]:self.offsets[i + 1]]

    def select(self, idx=None):
        """Token rows and offsets of the sentences ``idx`` (all, without copy, for None).

        A contiguous run of sentences is a view of the corpus matrix (no copy of
        the data); any other ``idx`` copies the selected rows.
        """
        if idx is None:
            return self.X, self.offsets
        rows, offsets = self.rows(idx)
        return self.take(rows), offsets

    def take(self, rows):
        """The token rows ``rows`` (from :meth:`rows`): a view for a slice."""
        if isinstance(rows, slice):
            X, a, b = self.X, rows.start, rows.stop
            ptr = X.indptr[a:b + 1]
            return sp.csr_matrix((X.data[ptr[0]:ptr[-1]], X.indices[ptr[0]:ptr[-1]],
                                  ptr - ptr[0]), shape=(b - a, X.shape[1]), copy=False)
        return self.X[rows]

    def rows(self, idx):
        """Token rows of the sentences ``idx`` (a slice when they are contiguous) and
        their offsets within the selection."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            lo, hi = self.offsets[run[0]], self.offsets[run[1]]
            return slice(int(lo), int(hi)), self.offsets[run[0]:run[1] + 1] - lo
        return gather_rows(self.offsets, idx)

    # Scratch vectors of the map's width for the chunked 1-slack oracle, one per
    # concurrent caller (threads), zero between uses; they live as long as the data.
    def _take_scratch(self, n):
        pool = self.__dict__.setdefault("_scratch", queue.SimpleQueue())
        try:
            buf = pool.get_nowait()
        except queue.Empty:
            return np.zeros(n)
        return buf if buf.size == n else np.zeros(n)

    def _give_scratch(self, buf):
        self._scratch.put(buf)

    def __getstate__(self):
        # scratch vectors and caches stay in this process
        return {"X": self.X, "offsets": self.offsets}
