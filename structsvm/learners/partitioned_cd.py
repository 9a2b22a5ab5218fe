"""Partitioned dual coordinate ascent: the learner whose own work is parallel.

The examples are split into K partitions ("blocks"), each held by one worker with its
examples, their cached outputs and their dual variables; every worker runs
``dual_cd``'s steps (oracle batches, cached outputs, exact pairwise block steps) on
its own block. In the dual of ½‖w‖² + C Σ_i ξ_i (see :mod:`structsvm.learners.dual_cd`),

    D(α) = Σ_i Σ_y α_iy Δ_i(y) − ½‖w‖²,   w = Σ_k A_k α_[k],   α_iy ≥ 0, Σ_y α_iy ≤ C,

(A_k α_[k] = Σ_{i ∈ P_k} Σ_y α_iy ψ_i(y), block k's share of w), the blocks share w
in one of two ways.

**In memory** (workers on the machine of the fitting process: worker processes, a
Dask cluster on this machine). w lives in a file in shared memory that every worker
maps; each worker steps on its own block and adds its changes to w as it goes, so
every worker decodes and steps with the others' changes as fresh as the memory
makes them (asynchronous dual coordinate descent; Hsieh, Yu & Dhillon 2015). Steps
of two workers on one coordinate may overlap and lose an addition, so the w the
workers see drifts slightly from Σ_k A_k α_[k]; it serves their steps only. Every
certifying pass first sums w = Σ_k A_k α_[k] afresh from the workers' dual
variables, exactly, and certifies at that w. Between certifying passes the workers
run whole sweeps at once; the work per pass over the data is a serial sweep's.

**In rounds** (workers on other machines; CoCoA+: Jaggi et al. 2014, Ma et al.
2015). A round sends w's change to every worker; worker k improves its own α_[k] by
Δα_[k], approximately maximising the *local subproblem*

    G_k(Δα_[k]) = Σ_{i ∈ P_k} Σ_y Δα_iy Δ_i(y) − w·A_k Δα_[k] − ½ Σ_j ω_j (A_k Δα_[k])_j²,

at its own vector u = w + ω ⊙ A_k Δα_[k] (whose gradient is G_k's), and returns the
sparse update Δw_k = A_k Δα_[k]; the driver adds them, w ← w + Σ_k Δw_k. Since

    D(α + Δα) − D(α) = Σ_k G_k + ½ (Σ_j ω_j Σ_k (Δw_k)_j² − ‖Σ_k Δw_k‖²),

the added updates raise the dual by at least Σ_k G_k whenever the bracket is ≥ 0:
with ω_j the number of blocks whose examples can touch column j (the map's
``feature_support``), it is, by Cauchy-Schwarz on each column (CoCoA+'s σ' = K made
per column: columns only one block holds take full steps). A map that does not say
which columns its examples touch gets one σ' for all columns, set from the measured
ρ = ‖Σ_k Δw_k‖² / Σ_k ‖Δw_k‖² of the previous round (≤ K); a round that then
raised the dual by less than half of Σ_k G_k is undone on every worker and run
again with a larger σ'. The dual never decreases. A round is ``local_passes``
sweeps (by default one oracle batch a worker): the workers do not see each other's
changes within a round, and longer rounds need more passes (docs/scaling.md).

Stopping rule (the same as ``dual_cd``'s): when the workers' block-gap estimates say
so (or every ``certify_every`` passes, and on the last), a certifying pass: every
worker runs the oracle on all its examples at the current w and returns its share
of the primal, C Σ_{i ∈ P_k} ξ_i(w), and of the dual, Σ_{i ∈ P_k} Σ_y α_iy Δ_i(y);
the certified gap P(w) − D(α) ≥ P(w) − P(w*) stops training when ≤ tol × P(w). The
certifying answers are then offered to the caches, as ``dual_cd`` does. Where the
blocks run is the engine's business (:mod:`.engines`); the examples never leave
their worker.

References
----------
C.-J. Hsieh, H.-F. Yu, I. S. Dhillon. PASSCoDe: parallel asynchronous stochastic
dual co-ordinate descent. ICML 2015.
C. Ma, V. Smith, M. Jaggi, M. I. Jordan, P. Richtárik, M. Takáč. Adding vs.
averaging in distributed primal-dual optimization. ICML 2015.
M. Jaggi, V. Smith, M. Takáč, J. Terhorst, S. Krishnan, T. Hofmann, M. I. Jordan.
Communication-efficient distributed dual coordinate ascent. NIPS 2014.
M.-W. Chang, W.-t. Yih. Dual coordinate descent algorithms for efficient large margin
structured prediction. TACL 1, 2013.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops, warmup
from ..protocols import LearnerBase, LearnerResult, capability
from ._cache import problem_fingerprint
from .dual_cd import _EPS, DualCD, _State, check_saved_state
from .engines import BlockLost

__all__ = ["PartitionedCD", "BlockSolver", "InProcessBlocks", "SharedVector",
           "map_shared"]

#: a round is kept when it raised the dual by at least this share of Σ_k G_k
_ACCEPT = 0.5


class PartitionedCD(LearnerBase, BaseEstimator):
    """Partitioned dual coordinate ascent on workers, certified (see the module).

    Each of ``n_partitions`` workers runs ``dual_cd``'s steps on its own examples;
    the blocks share w in memory (workers on this machine) or in rounds (CoCoA+,
    per-column σ'). ``max_iter`` counts passes over the data (certifying ones
    included; default 200); ``tol`` is the certified relative duality gap at which
    training stops, as for ``dual_cd``.

    Parameters
    ----------
    n_partitions : int or None, default=None
        K, the number of blocks. None: the number of workers of the run (``n_jobs``,
        or the Dask cluster's workers), 2 when training in this process.
    sharing : {"auto", "memory", "rounds"}, default="auto"
        How the blocks share w: "memory" when every worker runs on this machine
        ("auto" then), "rounds" otherwise and for blocks run in this process (one
        after the other: the rounds a cluster would run, the same model every time).
    local_passes : float, default=0.0625
        In rounds: sweeps over its examples a worker makes per round (a sweep is
        ``n_batches`` oracle batches, as ``dual_cd``'s; the default 1/16 is one batch
        a round), besides offering the answers of a certifying pass. Longer rounds
        send less but need more passes (docs/scaling.md).
    sigma : "auto" or float, default="auto"
        In rounds: "auto" takes ω per column from the map's ``feature_support``, or
        else one σ' that starts at K and follows the measured ρ; a number in
        [1, K] fixes one σ' (rounds that do not raise the dual enough are undone and
        repeated with a larger one).
    certify_every : float, default=10
        A certifying pass at least every this many passes over the data (sooner
        when the blocks' estimated gaps say the stopping rule may hold, but no
        sooner than one pass after the last).
    cache_size, n_batches, inner_passes, inner_tol
        As :class:`~structsvm.learners.dual_cd.DualCD`'s, per worker (the defaults
        those ``dual_cd`` trains sequences with).

    Notes
    -----
    The returned w is the one the last certifying pass measured, so ``objective``
    is exactly P(w) and ``duality_gap`` bounds P(w) − P(w*). Shared in memory, the
    order in which the workers' steps interleave changes from run to run, and so do
    the weights (each run certified within ``tol``); in rounds, the same blocks and
    seeds give the same model on any engine. ``extra`` reports ``sharing``,
    ``rounds``, ``oracle_passes`` (over the data, certifying ones included), the
    work: ``oracle_examples`` (examples decoded by all workers), ``block_seconds``
    (the summed time of the workers' steps) and ``certify_seconds``,
    ``certificates`` (per certifying pass: passes so far, ``block_seconds`` so far,
    primal, gap), ``recovered_blocks``, ``n_partitions`` and, in rounds,
    ``rejected_rounds``, per round ``sigma``, ``rho`` (‖Σ_k Δw_k‖² / Σ_k ‖Δw_k‖²),
    ``dual_gain`` and ``promised_gain`` (Σ_k G_k), and what travelled: ``bytes_out``
    (the workers' updates) and ``bytes_in`` (the updates sent to them).

    References
    ----------
    C.-J. Hsieh, H.-F. Yu, I. S. Dhillon. PASSCoDe: parallel asynchronous stochastic
    dual co-ordinate descent. ICML 2015.
    C. Ma, V. Smith, M. Jaggi, M. I. Jordan, P. Richtárik, M. Takáč. Adding vs.
    averaging in distributed primal-dual optimization. ICML 2015.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures import MulticlassFeatures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); y = (X[:, 0] > 0).astype(int)
    >>> m = structsvm.fit(list(X), list(y), feature_map=MulticlassFeatures(),
    ...                   learner=PartitionedCD(n_partitions=3), C=1.0, tol=1e-6)
    >>> m.converged_, m.learner_.name
    (True, 'partitioned_cd')
    """

    name: ClassVar[str] = "partitioned_cd"
    compiled_loops: ClassVar[tuple] = DualCD.compiled_loops + tuple(
        "structsvm.learners._partitioned_jit:" + f for f in ("block_update", "apply_updates"))
    certifies_gap: ClassVar[bool] = True
    supports_warm_start: ClassVar[bool] = False
    runs_blocks: ClassVar[bool] = True
    resumable: ClassVar[bool] = True

    @staticmethod
    def check_state(state):
        """Raise ValueError naming the block and the array when a saved state of this
        learner (a checkpoint's) does not hold together."""
        if not (isinstance(state, dict) and state.get("learner") == "partitioned_cd"):
            return
        blocks = state.get("blocks")
        if not isinstance(blocks, list) or not blocks:
            raise ValueError("partitioned_cd state: blocks must be a non-empty list")
        for k, b in enumerate(blocks):
            try:
                check_saved_state(b)
            except ValueError as exc:
                raise ValueError(f"block {k}: {exc}") from None

    def __init__(self, n_partitions=None, sharing="auto", local_passes=0.0625,
                 sigma="auto", certify_every=10, cache_size=16, n_batches=16,
                 inner_passes=0, inner_tol=0.1):
        self.n_partitions = n_partitions
        self.sharing = sharing
        self.local_passes = local_passes
        self.sigma = sigma
        self.certify_every = certify_every
        self.cache_size = cache_size
        self.n_batches = n_batches
        self.inner_passes = inner_passes
        self.inner_tol = inner_tol

    def _check(self):
        v = self.local_passes
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or \
                not 0 < v < np.inf:
            raise ValueError(f"local_passes must be a number > 0, got {v!r}")
        k = self.n_partitions
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer))
                              or k < 1):
            raise ValueError(f"n_partitions must be None or an int >= 1, got {k!r}")
        if self.sharing not in ("auto", "memory", "rounds"):
            raise ValueError(f"sharing must be 'auto', 'memory' or 'rounds', got "
                             f"{self.sharing!r}")
        c = self.certify_every
        if isinstance(c, bool) or not isinstance(c, (int, float, np.number)) or \
                not 0 < c < np.inf:
            raise ValueError(f"certify_every must be a number > 0, got {c!r}")
        s = self.sigma
        if not (s == "auto" or (isinstance(s, (int, float)) and not isinstance(s, bool)
                                and s >= 1)):
            raise ValueError(f"sigma must be 'auto' or a number >= 1, got {s!r}")
        self.local_learner()._check()

    def local_learner(self):
        """The ``dual_cd`` whose steps every worker runs."""
        return DualCD(cache_size=self.cache_size, n_batches=self.n_batches,
                      inner_passes=self.inner_passes, inner_tol=self.inner_tol)

    def partitions(self, problem):
        """K for training on ``problem`` in this process: ``n_partitions``, else 2,
        at most the number of examples."""
        k = 2 if self.n_partitions is None else int(self.n_partitions)
        return max(1, min(k, problem.n_samples))

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None):
        """Train on ``problem`` with its blocks in this process, one after the other
        (the same rounds, and the same model, as on K workers).

        The examples go to the blocks in turn (example i to block i mod K), so each
        block holds a share of every part of the data.
        """
        self._check()
        K = self.partitions(problem)
        seeds = _block_seeds(random_state, K)
        blocks = InProcessBlocks([
            BlockSolver(problem, np.arange(k, problem.n_samples, K), self.local_learner(),
                        seeds[k]) for k in range(K)])
        return self.run(blocks, problem.n_features, float(problem.C), w0,
                        max_iter=max_iter, tol=tol, callback=callback)

    # ------------------------------------------------------------------ the rounds
    def run(self, blocks, n_features, C, w0, *, max_iter, tol, callback=None,
            state=None):
        """Train on ``blocks`` (an engine's handle: ``n_blocks``, ``n_samples``,
        ``shares_memory`` and ``call``) until the certified gap ≤ ``tol`` × primal or
        ``max_iter`` passes.

        ``state``: a checkpoint's state of this learner (every block's caches and
        dual variables): the blocks continue from it. The callback's ``state`` gives
        the blocks' states (gathered from the workers when a checkpoint asks).

        Returns
        -------
        LearnerResult
        """
        self._check()
        memory = self.sharing == "memory" or (self.sharing == "auto"
                                              and blocks.shares_memory)
        if memory and not blocks.shares_memory:
            raise ValueError("sharing='memory' needs every worker on this machine "
                             "(worker processes, or a Dask cluster on this machine)")
        if state is not None:
            self.check_state(state)
            saved = state["blocks"]
            if len(saved) != blocks.n_blocks:
                raise ValueError(f"resume: the checkpoint holds {len(saved)} blocks, "
                                 f"this fit has {blocks.n_blocks}")
            blocks.call("restore", [((None, None), b) for b in saved])
            w0 = np.zeros(int(n_features))  # the dual point is the blocks' own
        run = self._in_memory if memory else self._rounds
        return run(blocks, int(n_features), float(C), w0, max_iter=max_iter, tol=tol,
                   callback=callback, resumed=state is not None)

    def _states(self, blocks):
        """A function gathering every block's state (a checkpoint's)."""
        K = blocks.n_blocks
        return lambda: {"learner": self.name,
                        "blocks": blocks.call("saved", [((None, None),)] * K)}

    def _in_memory(self, blocks, D, C, w0, *, max_iter, tol, callback, resumed=False):
        """Blocks that step on one w in shared memory (see the module)."""
        K = blocks.n_blocks
        none = [(None, None)] * K
        run = _Progress(C, tol, max_iter, blocks.n_samples, self.certify_every)
        shared = SharedVector(D)
        recovered = 0
        try:
            w = shared.array
            blocks.call("share_weights", [(s, shared.path) for s in none])
            if np.any(np.asarray(w0) != 0):
                blocks.call("seed", [(s, np.asarray(w0, dtype=float)) for s in none])
            certify = True
            while True:
                try:
                    if certify:
                        # w summed afresh from the dual variables: no lost addition
                        _sum_into(w, blocks.call("contribution", [(s,) for s in none]))
                        best = np.array(w)
                        if run.certified(blocks.call("certify", [(s,) for s in none]),
                                         best, callback, self._states(blocks)):
                            break
                    out = blocks.call("sweep", [(s, 1) for s in none])
                except BlockLost as lost:
                    recovered += len(lost.blocks)
                    blocks.reopen(lost.blocks)
                    blocks.call("share_weights", [(s, shared.path) for s in none])
                    certify = True
                    continue
                run.count(out, "block_seconds")
                certify = run.due(out, w)
        finally:
            shared.close()
        return run.result(best, dict(sharing="memory", rounds=len(run.curve),
                                     n_partitions=K, recovered_blocks=recovered))

    def _rounds(self, blocks, n_features, C, w0, *, max_iter, tol, callback,
                resumed=False):
        """CoCoA+ rounds over ``blocks`` (see the module)."""
        jit = loops("structsvm.learners._partitioned_jit")
        K = int(blocks.n_blocks)
        D = int(n_features)
        w = np.zeros(D)
        scratch = np.zeros(D)  # zero between rounds (see _summed_norm)
        w0 = np.asarray(w0, dtype=float)
        none = [(None, None)] * K
        if np.any(w0 != 0):  # not a dual point: its most violated outputs seed the caches
            blocks.call("seed", [(s, w0) for s in none])
        omega = None
        if self.sigma == "auto" and K > 1:
            supports = blocks.call("support", [(s,) for s in none])
            if all(c is not None for c in supports):
                omega = np.zeros(D)
                for cols in supports:
                    omega[cols] += 1.0
                np.maximum(omega, 1.0, out=omega)
        blocks.call("set_omega", [(s, omega) for s in none])
        if resumed:  # the blocks' restored dual point: w summed from it, sent to all
            w = _recover(blocks, [], omega, D)
        sigma = float(K if self.sigma == "auto" else min(float(self.sigma), K))
        settle = none
        run = _Progress(C, tol, max_iter, blocks.n_samples, self.certify_every,
                        ("bytes_out", "bytes_in"))
        rounds = rejected = recovered = 0
        certify = True
        sigmas, rhos, gains, promises = [], [], [], []
        while True:
            try:
                if certify:
                    shares = blocks.call("certify", [(s,) for s in settle])
                    settle = none
                    if run.certified(shares, w, callback, self._states(blocks)):
                        break
                out = blocks.call("improve", [(s, sigma, float(self.local_passes),
                                               run.gap) for s in settle])
            except BlockLost as lost:
                # a worker died: its blocks start again from zero on another worker,
                # the others keep their dual variables; w is summed again exactly
                recovered += len(lost.blocks)
                w = _recover(blocks, lost.blocks, omega, D)
                settle, certify = none, True
                continue
            run.count(out, "block_seconds")
            rounds += 1
            parts = [(r["idx"], r["val"]) for r in out]
            sq_sum = _summed_norm(scratch, parts)
            sq_parts = sum(r["sq"] for r in out)
            promised = sum(r["G"] for r in out)
            gain = sum(r["lin"] for r in out) - 0.5 * sq_sum
            rho = sq_sum / sq_parts if sq_parts > 0 else 1.0
            sigmas.append(sigma)
            rhos.append(rho)
            gains.append(gain)
            promises.append(promised)
            if omega is None and promised > 0 and gain < _ACCEPT * promised \
                    and sigma < K:
                # a uniform σ' below ρ: the added updates overshot along directions
                # the blocks share; undo the round everywhere, repeat with a larger σ'
                rejected += 1
                settle = [(False, None)] * K
                sigma = min(float(K), max(2.0 * sigma, rho))
                continue
            delta = (np.concatenate([i for i, _ in parts]),
                     np.concatenate([v for _, v in parts]))
            jit.apply_updates(w, w, delta[0], delta[1], _NONE)
            run.work["bytes_in"] += K * (delta[0].nbytes + delta[1].nbytes)
            settle = [(True, delta)] * K
            if omega is None and self.sigma == "auto":
                sigma = min(float(K), max(1.0, rho))
            certify = run.due(out, w)
        return run.result(w, dict(
            sharing="rounds", rounds=rounds, rejected_rounds=rejected, sigma=sigmas,
            rho=rhos, dual_gain=gains, promised_gain=promises, n_partitions=K,
            per_column_sigma=omega is not None, recovered_blocks=recovered))


def _recover(blocks, lost, omega, D, attempts=3):
    """Open the ``lost`` blocks again (from zero), keep the others' last improve, and
    return w summed exactly from every block's A_k α_[k] (sent to every block)."""
    for attempt in range(attempts):
        try:
            if lost:
                blocks.reopen(lost)
            K = blocks.n_blocks
            blocks.call("set_omega", [((True, None), omega)] * K)
            parts = blocks.call("contribution", [((None, None),)] * K)
            w = np.zeros(D)
            for idx, val in parts:
                w[idx] += val
            nz = np.flatnonzero(w)
            blocks.call("reset", [((None, None), nz, w[nz])] * K)
            return w
        except BlockLost as again:
            if attempt == attempts - 1:
                raise
            lost = sorted(set(lost) | set(again.blocks))
    raise AssertionError("unreachable")  # pragma: no cover


class _Progress:
    """The bookkeeping of a run shared by both ways of sharing w: passes, the
    certificates (primal, dual, gap; the callback), when the next one is due, and
    the work done."""

    def __init__(self, C, tol, max_iter, n, certify_every, work_keys=()):
        self.C, self.tol, self.n = float(C), float(tol), max(1, int(n))
        self.max_iter = 200 if max_iter is None else int(max_iter)
        self.every = float(certify_every)
        self.passes = self.last = 0.0
        self.curve, self.trace = [], []
        self.gap, self.converged = np.inf, False
        self.t0 = time.perf_counter()
        self.work = dict({"oracle_examples": 0, "block_seconds": 0.0,
                          "certify_seconds": 0.0}, **{k: 0 for k in work_keys})

    def count(self, results, clock):
        for r in results:
            self.work["oracle_examples"] += int(r["decoded"])
            self.work[clock] += float(r["seconds"])
            if "idx" in r:
                self.work["bytes_out"] += r["idx"].nbytes + r["val"].nbytes
        if clock == "block_seconds":
            self.passes += sum(r["decoded"] for r in results) / self.n

    def certified(self, shares, w, callback, state):
        """Record a certifying pass at ``w`` (the blocks' ``shares``); True when
        training stops (the stopping rule holds, or ``max_iter`` is reached)."""
        self.count(shares, "certify_seconds")
        self.passes += 1.0
        wsq = float(w @ w)
        primal = 0.5 * wsq + self.C * sum(r["slack"] for r in shares)
        dual = sum(r["dual"] for r in shares) - 0.5 * wsq
        self.gap = max(0.0, primal - dual)
        self.curve.append(primal)
        self.last = self.passes
        self.trace.append((self.passes, self.work["block_seconds"], primal, self.gap))
        if callback is not None:
            callback(dict(round=len(self.curve), w=w, objective=primal, gap=self.gap,
                          n_constraints=sum(r["cached"] for r in shares),
                          time=time.perf_counter() - self.t0, state=state))
        self.converged = self.gap <= self.tol * max(primal, 1e-300)
        return self.converged or self.passes >= self.max_iter

    def due(self, results, w):
        """Whether the next pass certifies: every ``certify_every`` passes, or when
        the blocks' gap estimates (measured as they stepped, blind to the others'
        latest changes) say the stopping rule may hold, but no sooner than one pass
        after the last certificate; and always once ``max_iter`` is reached."""
        est = sum(r["est"] for r in results)
        dual = sum(r["dual"] for r in results) - 0.5 * float(w @ w)
        since = self.passes - self.last
        return since >= self.every or self.passes >= self.max_iter or (
            since >= min(1.0, self.every) and est <= self.tol * max(dual + est, 1e-300))

    def result(self, w, extra):
        return LearnerResult(
            w=w, objective=self.curve[-1], objective_curve=self.curve,
            n_iter=int(np.ceil(self.passes)), duality_gap=float(self.gap),
            converged=self.converged,
            extra=dict(extra, certified_passes=len(self.curve),
                       oracle_passes=self.passes, certificates=self.trace, **self.work))


def _sum_into(w, parts):
    """w = Σ_k of the blocks' ``(columns, values)``, in block order."""
    w[:] = 0.0
    for idx, val in parts:
        w[idx] += val


class SharedVector:
    """A float64 vector in a file in shared memory (``/dev/shm`` where there is one),
    which every process of this machine can map; the file is removed on
    :meth:`close`."""

    def __init__(self, size):
        import os
        import tempfile

        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, self.path = tempfile.mkstemp(prefix="structsvm-w-", suffix=".f8", dir=folder)
        try:
            os.ftruncate(fd, 8 * max(1, int(size)))
        finally:
            os.close(fd)
        self._map = np.memmap(self.path, dtype=np.float64, mode="r+",
                              shape=(max(1, int(size)),))
        self.array = np.asarray(self._map)[:int(size)]

    def close(self):
        import os

        self.array = self._map = None
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def map_shared(path, size):
    """The vector of a :class:`SharedVector` file, mapped read-write in this process
    (a plain array over the mapping, and the mapping that keeps it alive)."""
    m = np.memmap(path, dtype=np.float64, mode="r+", shape=(max(1, int(size)),))
    return np.asarray(m)[:int(size)], m


def _summed_norm(scratch, delta):
    """‖Σ_k Δw_k‖² of the blocks' sparse updates ``[(columns, values)]``, summed in
    ``scratch`` (zero before and after): the cost follows their entries."""
    for idx, val in delta:
        scratch[idx] += val
    total = 0.0
    for idx, _ in delta:
        v = scratch[idx]
        total += float(v @ v)
        scratch[idx] = 0.0  # a column of several blocks counts once
    return total


def _block_seeds(random_state, K):
    """One seed per block, from ``random_state`` (None: 0, as ``dual_cd``)."""
    rng = check_random_state(0 if random_state is None else random_state)
    return [int(s) for s in rng.randint(0, 2**31 - 1, size=K)]


# --------------------------------------------------------------------------- blocks
class BlockSolver:
    """One block's caches and dual variables, and its local work (worker side).

    Parameters
    ----------
    problem : Problem
        The training problem that holds the block's examples (and maybe others).
    examples : ndarray of int
        The block's examples in ``problem``.
    learner : DualCD
        Whose steps (oracle batches, cached passes) the block runs.
    seed : int
        Seeds the order in which the block visits its examples.

    Notes
    -----
    The block keeps two vectors of n_features: w, the driver's weights, and u, its
    local vector w + ω ⊙ A_k Δα_[k] during a round. Every method takes ``settle =
    (accepted, delta)`` first: the driver's verdict on the block's last
    :meth:`improve` (True: keep it, False: undo it, None: there was none) and the
    change of w to apply (``(columns, values)`` or None).
    """

    def __init__(self, problem, examples, learner, seed):
        self.problem = problem
        self.examples = np.asarray(examples, dtype=np.intp)
        self.learner = learner
        self.rng = check_random_state(seed)
        n, D = self.examples.size, problem.n_features
        self.state = _State(n, int(learner.cache_size) + 1, D)
        self.w = np.zeros(D)
        self.u = np.zeros(D)
        self.omega = None     # per-column ω of the local subproblem (set_omega)
        self.est = np.full(n, np.inf)  # block gaps of the examples, as last seen
        self.plan = []        # the current sweep's remaining (batch, cached slice)
        self.pending = None   # answers of the last certifying pass, to offer
        self.undo = None      # what restores the block before its last improve
        self.touched = None   # columns its last improve may have changed
        self.mark = None      # one zero byte per column, to list distinct columns
        self.it = 0

    @property
    def n_samples(self):
        return int(self.examples.size)

    def _settle(self, settle):
        jit = loops("structsvm.learners._partitioned_jit")

        accepted, delta = settle
        touched = _NONE
        if self.touched is not None and accepted is not None:
            if accepted:
                self.state.pool.compact(self.state.slot)
                self.pending = None
            elif self.undo is not None:
                snapshot, self.est, self.plan = self.undo
                self.state.restore(snapshot)
            touched, self.touched, self.undo = self.touched, None, None
        idx, val = (_NONE, _NONE_F) if delta is None else delta
        if idx.size or touched.size:  # every block's update, in the driver's order
            warmup.wait(jit.apply_updates)
            jit.apply_updates(self.w, self.u, idx, val, touched)

    def seed(self, settle, w0):
        """Offer the most violated outputs at ``w0`` (a warm start) to the caches."""
        self._settle(settle)
        t0 = time.perf_counter()
        v = self.problem.oracle(w0, self.examples)
        self.learner._offer(self.problem, self.state, v, self.w, 0,
                            rows=np.arange(self.n_samples))
        self.state.pool.compact(self.state.slot)
        return {"decoded": self.n_samples, "seconds": time.perf_counter() - t0}

    def support(self, settle):
        """The columns of w this block's updates can touch (sorted), or None when the
        map does not say (its ``feature_support`` capability)."""
        self._settle(settle)
        f = capability(self.problem.feature_map, "feature_support")
        return None if f is None else np.asarray(f(self.problem.Xe, self.examples),
                                                 dtype=np.int64)

    def share_weights(self, settle, path):
        """Step on the vector in the shared-memory file ``path`` (everyone's w) from
        now on, instead of a copy of its own."""
        self._settle(settle)
        self.w, self._mapping = map_shared(path, self.problem.n_features)
        self.u = self.w

    def sweep(self, settle, passes):
        """``passes`` sweeps of ``dual_cd``'s steps on this block at the shared w
        (the answers of the last certifying pass offered first); returns the block
        gaps seen and the block's share of the dual."""
        self._settle(settle)
        t0 = time.perf_counter()
        st, lrn, problem = self.state, self.learner, self.problem
        self.it += 1
        if self.pending is not None:
            self.est = lrn._offer(problem, st, self.pending, self.w, self.it)
            self.pending = None
        for _ in range(int(passes)):
            lrn._sweep(problem, st, self.w, self.rng, self.est, self.it,
                       examples=self.examples)
        st.pool.compact(st.slot)
        return {"est": float(self.est.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "decoded": int(passes) * self.n_samples,
                "seconds": time.perf_counter() - t0}

    def fingerprint(self, settle):
        """A hash of this block's examples, loss and rescaling."""
        self._settle(settle)
        return problem_fingerprint(self.problem)

    def saved(self, settle):
        """This block's caches and dual variables (arrays: a checkpoint's)."""
        self._settle(settle)
        return self.state.saved(problem_fingerprint(self.problem), self.problem.C)

    def restore(self, settle, saved):
        """Continue from a :meth:`saved` state of this block's examples (ValueError
        when it belongs to other examples)."""
        self._settle(settle)
        st = _State.restored(saved, self.n_samples, int(self.learner.cache_size) + 1,
                             self.problem.n_features,
                             problem_fingerprint(self.problem), self.problem.C)
        if st is None:
            raise ValueError("resume: a block's saved state belongs to other examples "
                             "(or another cache size); train again with the same data "
                             "and parameters")
        self.state, self.pending, self.undo, self.touched = st, None, None, None
        self.est = np.full(self.n_samples, np.inf)
        self.plan = []

    def contribution(self, settle):
        """A_k α_[k], this block's share of w, summed afresh from its caches
        (``(columns, values)``)."""
        self._settle(settle)
        wk = self.state.weights()
        idx = np.flatnonzero(wk)
        return idx, wk[idx]

    def reset(self, settle, idx, val):
        """Set the block's copy of w (and u) to the driver's: zero but ``w[idx] = val``."""
        self._settle(settle)
        self.w[:] = 0.0
        self.w[idx] = val
        self.u[:] = self.w
        self.touched = self.undo = None

    def set_omega(self, settle, omega):
        """ω_j, the number of blocks whose updates can touch column j (a dense array
        of n_features numbers), or None: a uniform σ' given with each round."""
        self._settle(settle)
        self.omega = None if omega is None else np.asarray(omega, dtype=float)

    def certify(self, settle):
        """The block's shares of P(w) and D(α) at the current w (all its examples)."""
        self._settle(settle)
        t0 = time.perf_counter()
        st = self.state
        v = self.problem.oracle(self.w, self.examples)
        self.pending = replace(v, idx=np.arange(self.n_samples))
        return {"slack": float(v.slack.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "cached": int((st.slot >= 0).sum()), "decoded": self.n_samples,
                "seconds": time.perf_counter() - t0}

    def improve(self, settle, sigma, passes, gap):
        """Approximately maximise the local subproblem (see the module) with
        ``passes`` sweeps' worth of oracle batches; returns Δw_k (sparse), its linear
        term, ‖Δw_k‖², G_k and the block-gap estimate.

        The quadratic term is ½ Σ_j ω_j (A_k Δα)_j² with this block's ω (set by
        :meth:`set_omega`), or σ'/2 ‖A_k Δα‖² with the round's ``sigma`` when it has
        none: ``dual_cd``'s steps with ω-weighted Gram entries, at the block's own
        vector u = w + ω ⊙ A_k Δα, whose gradient is the local subproblem's."""
        self._settle(settle)
        t0 = time.perf_counter()
        jit = loops("structsvm.learners._dual_cd_jit")
        st, lrn, problem, u = self.state, self.learner, self.problem, self.u
        n = self.n_samples
        omega = self.omega
        if omega is None:  # uniform σ': rounds may be undone
            omega = np.full(problem.n_features, float(sigma))
            self.undo = (st.snapshot(), self.est.copy(), list(self.plan))
        C = float(problem.C)
        lin0 = float(np.sum(st.alpha * st.loss))
        self.it += 1
        nb = min(n, int(lrn.n_batches))
        items = []
        for _ in range(max(1, int(round(float(passes) * nb)))):
            if not self.plan:
                self.plan = _sweep_plan(st, n, nb, self.rng)
            items.append(self.plan.pop(0))
        # the examples this round visits, and their caches before it: Δw_k comes
        # from the rows whose dual variable changed
        if self.pending is not None or int(lrn.inner_passes) > 0:
            seen = np.arange(n)
        else:
            seen = np.unique(np.concatenate([np.concatenate(i) for i in items]))
        slot0, alpha0 = st.slot[seen].copy(), st.alpha[seen].copy()
        decoded = 0
        if self.pending is not None:
            self.est = lrn._offer(problem, st, self.pending, u, self.it, omega=omega)
        gaps = np.zeros(n)
        for batch, part in items:
            v = problem.oracle(u, self.examples[batch])
            decoded += batch.size
            self.est[batch] = lrn._offer(problem, st, v, u, self.it, rows=batch,
                                         omega=omega)
            part = part[(st.slot[part] >= 0).any(axis=1)]
            if part.size:
                warmup.wait(jit.cached_pass)
                p = st.pool
                jit.cached_pass(part, u, p.ind, p.dat, p.start, p.len, st.slot,
                                st.alpha, st.loss, st.gram, C, _EPS, st.steps, gaps,
                                omega)
        if int(lrn.inner_passes) > 0:
            lrn._inner(st, u, C, gap if np.isfinite(gap) else float(self.est.sum()),
                       self.rng, omega=omega)
        slot1, alpha1 = st.slot[seen], st.alpha[seen]
        same = (slot1 == slot0) & (alpha1 == alpha0)
        rows = np.concatenate([slot0[~same & (alpha0 > 0)], slot1[~same & (alpha1 > 0)]])
        if self.mark is None:
            self.mark = np.zeros(problem.n_features, dtype=np.uint8)
        cols = st.pool.columns(rows, self.mark)
        idx, val = np.empty(cols.size, dtype=np.int64), np.empty(cols.size)
        cj = loops("structsvm.learners._partitioned_jit")
        warmup.wait(cj.block_update)
        m, sq, wsq, wdot = cj.block_update(u, self.w, omega, cols, idx, val)
        idx, val = idx[:m], val[:m]
        self.touched = cols
        lin = float(np.sum(st.alpha * st.loss)) - lin0 - wdot
        return {"idx": idx, "val": val, "sq": sq, "lin": lin, "G": lin - 0.5 * wsq,
                "est": float(self.est.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "decoded": decoded, "seconds": time.perf_counter() - t0}


_NONE = np.empty(0, dtype=np.int64)
_NONE_F = np.empty(0)


def _sweep_plan(st, n, nb, rng):
    """A sweep as ``dual_cd`` makes it: the examples in random order in ``nb``
    batches, each with a slice of the examples that have cached outputs."""
    batches = np.array_split(rng.permutation(n), nb)
    cached = np.flatnonzero((st.slot >= 0).any(axis=1))
    rng.shuffle(cached)
    return list(zip(batches, np.array_split(cached, nb)))


class InProcessBlocks:
    """Blocks in this process, run one after the other (the serial engine); they
    share w in rounds."""

    shares_memory = False

    def __init__(self, solvers):
        self.solvers = list(solvers)

    @property
    def n_blocks(self):
        return len(self.solvers)

    @property
    def n_samples(self):
        return sum(b.n_samples for b in self.solvers)

    def call(self, method, args):
        """``method(*args[k])`` on every block k, in block order."""
        return [getattr(b, method)(*a) for b, a in zip(self.solvers, args)]

    def close(self):
        self.solvers = []
