"""Chunks of examples on a pool of workers kept across rounds (private).

The oracle of a training round is a map over chunks of examples. :class:`ChunkPool`
runs that map on whatever joblib backend is active — threads by default (the numba
kernels release the GIL), loky processes, a Dask cluster or Ray through
``joblib.parallel_config(backend=...)`` — and keeps the pool open from one round to
the next (joblib's managed ``Parallel`` context), instead of starting one per call.

Large shared data go to each worker once. The object that owns the data (the
:class:`~structsvm.problem.Problem`) is registered under a random token; a task
carries only the token, the weights and its chunk. A worker in the same process
(threads, a Dask cluster with ``processes=False``) finds the object in this
process's registry. A worker in another process keeps the copies it has received
in a small cache; the first call sends one priming task per worker with the data,
and a task that lands on a worker without them answers "missing" and is sent again
with the data. :attr:`ChunkPool.shipments` counts the copies sent.

Chunks are laid out by the caller from the number of examples only, and results
come back in chunk order, so a parallel run computes exactly the floating-point
operations of a serial run: the results are identical, whatever the number of
workers. A caller that needs random numbers in a chunk gets one seed per chunk
(spawned from one ``numpy.random.SeedSequence`` by chunk index), so those too do not
depend on which worker ran what.
"""
from __future__ import annotations

import os
import threading
import uuid
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["ChunkPool", "chunk_seeds"]

#: objects of this process that own shared data, by token (weak: they own the pool)
_LOCAL: "weakref.WeakValueDictionary[str, object]" = weakref.WeakValueDictionary()
#: copies received from another process, by token (most recent last)
_RECEIVED: "OrderedDict[str, object]" = OrderedDict()
_RECEIVED_MAX = 2
_LOCK = threading.Lock()


class _Missing:
    """A worker's answer when it does not hold the shared data of a task."""


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
    """Receive the data (by unpickling ``handle``); report where this ran."""
    return os.getpid(), handle.resolve() is not None


def _run_group(handle, method, w, chunks, args, seeds):
    obj = handle.resolve()
    if obj is None:
        return _Missing()
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

    Attributes
    ----------
    shipments : int
        Copies of the payload sent to workers so far.
    workers : set of int
        Process ids of the workers that ran priming tasks.
    in_process : bool or None
        Whether the workers share this process (threads), once known.
    """

    def __init__(self, owner, n_jobs, prefer="threads"):
        self.token = uuid.uuid4().hex
        _LOCAL[self.token] = owner
        self.n_jobs = n_jobs
        self.prefer = prefer
        self.shipments = 0
        self.workers = set()
        self.in_process = None
        self._parallel = None
        self._n_workers = 1

    # ------------------------------------------------------------------ lifecycle
    def _open(self):
        from joblib import Parallel, effective_n_jobs

        self._n_workers = max(1, int(effective_n_jobs(self.n_jobs)))
        # batch_size=1: this class groups chunks itself; max_nbytes=None: no hashing
        # and memory-mapping of the (round-specific) weights by loky on every call
        self._parallel = Parallel(n_jobs=self.n_jobs, prefer=self.prefer, batch_size=1,
                                  max_nbytes=None)
        self._parallel.__enter__()
        self._prime()

    def close(self):
        """Release the workers (the joblib context); safe to call twice."""
        parallel, self._parallel = self._parallel, None
        _LOCAL.pop(self.token, None)
        if parallel is not None:
            parallel.__exit__(None, None, None)

    def _prime(self):
        from joblib import delayed

        handle = _Handle(self.token, self._payload())
        seen = self._parallel(delayed(_prime)(handle) for _ in range(self._n_workers))
        pids = {pid for pid, _ in seen}
        self.in_process = pids == {os.getpid()}
        if not self.in_process:
            self.shipments += self._n_workers
        self.workers |= pids

    def _payload(self):
        owner = _LOCAL.get(self.token)
        if owner is None:
            raise RuntimeError("the pool's owner is gone")
        return owner.worker_copy()

    # ------------------------------------------------------------------ the map
    def map(self, method, w, chunks, args=(), seed=None):
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

        Returns
        -------
        list
        """
        from joblib import delayed

        if self._parallel is None:
            self._open()
        seeds = chunk_seeds(seed, len(chunks))
        if self.in_process:
            groups = [[k] for k in range(len(chunks))]
        else:  # one task per worker: the weights travel once per worker
            groups = [g.tolist() for g in np.array_split(np.arange(len(chunks)),
                                                        self._n_workers) if len(g)]
        results = [None] * len(groups)
        todo = list(range(len(groups)))
        for attempt in range(3):
            payload = None if attempt == 0 else self._payload()
            handle = _Handle(self.token, payload)
            out = self._parallel(
                delayed(_run_group)(handle, method, w, [chunks[k] for k in groups[g]], args,
                                    None if seeds is None else [seeds[k] for k in groups[g]])
                for g in todo)
            if payload is not None:
                self.shipments += len(todo)
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
