"""The training Problem and the one oracle every learner shares.

Notation (Tsochantaridis et al. 2005; Joachims, Finley & Yu 2009)
---------------------------------------------------------------
For an example (x_i, y_i) and a weight vector w,

    δΦ_i(y) = Φ(x_i, y_i) − Φ(x_i, y)
    margin rescaling:  ŷ_i = argmax_y  Δ(y_i, y) − w·δΦ_i(y),     ξ_i = max(0, Δ − w·δΦ)
    slack rescaling:   ŷ_i = argmax_y  Δ(y_i, y) (1 − w·δΦ_i(y)),  ξ_i = max(0, Δ(1 − w·δΦ))

and the primal objective reported by every learner is ½‖w‖² + C Σ_i ξ_i (the
convention of scikit-learn's LinearSVC).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .protocols import Decoder, check_enumerable

__all__ = ["Problem", "Violation", "weighted_row_sum"]


# --------------------------------------------------------------------------- violation
@dataclass
class Violation:
    """The most violated constraints of a set of examples under ``w``.

    Attributes
    ----------
    idx : ndarray of int
        Example indices.
    y_hat : list
        Loss-augmented argmax ŷ_i (encoded).
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
    y_hat: list
    loss: np.ndarray
    psi: sp.csr_matrix
    margin: np.ndarray
    slack: np.ndarray


# --------------------------------------------------------------------------- problem
def _chunks(idx, n_chunks):
    return [c for c in np.array_split(idx, n_chunks) if len(c)]


@dataclass
class Problem:
    """A structural-SVM training problem: encoded data, plugins and C.

    Parameters
    ----------
    Xe : encoded inputs (``feature_map.encode_inputs(X)``), indexable by position.
    Ye : list of encoded outputs.
    feature_map : FeatureMap (fitted).
    decoder : Decoder
    loss : Loss
    C : float
        Weight of the summed slacks in ½‖w‖² + C Σ ξ_i.
    rescaling : {"margin", "slack"}
    n_jobs : int or None
        Oracle parallelism (joblib, thread-preferring, so Dask/Ray back-ends apply
        through ``joblib.parallel_config``).
    """

    Xe: Any
    Ye: list
    feature_map: Any
    decoder: Decoder
    loss: Any
    C: float
    rescaling: str = "margin"
    n_jobs: int | None = None
    _truth_cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.check_enumeration()

    def check_enumeration(self):
        """Refuse up front what would enumerate an infeasible output space.

        Slack rescaling, a loss that does not decompose over the decoder's parts and
        the exhaustive decoder enumerate every output of every example; each
        example's ``output_space_sizes()`` must then be at most
        :data:`~structsvm.protocols.MAX_ENUMERATED_OUTPUTS`.

        Raises
        ------
        structsvm.protocols.EnumerationError
            Naming the sample, its number of outputs and the alternative.
        """
        fm = type(self.feature_map)
        if self.rescaling == "slack":
            why, alt = "rescaling='slack'", "Use rescaling='margin'."
        elif not type(self.loss).decomposable:
            why = f"loss {getattr(self.loss, 'name', type(self.loss).__name__)!r}, " \
                  "which does not decompose over the decoder's parts,"
            alt = f"Use a decomposable loss (e.g. {fm.default_loss!r})."
        elif isinstance(self.decoder, Decoder) and self.decoder.structure == "any":
            why = f"decoder={self.decoder.name!r}"
            alt = f"Use decoder={fm.default_decoder!r}."
        else:
            return
        w = np.zeros(self.n_features)
        check_enumerable(self.feature_map.batch_potentials(self.Xe, w), why, alt)

    @property
    def _fast_differences(self):
        # optional capability of a map: δΦ rows built from the differing parts only
        return bool(getattr(type(self.feature_map), "has_feature_differences", False))

    @property
    def n_samples(self):
        """Number of training examples."""
        return len(self.Ye)

    @property
    def n_features(self):
        """Length of ``w`` (the feature map's ``n_features_``)."""
        return int(self.feature_map.n_features_)

    # Φ(x_i, y_i) of the ground truth never changes: build it once.
    def truth_features(self):
        """CSR matrix of Φ(x_i, y_i) of the ground truth, one row per example (built once)."""
        if "phi" not in self._truth_cache:
            self._truth_cache["phi"] = sp.csr_matrix(
                self.feature_map.joint_features(self.Xe, self.Ye))
        return self._truth_cache["phi"]

    def max_losses(self):
        """``max_loss(y_i)`` of every example, as an array (computed once)."""
        if "max" not in self._truth_cache:
            self._truth_cache["max"] = np.array([self.loss.max_loss(y) for y in self.Ye],
                                                dtype=float)
        return self._truth_cache["max"]

    # ------------------------------------------------------------------ the oracle
    def oracle(self, w, idx=None, *, augment=True):
        """Most violated constraint of each example in ``idx`` under ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        idx : array-like of int, optional
            Examples to query (all by default).
        augment : bool, default=True
            False decodes without the loss (plain prediction; the perceptron's step).

        Returns
        -------
        Violation
        """
        idx = np.arange(self.n_samples) if idx is None else np.asarray(idx, dtype=np.intp)
        parts = self._map_chunks(self._oracle_chunk, w, idx, augment)
        if len(parts) == 1:
            return parts[0]
        return Violation(
            idx=np.concatenate([p.idx for p in parts]),
            y_hat=[y for p in parts for y in p.y_hat],
            loss=np.concatenate([p.loss for p in parts]),
            psi=sp.vstack([p.psi for p in parts], format="csr"),
            margin=np.concatenate([p.margin for p in parts]),
            slack=np.concatenate([p.slack for p in parts]))

    def _decode(self, w, idx, augment=True):
        """(true outputs, potentials, ŷ) of examples ``idx``: loss-augmented or plain."""
        loss = self.loss
        Y = [self.Ye[i] for i in idx]
        batch = self.feature_map.batch_potentials(self.Xe, w, idx)
        if not augment:
            y_hat = self.decoder(batch)
        elif self.rescaling == "slack":
            y_hat = _slack_rescaled_argmax(batch, Y, loss)
        elif loss.decomposable:
            y_hat = self.decoder(batch.augment(Y, loss))
        else:
            y_hat = _enumerated_argmax(batch, Y, loss, slack=False)
        return Y, batch, y_hat

    def _map_chunks(self, func, w, idx, *args):
        """``func(w, chunk, *args)`` over chunks of ``idx`` (joblib when n_jobs > 1)."""
        n_jobs = self.n_jobs if self.n_jobs not in (None, 0) else 1
        if n_jobs == 1 or len(idx) < 64:
            return [func(w, idx, *args)]
        from joblib import Parallel, delayed, effective_n_jobs

        return Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(func)(w, chunk, *args)
            for chunk in _chunks(idx, effective_n_jobs(n_jobs)))

    def _oracle_chunk(self, w, idx, augment):
        fm, loss = self.feature_map, self.loss
        Y, batch, y_hat = self._decode(w, idx, augment)
        if self._fast_differences:
            psi = fm.joint_feature_differences(self.Xe, Y, y_hat, idx)
        else:
            truth = self.truth_features()[idx]
            psi = sp.csr_matrix(truth - fm.joint_features(self.Xe, y_hat, idx))
            psi.eliminate_zeros()
        lo = np.asarray(loss.batch(Y, y_hat), dtype=float)
        margin = np.asarray(psi @ w, dtype=float).ravel()
        if self.rescaling == "slack":
            slack = np.maximum(0.0, lo * (1.0 - margin))
        else:
            slack = np.maximum(0.0, lo - margin)
        return Violation(idx=idx, y_hat=list(y_hat), loss=lo, psi=psi, margin=margin,
                         slack=slack)

    def oracle_sum(self, w):
        """The 1-slack oracle: the most violated constraint aggregated over examples.

        Returns ``(loss_sum, psi_sum, slack)``: Σ_i Δ_i, Σ_i ω_i δΦ_i as a 1×D CSR row
        (ω_i = 1 for margin rescaling, Δ_i for slack rescaling) and the per-example
        slacks ξ_i at ``w``. Maps with ``has_difference_sum`` build Σ ω_i δΦ_i directly
        (``joint_feature_difference_sum``) and the margins come from the potentials'
        scores, so no per-example rows are formed; otherwise it sums
        :meth:`oracle`'s rows.
        """
        fm = self.feature_map
        if self.rescaling == "margin" and getattr(type(fm), "has_aggregate_oracle", False):
            loss_sum, total, slack = fm.aggregate_violation(self.Xe, self.Ye, w, self.loss)
            total = np.asarray(total, dtype=float).ravel()
            nz = np.flatnonzero(total)
            row = sp.csr_matrix((total[nz], nz, [0, nz.size]), shape=(1, total.size))
            return float(loss_sum), row, np.asarray(slack, dtype=float)
        if not getattr(type(fm), "has_difference_sum", False):
            v = self.oracle(w)
            weights = v.loss if self.rescaling == "slack" else np.ones(len(v.idx))
            return float(v.loss.sum()), weighted_row_sum(v.psi, weights), v.slack
        parts = self._map_chunks(self._oracle_sum_chunk, w, np.arange(self.n_samples))
        loss = float(sum(p[0] for p in parts))
        dense = np.sum([p[1] for p in parts], axis=0)
        nz = np.flatnonzero(dense)
        row = sp.csr_matrix((dense[nz], nz, [0, nz.size]), shape=(1, dense.size))
        return loss, row, np.concatenate([p[2] for p in parts])

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
        return float(lo.sum()), np.asarray(total, dtype=float).ravel(), slack

    def primal_objective(self, w, violation=None):
        """½‖w‖² + C Σ_i ξ_i with ξ_i from exact loss-augmented decoding."""
        if violation is None:
            violation = self.oracle(w)
        return 0.5 * float(w @ w) + self.C * float(violation.slack.sum())


def weighted_row_sum(M, weights):
    """Σ_i weights_i M_i as a 1×D CSR row (sorted unique indices), via one bincount."""
    M = sp.csr_matrix(M)
    data = M.data * np.repeat(np.asarray(weights, dtype=float), np.diff(M.indptr))
    dense = np.bincount(M.indices, weights=data, minlength=M.shape[1])
    nz = np.flatnonzero(dense)
    row = sp.csr_matrix((dense[nz], nz, [0, nz.size]), shape=(1, M.shape[1]))
    row.has_canonical_format = True
    return row


def _enumerated_argmax(batch, Y, loss, slack):
    """Loss-augmented argmax by enumeration (non-decomposable losses, slack rescaling)."""
    check_enumerable(batch, "slack rescaling" if slack else
                     f"loss {getattr(loss, 'name', type(loss).__name__)!r}, which does "
                     "not decompose over the decoder's parts,",
                     "Use rescaling='margin'." if slack else "Use a decomposable loss.")
    out = []
    for i, y_true in enumerate(Y):
        pot = batch[i]
        s_true = pot.score(y_true)
        best, best_val = y_true, 0.0
        for y in pot.enumerate():
            d = loss(y_true, y)
            h = s_true - pot.score(y)  # w·δΦ
            val = d * (1.0 - h) if slack else d - h
            if val > best_val:
                best, best_val = y, val
        out.append(best)
    return out


def _slack_rescaled_argmax(batch, Y, loss):
    """Slack rescaling is not decomposable: exact only over enumerable output spaces."""
    return _enumerated_argmax(batch, Y, loss, slack=True)
