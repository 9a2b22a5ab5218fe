"""Chunks of examples on a pool of workers kept across rounds (private).

The oracle of a training round is a map over chunks of examples. :class:`ChunkPool`
runs that map on whatever joblib backend is active — threads by default (the numba
loops release the GIL), loky processes, a Dask cluster or Ray through
``joblib.parallel_config(backend=...)`` — and keeps the pool open from one round to
the next (joblib's managed ``Parallel`` context), instead of starting one per call.

Large shared data go to each worker once. The object that owns the data (the
:class:`~structsvm.learners.problem.Problem`) is registered under a random token; a task
carries only the token, the weights and its chunk. A worker in the same process
(threads, a Dask cluster with ``processes=False``) finds the object in this
process's registry. A worker in another process keeps the copies it has received
in a small cache; the first call sends one priming task per worker with the data,
and a task that lands on a worker without them answers "missing" and is sent again
with the data. :attr:`ChunkPool.shipments` counts the copies sent.

The weights change every round. Workers in other processes get them through a file
in shared memory (``/dev/shm``) that the pool rewrites before each call and the
workers map read-only, so on one machine a round copies w once, whatever the number
of workers; a worker that cannot open the file (another host) answers "missing" and
the pool sends the weights with the tasks from then on (once per worker and call:
the chunks of a call are grouped into one task per worker).

Chunks are laid out by the caller from the number of examples only, and results
come back in chunk order, so a parallel run computes exactly the floating-point
operations of a serial run: the results are identical, whatever the number of
workers. A caller that needs random numbers in a chunk gets one seed per chunk
(spawned from one ``numpy.random.SeedSequence`` by chunk index), so those too do not
depend on which worker ran what.

When the priming tasks show that the workers are the threads of a
``multiprocessing.pool.ThreadPool`` in this process — joblib's threading backend,
the default here — the chunks go to a ``concurrent.futures.ThreadPoolExecutor`` of
as many threads instead, which hands back each result as it is done: joblib's
``Parallel`` looks for finished tasks every 10 ms, which on an oracle call of a few
tens of milliseconds is a large share. Other backends (loky, Dask — also with
``processes=False`` —, Ray) keep receiving the tasks through joblib.
"""
from __future__ import annotations

import os
import tempfile
import threading
import uuid
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["ChunkPool", "ProcessShare", "chunk_seeds", "loky_is_active"]

#: objects of this process that own shared data, by token (weak: they own the pool)
_LOCAL: "weakref.WeakValueDictionary[str, object]" = weakref.WeakValueDictionary()
#: copies received from another process, by token (most recent last)
_RECEIVED: "OrderedDict[str, object]" = OrderedDict()
_RECEIVED_MAX = 2
_LOCK = threading.Lock()


class _Missing:
    """A worker's answer when it does not hold the shared data (or weights) of a task."""

    def __init__(self, weights=False):
        self.weights = weights


class _SharedWeights:
    """The round's weights in a shared-memory file: [version, w_0 .. w_{D-1}] as float64."""

    def __init__(self, size):
        folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, self.path = tempfile.mkstemp(prefix="structsvm-w-", suffix=".f8", dir=folder)
        os.close(fd)
        self.size = int(size)
        self._file = np.memmap(self.path, dtype=np.float64, mode="w+", shape=(self.size + 1,))
        self.version = 0

    def publish(self, w):
        """Write ``w`` for the next call; the reference workers resolve."""
        self.version += 1
        self._file[1:] = w
        self._file[0] = self.version
        return _WeightsRef(self.path, self.size, self.version)

    def close(self):
        self._file = None
        try:
            os.unlink(self.path)
        except OSError:
            pass


class _WeightsRef:
    """Names the shared weights of one call; a worker maps the file (once) to read them."""

    def __init__(self, path, size, version):
        self.path, self.size, self.version = path, size, version

    def get(self):
        """The weights (read-only), or None when the file is not there or is stale."""
        with _LOCK:
            mapped = _MAPPED.get(self.path)
            if mapped is None:
                try:
                    mapped = np.memmap(self.path, dtype=np.float64, mode="r",
                                       shape=(self.size + 1,))
                except (OSError, ValueError):
                    return None
                _MAPPED.clear()  # one pool's file at a time per worker
                _MAPPED[self.path] = mapped
        if mapped[0] != self.version:
            return None
        return np.asarray(mapped[1:])


_MAPPED: dict = {}


class _Handle:
    """A token naming shared data; pickles as the token, plus the data when asked."""

    def __init__(self, token, payload=None):
        self.token = token
        self.payload = payload

    def __reduce__(self):
        return _restore_handle, (self.token, self.payload)

    def resolve(self):
        obj = _LOCAL.get(self.token)
        if obj is None:
            with _LOCK:
                obj = _RECEIVED.get(self.token)
                if obj is not None:
                    _RECEIVED.move_to_end(self.token)
        return obj


def _restore_handle(token, payload):
    if payload is not None and token not in _LOCAL:
        with _LOCK:
            _RECEIVED[token] = payload
            _RECEIVED.move_to_end(token)
            while len(_RECEIVED) > _RECEIVED_MAX:
                _RECEIVED.popitem(last=False)
    return _Handle(token)


def _prime(handle):
    """Receive the data (by unpickling ``handle``); report where this ran: the
    process, and whether on a thread of a ``multiprocessing.pool.ThreadPool``."""
    from multiprocessing.dummy import DummyProcess

    handle.resolve()
    return os.getpid(), isinstance(threading.current_thread(), DummyProcess)


def _run_group(handle, method, w, chunks, args, seeds):
    obj = handle.resolve()
    if obj is None:
        return _Missing()
    if isinstance(w, _WeightsRef):
        w = w.get()
        if w is None:
            return _Missing(weights=True)
    func = getattr(obj, method)
    if seeds is None:
        return [func(w, c, *args) for c in chunks]
    return [func(w, c, *args, rng=np.random.default_rng(s)) for c, s in zip(chunks, seeds)]


def chunk_seeds(seed, n_chunks):
    """One independent seed per chunk, by chunk index (``SeedSequence.spawn``).

    Parameters
    ----------
    seed : int or None
        Entropy of the parent ``SeedSequence`` (None: no seeds).
    n_chunks : int

    Returns
    -------
    list of numpy.random.SeedSequence or None

    Examples
    --------
    >>> import numpy as np
    >>> a, b = chunk_seeds(7, 2)
    >>> np.random.default_rng(a).random() != np.random.default_rng(b).random()
    True
    >>> chunk_seeds(7, 3)[1].spawn_key
    (1,)
    """
    if seed is None:
        return None
    return np.random.SeedSequence(seed).spawn(n_chunks)


def worker_count(n_jobs, n_tasks=None):
    """The workers to start for ``n_jobs``: joblib's count, capped at what the active
    backend has (every core of this machine, or a cluster's workers under a Dask or
    Ray backend) and at ``n_tasks``, the work there is; at least 1.

    Parameters
    ----------
    n_jobs : int or None
        joblib's ``n_jobs`` (-1: every core; None: the active
        ``joblib.parallel_config``'s).
    n_tasks : int, optional

    Returns
    -------
    int

    Examples
    --------
    >>> worker_count(100000, n_tasks=1)
    1
    >>> import os
    >>> worker_count(100000) <= (os.cpu_count() or 1)
    True
    """
    from joblib import effective_n_jobs

    n = min(int(effective_n_jobs(n_jobs)), int(effective_n_jobs(-1)))
    if n_tasks is not None:
        n = min(n, int(n_tasks))
    return max(1, n)


class ChunkPool:
    """Map ``getattr(owner, method)(w, chunk, *args)`` over chunks, on joblib workers.

    Parameters
    ----------
    owner : object
        Holds the shared data (weakly referenced here: the owner owns the pool).
        ``owner.worker_copy()`` returns the picklable copy that workers in other
        processes receive (once each).
    n_jobs : int or None
        joblib's ``n_jobs`` (None: the active ``joblib.parallel_config``'s).
    prefer : {"threads", "processes"}
        joblib's soft hint; an explicit ``joblib.parallel_config(backend=...)`` wins.
    n_tasks : int, optional
        The most chunks a call maps: no more workers are started
        (:func:`worker_count`).

    Attributes
    ----------
    shipments : int
        Copies of the payload sent to workers so far.
    workers : set of int
        Process ids of the workers that ran priming tasks.
    in_process : bool or None
        Whether the workers share this process (threads), once known.
    direct : bool or None
        Whether the chunks go to this pool's own threads (the workers were those of
        joblib's threading backend), once known.
    takes_share : bool
        False: the workers take every chunk of a call (:meth:`map`), unlike
        :class:`ProcessShare`.
    """

    takes_share = False

    def __init__(self, owner, n_jobs, prefer="threads", n_tasks=None):
        self.token = uuid.uuid4().hex
        _LOCAL[self.token] = owner
        self.n_jobs = n_jobs
        self.n_tasks = n_tasks
        self.prefer = prefer
        self.shipments = 0
        self.workers = set()
        self.in_process = None
        self.direct = None
        self._parallel = None
        self._threads = None  # the executor of direct mode
        self._n_workers = 1
        self._weights = None       # shared weights file (workers in other processes)
        self.weights_by_value = 0  # tasks that carried w itself (workers on other hosts)

    # ------------------------------------------------------------------ lifecycle
    def _open(self):
        from joblib import Parallel

        self._n_workers = worker_count(self.n_jobs, self.n_tasks)
        # batch_size=1: this class groups chunks itself; max_nbytes=None: no hashing
        # and memory-mapping of the (round-specific) weights by loky on every call
        self._parallel = Parallel(n_jobs=self._n_workers, prefer=self.prefer,
                                  batch_size=1, max_nbytes=None)
        self._parallel.__enter__()
        self._prime()

    def close(self):
        """Release the workers (the joblib context); safe to call twice."""
        parallel, self._parallel = self._parallel, None
        threads, self._threads = self._threads, None
        _LOCAL.pop(self.token, None)
        if threads is not None:
            threads.shutdown(wait=True)
        if parallel is not None:
            parallel.__exit__(None, None, None)
        weights, self._weights = self._weights, None
        if isinstance(weights, _SharedWeights):
            weights.close()

    def _prime(self):
        from joblib import delayed

        handle = _Handle(self.token, self._payload())
        seen = self._parallel(delayed(_prime)(handle) for _ in range(self._n_workers))
        pids = {pid for pid, _ in seen}
        self.in_process = pids == {os.getpid()}
        self.direct = self.in_process and all(pooled for _, pooled in seen)
        if self.direct:
            from concurrent.futures import ThreadPoolExecutor

            self._threads = ThreadPoolExecutor(self._n_workers,
                                               thread_name_prefix="structsvm-chunks")
        if not self.in_process:
            self.shipments += self._n_workers
        self.workers |= pids

    def _payload(self):
        owner = _LOCAL.get(self.token)
        if owner is None:
            raise RuntimeError("the pool's owner is gone")
        return owner.worker_copy()

    def is_in_process(self):
        """Whether the workers are threads of this process (opens the pool to find
        out: joblib's active backend decides)."""
        if self._parallel is None:
            self._open()
        return bool(self.in_process)

    # ------------------------------------------------------------------ the map
    def map(self, method, w, chunks, args=(), seed=None, balance=False):
        """Results of every chunk, in chunk order.

        Parameters
        ----------
        method : str
            Name of the owner's method, called as ``method(w, chunk, *args)`` (and
            ``rng=`` a Generator seeded per chunk when ``seed`` is given).
        w : ndarray
            Weights of this round (sent once per task).
        chunks : list of ndarray of int
        args : tuple
        seed : int, optional
        balance : bool, default=False
            One task per chunk also for workers in other processes (which otherwise
            get one task each: the weights travel once per task unless shared): a
            worker that finishes early takes the next chunk, for chunks of uneven
            cost (a structure written in Python, whose examples cost what its
            methods take on them).

        Returns
        -------
        list
        """
        from joblib import delayed

        if self._parallel is None:
            self._open()
        seeds = chunk_seeds(seed, len(chunks))
        if self.direct and self.in_process:  # this process's threads, without joblib
            handle = _Handle(self.token)
            tasks = [self._threads.submit(_run_group, handle, method, w, [chunk], args,
                                          None if seeds is None else [seeds[k]])
                     for k, chunk in enumerate(chunks)]
            return [r for t in tasks for r in t.result()]
        if self.in_process or (balance and self._weights is not False):
            groups = [[k] for k in range(len(chunks))]
        else:  # one task per worker: the weights travel once per worker
            groups = [g.tolist() for g in np.array_split(np.arange(len(chunks)),
                                                        self._n_workers) if len(g)]
        shared = (not self.in_process and isinstance(w, np.ndarray) and w.ndim == 1
                  and w.dtype == np.float64 and self._weights is not False)
        if shared:
            if self._weights is None or self._weights.size != w.size:
                if self._weights is not None:
                    self._weights.close()
                self._weights = _SharedWeights(w.size)
            w_task = self._weights.publish(w)
        else:
            w_task = w
        results = [None] * len(groups)
        todo = list(range(len(groups)))
        for attempt in range(3):
            missing = [results[g] for g in todo] if attempt else []
            payload = None if not any(not m.weights for m in missing) else self._payload()
            if any(m.weights for m in missing):  # a worker on another host: send w itself
                if isinstance(self._weights, _SharedWeights):
                    self._weights.close()
                self._weights, w_task = False, w
            handle = _Handle(self.token, payload)
            out = self._parallel(
                delayed(_run_group)(handle, method, w_task, [chunks[k] for k in groups[g]],
                                    args,
                                    None if seeds is None else [seeds[k] for k in groups[g]])
                for g in todo)
            if payload is not None:
                self.shipments += len(todo)
            if w_task is w and not self.in_process:
                self.weights_by_value += len(todo)
            for g, res in zip(todo, out):
                results[g] = res
            todo = [g for g in todo if isinstance(results[g], _Missing)]
            if not todo:
                break
        for g in todo:  # workers that keep losing the data: run here
            results[g] = _run_group(_Handle(self.token), method, w,
                                    [chunks[k] for k in groups[g]], args,
                                    None if seeds is None else [seeds[k] for k in groups[g]])
        return [r for g in results for r in g]


# --------------------------------------------------------------------------- shares
def loky_is_active():
    """Whether joblib's active backend for process work is loky (its default): no
    ``joblib.parallel_config(backend=...)`` names another one."""
    from joblib.parallel import BACKENDS, get_active_backend

    backend, _ = get_active_backend(prefer="processes")
    return isinstance(backend, BACKENDS["loky"])


def _receive(handle):
    """A worker's initializer: unpickling ``handle`` registered the shared data; the
    worker's BLAS and OpenMP pools run in one thread (:class:`ProcessShare`)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    handle.resolve()


def _ready():
    return os.getpid()


class ProcessShare:
    """Worker processes that take all shares of a call but the first, which the
    calling process computes itself meanwhile (:meth:`run`).

    For an oracle whose decoding holds the GIL (a structure written in Python) on
    ``n`` cores: ``n - 1`` worker processes of loky (joblib's process library, which
    pickles with cloudpickle) and the calling process keep every core busy, one task
    per worker and call carries only a token, the weights' version in shared memory
    (as :class:`ChunkPool`'s) and its chunks, and each result is handed back as soon
    as it is ready (a future; no polling). The workers receive the owner's
    ``worker_copy()`` once, when they start.

    ``n`` processes on ``n`` cores: while the workers are open, every process runs its
    BLAS and OpenMP thread pools in one thread (``threadpoolctl``; in this process
    from the first :meth:`run` on, in the thread that runs it, the former limits
    coming back on :meth:`close`). A BLAS thread keeps spinning on its
    core for a while after each product (OpenBLAS's threads wait busily for the next
    one), on a core that another of these processes is computing on.

    Parameters
    ----------
    owner : object
        Holds the shared data (weakly referenced here); ``owner.worker_copy()`` is
        what the workers receive.
    n_workers : int
        Worker processes (≥ 1).

    Attributes
    ----------
    takes_share : bool
        True: the caller computes the first share of a call (see :meth:`run`).
    share_here : float
        The fraction of a call's examples the caller computes (adapted per call).
    workers : set of int
        Process ids of the workers, once open.
    """

    takes_share = True

    def __init__(self, owner, n_workers):
        self.token = uuid.uuid4().hex
        _LOCAL[self.token] = owner
        self.n_workers = max(1, int(n_workers))
        self.share_here = 1.0 / (self.n_workers + 1)  # of a call's examples
        self.workers = set()
        self._executor = None
        self._weights = None
        self._limits = None  # this process's thread-pool limits while open

    def open(self):
        """Start the workers and send them the data (blocks until they are ready)."""
        from joblib.externals.loky import ProcessPoolExecutor

        owner = _LOCAL.get(self.token)
        if owner is None:
            raise RuntimeError("the pool's owner is gone")
        handle = _Handle(self.token, owner.worker_copy())
        self._executor = ProcessPoolExecutor(max_workers=self.n_workers,
                                             initializer=_receive, initargs=(handle,))
        futures = [self._executor.submit(_ready) for _ in range(self.n_workers)]
        self.workers = {f.result() for f in futures}

    def close(self):
        """Stop the workers; safe to call twice."""
        executor, self._executor = self._executor, None
        _LOCAL.pop(self.token, None)
        if executor is not None:
            executor.shutdown(wait=False)
        limits, self._limits = self._limits, None
        if limits is not None:
            limits.restore_original_limits()
        weights, self._weights = self._weights, None
        if weights is not None:
            weights.close()

    def run(self, method, w, idx, args, here):
        """``getattr(owner, method)(w, part, *args)`` over ``idx``, split into one
        part per worker and a first part that ``here(part)`` computes in this
        process meanwhile; returns the results of the parts in order.

        The split follows the work, not the count: after each call the share this
        process takes moves by 1 % of the call, up when a worker was still busy as
        this process finished its share, down otherwise (between 10 % and 90 %), so
        that this process and the workers finish together although this process
        also sends the tasks and gathers the results. Every example's answer is
        computed on its own, so where an example goes does not change it."""
        if self._limits is None:  # set in the calling thread (OpenMP's are per thread)
            from threadpoolctl import threadpool_limits

            self._limits = threadpool_limits(limits=1)
        m = len(idx)
        k = min(max(1, int(round(self.share_here * m))), m - 1)
        parts = [p for p in np.array_split(np.asarray(idx)[k:], self.n_workers)
                 if len(p)]
        if self._weights is None or self._weights.size != w.size:
            if self._weights is not None:
                self._weights.close()
            self._weights = _SharedWeights(w.size)
        ref = self._weights.publish(np.ascontiguousarray(w, dtype=np.float64))
        handle = _Handle(self.token)
        futures = [self._executor.submit(_run_group, handle, method, ref, [p], args, None)
                   for p in parts]
        out = [here(np.asarray(idx)[:k])]
        # the workers still busy when this share is done: take more next time
        waiting = not all(f.done() for f in futures)
        for p, f in zip(parts, futures):
            res = f.result()
            if isinstance(res, _Missing):  # a worker that lost the data: here
                res = _run_group(handle, method, w, [p], args, None)
            out.extend(res)
        self.share_here = min(0.9, max(0.1, self.share_here + (0.01 if waiting else -0.01)))
        return out
