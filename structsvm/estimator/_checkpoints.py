"""Checkpoints of a fit: a model file with the best weights so far and the progress
(rounds done, objective curve, learner, the learner's state where it gives one, a
fingerprint of the training data), and the checks that a checkpoint fits the run
that continues from it.

A learner is resumable when it declares ``resumable`` (a capability,
:class:`structsvm.protocols.LearnerBase`): the cutting planes restart their working
set at the checkpoint's w and converge to the unique minimiser of the strictly
convex primal within ``tol``; the dual coordinate-descent learners hand their state
(caches and dual variables, as arrays) to the round callback, the checkpoint stores
it, and the resumed run continues from that dual point."""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

from ..io import MAX_BYTES, ModelFileError
from ..registry import registered
from . import _saved_state
from ..protocols import capability

__all__ = ["write_checkpoint", "read_resume", "check_resumable", "resume_state",
           "data_fingerprint", "resume_point"]


def write_checkpoint(path, resolution, fitted, fingerprint, complete, learner_state):
    """Save a fit's state ``fitted`` (:class:`~structsvm.estimator._saved_state.Fitted`:
    the finished fit when ``complete``, else the best round so far) with the
    estimator's parameters (``resolution``), plus the progress :func:`read_resume`
    needs (with the learner's state at that round, where the learner gave one),
    atomically."""
    _saved_state.write(path, resolution.estimator, resolution.params, fitted,
                       checkpoint={
                           "n_iter": int(fitted.n_iter),
                           "objective_curve": list(fitted.objective_curve),
                           "learner": fitted.learner.name, "data_sha256": fingerprint,
                           "complete": bool(complete), "learner_state": learner_state})


def check_resumable(learner):
    """Refuse, with a ValueError naming the learners that can, a learner that cannot
    continue from a checkpoint."""
    if not capability(learner, "resumable"):
        able = sorted(n for n, cls in registered("learner").items()
                      if capability(cls, "resumable"))
        raise ValueError(f"resume: learner {learner.name!r} cannot continue from a "
                         f"checkpoint; use one of {able} or train again")


def resume_state(learner, info, path=None):
    """The learner state a checkpoint's ``info`` holds for ``learner`` (None when it
    holds none, or one of another learner), checked by the learner's ``check_state``
    where it declares one: a state that does not hold together is a
    :class:`~structsvm.io.ModelFileError` naming the checkpoint ``path`` and the
    array, before any of it reaches the learner's compiled loops."""
    if info.get("learner") != learner.name:
        return None
    state = info.get("learner_state")
    if not isinstance(state, dict):
        return None
    check = capability(learner, "check_state")
    if check is not None:
        try:
            check(state)
        except (ValueError, TypeError) as exc:
            raise ModelFileError(f"{path}: the {learner.name} state of the checkpoint "
                                 f"does not hold together ({exc})") from None
    return state


def read_resume(resolution, path):
    """(Fitted, info) of a checkpoint an estimator of these parameters
    (``resolution``) may continue from."""
    model, fitted, info = _saved_state.read(path, MAX_BYTES, resolution.estimator,
                                            checkpoint=True, trusted=resolution.trusted())
    if "data_sha256" not in info:
        raise ValueError(f"resume: {path} is a model file, not a checkpoint")
    ignore = {"max_iter", "verbose", "n_jobs", "warm_start"}
    mine = {k: v for k, v in resolution.estimator(**resolution.params).get_params(
        deep=True).items() if k.split("__")[0] not in ignore}
    theirs = {k: v for k, v in model.get_params(deep=True).items()
              if k.split("__")[0] not in ignore}
    if resolution.feature_map is None:
        theirs = {k: v for k, v in theirs.items() if not k.startswith("feature_map")}
        mine = {k: v for k, v in mine.items() if not k.startswith("feature_map")}
    differ = sorted(k for k in set(mine) | set(theirs)
                    if not _same_param(mine.get(k), theirs.get(k)))
    if differ:
        raise ValueError(f"resume: {path} was written with other parameters "
                         f"({', '.join(differ)}); resume with the same ones")
    return fitted, info


def _same_param(a, b):
    if any(hasattr(v, "get_params") and not isinstance(v, type) for v in (a, b)):
        return type(a) is type(b) and all(
            _same_param(v, b.get_params(deep=False).get(k))
            for k, v in a.get_params(deep=False).items())
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    try:
        return bool(a == b)
    except Exception:
        return a is b


def resume_point(ckpt, fingerprint, resume, max_iter, data, unit="rounds"):
    """Where a fit resumed from the checkpoint ``ckpt`` (``(fitted, info)`` of
    :func:`read_resume`, read from the path ``resume``) starts: ``(done,
    objective curve so far, max_iter left)``.

    Raises ValueError when the checkpoint was written for other training data (its
    fingerprint differs from ``fingerprint``; ``data`` says what must be the same)
    or when ``max_iter`` leaves no ``unit`` to run."""
    _, info = ckpt
    if info.get("data_sha256") != fingerprint:
        raise ValueError(f"resume: {resume} was written for {data}; train from "
                         "scratch or resume with the same ones")
    done, curve = int(info.get("n_iter", 0)), list(info.get("objective_curve", []))
    if max_iter is not None:
        if max_iter <= done:
            raise ValueError(f"resume: {resume} has already run {done} {unit} and "
                             f"max_iter={max_iter} leaves none; raise max_iter to "
                             "train on")
        max_iter -= done
    return done, curve, max_iter


def data_fingerprint(problem):
    """SHA-256 of the training data as the learner sees it (Φ(x_i, y_i) rows and C)."""
    phi = sp.csr_matrix(problem.truth_features())
    phi.sort_indices()
    h = hashlib.sha256()
    for part in (np.asarray(phi.shape, dtype=np.int64), phi.indptr.astype(np.int64),
                 phi.indices.astype(np.int64), phi.data.astype(float),
                 np.asarray([problem.C], dtype=float)):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()
