"""The 1-slack oracle: the most violated constraint summed over the examples
(:meth:`OneSlackOracle.oracle_sum`), and sums of sparse rows in a fixed order.

Private: :class:`structsvm.learners.problem.Problem` is the public interface; it inherits
:class:`OneSlackOracle`, whose methods use the problem's data, plugins, ``oracle``
and ``_map_chunks`` (chunk methods are run by name, on worker copies too).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..protocols import capability

__all__ = ["OneSlackOracle", "weighted_row_sum", "tree_sum", "as_row"]


class OneSlackOracle:
    """The 1-slack oracle of a :class:`~structsvm.learners.problem.Problem` (a base class of it)."""

    def oracle_sum(self, w, dense=False):
        """The 1-slack oracle: the most violated constraint aggregated over examples.

        Returns ``(loss_sum, psi_sum, slack)``: Σ_i Δ_i, Σ_i ω_i δΦ_i as a 1×D CSR row
        (ω_i = 1 for margin rescaling, Δ_i for slack rescaling) and the per-example
        slacks ξ_i at ``w``. With ``dense=True``, ``psi_sum`` is the dense vector of
        length D where the map computes it densely in one pass (no sparse row is
        built: its constructor costs more than such a round on a small problem), a
        CSR row otherwise. Maps with ``has_aggregate_oracle`` compute it themselves
        when the problem's decoder is the map's default one
        (in chunks when they also have ``has_chunked_aggregate``); maps with
        ``has_difference_sum`` build Σ ω_i δΦ_i per chunk directly
        (``joint_feature_difference_sum``), the margins coming from the potentials'
        scores, so no per-example rows are formed; otherwise it sums :meth:`oracle`'s
        rows. Chunk sums are added as sparse rows in chunk order.
        """
        fm = self.feature_map
        idx = np.arange(self.n_samples)
        if self.rescaling == "margin" and self._map_aggregates():
            if capability(fm, "has_chunked_aggregate"):
                parts = self._map_chunks("_aggregate_chunk", w, idx)
            elif dense:
                loss_sum, total, slack = self.feature_map.aggregate_violation(
                    self.Xe, self.Ye, w, self.loss)
                if not sp.issparse(total):
                    return (float(loss_sum), np.asarray(total, dtype=float).ravel(),
                            np.asarray(slack, dtype=float))
                parts = [(float(loss_sum), as_row(total), np.asarray(slack, dtype=float))]
            else:
                parts = [self._aggregate_chunk(w, idx)]
        elif capability(fm, "has_difference_sum"):
            parts = self._map_chunks("_oracle_sum_chunk", w, idx)
        else:
            v = self.oracle(w)
            weights = v.loss if self.rescaling == "slack" else np.ones(len(v.idx))
            return float(v.loss.sum()), weighted_row_sum(v.psi, weights), v.slack
        loss = 0.0
        for p in parts:
            loss += p[0]
        return loss, tree_sum([p[1] for p in parts]), np.concatenate([p[2] for p in parts])

    def aggregates_in_one_pass(self):
        """Whether :meth:`oracle_sum` is the map's own margin-rescaled 1-slack oracle
        run over all examples in one pass (e.g. Joachims' O(n log n) ranking oracle),
        so that it forms no per-example rows."""
        return (self.rescaling == "margin" and self._map_aggregates()
                and not capability(type(self.feature_map), "has_chunked_aggregate"))

    def _map_aggregates(self):
        """Whether the map's own 1-slack oracle applies: it has one, and decodes with
        the map's default decoder, the one it implements (another decoder — the
        exhaustive one, a user's — takes the generic path)."""
        fm = type(self.feature_map)
        if not capability(fm, "has_aggregate_oracle"):
            return False
        from ..structures.decoders import get_decoder

        return self.decoder.func is get_decoder(fm.default_decoder).func

    def _aggregate_chunk(self, w, idx):
        whole = len(idx) == self.n_samples  # the map's one-pass path, dense sum
        loss_sum, total, slack = self.feature_map.aggregate_violation(
            self.Xe, self.Ye, w, self.loss, *(() if whole else (idx,)))
        return float(loss_sum), as_row(total), np.asarray(slack, dtype=float)

    def _oracle_sum_chunk(self, w, idx):
        fm, loss = self.feature_map, self.loss
        Y, batch, y_hat = self._decode(w, idx)
        lo = np.asarray(loss.batch(Y, y_hat), dtype=float)
        margin = np.asarray(batch.score(Y), dtype=float) - np.asarray(batch.score(y_hat),
                                                                       dtype=float)
        if self.rescaling == "slack":
            weights, slack = lo, np.maximum(0.0, lo * (1.0 - margin))
        else:
            weights, slack = np.ones(len(idx)), np.maximum(0.0, lo - margin)
        total = fm.joint_feature_difference_sum(self.Xe, Y, y_hat, idx, weights)
        return float(lo.sum()), as_row(total), slack


def tree_sum(rows):
    """Σ of sparse rows by pairwise merges (a fixed order: the chunk layout's)."""
    while len(rows) > 1:
        rows = [rows[k] + rows[k + 1] if k + 1 < len(rows) else rows[k]
                for k in range(0, len(rows), 2)]
    return sp.csr_matrix(rows[0])


def as_row(total):
    """A 1×D CSR row (sorted columns, no zeros) of a dense vector or sparse row."""
    if sp.issparse(total):
        if total.format == "csr" and total.shape[0] == 1 and total.has_canonical_format:
            return total
        row = sp.csr_matrix(total, dtype=float).reshape(1, -1)
        row.sum_duplicates()
        row.eliminate_zeros()
        return row
    total = np.asarray(total, dtype=float).ravel()
    nz = np.flatnonzero(total)
    row = sp.csr_matrix((total[nz], nz, [0, nz.size]), shape=(1, total.size))
    row.has_canonical_format = True
    return row


def weighted_row_sum(M, weights):
    """Σ_i weights_i M_i as a 1×D CSR row (sorted unique indices), via one bincount."""
    M = sp.csr_matrix(M)
    data = M.data * np.repeat(np.asarray(weights, dtype=float), np.diff(M.indptr))
    dense = np.bincount(M.indices, weights=data, minlength=M.shape[1])
    nz = np.flatnonzero(dense)
    row = sp.csr_matrix((dense[nz], nz, [0, nz.size]), shape=(1, M.shape[1]))
    row.has_canonical_format = True
    return row
