"""The training Problem and the one oracle every learner shares.

Notation (Tsochantaridis et al. 2005; Joachims, Finley & Yu 2009)
---------------------------------------------------------------
For an example (x_i, y_i) and a weight vector w,

    δΦ_i(y) = Φ(x_i, y_i) − Φ(x_i, y)
    margin rescaling:  ŷ_i = argmax_y  Δ(y_i, y) − w·δΦ_i(y),     ξ_i = max(0, Δ − w·δΦ)
    slack rescaling:   ŷ_i = argmax_y  Δ(y_i, y) (1 − w·δΦ_i(y)),  ξ_i = max(0, Δ(1 − w·δΦ))

and the primal objective reported by every learner is ½‖w‖² + C Σ_i ξ_i (the
convention of scikit-learn's LinearSVC).

The problem's parts live in private modules: the oracle's result (``_violation``),
the 1-slack oracle that :class:`Problem` inherits (``_one_slack``) and decoding by
enumeration (``_enumeration``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._enumeration import enumerated_argmax, slack_rescaled_argmax
from ._one_slack import OneSlackOracle, weighted_row_sum
from ._violation import JoinedOutputs, Violation
from ..protocols import Decoder, as_decoder, capability, check_enumerable, plugin_name

__all__ = ["Problem", "Violation", "weighted_row_sum"]


# --------------------------------------------------------------------------- problem
#: examples per chunk at least, and chunks per oracle call at most (see Problem;
#: calls on 2-4 MIN_CHUNK examples get 2 chunks, larger ones chunks of 2 MIN_CHUNK+)
MIN_CHUNK = 128
MAX_CHUNKS = 16
#: calls on fewer examples run in the calling thread when the workers are in other
#: processes (loky, a cluster): each call ships the weights to them
MIN_REMOTE = 512


@dataclass(eq=False)
class Problem(OneSlackOracle):
    """A structural-SVM training problem: encoded data, plugins and C.

    Parameters
    ----------
    Xe : encoded inputs (``feature_map.encode_inputs(X)``), indexable by position.
    Ye : list of encoded outputs.
    feature_map : FeatureMap (fitted).
    decoder : Decoder or callable
        A plain function ``f(batch, exclude=None)`` is taken as a decoder of the
        map's structure.
    loss : Loss
    C : float
        Weight of the summed slacks in ½‖w‖² + C Σ ξ_i.
    rescaling : {"margin", "slack"}
    n_jobs : int or None
        Workers of the oracle (joblib's ``n_jobs``; None: 1, or the ``n_jobs`` of an
        enclosing ``joblib.parallel_config``). The workers are threads unless a
        ``joblib.parallel_config(backend=...)`` names another backend ("loky"
        processes, "dask", "ray"), or decoding runs in Python (slack rescaling, a
        loss that does not decompose, enumeration), where processes are preferred.
    chunk_size : int or None
        Examples per chunk of an oracle call, at least (None: ``max(256,
        ceil(m / 16))`` for a call on m examples, and the number of chunks rounded
        down to 2 or a multiple of 4, but 2 chunks of at least 128 for a call on
        256-511 examples; calls on fewer than 256 examples are one
        chunk: smaller chunks on 2 threads measured no faster than one batch inside
        a fit, see docs/scaling.md). A map with ``example_costs``
        gets chunks of equal summed cost instead of equal size.

    Notes
    -----
    **Parallel oracle.** An oracle call over m examples is split into chunks whose
    boundaries depend on m only (not on ``n_jobs``); each chunk is one batched
    decode, the chunks run on the pool of :mod:`structsvm.learners._parallel` (kept across
    rounds until :meth:`close`) and their results are combined in chunk order. A
    run with any number of workers therefore performs the same floating-point
    operations as a serial run: the models are identical. The 1-slack sum
    Σ_i δΦ_i is added chunk by chunk as sparse rows (a map with
    ``has_chunked_aggregate`` builds each chunk's row in time proportional to the
    chunk); no dense n × D matrix is formed. Workers in another process receive
    the encoded data once (:meth:`worker_copy`), not every round.
    """

    Xe: Any
    Ye: list
    feature_map: Any
    decoder: Decoder
    loss: Any
    C: float
    rescaling: str = "margin"
    n_jobs: int | None = None
    chunk_size: int | None = None
    _truth_cache: dict = field(default_factory=dict, repr=False)
    _pool: Any = field(default=None, repr=False)

    def __post_init__(self):
        # a plain function f(batch, exclude=None) decodes the map's structure
        self.decoder = as_decoder(self.decoder, type(self.feature_map).structure)
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
            if self.rescaling == "margin" and self.decoder.augmented is not None:
                return  # the decoder may decode loss-augmented itself (else enumeration)
            why = f"loss {plugin_name(self.loss)!r}, " \
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
        return bool(capability(self.feature_map, "has_feature_differences"))

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
        idx = np.arange(self.n_samples) if idx is None else self._check_idx(idx)
        if not self._fast_differences:
            self.truth_features()  # built once here, not by concurrent chunks
        parts = self._map_chunks("_oracle_chunk", w, idx, augment)
        if len(parts) == 1:
            return parts[0]
        return Violation(
            idx=np.concatenate([p.idx for p in parts]),
            y_hat=JoinedOutputs([p.y_hat for p in parts]),
            loss=np.concatenate([p.loss for p in parts]),
            psi=sp.vstack([p.psi for p in parts], format="csr"),
            margin=np.concatenate([p.margin for p in parts]),
            slack=np.concatenate([p.slack for p in parts]))

    def _check_idx(self, idx):
        """Example indices as intp in [0, n) (negatives count from the end, as in
        numpy); an IndexError names the first one out of range (compiled kernels
        behind the oracle do not check bounds)."""
        idx = np.asarray(idx, dtype=np.intp).reshape(-1)
        n = self.n_samples
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"oracle: example index {int(idx[bad][0])} out of range "
                             f"for {n} examples")
        return np.where(idx < 0, idx + n, idx)

    def _decode(self, w, idx, augment=True):
        """(true outputs, potentials, ŷ) of examples ``idx``: loss-augmented or plain."""
        loss = self.loss
        Y = [self.Ye[i] for i in idx]
        batch = self.feature_map.batch_potentials(self.Xe, w, idx)
        if not augment:
            return Y, batch, self.decoder(batch)
        if self.rescaling == "slack":
            return Y, batch, slack_rescaled_argmax(batch, Y, loss)
        # the decoder's own loss-augmented decoding first, then the potentials'
        # augment (a decomposable loss), then enumeration
        y_hat = self.decoder.loss_augmented(batch, Y, loss)
        if y_hat is None:
            y_hat = self.decoder(batch.augment(Y, loss)) if loss.decomposable else \
                enumerated_argmax(batch, Y, loss, slack=False)
        return Y, batch, y_hat

    # ------------------------------------------------------------------ parallel map
    def _chunks(self, idx):
        """Chunks of ``idx``: their boundaries depend on ``len(idx)`` only."""
        m = len(idx)
        # chunks of at least 2 MIN_CHUNK examples, but a call on 2-4 MIN_CHUNK gets
        # two: more chunks cost a serial run their overhead (docs/scaling.md)
        size = self.chunk_size or max(2 * MIN_CHUNK, -(-m // MAX_CHUNKS))
        k = m // size
        if self.chunk_size is None and k < 2 and m >= 2 * MIN_CHUNK:
            k = 2
        if k < 2:
            return [idx]
        if self.chunk_size is None:  # 2, or a multiple of 4: even loads on 2 or 4 workers
            k = 2 if k < 4 else k - k % 4
        cost = self._example_costs()
        if cost is None:
            return np.array_split(idx, k)
        # equal work per chunk: cut where the running cost crosses j/k of the total
        run = np.cumsum(cost[idx])
        cuts = np.searchsorted(run, run[-1] * np.arange(1, k) / k, side="right")
        for j in range(k - 1):  # no chunk empty: 1 <= cut_1 < cut_2 < ... <= m - 1
            cuts[j] = max(cuts[j], cuts[j - 1] + 1 if j else 1)
        for j in range(k - 2, -1, -1):
            cuts[j] = min(cuts[j], cuts[j + 1] - 1 if j < k - 2 else m - 1)
        return np.split(idx, cuts)

    def _example_costs(self):
        """Relative decoding cost of every example (a map's optional
        ``example_costs(Xe)``, e.g. sentence lengths), or None: equal costs."""
        if "cost" not in self._truth_cache:
            f = capability(self.feature_map, "example_costs")
            self._truth_cache["cost"] = None if f is None else \
                np.asarray(f(self.Xe), dtype=float)
        return self._truth_cache["cost"]

    def _workers(self):
        if self.n_jobs == 1:
            return 1
        from joblib import effective_n_jobs

        return effective_n_jobs(self.n_jobs)

    def _python_bound(self):
        # enumeration in this module or in an "any"-structure decoder holds the GIL
        return (self.rescaling == "slack" or not type(self.loss).decomposable
                or self.decoder.structure == "any")

    def _map_chunks(self, method, w, idx, *args):
        """``getattr(self, method)(w, chunk, *args)`` for every chunk of ``idx``, in
        chunk order: in this thread when there is one chunk or one worker, or when
        the workers are in other processes and the call has fewer than
        ``MIN_REMOTE`` examples (the weights would travel for little work); else
        on the pool (created on first use, kept across rounds). A problem with
        fewer than ``MIN_REMOTE`` examples opens no pool: which backend joblib would
        give is known only once the pool is open, and workers in other processes
        would never be used. The chunks are the same wherever they run, so are the
        results."""
        chunks = self._chunks(idx)
        if (len(chunks) > 1 and self._workers() > 1
                and (self._pool is not None or self.n_samples >= MIN_REMOTE)):
            if self._pool is None:
                from ._parallel import ChunkPool

                self._pool = ChunkPool(
                    self, self.n_jobs,
                    prefer="processes" if self._python_bound() else "threads")
                weakref.finalize(self, self._pool.close)
            if self._pool.is_in_process() or len(idx) >= MIN_REMOTE:
                return self._pool.map(method, w, chunks, args)
        func = getattr(self, method)
        return [func(w, c, *args) for c in chunks]

    def worker_copy(self):
        """The copy of this problem a worker in another process receives (once): the
        encoded data and plugins, serial, without caches or pool."""
        return replace(self, n_jobs=1, _truth_cache={}, _pool=None)

    def close(self):
        """Release the oracle's workers (a no-op when it ran serially)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _oracle_chunk(self, w, idx, augment):
        fm, loss = self.feature_map, self.loss
        if self.rescaling == "margin" and capability(fm, "has_fused_oracle"):
            fused = fm.fused_oracle(self.Xe, self.Ye, w, loss, self.decoder, idx, augment)
            if fused is not None:
                y_hat, lo, psi, margin = fused
                return Violation(idx=idx, y_hat=y_hat, loss=lo, psi=psi,
                                 margin=margin, slack=np.maximum(0.0, lo - margin))
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

    def primal_objective(self, w, violation=None):
        """½‖w‖² + C Σ_i ξ_i with ξ_i from exact loss-augmented decoding."""
        if violation is None:
            violation = self.oracle(w)
        return 0.5 * float(w @ w) + self.C * float(violation.slack.sum())

