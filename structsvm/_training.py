"""What ``StructuredSVM.fit`` does around the learner: label checks, Ctrl-C, progress,
checkpoints.

Everything here works through the learners' ``callback`` hook (called once per
round or epoch with ``round``, ``w``, ``objective``, ``time`` and, where the learner
has one, ``gap``), so no learner needs to know about it:

- :class:`RoundTracker` keeps the best weights seen so far (lowest primal
  objective), logs one line per round, writes checkpoints every ``every`` seconds
  and stops training after the current round once Ctrl-C was pressed;
- :func:`sigint_stops_after_round` turns the first Ctrl-C into that request (a
  second one interrupts at once);
- :func:`check_labels` refuses None/NaN labels and labels of different types that
  print the same (1 and "1"), and warns about a single class or tag.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import numbers
import signal
import threading
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone

logger = logging.getLogger("structsvm")

__all__ = ["check_labels", "RoundTracker", "StopTraining", "sigint_stops_after_round",
           "data_fingerprint", "RESUMABLE", "keep_best", "write_checkpoint", "read_resume"]

#: Learners whose run continues from saved weights to the same optimum: the cutting
#: planes restart their working set at the checkpoint's w and converge to the unique
#: minimiser of the strictly convex primal within ``tol``.
RESUMABLE = ("one_slack", "n_slack")


# ------------------------------------------------------------------ labels
def _kind(v):
    if isinstance(v, str):
        return "str"
    if isinstance(v, (numbers.Number, np.number, np.bool_)):
        return "number"
    return type(v).__name__


def _is_missing(v):
    if v is None:
        return "None"
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return "NaN"
    return None


def _labels_of(Y, structure):
    """(sample index, label) pairs: whole outputs, or the tags of each sequence."""
    if structure == "chain":
        for i, y in enumerate(Y):
            if y is None or isinstance(y, (str, bytes)):
                yield i, y
                continue
            try:
                tags = list(y)
            except TypeError:
                yield i, y
                continue
            for t in tags:
                yield i, t
    else:
        yield from enumerate(Y)


def check_labels(Y, structure):
    """Refuse missing or ambiguous labels; warn when there is only one.

    Parameters
    ----------
    Y : sequence
        Training outputs.
    structure : str
        The feature map's structure: "multiclass" and "tree" outputs are checked
        whole, "chain" outputs tag by tag; other structures are not checked here.

    Raises
    ------
    ValueError
        "Sample i: ..." for a None or NaN label, or for two labels of different
        types that print the same (``1`` and ``"1"``: different classes to Python,
        the same to anyone reading a file or a report).

    Warns
    -----
    UserWarning
        All training outputs have the same class (or all tags are the same).
    """
    if structure not in ("multiclass", "tree", "chain"):
        return
    what = "tag" if structure == "chain" else "label"
    by_text, distinct = {}, set()
    for i, v in _labels_of(Y, structure):
        missing = _is_missing(v)
        if missing:
            raise ValueError(f"Sample {i}: {what} is {missing}; every training output "
                             f"needs a {what}")
        try:
            if v in distinct:
                continue
            distinct.add(v)
        except TypeError:  # unhashable: the feature map reports it
            return
        text, kind = str(v), _kind(v)
        seen = by_text.setdefault(text, (kind, v, i))
        if seen[0] != kind:
            raise ValueError(f"Sample {i}: {what} {v!r} ({type(v).__name__}) and the "
                             f"{what} {seen[1]!r} ({type(seen[1]).__name__}) of sample "
                             f"{seen[2]} are different {what}s that print the same; "
                             f"convert the {what}s to one type")
    if len(distinct) == 1:
        only = next(iter(distinct))
        warnings.warn(f"Every training {what} is {only!r}: the model cannot learn to "
                      f"tell {what}s apart and will predict {only!r}", UserWarning,
                      stacklevel=3)


# ------------------------------------------------------------------ Ctrl-C
class StopTraining(Exception):
    """Raised from the learner's callback to end training after the current round."""


class _Flag:
    def __init__(self):
        self.set = False


@contextlib.contextmanager
def sigint_stops_after_round():
    """While active, the first Ctrl-C (SIGINT) sets ``flag.set``; a second one raises
    ``KeyboardInterrupt`` at once. Outside the main thread this does nothing."""
    flag = _Flag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        if flag.set:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        flag.set = True
        logger.warning("Ctrl-C: training stops after the current round and keeps the "
                       "best weights so far (press Ctrl-C again to stop at once)")

    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # signals unavailable here (e.g. embedded interpreter)
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


# ------------------------------------------------------------------ checkpoints
def keep_best(est, tracker):
    """Fitted attributes from the best round seen (training was interrupted)."""
    est.coef_ = tracker.best_w.copy()
    est.objective_ = float(tracker.best_objective)
    est.objective_curve_ = list(tracker.curve)
    est.n_iter_ = int(tracker.rounds)
    est.duality_gap_ = float(tracker.gap)
    est.converged_ = False


def write_checkpoint(est, path, plugins, tracker, fingerprint, complete):
    """Save ``est``'s parameters with ``plugins`` = (feature map, decoder, loss,
    learner) and the best round so far (or ``est``'s finished fit when ``complete``),
    plus the progress :func:`read_resume` needs, atomically."""
    from .io import save_model

    snap = clone(est)
    snap.feature_map_, snap.decoder_, snap.loss_, snap.learner_ = plugins
    if complete:
        for k in ("coef_", "objective_", "objective_curve_", "n_iter_",
                  "duality_gap_", "converged_"):
            setattr(snap, k, getattr(est, k))
    else:
        keep_best(snap, tracker)
    save_model(snap, path, checkpoint={
        "n_iter": int(snap.n_iter_), "objective_curve": list(snap.objective_curve_),
        "learner": snap.learner_.name, "data_sha256": fingerprint,
        "complete": bool(complete)})


def read_resume(est, path, learner):
    """(model, info) of a checkpoint this estimator may continue from."""
    from .io import read_checkpoint_info

    if learner.name not in RESUMABLE:
        raise ValueError(f"resume: learner {learner.name!r} cannot continue from a "
                         f"checkpoint (its state is not saved); use one of "
                         f"{list(RESUMABLE)} or train again")
    model, info = read_checkpoint_info(path)
    if "data_sha256" not in info:
        raise ValueError(f"resume: {path} is a model file, not a checkpoint")
    ignore = {"max_iter", "verbose", "n_jobs", "warm_start"}
    mine = {k: v for k, v in est.get_params(deep=True).items()
            if k.split("__")[0] not in ignore}
    theirs = {k: v for k, v in model.get_params(deep=True).items()
              if k.split("__")[0] not in ignore}
    if est.feature_map is None:
        theirs = {k: v for k, v in theirs.items() if not k.startswith("feature_map")}
        mine = {k: v for k, v in mine.items() if not k.startswith("feature_map")}
    differ = sorted(k for k in set(mine) | set(theirs)
                    if not _same_param(mine.get(k), theirs.get(k)))
    if differ:
        raise ValueError(f"resume: {path} was written with other parameters "
                         f"({', '.join(differ)}); resume with the same ones")
    return model, info


def _same_param(a, b):
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):
        return type(a) is type(b) and all(
            _same_param(v, b.get_params(deep=False).get(k))
            for k, v in a.get_params(deep=False).items())
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    try:
        return bool(a == b)
    except Exception:
        return a is b


# ------------------------------------------------------------------ per-round work
def data_fingerprint(problem):
    """SHA-256 of the training data as the learner sees it (Φ(x_i, y_i) rows and C)."""
    import scipy.sparse as sp

    phi = sp.csr_matrix(problem.truth_features())
    phi.sort_indices()
    h = hashlib.sha256()
    for part in (np.asarray(phi.shape, dtype=np.int64), phi.indptr.astype(np.int64),
                 phi.indices.astype(np.int64), phi.data.astype(float),
                 np.asarray([problem.C], dtype=float)):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


class RoundTracker:
    """The learner's callback: best weights, progress lines, checkpoints, Ctrl-C.

    Parameters
    ----------
    w0 : ndarray
        Starting weights (kept when no round completes).
    flag : object with a boolean ``set``
        Set by the Ctrl-C handler.
    verbose : int
        > 0 logs one line per round to the "structsvm" logger.
    round_offset : int
        Rounds done before (a resumed run).
    curve0 : list of float
        Objective curve of the rounds done before.
    write_checkpoint : callable or None
        ``write_checkpoint(tracker, complete)``; called every ``every`` seconds.
    every : float
        Seconds between checkpoints.
    """

    def __init__(self, w0, flag, verbose=0, round_offset=0, curve0=(),
                 write_checkpoint=None, every=60.0):
        self.best_w = np.array(w0, dtype=float)
        self.best_objective = math.nan
        self.curve = list(curve0)
        self.rounds = int(round_offset)
        self.offset = int(round_offset)
        self.gap = math.nan
        self.flag = flag
        self.verbose = verbose
        self.write_checkpoint = write_checkpoint
        self.every = float(every)
        self.last_write = time.monotonic()

    def __call__(self, info):
        obj = float(info["objective"])
        self.rounds = self.offset + int(info["round"])
        self.curve.append(obj)
        self.gap = float(info.get("gap", math.nan))
        if not math.isnan(obj) and not obj >= self.best_objective:
            self.best_objective = obj
            self.best_w = np.array(info["w"], dtype=float)
        if self.verbose:
            _log_round(self.rounds, info)
        if self.write_checkpoint is not None and \
                time.monotonic() - self.last_write >= self.every:
            self.write_checkpoint(self, complete=False)
            self.last_write = time.monotonic()
        if self.flag.set:
            raise StopTraining


def _log_round(r, info):
    _ensure_handler()
    parts = [f"round {r:4d}", f"objective {info['objective']:.6g}"]
    gap = info.get("gap")
    if gap is not None and np.isfinite(gap):
        parts.append(f"gap {gap:.3g}")
    if info.get("n_constraints") is not None:
        parts.append(f"constraints {info['n_constraints']}")
    if info.get("mistakes") is not None:
        parts.append(f"mistakes {info['mistakes']}")
    parts.append(f"{info['time']:.2f}s")
    logger.info("  ".join(parts))


_COMPILE_NOTED = []


def log_start(learner_name, n_samples):
    """Say what is about to happen, and that the first round compiles kernels."""
    _ensure_handler()
    logger.info("training %s on %d examples", learner_name, n_samples)
    if not _COMPILE_NOTED:
        _COMPILE_NOTED.append(True)
        logger.info("the first round compiles structsvm's numba kernels (several "
                    "seconds on first use; later runs load them from numba's cache)")


def _ensure_handler():
    if not logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[structsvm] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
