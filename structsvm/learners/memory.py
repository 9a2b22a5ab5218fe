"""What a fit will hold in memory, estimated before the learner starts.

:func:`fit_memory` adds up, for a :class:`~structsvm.learners.problem.Problem` and a
learner:

- the data: the encoded inputs and the true joint features Φ(x_i, y_i) (counted
  from their arrays);
- the oracle: the potentials of every example, measured (``tracemalloc``) on a
  sample of up to :data:`SAMPLE` examples and scaled to all of them (by their
  decoding costs where the map gives them, e.g. sentence lengths);
- the learner: what :func:`learner_memory` says it holds, by learner class: copies
  of the weight vector and its caches.

The estimator states the total with ``verbose`` and refuses a fit whose estimate is
above the memory budget (:mod:`structsvm.limits`) before the learner allocates
anything. The formulas are estimates, not bounds: on the four tagging corpora of
the benchmarks what the default fit added to its process was 0.73 to 1.23 times the
estimate (``benchmarks/bench_memory.py``).

A learner written elsewhere tells its own needs by registering a function:
``learner_memory.register(MyLearner)(lambda learner, problem: {...})`` (a
:func:`functools.singledispatch` function).
"""
from __future__ import annotations

import tracemalloc
from functools import singledispatch
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..protocols import capability
from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
from .dual_cd import DualCD
from .frank_wolfe import FrankWolfe
from .multiclass_cd import MulticlassDualCD

__all__ = ["FitMemory", "fit_memory", "learner_memory", "data_bytes", "SAMPLE",
           "WEIGHT_COPIES"]

#: Examples whose potentials are measured to estimate the oracle's memory.
SAMPLE = 32
#: Weight-sized float64 vectors a fit holds at once: the learner's w, the next w a
#: round computes, and the best w the estimator keeps.
WEIGHT_COPIES = 3
#: Bytes of one stored sparse entry (an int32 column and a float64 value).
ENTRY = 12


class FitMemory(NamedTuple):
    """A fit's estimated memory: ``total`` bytes and its ``parts`` (name -> bytes)."""

    total: int
    parts: dict
    n_weights: int


def data_bytes(obj, _seen=None, _depth=0):
    """Bytes held by the numpy arrays and sparse matrices inside ``obj`` (through
    lists, tuples, dicts and the attributes of plain objects, a few levels deep; each
    object counted once).

    Examples
    --------
    >>> import numpy as np
    >>> data_bytes({"a": np.zeros(10), "b": [np.zeros((2, 3), dtype=np.int32)]})
    104
    """
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 6 or isinstance(obj, _PLAIN):
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if sp.issparse(obj):
        return int(obj.data.nbytes) + (ENTRY - 8) * int(obj.nnz) + 8 * (obj.shape[0] + 1)
    if isinstance(obj, (list, tuple)):
        if not obj or isinstance(obj[0], _PLAIN):
            return 0  # Python values (words, labels), not arrays
        return sum(data_bytes(v, seen, _depth + 1) for v in obj)
    if isinstance(obj, dict):
        return sum(data_bytes(v, seen, _depth + 1) for v in obj.values())
    return sum(data_bytes(v, seen, _depth + 1) for v in _attributes(obj).values())


_PLAIN = (str, bytes, int, float, complex, bool, type(None), type, np.generic)


def _attributes(obj):
    """The attributes of a plain object (its ``__dict__`` and ``__slots__``)."""
    try:
        out = dict(vars(obj))
    except TypeError:
        out = {}
    for klass in type(obj).__mro__:
        for name in vars(klass).get("__slots__", ()):
            try:
                out[name] = getattr(obj, name)
            except AttributeError:
                pass
    return out


def _oracle_bytes(problem):
    """The potentials of every example, from a measured sample."""
    n = problem.n_samples
    if n == 0:
        return 0
    idx = np.arange(min(n, SAMPLE))
    w = np.zeros(problem.n_features)
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        potentials = problem.feature_map.batch_potentials(problem.Xe, w, idx)
        used = max(0, tracemalloc.get_traced_memory()[1] - before)
        del potentials
    finally:
        if not tracing:
            tracemalloc.stop()
    costs = capability(problem.feature_map, "example_costs")
    if costs is not None:
        c = np.asarray(costs(problem.Xe), dtype=float)
        part = float(c[idx].sum())
        scale = float(c.sum()) / part if part > 0 else n / idx.size
    else:
        scale = n / idx.size
    return int(used * scale)


def fit_memory(learner, problem):
    """The estimated memory of training ``learner`` on ``problem`` (bytes), by part.

    Parameters
    ----------
    learner : Learner
    problem : Problem

    Returns
    -------
    FitMemory
        ``parts``: ``"data"`` (encoded inputs and true joint features), ``"oracle"``
        (the potentials of all examples), and the learner's parts
        (:func:`learner_memory`: ``"weights"`` and, where it keeps them,
        ``"caches"``).
    """
    phi = problem.truth_features()
    parts = {"data": data_bytes(problem.Xe) + data_bytes(phi),
             "oracle": _oracle_bytes(problem)}
    parts.update(learner_memory(learner, problem))
    return FitMemory(int(sum(parts.values())), parts, int(problem.n_features))


def _weights(problem, copies=WEIGHT_COPIES):
    return {"weights": copies * 8 * int(problem.n_features)}


def _truth_nnz(problem):
    return int(problem.truth_features().nnz)


@singledispatch
def learner_memory(learner, problem):
    """What ``learner`` holds while it trains on ``problem``, in bytes, by part.

    The default, for learners that keep no caches (pegasos, perceptron and any
    learner without a registered function): :data:`WEIGHT_COPIES` weight vectors.

    Returns
    -------
    dict of str to int
    """
    return _weights(problem)


@learner_memory.register
def _(learner: DualCD, problem):
    """dual_cd: per example up to S = ``cache_size + 1`` cached rows ψ_i(y), their
    (S × S) Gram block, and the slots' α, losses and stamps. The rows are counted as
    0.75 S times the entries of Φ(x_i, y_i): at the end of the default fits on four
    tagging corpora the pool held 2 to 13 times those entries (S = 17; more where
    more tokens stay wrong), and up to twice its live rows before a compaction."""
    S = int(learner.cache_size) + 1
    n = problem.n_samples
    caches = int(0.75 * ENTRY * S * _truth_nnz(problem)) + n * S * (8 * S + 32)
    return {**_weights(problem), "caches": caches}


@learner_memory.register
def _(learner: MulticlassDualCD, problem):
    """multiclass_cd: W (the weights), β and the score tables of a certification
    (n × K each, four of them)."""
    fm = problem.feature_map
    blocks = fm.class_blocks(None, problem.loss) \
        if capability(fm, "has_class_blocks") else None  # else the learner refuses
    K = 0 if blocks is None else int(blocks.loss_table.shape[0])
    return {**_weights(problem), "caches": 4 * 8 * problem.n_samples * K}


@learner_memory.register(OneSlackCuttingPlane)
@learner_memory.register(NSlackCuttingPlane)
def _(learner, problem):
    """The cutting planes: the working set's rows (a few hundred sums of δΦ rows) and
    the constraint cache (at most 20 million entries), counted as ten times the
    entries of Φ(x_i, y_i), capped there."""
    nnz = _truth_nnz(problem)
    return {**_weights(problem), "caches": ENTRY * min(10 * nnz, 20_000_000)}


@learner_memory.register
def _(learner: FrankWolfe, problem):
    """frank_wolfe: every example's own w_i (sparse, the outputs it visited),
    counted as four times the entries of Φ(x_i, y_i)."""
    return {**_weights(problem), "caches": ENTRY * 4 * _truth_nnz(problem)}
