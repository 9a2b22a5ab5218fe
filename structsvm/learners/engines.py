"""Where the blocks of a partitioned fit run: worker processes of this machine, or the
workers of a Dask cluster. No cluster code of structsvm's own: the engines hand
tasks to process executors of the standard library or to a
``dask.distributed.Client``.

Every task is :func:`structsvm.learners._blocks.run_block` with the fit's token, the
block's number, a method and its arguments; each block stays on one worker from
round to round (one executor of one process per block; on Dask the task names
the block's worker, ``workers=[address]``). A worker that dies, or a task that
reaches a process without its block, raises :class:`BlockLost` naming the blocks,
which the driver opens again (:meth:`Blocks.reopen`) on a worker that is alive.
"""
from __future__ import annotations

import uuid
from dataclasses import replace

from ..protocols import DaskPart

from ._blocks import MISSING, InMemory, run_block, run_function, run_pickled

__all__ = ["BlockLost", "LocalProcesses", "DaskWorkers", "Blocks", "InMemory",
           "dask_client", "engine"]


class BlockLost(RuntimeError):
    """Blocks whose worker died or forgot them (``blocks``: their numbers)."""

    def __init__(self, blocks, cause=None):
        self.blocks = sorted(set(int(k) for k in blocks))
        self.cause = cause
        super().__init__(f"the worker of block(s) {self.blocks} is gone"
                         + (f" ({type(cause).__name__}: {cause})" if cause else ""))


#: what the forkserver imports before it starts worker processes: the blocks' code
#: and its dependencies (seconds per worker otherwise)
PRELOAD = ("structsvm.learners._blocks", "structsvm.learners.partitioned_cd",
           "structsvm.learners.memory", "structsvm.structures.sequence.features")


class LocalProcesses:
    """Worker processes on this machine, each a ``concurrent.futures`` process
    executor of one process (started by the forkserver where there is one, else
    spawned: a clean interpreter, not a copy of this one's threads); block k lives
    in process k mod ``n_processes``, so that its tasks always reach the process
    that holds it. Arguments travel pickled by cloudpickle (a structure whose class
    lives in the script itself reaches the workers too)."""

    kind = "processes"
    same_host = True

    def __init__(self, n_blocks, n_processes=None):
        self.n_blocks = int(n_blocks)
        self.n_processes = self.n_blocks if n_processes is None else \
            max(1, min(int(n_processes), self.n_blocks))
        self._executors = [None] * self.n_processes

    def _executor(self, k):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        k %= self.n_processes
        if self._executors[k] is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                context = multiprocessing.get_context("forkserver")
                # the server imports these once; every worker starts with them
                # (a no-op once the server runs)
                context.set_forkserver_preload(list(PRELOAD))
            else:
                context = multiprocessing.get_context("spawn")
            self._executors[k] = ProcessPoolExecutor(max_workers=1, mp_context=context)
        return self._executors[k]

    def start(self):
        """Start the worker processes in the background: their start (the
        forkserver's imports first) overlaps with this process pickling the first
        tasks, which then wait for them."""
        import threading

        executors = [self._executor(k) for k in range(self.n_processes)]

        def warm():
            for ex in executors:
                try:
                    ex.submit(int)  # a no-op task starts the executor's process
                except Exception:  # noqa: BLE001 - the first real task reports it
                    return

        threading.Thread(target=warm, name="structsvm-workers-start",
                         daemon=True).start()

    def share(self, obj):
        """What tasks receive for ``obj`` (here: the object, pickled with each task)."""
        return obj

    def submit(self, k, token, method, args, spec=None):
        """Run ``method(*args)`` on block k of the fit ``token`` in its process (a
        future; ``spec`` opens the block)."""
        import cloudpickle

        if spec is not None and any(isinstance(s, DaskPart) for s in spec.sources):
            raise ValueError("a Dask bag trains on the workers of its Dask cluster: "
                             "fit inside joblib.parallel_config(backend='dask')")
        payload = cloudpickle.dumps((args, spec))
        return self._executor(k).submit(run_pickled, token, k, method, payload)

    def result(self, k, future):
        """The result of block k's task; :class:`BlockLost` when its process died."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future.result()
        except BrokenProcessPool as exc:
            self._drop(k)
            raise BlockLost([k], exc) from None

    def _drop(self, k):
        k %= self.n_processes
        ex, self._executors[k] = self._executors[k], None
        if ex is not None:
            ex.shutdown(wait=False, cancel_futures=True)

    def placed(self, k, address):
        """(Dask's engine follows where a block was opened; a process is fixed.)"""

    def map(self, func, items):
        """``[func(item) for item in items]``, the items spread over the workers in
        turn (results in order); a worker that dies raises :class:`BlockLost`."""
        import cloudpickle

        futures = [self._executor(j).submit(run_function, cloudpickle.dumps((func, item)))
                   for j, item in enumerate(items)]
        return [self.result(j, f) for j, f in enumerate(futures)]

    def lost(self, k):
        """Block k's process forgot it: start a fresh process for it."""
        self._drop(k)

    def close(self):
        """Stop the worker processes (after their running tasks)."""
        for k in range(self.n_processes):
            ex, self._executors[k] = self._executors[k], None
            if ex is not None:
                ex.shutdown(wait=True, cancel_futures=True)


class DaskWorkers:
    """The blocks on the workers of a Dask cluster, spread evenly over them; a
    block's tasks name its worker (``workers=[address]``), and go to another one
    when that worker has left the cluster."""

    kind = "dask"

    def __init__(self, client, n_blocks):
        self.client = client
        self.n_blocks = int(n_blocks)
        alive = self._alive()
        if not alive:
            raise RuntimeError("the Dask cluster has no workers")
        self.placement = [alive[k % len(alive)] for k in range(self.n_blocks)]
        self.same_host = _on_this_machine(
            info["host"] for info in
            self.client.scheduler_info(n_workers=-1)["workers"].values())

    def _alive(self):
        return sorted(self.client.scheduler_info(n_workers=-1)["workers"])

    def start(self):
        """(The cluster's workers are running already.)"""

    def share(self, obj):
        """A future of ``obj`` on every worker (sent once, not with each task)."""
        return self.client.scatter(obj, broadcast=True, hash=False)

    def submit(self, k, token, method, args, spec=None):
        """Run ``method(*args)`` on block k of the fit ``token`` on its worker (a Dask
        future; ``spec`` opens the block, its Dask partitions computed on the
        cluster and passed in)."""
        if spec is not None:  # its Dask partitions computed on the cluster, passed in
            parts = [s for s in spec.sources if isinstance(s, DaskPart)]
            if parts:
                args = ([self.client.compute(p.delayed) for p in parts],)
                spec = replace(spec, sources=[DaskPart(None, s.name)
                                              if isinstance(s, DaskPart) else s
                                              for s in spec.sources])
        return self.client.submit(run_block, token, k, method, args, spec,
                                  workers=[self.placement[k]], allow_other_workers=True,
                                  pure=False)

    def result(self, k, future):
        """The result of block k's task; :class:`BlockLost` when its worker died."""
        from distributed import KilledWorker

        try:
            return future.result()
        except (KilledWorker, OSError) as exc:  # CommClosedError is an OSError
            self._move(k)
            raise BlockLost([k], exc) from None

    def _move(self, k):
        alive = self._alive()
        if not alive:
            raise RuntimeError("every worker of the Dask cluster is gone")
        if self.placement[k] not in alive:
            used = [a for j, a in enumerate(self.placement) if j != k and a in alive]
            self.placement[k] = min(alive, key=used.count)

    def map(self, func, items):
        """``[func(item) for item in items]`` on the cluster's workers (Dask places
        the tasks; a task whose worker dies is run again on another)."""
        futures = self.client.map(func, list(items), pure=False)
        return self.client.gather(futures)

    def placed(self, k, address):
        """Block k was opened on the worker at ``address``: its tasks go there."""
        if address is not None:
            self.placement[k] = address

    def lost(self, k):
        """Block k's worker answered that it does not hold it: open it again on a
        worker that is alive."""
        self._move(k)

    def close(self):
        """(The cluster is the user's: nothing to stop.)"""


def _on_this_machine(hosts):
    """Whether every host named is this machine (its loopback, name or address)."""
    import socket

    here = {"127.0.0.1", "localhost", "::1", socket.gethostname()}
    try:
        here.add(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    return all(h in here for h in hosts)


def engine(n_jobs, n_tasks=None):
    """The engine for work spread over workers: the Dask client of an enclosing
    ``joblib.parallel_config(backend="dask")``, else ``n_jobs`` worker processes
    (joblib's ``n_jobs``: -1 every core), or None when that is one (this process).
    ``n_tasks`` caps the number of processes."""
    client = dask_client()
    if client is not None:
        n = len(client.scheduler_info(n_workers=-1)["workers"])
        return DaskWorkers(client, n if n_tasks is None else max(1, min(n, n_tasks)))
    from joblib import effective_n_jobs

    n = effective_n_jobs(n_jobs)
    if n_tasks is not None:
        n = min(n, n_tasks)
    return LocalProcesses(n) if n >= 2 else None


def dask_client():
    """The Dask client of an enclosing ``joblib.parallel_config(backend="dask")``, or
    None when joblib's active backend is not Dask's."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    from distributed import get_client

    return get_client()


class Blocks:
    """The driver's handle on the blocks of one fit (what the partitioned learner's
    rounds call): ``call(method, args)`` runs ``method(*args[k])`` on every block k
    and returns the results in block order.

    Parameters
    ----------
    engine : LocalProcesses or DaskWorkers
    sources : list of list
        Per block, the sources of its examples (read by its worker).
    seeds : list of int
    examples : list of ndarray, optional
        Per block, the numbers of its examples in the whole data (for messages).
    """

    def __init__(self, engine, sources, seeds, examples=None):
        from ._blocks import BlockSpec

        self.engine = engine
        self.token = uuid.uuid4().hex
        self.specs = [BlockSpec(self.token, k, list(src), int(seed),
                                info={} if examples is None else
                                {"examples": examples[k]})
                      for k, (src, seed) in enumerate(zip(sources, seeds))]
        self.sizes = [0] * len(self.specs)
        self.prepared = None  # the prepare arguments, to open a lost block again
        self.opened = []

    @property
    def n_blocks(self):
        """The number of blocks."""
        return len(self.specs)

    @property
    def n_samples(self):
        """The examples of all blocks (once opened)."""
        return int(sum(self.sizes))

    @property
    def shares_memory(self):
        """Whether every worker runs on this machine (it can map a shared file)."""
        return bool(self.engine.same_host)

    def _run(self, method, args, ks=None, spec=False):
        ks = range(self.n_blocks) if ks is None else ks
        futures = {k: self.engine.submit(k, self.token, method, args[k],
                                         self.specs[k] if spec else None) for k in ks}
        out, lost, cause = {}, [], None
        for k, f in futures.items():
            try:
                r = self.engine.result(k, f)
            except BlockLost as exc:
                lost.append(k)
                cause = exc.cause
                continue
            if r is MISSING:
                self.engine.lost(k)
                lost.append(k)
                continue
            out[k] = r
        if lost:
            raise BlockLost(lost, cause)
        return [out[k] for k in ks]

    def open(self):
        """Every block's data read by its worker; returns what each worker said."""
        self.engine.start()
        self.opened = self._run("open", [()] * self.n_blocks, spec=True)
        for k, r in enumerate(self.opened):
            self.engine.placed(k, r.get("address"))
        self.sizes = [int(r["n"]) for r in self.opened]
        return self.opened

    def summarize(self, prototype):
        """Every block's ``fit_summary`` of its data (the map ``prototype`` unfitted)."""
        shared = self.engine.share(prototype)
        return self._run("summarize", [(shared,)] * self.n_blocks)

    def prepare(self, feature_map, decoder, loss, C, rescaling, learner):
        """Each block encodes its data and makes its local solver (its memory checked
        against its worker's budget, and ``STRUCTSVM_MAX_MEMORY`` of this process)."""
        from ..limits import configured_limit

        self.prepared = (feature_map, decoder, loss, C, rescaling, learner,
                         configured_limit())
        shared = self.engine.share(self.prepared)
        out = self._run("prepare_shared", [(shared,)] * self.n_blocks)
        self.sizes = [int(r["n"]) for r in out]
        return out

    def call(self, method, args):
        """``method(*args[k])`` on every block k (raises :class:`BlockLost`)."""
        return self._run(method, list(args))

    def reopen(self, ks):
        """Open blocks ``ks`` again (their data read again, encoded with the fitted
        map, no dual variables: they start from zero)."""
        ks = list(ks)
        for k, r in zip(ks, self._run("open", [()] * self.n_blocks, ks=ks, spec=True)):
            self.engine.placed(k, r.get("address"))
        shared = self.engine.share(self.prepared)
        self._run("prepare_shared", [(shared,)] * self.n_blocks, ks=ks)

    def close(self):
        """Forget the blocks on their workers, and close the engine."""
        try:
            for k in range(self.n_blocks):
                try:
                    self.engine.result(k, self.engine.submit(k, self.token, "close", ()))
                except Exception:  # a worker already gone holds nothing to close
                    pass
        finally:
            self.engine.close()
