"""Task losses Δ(y, ŷ) on encoded outputs.

A loss is *decomposable* when Δ(y, ŷ) = Σ_parts δ(y_p, ŷ_p) over the decoder's parts
(a chain's tokens; a multiclass output is a single part). Then
``part_losses(y, n_states)`` gives the table added to the potentials, and
loss-augmented decoding is the ordinary decoder on augmented scores.

Encoded outputs: an ``int`` for multiclass, an int array for sequences (one state
per token). Structures with other encodings bring their own losses (see
``structsvm.features``).
"""
from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

__all__ = ["BaseLoss", "ZeroOneLoss", "HammingLoss", "CallableLoss", "LOSSES", "get_loss", "register_loss"]


def _as_states(y):
    return np.atleast_1d(np.asarray(y))


class BaseLoss:
    """Base class of losses (subclass it for your own; see :class:`structsvm.protocols.Loss`).

    Subclasses set ``name`` and ``decomposable`` and implement ``__call__``; a
    decomposable loss implements ``part_losses`` too.
    """

    name = "loss"
    decomposable: ClassVar[bool] = False

    def __call__(self, y_true, y_pred):  # pragma: no cover - abstract
        raise NotImplementedError

    def max_loss(self, y_true):
        """The largest loss any prediction can have for ``y_true`` (1 unless overridden)."""
        return 1.0

    def batch(self, Y_true, Y_pred):
        """Δ(y_i, ŷ_i) for a batch, as a float array (override to vectorise)."""
        return np.array([self(a, b) for a, b in zip(Y_true, Y_pred)], dtype=float)

    def part_losses(self, y_true, n_states):
        """Loss of each state at each part, ``(n_parts, n_states)``; decomposable losses only."""
        raise TypeError(f"{type(self).__name__} does not decompose over parts")

    def __repr__(self):
        return f"{type(self).__name__}()"


class ZeroOneLoss(BaseLoss):
    """Δ(y, ŷ) = [y ≠ ŷ] on whole structures.

    Decomposable only on single-part outputs (multiclass); for longer structures use
    :class:`HammingLoss` or the exhaustive decoder.

    Examples
    --------
    >>> ZeroOneLoss()(3, 3), ZeroOneLoss()(3, 1)
    (0.0, 1.0)
    """

    name = "zero_one"
    decomposable: ClassVar[bool] = True

    def __call__(self, y_true, y_pred):
        return float(not np.array_equal(_as_states(y_true), _as_states(y_pred)))

    def max_loss(self, y_true):
        """1: any wrong output costs one."""
        return 1.0

    def batch(self, Y_true, Y_pred):
        if len(Y_true) and np.ndim(Y_true[0]) == 0 and np.ndim(Y_pred[0]) == 0:
            return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(float)
        return super().batch(Y_true, Y_pred)

    def part_losses(self, y_true, n_states):
        """Loss of each state of a one-part output: 1 for every state but the true one."""
        y = _as_states(y_true)
        if y.size != 1:
            raise ValueError(
                "zero_one loss does not decompose over the parts of a structure with "
                f"{y.size} parts; use loss='hamming' or decoder='exhaustive'")
        out = np.ones(n_states)
        out[int(y[0])] = 0.0
        return out

    def __repr__(self):
        return "ZeroOneLoss()"


class HammingLoss(BaseLoss):
    """Δ(y, ŷ) = Σ_t [y_t ≠ ŷ_t] (divided by the length when ``normalize``).

    Parameters
    ----------
    normalize : bool, default=False
        Divide by the number of parts, so that Δ ∈ [0, 1] for every example.

    Examples
    --------
    >>> HammingLoss()([0, 1, 2], [0, 2, 2])
    1.0
    >>> HammingLoss(normalize=True)([0, 1, 2, 3], [0, 2, 2, 3])
    0.25
    """

    name = "hamming"
    decomposable: ClassVar[bool] = True

    def __init__(self, normalize=False):
        self.normalize = normalize

    def __call__(self, y_true, y_pred):
        a, b = _as_states(y_true), _as_states(y_pred)
        if a.shape != b.shape:
            raise ValueError(f"hamming loss: outputs of lengths {a.size} and {b.size}")
        d = float(np.count_nonzero(a != b))
        return d / a.size if self.normalize and a.size else d

    def max_loss(self, y_true):
        """The number of parts of ``y_true`` (1 when normalised)."""
        return 1.0 if self.normalize else float(_as_states(y_true).size)

    def batch(self, Y_true, Y_pred):
        if len(Y_true) and np.ndim(Y_true[0]) == 0 and np.ndim(Y_pred[0]) == 0:
            return (np.asarray(Y_true) != np.asarray(Y_pred)).astype(float)
        if not len(Y_true):
            return np.zeros(0)
        # sequences: one comparison over all tokens, summed per sequence
        lengths = np.array([np.size(y) for y in Y_true])
        if not np.array_equal(lengths, [np.size(y) for y in Y_pred]) or lengths.min() == 0:
            return super().batch(Y_true, Y_pred)
        wrong = (np.concatenate([np.ravel(y) for y in Y_true])
                 != np.concatenate([np.ravel(y) for y in Y_pred])).astype(float)
        out = np.add.reduceat(wrong, np.concatenate([[0], np.cumsum(lengths)[:-1]]))
        return out / lengths if self.normalize else out

    def part_losses(self, y_true, n_states):
        """1 where a state differs from the true one, shape ``(n_parts, n_states)``."""
        y = _as_states(y_true).astype(np.intp)
        out = np.ones((y.size, n_states))
        out[np.arange(y.size), y] = 0.0
        if self.normalize and y.size:
            out /= y.size
        return out if np.ndim(y_true) else out[0]

    def __repr__(self):
        return f"HammingLoss(normalize={self.normalize})"


class CallableLoss(BaseLoss):
    """A user function ``func(y_true, y_pred) -> float`` on *raw* (decoded) outputs.

    Not decomposable: loss-augmented decoding enumerates the output space (fine for
    multiclass, where the K×K table is computed once; otherwise use the exhaustive
    decoder).

    Parameters
    ----------
    func : callable
        Must return a finite float ≥ 0 and 0 when ``y_pred == y_true``.
    decode : callable, optional
        Maps an encoded output to the raw one (set by the estimator from the fitted
        feature map).
    max_value : float, optional
        Largest loss, for ``score``; by default the largest value seen over the
        enumerable outputs, or 1.
    """

    name = "callable"
    decomposable: ClassVar[bool] = False

    def __init__(self, func: Callable, decode=None, max_value=None):
        if not callable(func):
            raise TypeError(f"loss must be a name or a callable, got {type(func).__name__}")
        self.func = func
        self.decode = decode
        self.max_value = max_value
        self._cache = {}

    def __call__(self, y_true, y_pred):
        key = None
        if np.ndim(y_true) == 0 and np.ndim(y_pred) == 0:
            key = (int(y_true), int(y_pred))
            if key in self._cache:
                return self._cache[key]
        a, b = y_true, y_pred
        if self.decode is not None:
            a, b = self.decode(y_true), self.decode(y_pred)
        val = float(self.func(a, b))
        if not np.isfinite(val) or val < 0:
            raise ValueError(f"loss function returned {val!r} for ({a!r}, {b!r}); "
                             "a loss must be finite and >= 0")
        if key is not None:
            self._cache[key] = val
        return val

    def max_loss(self, y_true):
        """``max_value`` when given, else 1."""
        return 1.0 if self.max_value is None else float(self.max_value)

    def __repr__(self):
        return f"CallableLoss({getattr(self.func, '__name__', self.func)!r})"


LOSSES = {"zero_one": ZeroOneLoss, "hamming": HammingLoss}


def register_loss(name, cls):
    """Make ``cls`` (a :class:`BaseLoss` subclass) available by ``name``."""
    if not (isinstance(cls, type) and issubclass(cls, BaseLoss)):
        raise TypeError(f"register_loss: {cls!r} is not a BaseLoss subclass")
    LOSSES[name] = cls
    return cls


def get_loss(loss):
    """Resolve a loss given by name, instance or callable."""
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"Unknown loss {loss!r}; choose one of {sorted(LOSSES)} "
                             "or pass a callable")
        return LOSSES[loss]()
    if isinstance(loss, BaseLoss):
        return loss
    if callable(loss):
        return CallableLoss(loss)
    raise TypeError(f"loss must be a name, a Loss or a callable, got {type(loss).__name__}")
