"""What ``fit`` does when the learner's blocks run on workers: the data partitioned
over worker processes of this machine or the workers of a Dask cluster, each worker
reading (or receiving) its own partitions, the feature map fitted from their
summaries, and the partitioned learner's rounds (see
:mod:`structsvm.learners.partitioned_cd`).

The fitting process holds w and what the workers report about their blocks; the
examples stay with the workers (given in memory, each block's share is sent to its
worker once; given as a :class:`~structsvm.corpora.partitions.Partitioned` source,
the workers read them where they live).
"""
from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from . import _checkpoints
from ._training import (RoundTracker, StopTraining, checkpoint_writer,
                        convergence_message, fitted_maker, log_start,
                        sigint_stops_after_round)
from .. import _progress
from ..io import check_writable
from ..learners.engines import (BlockLost, Blocks, DaskWorkers, InMemory,
                                LocalProcesses, dask_client)
from ..learners import get_learner
from ..protocols import DaskPart, Partitioned, as_sequence, capability, plugin_name

logger = logging.getLogger("structsvm")

__all__ = ["engine_for", "run_partitioned_fit", "is_partitioned", "fit_on_workers",
           "predict_partitioned"]


def is_partitioned(X):
    """Whether ``X`` is a partitioned data set (its partitions read by workers)."""
    return isinstance(X, Partitioned)


def engine_for(learner, n_jobs, n_samples=None):
    """The engine the blocks of ``learner`` run on, or None (in this process).

    A Dask client of an enclosing ``joblib.parallel_config(backend="dask")``: its
    workers; else ``n_jobs`` ≥ 2 (or that of an enclosing ``parallel_config``):
    worker processes of this machine.
    """
    if not capability(learner, "runs_blocks"):
        return None
    client = dask_client()
    if client is not None:
        workers = len(client.scheduler_info(n_workers=-1)["workers"])
        K = learner.n_partitions or workers
        return DaskWorkers(client, K if n_samples is None else min(K, n_samples))
    from joblib import effective_n_jobs

    n = effective_n_jobs(n_jobs)
    if n < 2:
        return None
    K = learner.n_partitions or n
    if n_samples is not None:
        K = min(K, n_samples)
    return LocalProcesses(K, n_processes=min(n, K))


def fit_on_workers(res, X, Y, *, previous=None, checkpoint=None, resume=None,
                   checkpoint_every=60.0):
    """The fit on workers when the learner runs blocks on an engine (n_jobs ≥ 2, a
    Dask cluster) or X is partitioned; None when the fit runs in this process.

    Raises
    ------
    ValueError
        Partitioned data without workers; a warm start, which training on workers
        does not take.
    """
    partitioned = is_partitioned(X)
    learner = res.learner_for(res.prototype())
    if partitioned and res.learner is None and res.constraints is None \
            and not capability(learner, "runs_blocks"):
        # the map's default learner needs the data in this process: partitioned
        # data train with the learner that runs on the workers instead
        learner = get_learner("partitioned_cd")
    if not (partitioned or capability(learner, "runs_blocks")):
        return None
    if partitioned and not capability(learner, "runs_blocks"):
        raise ValueError(f"a partitioned data set trains with a learner whose work runs "
                         f"on the workers ('partitioned_cd'), not {learner.name!r}")
    engine = engine_for(learner, res.n_jobs,
                        None if partitioned else len(as_sequence(X, "X")))
    if engine is None:
        if partitioned:
            raise ValueError("a partitioned data set is read by workers: train with "
                             "n_jobs >= 2, or inside joblib.parallel_config("
                             "backend='dask') with a Dask client")
        return None
    if previous is not None:
        engine.close()
        raise ValueError(f"learner {learner.name!r} on workers does not continue a "
                         "previous fit (warm_start); resume from a checkpoint instead")
    return run_partitioned_fit(res, X, Y, learner, engine, checkpoint=checkpoint,
                               resume=resume, checkpoint_every=checkpoint_every)


def _block_sources(X, Y, K):
    """Per block its sources, and the numbers of its examples in X (in memory:
    example i goes to block i mod K)."""
    if is_partitioned(X):
        parts = list(X.partitions())
        sources = [parts[k::K] for k in range(K)]
        return sources, None
    n = len(X)
    examples = [np.arange(k, n, K) for k in range(K)]
    sources = [[InMemory([X[i] for i in idx], [Y[i] for i in idx])] for idx in examples]
    return sources, examples


def run_partitioned_fit(res, X, Y, learner, engine, *, checkpoint=None, resume=None,
                        checkpoint_every=60.0):
    """Train ``learner`` on blocks run by ``engine`` (see the module).

    Parameters
    ----------
    res : Resolution
    X, Y : sequences, or X a partitioned data set and Y None
    learner : a learner that ``runs_blocks``
    engine : LocalProcesses or DaskWorkers
    checkpoint, resume, checkpoint_every
        As :meth:`structsvm.StructuredSVM.fit`: a checkpoint holds every block's
        caches and dual variables (gathered from the workers when it is written), and
        a resumed fit continues from them on the same blocks of the same data.

    Returns
    -------
    Fitted
    """
    from threadpoolctl import threadpool_limits

    from ..learners.partitioned_cd import _block_seeds

    partitioned = is_partitioned(X)
    if not partitioned:
        X = as_sequence(X, "X")
        Y = as_sequence(Y, "Y")
    if checkpoint is not None:
        check_writable(checkpoint)
    ckpt = None
    if resume is not None:
        _checkpoints.check_resumable(learner)
        ckpt = _checkpoints.read_resume(res, resume)
    K = engine.n_blocks
    sources, examples = _block_sources(X, Y, K)
    blocks = Blocks(engine, sources, _block_seeds(res.random_state, K), examples)
    # the workers compute on the cores; this process's BLAS in one thread meanwhile
    limits = threadpool_limits(limits=1)
    t0 = time.perf_counter()
    try:
        try:
            blocks.open()
        except BlockLost as exc:
            raise RuntimeError(
                f"the worker processes could not start or read their data ({exc}). "
                "A script that trains on worker processes must guard its top level "
                "with `if __name__ == \"__main__\":` (the workers import it)") from None
        if blocks.n_samples == 0:
            raise ValueError("Cannot fit on an empty data set (the partitions hold no "
                             "examples)")
        fm = _fitted_map(res, X, Y, blocks, partitioned, ckpt)
        decoder, loss = res.plugins(fm)
        if res.learner is not None:  # refuses what it cannot train, naming it
            res.learner_for(fm, plugins=(fm, decoder, loss, res.rescaling))
        elif type(loss).decomposition == "dataset":
            raise ValueError(f"loss {plugin_name(loss)!r} is a function of the whole "
                             "data set's labelling: training on workers needs a loss "
                             "that sums over the examples")
        C = res.C_for(fm, loss)
        tol = res.tol_for(fm, loss)
        t1 = time.perf_counter()
        prepared = blocks.prepare(fm, decoder, loss, C, res.rescaling, learner)
        fingerprint = None
        if checkpoint is not None or ckpt is not None:
            fingerprint = _fingerprint(blocks, C)
        state, done, curve0, max_iter = None, 0, [], res.max_iter
        if ckpt is not None:
            done, curve0, max_iter = _checkpoints.resume_point(
                ckpt, fingerprint, resume, max_iter,
                "other training data, another C or other blocks (n_partitions)", "passes")
            state = _checkpoints.resume_state(learner, ckpt[1], resume)
        if res.verbose:
            log_start(learner, blocks.n_samples, fm)
            logger.info("%d blocks on %s: data read and the map fitted in %.2f s, "
                        "blocks encoded in %.2f s", K, engine.kind, t1 - t0,
                        time.perf_counter() - t1)
        w0 = np.zeros(fm.n_features_)

        fitted_at = fitted_maker(fm, decoder=decoder, loss=loss, learner=learner, C=C,
                                 tol=tol, learner_state={
                                     "blocks": [dict(p) for p in prepared],
                                     "engine": engine.kind})
        writer = checkpoint_writer(checkpoint, res, fitted_at, fingerprint)
        with sigint_stops_after_round() as flag:
            bar = _progress.RoundBar(learner.name, max_iter, tol, done) \
                if res.verbose and _progress.on_terminal() else None
            tracker = RoundTracker(w0, flag, res.verbose, done, curve0, writer,
                                   checkpoint_every, bar)
            try:
                result = learner.run(blocks, fm.n_features_, C, w0, max_iter=max_iter,
                                     tol=tol, callback=tracker, state=state)
            except (StopTraining, KeyboardInterrupt):
                result = None
            finally:
                if bar is not None:
                    bar.close()
            if result is None and writer is not None:  # the blocks' state, while open
                writer(tracker, complete=False)
    finally:
        blocks.close()
        limits.restore_original_limits()

    if result is None:
        fitted = fitted_at(tracker.best_w, tracker.best_fitted(), interrupted=True)
        warnings.warn(f"Training interrupted (Ctrl-C) after {tracker.rounds} rounds: "
                      f"coef_ holds the best weights so far (objective "
                      f"{fitted.objective:.6g}); converged_ is False",
                      ConvergenceWarning, stacklevel=4)
        return fitted
    if not math.isfinite(result.objective):
        raise ValueError(f"learner {plugin_name(learner)!r} returned a non-finite "
                         "objective")
    fitted = fitted_at(result.w, {
        "objective_": result.objective,
        "objective_curve_": curve0 + list(result.objective_curve),
        "n_iter_": done + int(result.n_iter), "duality_gap_": result.duality_gap,
        "converged_": result.converged})
    if writer is not None:
        writer(tracker, complete=True, fitted=fitted)
    if not result.converged:
        warnings.warn(convergence_message(learner.name, result, tol), ConvergenceWarning,
                      stacklevel=4)
    return fitted


def _fitted_map(res, X, Y, blocks, partitioned, ckpt):
    """The feature map: a checkpoint's (resume), else fitted from the blocks'
    summaries, else (a map without them, data in lists) fitted here."""
    if ckpt is not None:
        return ckpt[0].feature_map
    fm = clone(res.prototype())
    if capability(fm, "fit_summary") is not None:
        return fm.fit_from_summaries(blocks.summarize(fm))
    if not partitioned:
        return fm.fit(X, Y)
    raise TypeError(f"{type(fm).__name__} cannot be fitted from partitions read by the "
                    "workers (it has no fit_summary); give the data as lists, or use a "
                    "map that has one")


def _fingerprint(blocks, C):
    """SHA-256 of every block's examples (their fingerprints, in block order) and C."""
    import hashlib

    h = hashlib.sha256()
    for fp in blocks.call("fingerprint", [((None, None),)] * blocks.n_blocks):
        h.update(fp.encode())
    h.update(np.asarray([C], dtype=float).tobytes())
    return h.hexdigest()


class _PredictPart:
    """The predictions of one partition's inputs (a task run by a worker)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, source):
        X, _ = source.read()
        return self.model.predict(X)


def _bag_predictions(model):
    def predict(pairs):
        pairs = list(pairs)
        return [model.predict([x for x, _ in pairs])]
    return predict


def predict_partitioned(model, X):
    """Per partition of ``X``, the predictions of its inputs, computed by the worker
    that reads it (``model.n_jobs`` processes, or the Dask cluster of an enclosing
    ``joblib.parallel_config(backend="dask")``; in this process when neither)."""
    from ..learners.engines import engine

    parts = X.partitions()
    if parts and isinstance(parts[0], DaskPart):
        return list(X.bag.map_partitions(_bag_predictions(model)).compute())
    runner = engine(model.n_jobs, len(parts))
    task = _PredictPart(model)
    try:
        return [task(p) for p in parts] if runner is None else runner.map(task, parts)
    finally:
        if runner is not None:
            runner.close()
