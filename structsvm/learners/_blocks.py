"""The worker side of partitioned training: blocks of examples hosted in a process,
each with its local solver (:class:`BlockSolver`).

A *block* is one partition of the training examples as a worker holds it: its data
(read or received once), then, once the driver has fitted the feature map, its
encoded problem and its :class:`~structsvm.learners.partitioned_cd.BlockSolver` (caches and
dual variables). Blocks are kept in this process's registry under the fit's token
and the block's number; a task carries only those, the method to run and its
(small) arguments. A task that reaches a process without the block (one that
joined later, or was restarted after a worker died) answers :data:`MISSING`, and
the driver opens the block there again (:mod:`structsvm.learners.engines`).

Sources (:class:`InMemory`, and the file and Dask-bag sources of
:mod:`structsvm.corpora.partitions`) are read here, in the worker: ``read()``
returns ``(X, Y)``.
"""
from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.utils import check_random_state

from .._compiled import loops, warmup
from ..protocols import DaskPart, capability
from ._cache import problem_fingerprint
from .dual_cd import _EPS, _State

__all__ = ["BlockSpec", "InMemory", "MISSING", "run_block", "run_pickled", "run_function",
           "blocks_here", "worker_budget", "BlockSolver", "SharedVector", "map_shared"]

_HOSTED: dict = {}
#: an error message that names an example by its number: word, number, the rest
_NAMED = re.compile(r"^(Sentence|Sample) (\d+)(\b.*)$", re.DOTALL)
_LOCK = threading.Lock()


class _Missing:
    """A worker's answer when it does not hold the block a task names."""

    def __repr__(self):
        return "MISSING"

    def __reduce__(self):
        return (_missing, ())


def _missing():
    return MISSING


MISSING = _Missing()


@dataclass
class InMemory:
    """A partition given as lists: ``read()`` returns them."""

    X: list
    Y: list

    def read(self):
        """``(X, Y)``."""
        return self.X, self.Y

    def describe(self):
        """Words for messages."""
        return f"{len(self.X)} examples given in memory"


@dataclass
class BlockSpec:
    """What a worker needs to open block ``index`` of the fit ``token``: its
    partitions' sources (read in the worker, in order) and its seed."""

    token: str
    index: int
    sources: list
    seed: int
    info: dict = field(default_factory=dict)


class Host:
    """One block in a worker: its data, then its problem and local solver."""

    def __init__(self, spec, computed=()):
        self.spec = spec
        t0 = time.perf_counter()
        X, Y = [], []
        computed = iter(computed)
        self.origins = []  # (source, its number of examples), in order
        for source in spec.sources:
            if isinstance(source, DaskPart):  # computed by the cluster, given here
                pairs = list(next(computed))
                x, y = [p[0] for p in pairs], [p[1] for p in pairs]
            else:
                x, y = source.read()
            if len(x) != len(y):
                raise ValueError(f"{source.describe()}: {len(x)} inputs but "
                                 f"{len(y)} outputs")
            X.extend(x)
            Y.extend(y)
            self.origins.append((source, len(x)))
        self.X, self.Y = X, Y
        self.solver = None
        self.read_seconds = time.perf_counter() - t0

    def opened(self):
        return {"n": len(self.X), "pid": os.getpid(), "address": _worker_address(),
                "seconds": self.read_seconds}

    def summarize(self, prototype):
        """The map's summary of this block's data (see ``fit_summary``)."""
        if len(self.X) == 0:
            return None
        with self.named_errors():
            return capability(prototype, "fit_summary")(self.X, self.Y)

    @contextlib.contextmanager
    def named_errors(self):
        """Errors that name an example by its place in this block ("Sentence 3: ...",
        "Sample 3: ...") name it by its place in the data instead: its number in
        the lists given to ``fit``, or its partition and place there."""
        try:
            yield
        except (ValueError, TypeError) as exc:
            m = _NAMED.match(str(exc))
            if m is None:
                raise
            raise type(exc)(self._where(m.group(1), int(m.group(2))) + m.group(3)) \
                from None

    def _where(self, word, i):
        examples = self.spec.info.get("examples")
        if examples is not None:
            return f"{word} {int(examples[i])}"
        for source, count in self.origins:
            if i < count:
                return f"{source.describe()}: {word.lower()} {i}"
            i -= count
        return f"{word} {i}"  # pragma: no cover - the block holds every index

    def prepare(self, feature_map, decoder, loss, C, rescaling, learner, budget=None):
        """Encode the data with the fitted map, check it, and make the local solver;
        the raw data are dropped. ``budget``: the memory budget the fitting process
        was given (``STRUCTSVM_MAX_MEMORY``, bytes; 0: none), or None (see
        :func:`worker_budget`)."""
        from .memory import fit_memory
        from .problem import Problem, check_scale
        from ..limits import check_total

        t0 = time.perf_counter()
        with self.named_errors():
            Xe = feature_map.encode_inputs(self.X)
            Ye = feature_map.encode_outputs(self.Y, self.X)
            problem = Problem(Xe=Xe, Ye=Ye, feature_map=feature_map, decoder=decoder,
                              loss=loss, C=C, rescaling=rescaling, n_jobs=1)
            check_scale(problem)
        memory = fit_memory(learner.local_learner(), problem)
        # weights: the block's own two vectors (w, or the shared w, and u) and a
        # byte per column, instead of a one-process fit's copies (the next and the
        # best w live with the driver)
        D = problem.n_features
        total = memory.total - memory.parts.get("weights", 0) + 2 * 8 * D + D
        check_total(total, f"block {self.spec.index} ({problem.n_samples} examples, "
                           "its caches, data and weights)",
                    verb="needs an estimated", limit=worker_budget(budget))
        self.solver = BlockSolver(problem, np.arange(problem.n_samples),
                                  learner.local_learner(), self.spec.seed)
        self.X = self.Y = None
        return {"n": problem.n_samples, "memory": int(total),
                "seconds": time.perf_counter() - t0}


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
    The ``seconds`` every method reports are this process's CPU time for it (the
    work, whatever else the machine runs). The block keeps two vectors of
    n_features: w, the driver's weights, and u, its local vector
    w + ω ⊙ A_k Δα_[k] during a round. Every method takes ``settle =
    (accepted, delta)`` first: the driver's verdict on the block's last
    :meth:`improve` (True: keep it, False: undo it, None: there was none) and the
    change of w to apply (every block's ``(columns, values)`` one after the other,
    added in that order as the driver adds them, or None).
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
        self.shared = False   # w shared with other processes (share_weights)
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
        t0 = time.process_time()
        v = self.problem.oracle(w0, self.examples)
        self.learner._offer(self.problem, self.state, v, self.w, 0,
                            rows=np.arange(self.n_samples), shared=self.shared)
        self.state.pool.compact(self.state.slot)
        return {"decoded": self.n_samples, "seconds": time.process_time() - t0}

    def support(self, settle):
        """The columns of w this block's updates can touch (sorted), or None when the
        map does not say (its ``feature_support`` capability)."""
        self._settle(settle)
        f = capability(self.problem.feature_map, "feature_support")
        return None if f is None else np.asarray(f(self.problem.Xe, self.examples),
                                                 dtype=np.int64)

    def share_weights(self, settle, path):
        """Step on the vector in the shared-memory file ``path`` from now on, instead
        of a copy of its own: everyone's w (n_features numbers), then the count of
        examples all workers have decoded (:meth:`sweep`)."""
        self._settle(settle)
        D = self.problem.n_features
        shared, self._mapping = map_shared(path, D + 1)
        self.w, self.decoded = shared[:D], shared[D:]
        self.u = self.w
        self.shared = True  # the other workers step on it at the same time

    def sweep(self, settle, until):
        """``dual_cd``'s oracle batches and cached steps on this block at the shared
        w, round and round its examples, until the workers together have decoded
        ``until`` examples (the shared count) and this block at least as many as it
        holds (the answers of the last certifying pass are offered first). Every
        worker steps until then: they all run at once from start to end, whatever
        each one's speed, so their steps interleave (the blocks one after the other
        would be a cyclic order of the examples, which coordinate descent can take
        far longer to converge in); a block whose task starts late (more blocks than
        workers) still makes its sweep. Returns the block gaps seen and the block's
        share of the dual."""
        self._settle(settle)
        t0 = time.process_time()
        cj = loops("structsvm.learners._partitioned_jit")
        st, lrn, problem = self.state, self.learner, self.problem
        if self.pending is not None:
            self.est = lrn._offer(problem, st, self.pending, self.w, self.it,
                                  omega=self.omega, shared=True)
            self.pending = None
        n, nb = self.n_samples, min(self.n_samples, int(lrn.n_batches))
        gaps = np.zeros(n)
        decoded, total = 0, float(self.decoded[0])
        while total < until or decoded < n:
            if not self.plan:
                self.plan = _sweep_plan(st, n, nb, self.rng)
                self.it += 1
            batch, part = self.plan.pop(0)
            self.est[batch] = self._batch_steps(batch, part, self.w, problem.C,
                                                self.omega, True, gaps)
            decoded += batch.size
            warmup.wait(cj.count_decoded)
            total = cj.count_decoded(self.decoded, batch.size)
        st.pool.compact(st.slot)
        return {"est": float(self.est.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "decoded": decoded, "seconds": time.process_time() - t0}

    def _batch_steps(self, batch, part, vec, C, omega, shared, gaps):
        """One oracle batch of the block's rows ``batch`` at ``vec``, its answers
        offered to the caches, then cached steps on the rows ``part`` (those with
        cached outputs); returns the batch's block gaps (see ``dual_cd``)."""
        jit = loops("structsvm.learners._dual_cd_jit")
        st, lrn, problem = self.state, self.learner, self.problem
        v = problem.oracle(vec, self.examples[batch])
        est = lrn._offer(problem, st, v, vec, self.it, C=C, rows=batch,
                         omega=_NONE_F if omega is None else omega, shared=shared)
        part = part[(st.slot[part] >= 0).any(axis=1)]
        if part.size:
            warmup.wait(jit.cached_pass)
            p = st.pool
            jit.cached_pass(part, vec, p.ind, p.dat, p.start, p.len, st.slot, st.alpha,
                            st.loss, st.gram, float(C), _EPS, st.steps, gaps,
                            _NONE_F if omega is None else omega, shared)
        return est

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
        t0 = time.process_time()
        st = self.state
        v = self.problem.oracle(self.w, self.examples)
        self.pending = replace(v, idx=np.arange(self.n_samples))
        return {"slack": float(v.slack.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "cached": int((st.slot >= 0).sum()), "decoded": self.n_samples,
                "seconds": time.process_time() - t0}

    def improve(self, settle, sigma, passes, gap):
        """Approximately maximise the local subproblem (see
        :mod:`structsvm.learners.partitioned_cd`) with ``passes`` sweeps' worth of
        oracle batches; returns Δw_k (sparse), its linear term, ‖Δw_k‖², G_k and the
        block-gap estimate.

        With this block's per-column ω (:meth:`set_omega`) the quadratic term is
        ½ Σ_j ω_j (A_k Δα)_j²: ``dual_cd``'s steps with ω-weighted Gram entries (ω is
        fixed for the fit, so the cached entries stay right), at the block's vector
        u = w + ω ⊙ A_k Δα, whose gradient is the local subproblem's. Without, it is
        σ'/2 ‖A_k Δα‖² with the round's σ' (which changes from round to round): the
        plain steps on σ'α in the simplex of σ'C, which are the same steps."""
        self._settle(settle)
        t0 = time.process_time()
        st, lrn, problem, u = self.state, self.learner, self.problem, self.u
        n = self.n_samples
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
        lin0 = float(np.sum(st.alpha * st.loss))
        C = float(problem.C)
        omega, scale = self.omega, 1.0
        if omega is None:  # one σ' for all columns: rounds may be undone
            self.undo = (st.snapshot(), self.est.copy(),
                         list(items) + list(self.plan))
            omega, scale = _NONE_F, float(sigma)
            st.alpha[seen] *= scale
        self.it += 1
        decoded = 0
        if self.pending is not None:
            self.est = lrn._offer(problem, st, self.pending, u, self.it, C=scale * C,
                                  omega=omega) / scale
        gaps = np.zeros(n)
        for batch, part in items:
            decoded += batch.size
            self.est[batch] = self._batch_steps(batch, part, u, scale * C, omega, False,
                                                gaps) / scale
        if int(lrn.inner_passes) > 0:
            hint = gap if np.isfinite(gap) else float(self.est.sum())
            lrn._inner(st, u, scale * C, scale * hint, self.rng, omega=omega)
        if scale != 1.0:
            st.alpha[seen] /= scale
        slot1, alpha1 = st.slot[seen], st.alpha[seen]
        same = (slot1 == slot0) & (alpha1 == alpha0)
        rows = np.concatenate([slot0[~same & (alpha0 > 0)], slot1[~same & (alpha1 > 0)]])
        if self.mark is None:
            self.mark = np.zeros(problem.n_features, dtype=np.uint8)
        cols = st.pool.columns(rows, self.mark)
        idx, val = np.empty(cols.size, dtype=np.int64), np.empty(cols.size)
        cj = loops("structsvm.learners._partitioned_jit")
        warmup.wait(cj.block_update)
        m, sq, wsq, wdot = cj.block_update(u, self.w, omega, scale, cols, idx, val)
        idx, val = idx[:m], val[:m]
        self.touched = cols
        lin = float(np.sum(st.alpha * st.loss)) - lin0 - wdot
        return {"idx": idx, "val": val, "sq": sq, "lin": lin, "G": lin - 0.5 * wsq,
                "est": float(self.est.sum()), "dual": float(np.sum(st.alpha * st.loss)),
                "decoded": decoded, "seconds": time.process_time() - t0}


_NONE = np.empty(0, dtype=np.int64)
_NONE_F = np.empty(0)


def _sweep_plan(st, n, nb, rng):
    """A sweep as ``dual_cd`` makes it: the examples in random order in ``nb``
    batches, each with a slice of the examples that have cached outputs."""
    batches = np.array_split(rng.permutation(n), nb)
    cached = np.flatnonzero((st.slot >= 0).any(axis=1))
    rng.shuffle(cached)
    return list(zip(batches, np.array_split(cached, nb)))


def _worker_address():
    """The address of the Dask worker running this task, or None."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


#: the share of a Dask worker's ``memory_limit`` a block may use (Dask pauses a
#: worker whose process uses 80 % of it; a block's arrays are not Dask's to spill)
DASK_MEMORY_SHARE = 0.7


def worker_budget(configured=None):
    """The memory a block in this process may use, in bytes, or None for this
    process's own budget (:func:`structsvm.limits.memory_limit`: half of its
    machine's available memory).

    ``configured``: the fitting process's ``STRUCTSVM_MAX_MEMORY`` (bytes, 0: no
    limit; None: not set), which applies to every worker. On a Dask worker, also
    :data:`DASK_MEMORY_SHARE` of its ``memory_limit``; the smaller applies."""
    limits = []
    if configured:
        limits.append(int(configured))
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        worker = None
    if worker is not None and worker.memory_manager.memory_limit:
        limits.append(int(DASK_MEMORY_SHARE * worker.memory_manager.memory_limit))
    if limits:
        return min(limits)
    if configured == 0:
        return 2 ** 62  # no limit
    return None


_LIMITED = []


def _one_thread():
    """BLAS and OpenMP in one thread in this process, from its first task on: each
    worker computes on one core, and a BLAS thread that keeps spinning after a
    product takes the core of another worker."""
    if not _LIMITED:
        from threadpoolctl import threadpool_limits

        _LIMITED.append(threadpool_limits(limits=1))


def run_block(token, index, method, args=(), spec=None):
    """Run ``method(*args)`` on block ``index`` of fit ``token`` in this process.

    ``method="open"`` (with ``spec``) reads the block's data and registers it;
    ``"close"`` forgets every block of the fit; ``"summarize"`` and
    ``"prepare_shared"`` (whose one argument is the tuple of :meth:`Host.prepare`'s
    arguments) are the host's; every other method is the block's solver's. Returns
    :data:`MISSING` when this process does not hold the block.
    """
    _one_thread()
    key = (token, int(index))
    if method == "open":  # args: the cluster's results of the block's Dask partitions
        host = Host(spec, args[0] if args else ())
        with _LOCK:
            _HOSTED[key] = host
        return host.opened()
    if method == "close":
        with _LOCK:
            for k in [k for k in _HOSTED if k[0] == token]:
                del _HOSTED[k]
        return None
    host = _HOSTED.get(key)
    if host is None:
        return MISSING
    if method == "summarize":
        return host.summarize(*args)
    if method == "prepare_shared":  # one argument: the tuple of prepare's arguments
        return host.prepare(*args[0])
    if host.solver is None:
        return MISSING
    return getattr(host.solver, method)(*args)


def run_pickled(token, index, method, payload):
    """:func:`run_block` with ``(args, spec)`` pickled by cloudpickle (``payload``)."""
    import pickle

    args, spec = pickle.loads(payload)
    return run_block(token, index, method, args, spec)


def run_function(payload):
    """``func(item)`` of a cloudpickled ``(func, item)`` (a task of ``engine.map``)."""
    import pickle

    _one_thread()
    func, item = pickle.loads(payload)
    return func(item)


def blocks_here(token=None):
    """The (token, index) of the blocks this process holds (for tests)."""
    return sorted(k for k in _HOSTED if token is None or k[0] == token)
