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
makes them (asynchronous dual coordinate descent, the atomic variant of Hsieh, Yu &
Dhillon 2015: every addition to w is atomic, none is lost, and w stays
Σ_k A_k α_[k] up to rounding). Two workers stepping at the same moment along a
column both see its old value; the step of each is therefore that of the local
subproblem above with ω_j the number of blocks that hold column j, capped by the
number of cores (the most that step at once): columns one block holds take full
steps, shared ones (transitions, frequent words) steps that cannot overshoot
together. Between certifying passes all workers step at once, each round and round
its own examples, until together they have decoded n examples (a count in the
shared memory): run one after the other, blocks would visit the examples in a
cyclic order of blocks, in which coordinate descent can take many times longer.
Every certifying pass sums w = Σ_k A_k α_[k] afresh from the workers' dual
variables and certifies at that w; the work per pass over the data is a serial
sweep's.

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
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops, warmup
from ..protocols import LearnerBase, LearnerResult
from ._blocks import BlockSolver, SharedVector
from .dual_cd import DualCD, check_saved_state
from .engines import BlockLost

__all__ = ["PartitionedCD", "InProcessBlocks"]

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
    ...                   learner=PartitionedCD(n_partitions=3), C=1.0, tol=1e-3)
    >>> m.converged_, m.learner_.name
    (True, 'partitioned_cd')
    """

    name: ClassVar[str] = "partitioned_cd"
    compiled_loops: ClassVar[tuple] = DualCD.compiled_loops
    certifies_gap: ClassVar[bool] = True
    supports_warm_start: ClassVar[bool] = False
    runs_blocks: ClassVar[bool] = True
    resumable: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = True

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

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None):
        """Train on ``problem`` with its blocks in this process, one after the other
        (the same rounds, and the same model, as on K workers).

        The examples go to the blocks in turn (example i to block i mod K), so each
        block holds a share of every part of the data. ``state``: a checkpoint's
        state of this learner on the same problem (the blocks continue from it).
        """
        self._check()
        K = self.partitions(problem)
        seeds = _block_seeds(random_state, K)
        blocks = InProcessBlocks([
            BlockSolver(problem, np.arange(k, problem.n_samples, K), self.local_learner(),
                        seeds[k]) for k in range(K)])
        return self.run(blocks, problem.n_features, float(problem.C), w0,
                        max_iter=max_iter, tol=tol, callback=callback, state=state)

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
        max_iter = 200 if max_iter is None else int(max_iter)
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
        shared = SharedVector(D + 1)  # w, then the examples the workers decoded
        recovered = 0
        try:
            w, decoded = shared.array[:D], shared.array[D:]
            blocks.call("share_weights", [(s, shared.path) for s in none])
            # steps damped along the columns blocks share, by as many as step at once
            omega = _column_weights(blocks, D, warmup.usable_cores())
            blocks.call("set_omega", [(s, omega) for s in none])
            if np.any(np.asarray(w0) != 0):
                blocks.call("seed", [(s, np.asarray(w0, dtype=float)) for s in none])
            certify = resumed or run.max_iter <= 1
            while True:
                try:
                    if certify:
                        # w summed afresh from the dual variables: no lost addition
                        _sum_into(w, blocks.call("contribution", [(s,) for s in none]))
                        best = np.array(w)
                        if run.certified(blocks.call("certify", [(s,) for s in none]),
                                         best, callback, self._states(blocks)):
                            break
                    # a pass: every worker steps until all together decoded n more
                    until = float(decoded[0]) + blocks.n_samples
                    out = blocks.call("sweep", [(s, until) for s in none])
                except BlockLost as lost:
                    recovered += len(lost.blocks)
                    blocks.reopen(lost.blocks)
                    blocks.call("share_weights", [(s, shared.path) for s in none])
                    blocks.call("set_omega", [(s, omega) for s in none])
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
        omega = _column_weights(blocks, D) if self.sigma == "auto" else None
        blocks.call("set_omega", [(s, omega) for s in none])
        if resumed:  # the blocks' restored dual point: w summed from it, sent to all
            w = _recover(blocks, [], omega, D)
        sigma = float(K if self.sigma == "auto" else min(float(self.sigma), K))
        settle = none
        run = _Progress(C, tol, max_iter, blocks.n_samples, self.certify_every,
                        ("bytes_out", "bytes_in"))
        rounds = rejected = recovered = 0
        certify = resumed or run.max_iter <= 1
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
            jit.apply_updates(w, w, delta[0], delta[1], np.empty(0, dtype=np.int64))
            run.work["bytes_in"] += K * (delta[0].nbytes + delta[1].nbytes)
            settle = [(True, delta)] * K
            if omega is None and self.sigma == "auto":
                sigma = min(float(K), max(1.0, rho))
            certify = run.due(out, w)
        return run.result(w, dict(
            sharing="rounds", rounds=rounds, rejected_rounds=rejected, sigma=sigmas,
            rho=rhos, dual_gain=gains, promised_gain=promises, n_partitions=K,
            per_column_sigma=omega is not None, recovered_blocks=recovered))


def _column_weights(blocks, D, at_once=None):
    """ω_j, the number of blocks whose examples can touch column j (at least 1, at
    most ``at_once``), from the map's ``feature_support``; None when the map does not
    say or ω would be 1 everywhere."""
    K = blocks.n_blocks
    cap = K if at_once is None else min(K, int(at_once))
    if cap < 2:
        return None
    supports = blocks.call("support", [((None, None),)] * K)
    if any(c is None for c in supports):
        return None
    omega = np.zeros(D)
    for cols in supports:
        omega[cols] += 1.0
    return np.clip(omega, 1.0, float(cap), out=omega)


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
        self.passes = self.last = self.step = 0.0
        self.decoded, self.certs = 0, 0  # examples decoded in rounds; certifying passes
        self.rounds = 0
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
            self.rounds += 1
            done = sum(int(r["decoded"]) for r in results)
            self.decoded += done
            self.step = done / self.n
            self.passes = self.decoded / self.n + self.certs

    def certified(self, shares, w, callback, state):
        """Record a certifying pass at ``w`` (the blocks' ``shares``); True when
        training stops (the stopping rule holds, or ``max_iter`` is reached)."""
        self.count(shares, "certify_seconds")
        self.certs += 1
        self.passes = self.decoded / self.n + self.certs
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
                          time=time.perf_counter() - self.t0, state=state,
                          passes=self.passes, rounds=self.rounds, work=dict(self.work),
                          certified_passes=self.certs))
        self.converged = self.gap <= self.tol * max(primal, 1e-300)
        return self.converged or not self._room()

    def _room(self):
        """Whether a round and a certifying pass still fit in ``max_iter`` passes."""
        return self.passes + self.step + 1.0 <= self.max_iter + 1e-9

    def due(self, results, w):
        """Whether the next pass certifies: every ``certify_every`` passes, or when
        the blocks' gap estimates (measured as they stepped, blind to the others'
        latest changes) say the stopping rule may hold, but no sooner than one pass
        after the last certificate; and always for the last pass ``max_iter``
        allows (so that the returned w is certified)."""
        est = sum(r["est"] for r in results)
        dual = sum(r["dual"] for r in results) - 0.5 * float(w @ w)
        since = self.passes - self.last
        return since >= self.every or not self._room() or (
            since >= min(1.0, self.every) and est <= self.tol * max(dual + est, 1e-300))

    def result(self, w, extra):
        return LearnerResult(
            w=w, objective=self.curve[-1], objective_curve=self.curve,
            n_iter=max(1, int(round(self.passes))), duality_gap=float(self.gap),
            converged=self.converged,
            extra=dict(extra, certified_passes=len(self.curve),
                       oracle_passes=self.passes, certificates=self.trace, **self.work))


def _sum_into(w, parts):
    """w = Σ_k of the blocks' ``(columns, values)``, in block order."""
    w[:] = 0.0
    for idx, val in parts:
        w[idx] += val


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


class InProcessBlocks:
    """Blocks in this process, run one after the other (the serial engine); they
    share w in rounds."""

    shares_memory = False

    def __init__(self, solvers):
        self.solvers = list(solvers)

    @property
    def n_blocks(self):
        """The number of blocks."""
        return len(self.solvers)

    @property
    def n_samples(self):
        """The examples of all blocks."""
        return sum(b.n_samples for b in self.solvers)

    def call(self, method, args):
        """``method(*args[k])`` on every block k, in block order."""
        return [getattr(b, method)(*a) for b, a in zip(self.solvers, args)]

    def close(self):
        """Forget the blocks."""
        self.solvers = []
