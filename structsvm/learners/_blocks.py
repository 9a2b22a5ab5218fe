"""The worker side of partitioned training: blocks of examples hosted in a process.

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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..protocols import DaskPart, capability

__all__ = ["BlockSpec", "InMemory", "MISSING", "run_block", "run_pickled", "run_function",
           "blocks_here", "worker_budget"]

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
        return self.X, self.Y

    def describe(self):
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
        from .partitioned_cd import BlockSolver
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
        # the block's w, u and the driver's changes: three more vectors of weights
        total = memory.total + 3 * 8 * problem.n_features
        check_total(total, f"block {self.spec.index} ({problem.n_samples} examples, "
                           "its caches, data and weights)",
                    verb="needs an estimated", limit=worker_budget(budget))
        self.solver = BlockSolver(problem, np.arange(problem.n_samples),
                                  learner.local_learner(), self.spec.seed)
        self.X = self.Y = None
        return {"n": problem.n_samples, "memory": int(total),
                "seconds": time.perf_counter() - t0}


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
