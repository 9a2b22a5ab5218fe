"""Protocols shared by every plugin, the training Problem and the one oracle.

Data flows one way: inputs and outputs are *encoded* once by the fitted
:class:`FeatureMap`; the map turns a weight vector into *potentials* (factor scores);
a *decoder* maximises over structures; a :class:`Loss` augments the potentials so
that loss-augmented decoding is the same decoder on other scores. Around that loop,
:func:`Problem.oracle` finds the most violated constraint of every example and is the
only thing learners ask of the model.

Notation (Tsochantaridis et al. 2005; Joachims, Finley & Yu 2009)
---------------------------------------------------------------
For an example (x_i, y_i) and a weight vector w,

    δΦ_i(y) = Φ(x_i, y_i) − Φ(x_i, y)
    margin rescaling:  ŷ_i = argmax_y  Δ(y_i, y) − w·δΦ_i(y),     ξ_i = max(0, Δ − w·δΦ)
    slack rescaling:   ŷ_i = argmax_y  Δ(y_i, y) (1 − w·δΦ_i(y)),  ξ_i = max(0, Δ(1 − w·δΦ))

and the primal objective reported by every learner is ½‖w‖² + C Σ_i ξ_i (the
convention of scikit-learn's LinearSVC).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

import numpy as np
import scipy.sparse as sp

__all__ = [
    "FeatureMap", "Potentials", "PotentialsBatch", "Loss", "Learner", "Decoder",
    "Problem", "Violation", "LearnerResult", "QPError", "StructureMismatchError",
]


class QPError(RuntimeError):
    """A working-set QP could not be solved (after the retries)."""


class StructureMismatchError(TypeError):
    """Plugins of incompatible structures were combined (e.g. a chain map with argmax)."""


# --------------------------------------------------------------------------- protocols
@runtime_checkable
class Potentials(Protocol):
    """Factor scores of ONE example under a weight vector.

    ``score(y)`` must equal ``w @ feature_map.joint_feature(x, y)`` for every output
    ``y`` in the map's *encoded* output space; ``enumerate()`` yields every encoded
    output (used by the exhaustive decoder, so only for small spaces).
    """

    def score(self, y) -> float: ...

    def enumerate(self): ...


@runtime_checkable
class PotentialsBatch(Protocol):
    """Potentials of a batch of examples (what decoders consume).

    ``batch[i]`` is the :class:`Potentials` of example i; ``augment(Y, loss)``
    returns the batch with every example's scores plus Δ(y_i, ·) decomposed over the
    decoder's parts (only for ``loss.decomposable`` losses).
    """

    structure: ClassVar[str]
    enumerable: ClassVar[bool]  # can every example's outputs be enumerated?

    def __len__(self) -> int: ...

    def __getitem__(self, i) -> Potentials: ...

    def augment(self, Y, loss) -> "PotentialsBatch": ...

    def score(self, Y) -> np.ndarray: ...


@runtime_checkable
class FeatureMap(Protocol):
    """Joint feature map Φ(x, y).

    Class attribute ``structure`` names the output structure ("multiclass", "chain",
    "tree", "ranking", ...); a decoder is accepted only for its own structure.
    ``default_decoder``, ``default_loss``, ``default_C`` and ``default_tol`` are what
    the estimator uses when the user gives none. Optional capability: a map whose class sets
    ``has_feature_differences = True`` provides
    ``joint_feature_differences(Xe, Ye, Ye_hat, idx)`` (CSR rows Φ(x_i, y_i) −
    Φ(x_i, ŷ_i)), which the oracle then uses instead of two ``joint_features`` calls;
    one with ``has_difference_sum = True`` provides
    ``joint_feature_difference_sum(Xe, Ye, Ye_hat, idx, weights)`` (the dense vector
    Σ_i weights_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i))) for the 1-slack oracle; one with
    ``has_aggregate_oracle = True`` computes the whole margin-rescaled 1-slack
    oracle itself, ``aggregate_violation(Xe, Ye, w, loss) -> (Σ_i Δ_i, Σ_i δΦ_i
    (dense), ξ per example)``, e.g. Joachims' O(n log n) ranking oracle.

    The public pair works on raw (user) data:
    ``joint_feature(x, y)`` and ``potentials(x, w)``. Learners use the encoded,
    batched methods: ``encode_inputs``/``encode_outputs`` once, then
    ``joint_features(Xe, Ye)`` (a CSR matrix, one row Φ(x_i, y_i) per example) and
    ``batch_potentials(Xe, w)`` every round.
    """

    structure: ClassVar[str]
    default_decoder: ClassVar[str]
    default_loss: ClassVar[str]
    default_C: ClassVar[float]
    default_tol: ClassVar[float]
    n_features_: int

    def fit(self, X, Y) -> "FeatureMap": ...

    def encode_inputs(self, X) -> Any: ...

    def encode_outputs(self, Y, X=None) -> list: ...

    def decode_outputs(self, Ye) -> list: ...

    def joint_features(self, Xe, Ye, idx=None) -> sp.csr_matrix: ...

    def batch_potentials(self, Xe, w, idx=None) -> PotentialsBatch: ...

    def joint_feature(self, x, y) -> np.ndarray: ...

    def potentials(self, x, w) -> Potentials: ...


@runtime_checkable
class Loss(Protocol):
    """Task loss Δ(y, ŷ) on encoded outputs.

    ``decomposable`` says whether Δ is a sum over the decoder's parts; then
    ``part_losses(y_true, n_states)`` returns an array of shape ``(n_parts,
    n_states)`` (``(n_states,)`` for a single part) with the loss of predicting each
    state at each part, and loss-augmented decoding is the plain decoder on
    augmented potentials. ``max_loss(y)`` is the largest loss any prediction can
    have for ``y`` (used by ``score`` = 1 − Σ loss / Σ max_loss).
    """

    name: str
    decomposable: ClassVar[bool]

    def __call__(self, y_true, y_pred) -> float: ...

    def batch(self, Y_true, Y_pred) -> np.ndarray: ...

    def max_loss(self, y_true) -> float: ...


@dataclass(frozen=True)
class Decoder:
    """A named decoder: a pure function of a :class:`PotentialsBatch`.

    ``func(batch, exclude=None)`` returns a list of encoded outputs, one per example:
    the highest-scoring structure, or, when ``exclude`` (a list of encoded outputs)
    is given, the highest-scoring structure different from ``exclude[i]``
    (the lecture's "argmax over y ≠ y_i").
    ``structure`` is the structure it decodes; "any" accepts every batch that can
    enumerate its outputs.
    """

    name: str
    structure: str
    func: Any

    def __call__(self, batch, exclude=None):
        return self.func(batch, exclude=exclude)


@runtime_checkable
class Learner(Protocol):
    """An optimiser of the structural-SVM objective over a :class:`Problem`.

    ``solve(problem, w0, *, max_iter, tol, random_state, callback)`` returns a
    :class:`LearnerResult` (the learner keeps no state on ``self``).
    """

    name: ClassVar[str]

    def solve(self, problem, w0, *, max_iter, tol, random_state, callback=None): ...


@dataclass
class LearnerResult:
    """What a learner returns: the model and its certificate.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        Returned weights.
    objective : float
        Primal objective ½‖w‖² + C Σ ξ_i at ``w`` (computed with exact decoding).
    objective_curve : list of float
        Primal objective per round (or per evaluation for stochastic learners).
    n_iter : int
        Rounds (cutting plane) or epochs (stochastic learners) run.
    duality_gap : float
        Primal minus dual objective at the end (``nan`` when the learner has no dual).
    converged : bool
    extra : dict
        Learner-specific diagnostics (working-set size, ...).
    """

    w: np.ndarray
    objective: float
    objective_curve: list
    n_iter: int
    duality_gap: float = float("nan")
    converged: bool = False
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- violation
@dataclass
class Violation:
    """The most violated constraints of a set of examples under ``w``.

    Attributes
    ----------
    idx : ndarray of int
        Example indices.
    y_hat : list
        Loss-augmented argmax ŷ_i (encoded).
    loss : ndarray of shape (len(idx),)
        Δ(y_i, ŷ_i).
    psi : csr_matrix of shape (len(idx), n_features)
        δΦ_i = Φ(x_i, y_i) − Φ(x_i, ŷ_i).
    margin : ndarray of shape (len(idx),)
        w·δΦ_i.
    slack : ndarray of shape (len(idx),)
        ξ_i at ``w``: max(0, Δ − w·δΦ) (margin) or max(0, Δ(1 − w·δΦ)) (slack).
    """

    idx: np.ndarray
    y_hat: list
    loss: np.ndarray
    psi: sp.csr_matrix
    margin: np.ndarray
    slack: np.ndarray


# --------------------------------------------------------------------------- problem
def _chunks(idx, n_chunks):
    return [c for c in np.array_split(idx, n_chunks) if len(c)]


@dataclass
class Problem:
    """A structural-SVM training problem: encoded data, plugins and C.

    Parameters
    ----------
    Xe : encoded inputs (``feature_map.encode_inputs(X)``), indexable by position.
    Ye : list of encoded outputs.
    feature_map : FeatureMap (fitted).
    decoder : Decoder
    loss : Loss
    C : float
        Weight of the summed slacks in ½‖w‖² + C Σ ξ_i.
    rescaling : {"margin", "slack"}
    n_jobs : int or None
        Oracle parallelism (joblib, thread-preferring, so Dask/Ray back-ends apply
        through ``joblib.parallel_config``).
    """

    Xe: Any
    Ye: list
    feature_map: Any
    decoder: Decoder
    loss: Any
    C: float
    rescaling: str = "margin"
    n_jobs: int | None = None
    _truth_cache: dict = field(default_factory=dict, repr=False)

    @property
    def _fast_differences(self):
        # optional capability of a map: δΦ rows built from the differing parts only
        return bool(getattr(type(self.feature_map), "has_feature_differences", False))

    @property
    def n_samples(self):
        return len(self.Ye)

    @property
    def n_features(self):
        return int(self.feature_map.n_features_)

    # Φ(x_i, y_i) of the ground truth never changes: build it once.
    def truth_features(self):
        if "phi" not in self._truth_cache:
            self._truth_cache["phi"] = sp.csr_matrix(
                self.feature_map.joint_features(self.Xe, self.Ye))
        return self._truth_cache["phi"]

    def max_losses(self):
        if "max" not in self._truth_cache:
            self._truth_cache["max"] = np.array([self.loss.max_loss(y) for y in self.Ye],
                                                dtype=float)
        return self._truth_cache["max"]

    # ------------------------------------------------------------------ the oracle
    def oracle(self, w, idx=None, *, augment=True):
        """Most violated constraint of each example in ``idx`` under ``w``.

        Parameters
        ----------
        w : ndarray of shape (n_features,)
        idx : array-like of int, optional
            Examples to query (all by default).
        augment : bool, default=True
            False decodes without the loss (plain prediction; the perceptron's step).

        Returns
        -------
        Violation
        """
        idx = np.arange(self.n_samples) if idx is None else np.asarray(idx, dtype=np.intp)
        parts = self._map_chunks(self._oracle_chunk, w, idx, augment)
        if len(parts) == 1:
            return parts[0]
        return Violation(
            idx=np.concatenate([p.idx for p in parts]),
            y_hat=[y for p in parts for y in p.y_hat],
            loss=np.concatenate([p.loss for p in parts]),
            psi=sp.vstack([p.psi for p in parts], format="csr"),
            margin=np.concatenate([p.margin for p in parts]),
            slack=np.concatenate([p.slack for p in parts]))

    def _decode(self, w, idx, augment=True):
        """(true outputs, potentials, ŷ) of examples ``idx``: loss-augmented or plain."""
        loss = self.loss
        Y = [self.Ye[i] for i in idx]
        batch = self.feature_map.batch_potentials(self.Xe, w, idx)
        if not augment:
            y_hat = self.decoder(batch)
        elif self.rescaling == "slack":
            y_hat = _slack_rescaled_argmax(batch, Y, loss)
        elif loss.decomposable:
            y_hat = self.decoder(batch.augment(Y, loss))
        else:
            y_hat = _enumerated_argmax(batch, Y, loss, slack=False)
        return Y, batch, y_hat

    def _map_chunks(self, func, w, idx, *args):
        """``func(w, chunk, *args)`` over chunks of ``idx`` (joblib when n_jobs > 1)."""
        n_jobs = self.n_jobs if self.n_jobs not in (None, 0) else 1
        if n_jobs == 1 or len(idx) < 64:
            return [func(w, idx, *args)]
        from joblib import Parallel, delayed, effective_n_jobs

        return Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(func)(w, chunk, *args)
            for chunk in _chunks(idx, effective_n_jobs(n_jobs)))

    def _oracle_chunk(self, w, idx, augment):
        fm, loss = self.feature_map, self.loss
        Y, batch, y_hat = self._decode(w, idx, augment)
        if self._fast_differences:
            psi = fm.joint_feature_differences(self.Xe, Y, y_hat, idx)
        else:
            truth = self.truth_features()[idx]
            psi = sp.csr_matrix(truth - fm.joint_features(self.Xe, y_hat, idx))
            psi.eliminate_zeros()
        lo = np.asarray(loss.batch(Y, y_hat), dtype=float)
        margin = np.asarray(psi @ w, dtype=float).ravel()
        if self.rescaling == "slack":
            slack = np.maximum(0.0, lo * (1.0 - margin))
        else:
            slack = np.maximum(0.0, lo - margin)
        return Violation(idx=idx, y_hat=list(y_hat), loss=lo, psi=psi, margin=margin,
                         slack=slack)

    def oracle_sum(self, w):
        """The 1-slack oracle: the most violated constraint aggregated over examples.

        Returns ``(loss_sum, psi_sum, slack)``: Σ_i Δ_i, Σ_i ω_i δΦ_i as a 1×D CSR row
        (ω_i = 1 for margin rescaling, Δ_i for slack rescaling) and the per-example
        slacks ξ_i at ``w``. Maps with ``has_difference_sum`` build Σ ω_i δΦ_i directly
        (``joint_feature_difference_sum``) and the margins come from the potentials'
        scores, so no per-example rows are formed; otherwise it sums
        :meth:`oracle`'s rows.
        """
        fm = self.feature_map
        if self.rescaling == "margin" and getattr(type(fm), "has_aggregate_oracle", False):
            loss_sum, total, slack = fm.aggregate_violation(self.Xe, self.Ye, w, self.loss)
            total = np.asarray(total, dtype=float).ravel()
            nz = np.flatnonzero(total)
            row = sp.csr_matrix((total[nz], nz, [0, nz.size]), shape=(1, total.size))
            return float(loss_sum), row, np.asarray(slack, dtype=float)
        if not getattr(type(fm), "has_difference_sum", False):
            v = self.oracle(w)
            weights = v.loss if self.rescaling == "slack" else np.ones(len(v.idx))
            return float(v.loss.sum()), weighted_row_sum(v.psi, weights), v.slack
        parts = self._map_chunks(self._oracle_sum_chunk, w, np.arange(self.n_samples))
        loss = float(sum(p[0] for p in parts))
        dense = np.sum([p[1] for p in parts], axis=0)
        nz = np.flatnonzero(dense)
        row = sp.csr_matrix((dense[nz], nz, [0, nz.size]), shape=(1, dense.size))
        return loss, row, np.concatenate([p[2] for p in parts])

    def _oracle_sum_chunk(self, w, idx):
        fm, loss = self.feature_map, self.loss
        Y, batch, y_hat = self._decode(w, idx)
        lo = np.asarray(loss.batch(Y, y_hat), dtype=float)
        margin = np.asarray(batch.score(Y), dtype=float) - np.asarray(batch.score(y_hat),
                                                                       dtype=float)
        if self.rescaling == "slack":
            weights, slack = lo, np.maximum(0.0, lo * (1.0 - margin))
        else:
            weights, slack = np.ones(len(idx)), np.maximum(0.0, lo - margin)
        total = fm.joint_feature_difference_sum(self.Xe, Y, y_hat, idx, weights)
        return float(lo.sum()), np.asarray(total, dtype=float).ravel(), slack

    def primal_objective(self, w, violation=None):
        """½‖w‖² + C Σ_i ξ_i with ξ_i from exact loss-augmented decoding."""
        if violation is None:
            violation = self.oracle(w)
        return 0.5 * float(w @ w) + self.C * float(violation.slack.sum())


def weighted_row_sum(M, weights):
    """Σ_i weights_i M_i as a 1×D CSR row (sorted unique indices), via one bincount."""
    M = sp.csr_matrix(M)
    data = M.data * np.repeat(np.asarray(weights, dtype=float), np.diff(M.indptr))
    dense = np.bincount(M.indices, weights=data, minlength=M.shape[1])
    nz = np.flatnonzero(dense)
    row = sp.csr_matrix((dense[nz], nz, [0, nz.size]), shape=(1, M.shape[1]))
    row.has_canonical_format = True
    return row


def _enumerated_argmax(batch, Y, loss, slack):
    """Loss-augmented argmax by enumeration (non-decomposable losses, slack rescaling)."""
    out = []
    for i, y_true in enumerate(Y):
        pot = batch[i]
        s_true = pot.score(y_true)
        best, best_val = y_true, 0.0
        for y in pot.enumerate():
            d = loss(y_true, y)
            h = s_true - pot.score(y)  # w·δΦ
            val = d * (1.0 - h) if slack else d - h
            if val > best_val:
                best, best_val = y, val
        out.append(best)
    return out


def _slack_rescaled_argmax(batch, Y, loss):
    """Slack rescaling is not decomposable: exact only over enumerable output spaces."""
    if not type(batch).enumerable:
        raise StructureMismatchError(
            f"rescaling='slack' needs an output space that can be enumerated; "
            f"{type(batch).__name__} (structure {batch.structure!r}) cannot. "
            "Use rescaling='margin'.")
    return _enumerated_argmax(batch, Y, loss, slack=True)


def as_sequence(X, name):
    """Turn X into a list-like of samples, with a clear error for non-sequences."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of samples, got a string")
    if sp.issparse(X):
        return [X[i] for i in range(X.shape[0])]
    if isinstance(X, np.ndarray):
        return list(X) if X.ndim > 0 else _raise(TypeError(
            f"{name} must be a sequence of samples, got a 0-d array"))
    if not isinstance(X, Sequence):
        try:
            return list(X)
        except TypeError:
            raise TypeError(f"{name} must be a sequence of samples, got "
                            f"{type(X).__name__}") from None
    return X


def _raise(exc):
    raise exc
