"""What ``StructuredSVM.fit`` does: :func:`run_fit` fits the feature map, runs the
learner on the Problem and returns the fitted state, which the estimator adopts. It
reads the estimator's parameters from a :class:`Resolution` and nothing else of the
estimator.

Around the learner, everything works through its ``callback`` hook (called once per
round or epoch with ``round``, ``w``, ``objective``, ``time`` and, where the learner
has one, ``gap``), so no learner needs to know about it:

- :class:`RoundTracker` keeps the best weights seen so far (lowest primal
  objective), logs one line per round (or moves a progress bar when standard error
  is a terminal, :mod:`structsvm._progress`), writes checkpoints every ``every`` seconds
  (:mod:`structsvm.estimator._checkpoints`) and stops training after the current round once
  Ctrl-C was pressed;
- :func:`sigint_stops_after_round` turns the first Ctrl-C into that request (a
  second one interrupts at once);
- :func:`learner_options` passes the warm-start state and constraints on w to the
  learners that honour them.
"""
from __future__ import annotations

import contextlib
import logging
import math
import signal
import threading
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from . import _checkpoints
from .. import _compiled
from .._compiled import warmup
from ._saved_state import Fitted
from . import _labels
from .. import _progress
from ..io import check_writable
from ..registry import registered
from ..learners.memory import fit_memory
from ..learners.problem import Problem, check_scale
from ..limits import check_total, format_bytes, memory_limit
from ..protocols import as_sequence, capability

logger = logging.getLogger("structsvm")

__all__ = ["run_fit", "RoundTracker", "StopTraining", "NonFiniteError",
           "sigint_stops_after_round", "learner_options", "log_start"]

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


class NonFiniteError(ValueError, ArithmeticError):
    """Training produced an objective or weights that are not finite numbers (NaN or
    infinity): it stops, and nothing is fitted or saved."""

    def __init__(self, round_, objective, explain=None):
        what = (f"the primal objective is {objective:.6g}" if not math.isfinite(objective)
                else "the weights hold NaN or infinite values")
        why = explain() if explain is not None else ""
        super().__init__(f"training stopped in round {round_}: {what}"
                         f"{'; ' + why if why else ''}. No model was fitted")


def overflow_cause(problem):
    """The likely cause of a non-finite objective, in words: the largest entry of
    the training data's Φ(x_i, y_i), when products of such entries leave float64."""
    data = problem.truth_features().data
    top = float(np.max(np.abs(data))) if data.size else 0.0
    if not math.isfinite(top) or top > 1e100:
        return (f"the largest entry of the training data's joint features Φ(x_i, y_i) "
                f"is {top:.3g}, so products of such entries overflow float64; scale "
                "the features (e.g. to [-1, 1])")
    return (f"the training data's joint features are moderate (largest entry "
            f"{top:.3g}): the loss or the feature map gave values the learner cannot use")


# ------------------------------------------------------------------ per-round work
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
    bar : RoundBar or None
        Moved once per round instead of logging a line (verbose on a terminal).
    explain : callable or None
        Why the arithmetic may have overflowed (a text), for the
        :class:`NonFiniteError` raised when a round's objective or weights are not
        finite.
    """

    def __init__(self, w0, flag, verbose=0, round_offset=0, curve0=(),
                 write_checkpoint=None, every=60.0, bar=None, explain=None):
        self.best_w = np.array(w0, dtype=float)
        self.best_state = None  # the learner's state at the best round (checkpoints)
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
        self.bar = bar
        self.explain = explain

    def best_fitted(self):
        """Fitted attributes of the best round seen (training stopped early):
        ``objective_``, ``objective_curve_``, ``n_iter_``, ``duality_gap_`` and
        ``converged_`` (False)."""
        return {"objective_": self.best_objective, "objective_curve_": list(self.curve),
                "n_iter_": self.rounds, "duality_gap_": self.gap, "converged_": False}

    def __call__(self, info):
        obj = float(info["objective"])
        self.rounds = self.offset + int(info["round"])
        if not math.isfinite(obj) or not np.all(np.isfinite(info["w"])):
            raise NonFiniteError(self.rounds, obj, self.explain)
        self.curve.append(obj)
        self.gap = float(info.get("gap", math.nan))
        if not math.isnan(obj) and not obj >= self.best_objective:
            self.best_objective = obj
            self.best_w = np.array(info["w"], dtype=float)
            if self.write_checkpoint is not None and info.get("state") is not None:
                self.best_state = info["state"]()  # a snapshot, only when checkpointing
        if self.bar is not None:
            self.bar.update(self.rounds, obj, info.get("gap"))
        elif self.verbose:
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
    if info.get("n_qp") is not None:
        parts.append(f"QP solves {info['n_qp']}")
    if info.get("mistakes") is not None:
        parts.append(f"mistakes {info['mistakes']}")
    parts.append(f"{info['time']:.2f}s")
    logger.info("  ".join(parts))


_COMPILE_NOTED = []


def check_memory(learner, problem):
    """The fit's estimated memory (:func:`structsvm.learners.memory.fit_memory`),
    refused with a :class:`~structsvm.limits.MemoryLimitError` naming the estimate
    and its parts when above the memory budget, before the learner allocates."""
    memory = fit_memory(learner, problem)
    check_total(memory.total, f"training {learner.name} on {problem.n_samples} examples "
                              f"({memory.n_weights} weights; {_parts(memory)})",
                verb="needs an estimated")
    return memory


def _parts(memory):
    return ", ".join(f"{k} {format_bytes(v)}" for k, v in memory.parts.items())


def log_start(learner, n_samples, feature_map, memory=None):
    """Say what is about to happen (the learner, the examples, the weights and the
    estimated memory against the budget), and that the first round compiles loops
    (unless the learner's and the map's declared ``compiled_loops`` were all
    compiled at installation)."""
    _ensure_handler()
    if memory is None:
        logger.info("training %s on %d examples", learner.name, n_samples)
    else:
        limit = memory_limit()
        logger.info("training %s on %d examples: %d weights, estimated memory %s (%s) "
                    "of %s", learner.name, n_samples, memory.n_weights,
                    format_bytes(memory.total), _parts(memory),
                    "no limit" if limit is None else f"a limit of {format_bytes(limit)}")
    compiled = (_compiled.all_compiled(capability(learner, "compiled_loops"))
                and _compiled.all_compiled(capability(feature_map, "compiled_loops")))
    if not _COMPILE_NOTED and not compiled:
        _COMPILE_NOTED.append(True)
        logger.info("the first round compiles structsvm's numba loops (several "
                    "seconds on first use; later runs load them from numba's cache)%s",
                    "" if _compiled.extension() is not None else
                    "; the loops compiled at installation are not in use (see the "
                    "documentation's First run page)")


def _ensure_handler():
    if not logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[structsvm] %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


# ------------------------------------------------------------------ learner options
def learner_options(learner, warm, constraints, state):
    """Keyword arguments for ``learner.solve``: the warm-start state and the constraints
    on w, each only for learners that declare they honour it (capabilities
    ``accepts_constraints``, ``supports_warm_start`` and ``keeps_state``); the others
    refuse."""
    def able(attr):
        return sorted(n for n, cls in registered("learner").items()
                      if capability(cls, attr))

    out = {}
    if constraints is not None:
        if not capability(learner, "accepts_constraints"):
            raise ValueError(f"learner={learner.name!r} cannot honour constraints on w; "
                             f"learners that can: {', '.join(able('accepts_constraints'))}")
        out["constraints"] = constraints
    if warm:
        if not capability(learner, "supports_warm_start"):
            raise ValueError(f"learner={learner.name!r} cannot continue from a previous "
                             "fit (warm_start is not supported by it); warm_start=True "
                             f"works with: {', '.join(able('supports_warm_start'))}")
        if capability(learner, "keeps_state"):
            out["state"] = state if isinstance(state, dict) else None
    return out

# ------------------------------------------------------------------ the run
def fitted_maker(fm, *, learner_state=None, **fixed):
    """``fitted_at(w, attributes, interrupted=False, learner_state=...)``: the
    :class:`Fitted` state of a fit at weights ``w`` with the tracker's fitted
    ``attributes`` (``fixed``: decoder, loss, learner, C, tol)."""
    def fitted_at(w, attributes, interrupted=False, learner_state=learner_state):
        return Fitted(fm, np.array(w, dtype=float), float(attributes["objective_"]),
                      [float(v) for v in attributes["objective_curve_"]],
                      int(attributes["n_iter_"]), float(attributes["duality_gap_"]),
                      bool(attributes["converged_"]), interrupted=interrupted,
                      learner_state=learner_state, **fixed)
    return fitted_at


def checkpoint_writer(checkpoint, res, fitted_at, fingerprint):
    """``writer(tracker, complete, fitted=None)`` writing ``checkpoint`` (the best
    weights so far unless ``fitted`` is given), or None without a checkpoint."""
    if checkpoint is None:
        return None

    def writer(tracker, complete, fitted=None):
        if fitted is None:
            fitted = fitted_at(tracker.best_w, tracker.best_fitted())
        _checkpoints.write_checkpoint(checkpoint, res, fitted, fingerprint, complete,
                                      tracker.best_state)
    return writer


def run_fit(resolution, X, Y, *, previous=None, checkpoint=None, resume=None,
            checkpoint_every=60.0):
    """Train: the map fitted, the learner run on the Problem with the round tracker,
    checkpoints written (see :meth:`structsvm.StructuredSVM.fit`).

    Parameters
    ----------
    resolution : Resolution
        The estimator's parameters and what they resolve to.
    X, Y : sequences of inputs and outputs.
    previous : Fitted, optional
        The estimator's previous fit, to continue from (``warm_start``).
    checkpoint, resume, checkpoint_every
        As :meth:`structsvm.StructuredSVM.fit`.

    Returns
    -------
    Fitted
        The fitted state (``interrupted`` when Ctrl-C stopped training: the best
        weights so far, with a ConvergenceWarning).
    """
    res = resolution
    X = as_sequence(X, "X")
    Y = as_sequence(Y, "Y")
    if len(X) != len(Y):
        raise ValueError(f"X and Y must have the same length: X has {len(X)} samples, "
                         f"Y has {len(Y)}")
    if len(X) == 0:
        raise ValueError("Cannot fit on an empty data set (X and Y have 0 samples)")
    proto = res.prototype()  # a Structure becomes its StructureMap
    # the configured learner, or the default for the map (fails fast on a bad name,
    # before the map is fitted)
    learner = res.learner_for(proto)
    # compile the loops of the learner and the structure in a helper process while
    # the map is fitted and the first round runs (see structsvm._compiled.warmup)
    warmup.start(warmup.plan(learner, proto))
    if checkpoint is not None:
        check_writable(checkpoint)
    if resume is not None and res.learner is not None:
        _checkpoints.check_resumable(learner)  # before reading anything
    ckpt = _checkpoints.read_resume(res, resume) if resume is not None else None
    _labels.check_labels(Y, type(proto).structure, capability(proto, "latent"))
    Xe = None
    if ckpt is not None:
        fm = ckpt[0].feature_map
    elif previous is not None:
        fm = previous.feature_map
    else:
        fm = clone(proto)
        fit_encode = capability(fm, "fit_encode")  # optional: fit and encode at once
        if fit_encode is not None:
            Xe = fit_encode(X, Y)
        else:
            fm.fit(X, Y)
    decoder, loss = res.plugins(fm)
    # the map is fitted now: a default learner that must accept the problem may apply
    learner = res.learner_for(fm, plugins=(fm, decoder, loss, res.rescaling))
    Ye = fm.encode_outputs(Y, X)
    problem = Problem(Xe=fm.encode_inputs(X) if Xe is None else Xe, Ye=Ye,
                      feature_map=fm, decoder=decoder, loss=loss,
                      C=res.C_for(fm, loss, Ye), rescaling=res.rescaling,
                      n_jobs=res.n_jobs)
    check_scale(problem)
    memory = check_memory(learner, problem)
    w0 = previous.coef if previous is not None else np.zeros(fm.n_features_)
    tol = res.tol_for(fm, loss)
    extra = learner_options(learner, previous is not None, res.constraints,
                            None if previous is None else previous.learner_state)
    max_iter, done, curve0, fingerprint = res.max_iter, 0, [], None
    if checkpoint is not None or ckpt is not None:
        fingerprint = _checkpoints.data_fingerprint(problem)
    if ckpt is not None:
        saved, info = ckpt
        done, curve0, max_iter = _checkpoints.resume_point(
            ckpt, fingerprint, resume, max_iter, "other training data (or another C)")
        _checkpoints.check_resumable(learner)
        w0 = saved.coef
        if capability(learner, "keeps_state"):  # continue from the saved state
            extra["state"] = _checkpoints.resume_state(learner, info, resume)

    fitted_at = fitted_maker(fm, decoder=decoder, loss=loss, learner=learner,
                             C=problem.C, tol=tol)
    writer = checkpoint_writer(checkpoint, res, fitted_at, fingerprint)
    with sigint_stops_after_round() as flag, problem:
        # problem: the oracle's workers live for this fit
        if res.verbose:
            log_start(learner, len(X), fm, memory)
        bar = _progress.RoundBar(learner.name, max_iter, tol, done) \
            if res.verbose and _progress.on_terminal() else None
        tracker = RoundTracker(w0, flag, res.verbose, done, curve0, writer,
                               checkpoint_every, bar,
                               explain=lambda: overflow_cause(problem))
        try:
            result = learner.solve(problem, w0, max_iter=max_iter, tol=tol,
                                   random_state=res.random_state, callback=tracker,
                                   **extra)
        except (StopTraining, KeyboardInterrupt):
            result = None
        finally:
            if bar is not None:
                bar.close()
    if result is None:
        fitted = fitted_at(tracker.best_w, tracker.best_fitted(), interrupted=True)
        if writer is not None:
            writer(tracker, complete=False, fitted=fitted)
        warnings.warn(f"Training interrupted (Ctrl-C) after {tracker.rounds} rounds: "
                      f"coef_ holds the best weights so far (objective "
                      f"{fitted.objective:.6g}); converged_ is False",
                      ConvergenceWarning, stacklevel=3)
        return fitted
    if not math.isfinite(result.objective) or not np.all(np.isfinite(result.w)):
        raise NonFiniteError(done + int(result.n_iter), float(result.objective),
                             lambda: overflow_cause(problem))
    # large states (a cutting plane's working set and cache) only when asked for
    keep = res.warm_start or "light_state" not in result.extra
    fitted = fitted_at(result.w, {
        "objective_": result.objective,
        "objective_curve_": curve0 + list(result.objective_curve),
        "n_iter_": done + int(result.n_iter), "duality_gap_": result.duality_gap,
        "converged_": result.converged},
        learner_state=result.extra.get("state" if keep else "light_state"))
    if writer is not None:
        writer(tracker, complete=True, fitted=fitted)
    if not result.converged and capability(learner, "certifies_gap"):
        warnings.warn(convergence_message(learner.name, result, tol), ConvergenceWarning,
                      stacklevel=3)
    return fitted


def convergence_message(name, result, tol):
    """What a certifying learner that stopped at ``max_iter`` measured, and why it
    matters: its certified relative duality gap against ``tol``."""
    gap, obj = float(result.duality_gap), float(result.objective)
    if not np.isfinite(gap):
        return (f"{name} stopped after max_iter={result.n_iter} before it could certify "
                f"the objective {obj:.6g} (no duality gap yet): raise max_iter")
    rel = gap / max(abs(obj), 1e-300)
    return (f"{name} stopped after max_iter={result.n_iter} before its stopping rule: "
            f"its certified duality gap, {gap:.3g} on the objective {obj:.6g}, bounds "
            f"the objective's excess over the optimum by {rel:.3%}, where tol={tol:g} "
            f"asks for {tol:.3%}. Raise max_iter to train on, or set "
            f"tol={_round_up(rel)} if {rel:.3%} is close enough")


def _round_up(x):
    """x rounded up to two significant digits (a tol that this gap meets)."""
    if x <= 0:
        return "0"
    digits = -int(math.floor(math.log10(x))) + 1
    return f"{math.ceil(x * 10 ** digits) / 10 ** digits:g}"
