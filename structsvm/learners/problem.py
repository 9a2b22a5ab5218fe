"""The training Problem and the one oracle every learner shares.

Notation (Tsochantaridis et al. 2005; Joachims, Finley & Yu 2009)
---------------------------------------------------------------
For an example (x_i, y_i) and a weight vector w,

    δΦ_i(y) = Φ(x_i, y_i) − Φ(x_i, y)
    margin rescaling:  ŷ_i = argmax_y  Δ(y_i, y) − w·δΦ_i(y),     ξ_i = max(0, Δ − w·δΦ)
    slack rescaling:   ŷ_i = argmax_y  Δ(y_i, y) (1 − w·δΦ_i(y)),  ξ_i = max(0, Δ(1 − w·δΦ))

and the primal objective reported by every learner is ½‖w‖² + C Σ_i ξ_i (the
convention of scikit-learn's LinearSVC).

How the loss enters decides how the oracle decodes (``Loss.decomposition``,
:data:`structsvm.protocols.DECOMPOSITIONS`): the decoder's own loss-augmented
decoding first, then the potentials' ``augment`` (when the batch adds that kind of
loss, its ``augments``), else enumeration of every output of small output spaces.
A loss over the whole data set (``"dataset"``: F1, precision at k, ROC area;
Joachims 2005) makes the labelling of all n examples one output, Ȳ, with
Φ(X, Ȳ) = Σ_i Φ(x_i, ȳ_i): :meth:`Problem.oracle_sum` asks the loss for the most
violated labelling, argmax_Ȳ Δ(Y, Ȳ) + Σ_i w·Φ(x_i, ȳ_i), and the objective has one
slack, ½‖w‖² + C ξ.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from collections.abc import Sequence

from ..protocols import (Decoder, LazyOutputs, as_decoder, capability, check_enumerable,
                         plugin_name)

__all__ = ["Problem", "Violation", "JoinedOutputs", "weighted_row_sum", "tree_sum",
           "check_scale",
           "as_row", "enumerated_argmax", "MIN_CHUNK", "MAX_CHUNKS", "MIN_REMOTE",
           "MIN_CHUNK_PYTHON", "REMOTE_SECONDS", "OPEN_IN_BACKGROUND"]


# --------------------------------------------------------------------------- problem
#: examples per chunk at least, and chunks per oracle call at most (see Problem;
#: calls on 2-4 MIN_CHUNK examples get 2 chunks, larger ones chunks of 2 MIN_CHUNK+)
MIN_CHUNK = 128
MAX_CHUNKS = 16
#: calls on fewer examples run in the calling thread when the workers are in other
#: processes (loky, a cluster): each call ships the weights to them
MIN_REMOTE = 512
#: a map that decodes in Python (``decodes_in_python``: a structure written in
#: Python): examples per chunk at least, and the time a call would take in this
#: thread from which it goes to the workers (processes: such decoding holds the GIL)
MIN_CHUNK_PYTHON = 4
REMOTE_SECONDS = 0.02
#: whether the workers of such a map start in the background (calls run here until
#: they are ready); False waits for them on the first call that would use them
OPEN_IN_BACKGROUND = True


@dataclass(eq=False)
class Problem:
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
        processes, "dask", "ray"), or decoding runs in Python (a map that
        ``decodes_in_python``, a structure written in Python; slack rescaling, a
        loss that does not decompose, enumeration), where processes are preferred.
    chunk_size : int or None
        Examples per chunk of an oracle call, at least (None: ``max(256,
        ceil(m / 16))`` for a call on m examples, and the number of chunks rounded
        down to 2 or a multiple of 4, but 2 chunks of at least 128 for a call on
        256-511 examples; calls on fewer than 256 examples are one
        chunk: smaller chunks on 2 threads measured no faster than one batch inside
        a fit, see docs/scaling.md). A map that ``decodes_in_python`` takes
        :data:`MIN_CHUNK_PYTHON` for 128 (its examples cost milliseconds each). A map
        with ``example_costs`` gets chunks of equal summed cost instead of equal
        size.

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
    _timing: dict = field(default_factory=dict, repr=False)  # seconds per example here

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
        if self._spans_data_set():
            if self.rescaling != "margin":
                raise ValueError(f"loss {plugin_name(self.loss)!r} is a function of the "
                                 "whole data set's labelling: it trains with "
                                 "rescaling='margin' only")
            return
        if self.rescaling == "slack":
            why, alt = "rescaling='slack'", "Use rescaling='margin'."
        elif not self._batch_adds_loss():
            if self.rescaling == "margin" and self.decoder.augmented is not None:
                return  # the decoder may decode loss-augmented itself (else enumeration)
            why = f"loss {plugin_name(self.loss)!r}, " \
                  "which does not decompose over the decoder's parts,"
            alt = f"Use a loss its potentials add (e.g. {fm.default_loss!r})."
        elif isinstance(self.decoder, Decoder) and self.decoder.structure == "any":
            why = f"decoder={self.decoder.name!r}"
            alt = f"Use decoder={fm.default_decoder!r}."
        else:
            return
        w = np.zeros(self.n_features)
        check_enumerable(self.feature_map.batch_potentials(self.Xe, w), why, alt)

    def _spans_data_set(self):
        return type(self.loss).decomposition == "dataset"

    def _batch_adds_loss(self):
        """Whether the map's potentials add the loss themselves: its decomposition is
        among what the batch class ``augments`` (read once, from a batch of one
        example)."""
        if "adds" not in self._truth_cache:
            one = self.feature_map.batch_potentials(self.Xe, np.zeros(self.n_features),
                                                    np.arange(min(1, self.n_samples)))
            self._truth_cache["adds"] = (type(self.loss).decomposition
                                         in capability(type(one), "augments"))
        return self._truth_cache["adds"]

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
        if self._spans_data_set():
            raise TypeError(f"loss {plugin_name(self.loss)!r} is a function of the whole "
                            "data set's labelling: it has no constraint per example, "
                            "only oracle_sum's (learners with trains_dataset_losses, "
                            "such as 'one_slack')")
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
        numpy); an IndexError names the first one out of range (compiled loops
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
        # augment (a loss whose decomposition the batch adds), then enumeration
        y_hat = self.decoder.loss_augmented(batch, Y, loss)
        if y_hat is None:
            y_hat = self.decoder(batch.augment(Y, loss)) if self._batch_adds_loss() \
                else enumerated_argmax(batch, Y, loss, slack=False)
        return Y, batch, y_hat

    # ------------------------------------------------------------------ parallel map
    def _chunks(self, idx):
        """Chunks of ``idx``: their boundaries depend on ``len(idx)`` only."""
        m = len(idx)
        low = MIN_CHUNK_PYTHON if self._decodes_in_python() else MIN_CHUNK
        # chunks of at least 2 MIN_CHUNK examples, but a call on 2-4 MIN_CHUNK gets
        # two: more chunks cost a serial run their overhead (docs/scaling.md)
        size = self.chunk_size or max(2 * low, -(-m // MAX_CHUNKS))
        k = m // size
        if self.chunk_size is None and k < 2 and m >= 2 * low:
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
        from ._parallel import worker_count

        return worker_count(self.n_jobs, self.n_samples)

    def _decodes_in_python(self):
        """Whether the map declares that its decoding runs in Python
        (``decodes_in_python``: a structure written in Python)."""
        return bool(capability(self.feature_map, "decodes_in_python"))

    def _python_bound(self):
        # the map's own decoding, enumeration in this module or in an "any"-structure
        # decoder holds the GIL
        return (self._decodes_in_python() or self.rescaling == "slack"
                or not self._batch_adds_loss() or self.decoder.structure == "any")

    def _map_chunks(self, method, w, idx, *args):
        """``getattr(self, method)(w, chunk, *args)`` for every chunk of ``idx``, in
        chunk order: in this thread when there is one chunk or one worker, or when
        the workers are in other processes and the call has fewer than
        ``MIN_REMOTE`` examples (the weights would travel for little work); else
        on the pool (created on first use, kept across rounds). A problem with
        fewer than ``MIN_REMOTE`` examples opens no pool: which backend joblib would
        give is known only once the pool is open, and workers in other processes
        would never be used. The chunks are the same wherever they run, so are the
        results. A map that decodes in Python: :meth:`_map_python`."""
        if self._decodes_in_python():
            return self._map_python(method, w, idx, args)
        chunks = self._chunks(idx)
        if (len(chunks) > 1 and self._workers() > 1
                and (self._pool is not None or self.n_samples >= MIN_REMOTE)):
            if self._pool is None:
                from ._parallel import ChunkPool

                self._pool = ChunkPool(
                    self, self.n_jobs,
                    prefer="processes" if self._python_bound() else "threads",
                    n_tasks=self.n_samples)
                weakref.finalize(self, self._pool.close)
            if self._pool.is_in_process() or len(idx) >= MIN_REMOTE:
                return self._pool.map(method, w, chunks, args)
        func = getattr(self, method)
        return [func(w, c, *args) for c in chunks]

    def _map_python(self, method, w, idx, args):
        """:meth:`_map_chunks` of a map that decodes in Python: one batch in this
        thread, or, when the call would take at least :data:`REMOTE_SECONDS` here
        and the workers are ready (they start in the background as soon as a call
        here shows that calls take that long; calls run here until then), split
        between this process and the workers: with joblib's default backend (loky)
        ``n_jobs - 1`` worker processes take all shares but the first, which this
        process computes meanwhile, the shares sized to finish together
        (:class:`~._parallel.ProcessShare`); with another backend configured, its
        workers take every chunk. Every example's answer is computed on its own, so
        the results are the same either way."""
        import time

        chunks = self._chunks(idx)
        per_example = self._timing.get("seconds")
        if (len(chunks) > 1 and per_example is not None
                and per_example * len(idx) >= REMOTE_SECONDS and self._workers() > 1):
            pool = self._ready_pool()
            if pool is not None and pool.takes_share:
                return pool.run(method, w, idx, args,
                                lambda part: getattr(self, method)(w, part, *args))
            if pool is not None:
                return pool.map(method, w, chunks, args)
        start = time.perf_counter()
        out = getattr(self, method)(w, idx, *args)
        if len(idx):
            self._timing["seconds"] = per_example = (time.perf_counter() - start) / len(idx)
            if (per_example * len(idx) >= REMOTE_SECONDS and len(chunks) > 1
                    and self._workers() > 1):
                self._ready_pool()  # the next such call may use the workers: start them
        return [out]

    def _ready_pool(self):
        """The workers of a map that decodes in Python once they are ready, else
        None: the first call opens them in a background thread (starting processes
        and sending them the problem takes a second or more); when that fails, a
        warning says why and every call runs here."""
        if self._pool is not None or self._timing.get("no_pool"):
            return self._pool
        opening = self._timing.get("opening")
        if opening is None:
            import threading

            from ._parallel import ChunkPool, ProcessShare, loky_is_active

            if loky_is_active():
                pool = ProcessShare(self, self._workers() - 1)
                start = pool.open
            else:
                pool = ChunkPool(self, self.n_jobs, prefer="processes",
                                 n_tasks=self.n_samples)
                start = pool.is_in_process  # opens it
            box, lock = {}, threading.Lock()

            def open_it():
                try:
                    start()  # starts the workers, sends the problem
                except Exception as exc:  # noqa: BLE001 (reported below)
                    box["error"] = exc
                with lock:  # a problem closed meanwhile: release the workers here
                    box["done"] = True
                    if box.get("closed"):
                        pool.close()

            thread = threading.Thread(target=open_it, name="structsvm-pool", daemon=True)
            thread.start()
            self._timing["opening"] = opening = (pool, thread, box, lock)
            if OPEN_IN_BACKGROUND:
                return None
            thread.join()
        pool, thread, box, _ = opening
        if thread.is_alive():
            return None
        del self._timing["opening"]
        if "error" in box:
            import warnings

            pool.close()
            self._timing["no_pool"] = True
            exc = box["error"]
            # joblib and loky wrap the pickling error, whose last line says what failed
            text = str(exc.__cause__ or exc).strip().strip('"').strip()
            reason = text.splitlines()[-1] if text else type(exc).__name__
            warnings.warn(
                f"n_jobs={self.n_jobs}: the oracle runs in this process: its workers "
                f"could not receive the problem ({reason}). A "
                "structure written in Python reaches worker processes pickled; define "
                "its class in a module they can import (as for saving a model)",
                UserWarning, stacklevel=5)
            return None
        self._pool = pool
        weakref.finalize(self, pool.close)
        return pool

    def worker_copy(self):
        """The copy of this problem a worker in another process receives (once): the
        encoded data and plugins, serial, without pool, with the ground truth's
        features and losses where they are built already (the fit builds Φ(x_i, y_i)
        first, to check its scale; a worker would otherwise build them all again in
        its first call, a pass of a structure's ``joint_feature`` written in Python)."""
        return replace(self, n_jobs=1, _truth_cache=dict(self._truth_cache), _pool=None,
                       _timing={})

    def close(self):
        """Release the oracle's workers (a no-op when it ran serially)."""
        opening = self._timing.pop("opening", None)
        if opening is not None:  # workers still starting: released once started
            pool, _, box, lock = opening
            with lock:
                box["closed"] = True
                if box.get("done"):
                    pool.close()
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

    # ------------------------------------------------------------------ 1-slack
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

        A loss over the whole data set (``decomposition = "dataset"``) labels all
        examples at once (:meth:`dataset_violation`): ``slack`` then holds the one
        slack ξ of the labelling.
        """
        fm = self.feature_map
        idx = np.arange(self.n_samples)
        if self._spans_data_set():
            loss_sum, total, slack = self.dataset_violation(w)
            return loss_sum, (total if dense else as_row(total)), slack
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

    def dataset_violation(self, w):
        """The most violated labelling of the whole data set, for a loss whose
        ``decomposition`` is ``"dataset"`` (Joachims 2005).

        With Φ(X, Ȳ) = Σ_i Φ(x_i, ȳ_i), the constraint of a labelling Ȳ is
        w·(Φ(X, Y) − Φ(X, Ȳ)) ≥ Δ(Y, Ȳ) − ξ; the loss's ``most_violated(batch, Y)``
        returns argmax_Ȳ Δ(Y, Ȳ) + Σ_i score_i(ȳ_i) from the potentials of all
        examples, and gets that labelling back in ``loss(Y, Ȳ)`` as it returned it
        (a list, an array, or a sequence of its own kind).

        Returns
        -------
        loss : float
            Δ(Y, Ȳ).
        psi : ndarray of shape (n_features,) or 1 × n_features CSR row
            Φ(X, Y) − Φ(X, Ȳ) (a sparse row where the map's
            ``joint_feature_difference_sum`` gives one).
        slack : ndarray of shape (1,)
            ξ = max(0, Δ(Y, Ȳ) − w·psi): the one slack of the objective ½‖w‖² + C ξ.
        """
        loss, Y = self.loss, self.Ye
        batch = self.feature_map.batch_potentials(self.Xe, w)
        # the labelling goes back to the loss and the map as the loss made it (an
        # array, or a sequence of its own kind such as a labelling of pairs)
        y_hat = loss.most_violated(batch, Y)
        if not isinstance(y_hat, (Sequence, np.ndarray)):
            y_hat = list(y_hat)
        if len(y_hat) != len(Y):
            raise ValueError(f"loss {plugin_name(loss)!r}: most_violated returned "
                             f"{len(y_hat)} outputs for {len(Y)} examples")
        delta = float(loss(Y, y_hat))
        idx = np.arange(self.n_samples)
        if capability(self.feature_map, "has_difference_sum"):
            psi = self.feature_map.joint_feature_difference_sum(
                self.Xe, Y, y_hat, idx, np.ones(len(Y)))
            # a sparse row stays one (a labelling that differs from the truth on a
            # few examples of a wide data set): no dense vector to scan for nonzeros
            psi = as_row(psi) if sp.issparse(psi) else \
                np.asarray(psi, dtype=float).ravel()
        else:
            diff = self.truth_features() - self.feature_map.joint_features(self.Xe, y_hat)
            psi = np.asarray(diff.sum(axis=0), dtype=float).ravel()
        margin = float(np.asarray(psi @ w).ravel()[0]) if sp.issparse(psi) else \
            float(psi @ w)
        return delta, psi, np.array([max(0.0, delta - margin)])

    def aggregates_in_one_pass(self):
        """Whether :meth:`oracle_sum` forms no per-example rows: it is the map's own
        margin-rescaled 1-slack oracle run over all examples in one pass (e.g.
        Joachims' O(n log n) ranking oracle), or a loss over the whole data set."""
        return self._spans_data_set() or (
            self.rescaling == "margin" and self._map_aggregates()
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

    def primal_objective(self, w, violation=None):
        """½‖w‖² + C Σ_i ξ_i with ξ_i from exact loss-augmented decoding (½‖w‖² + C ξ
        for a loss over the whole data set)."""
        if self._spans_data_set():
            return 0.5 * float(w @ w) + self.C * float(self.dataset_violation(w)[2][0])
        if violation is None:
            violation = self.oracle(w)
        return 0.5 * float(w @ w) + self.C * float(violation.slack.sum())


def check_scale(problem, index=None):
    """Refuse training data whose joint features square to infinity: every learner
    works with ‖δΦ‖² and w·Φ, which then overflow float64 (finite features of 1e300
    made every objective NaN). Raises ValueError naming the first such sample
    (``index[i]``, where given, numbers example i in the whole data: a partition's)."""
    phi = problem.truth_features()
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.bincount(np.repeat(np.arange(phi.shape[0]), np.diff(phi.indptr)),
                         weights=phi.data * phi.data, minlength=phi.shape[0])
    bad = np.flatnonzero(~np.isfinite(sq))
    if bad.size:
        i = int(bad[0])
        row = phi.data[phi.indptr[i]:phi.indptr[i + 1]]
        raise ValueError(f"Sample {i if index is None else int(index[i])}: ‖Φ(x, y)‖² "
                         "overflows float64 (its "
                         f"largest entry is {float(np.max(np.abs(row))):.3g}), so no "
                         "learner can train on it; scale the features (e.g. to [-1, 1])")


# --------------------------------------------------------------------------- sums
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


# --------------------------------------------------------------------------- results
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


# --------------------------------------------------------------------------- enumeration
def enumerated_argmax(batch, Y, loss, slack):
    """Loss-augmented argmax by enumeration (losses the potentials do not add, slack
    rescaling)."""
    check_enumerable(batch, "slack rescaling" if slack else
                     f"loss {plugin_name(loss)!r}, which does "
                     "not decompose over the decoder's parts,",
                     "Use rescaling='margin'." if slack else "Use a loss the potentials add.")
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


def slack_rescaled_argmax(batch, Y, loss):
    """Slack rescaling decomposes over nothing: exact only over enumerable output
    spaces."""
    return enumerated_argmax(batch, Y, loss, slack=True)
