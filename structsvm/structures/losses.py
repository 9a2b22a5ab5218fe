"""The losses several structures share: zero-one, Hamming and a user's function,
their base class, and :func:`get_loss`.

A loss declares how it decomposes (``decomposition``, see
:data:`structsvm.protocols.DECOMPOSITIONS`). Zero-one and Hamming decompose over
positions (Δ(y, ŷ) = Σ_t δ_t(ŷ_t) over a sequence's tokens or a graph's nodes; a class
label is a single position): ``part_losses(y, n_states)`` gives the table added to
the potentials, and loss-augmented decoding is the ordinary decoder on augmented
scores. Both count wrong positions (``counts_wrong_parts``), each costing
``part_cost(y)``, which maps use for a vectorised path.

Encoded outputs: an ``int`` for multiclass, an int array for sequences (one state
per token). Structures with other encodings bring their own losses, in their folder.
"""
from __future__ import annotations

from typing import Callable, ClassVar, Optional

import numpy as np

from ..registry import lookup

__all__ = ["BaseLoss", "ZeroOneLoss", "HammingLoss", "CallableLoss", "get_loss"]


def _as_states(y):
    return np.atleast_1d(np.asarray(y))


class BaseLoss:
    """Base class of losses (subclass it for your own; see :class:`structsvm.protocols.Loss`).

    Subclasses set ``name`` and ``decomposition`` and implement ``__call__``; a loss
    that decomposes over positions implements ``part_losses`` too, and one that
    counts wrong parts (``counts_wrong_parts``) ``part_cost``. A loss whose scale
    calls for a C of its own sets ``default_C`` (used when the estimator's C is
    None, before the feature map's ``default_C``).
    """

    name = "loss"
    decomposition: ClassVar[str] = "whole"
    counts_wrong_parts: ClassVar[bool] = False
    #: the C to train with when none is given, where the loss's scale calls for
    #: another than the feature map's ``default_C`` (None: the map's); a loss may
    #: define a method ``default_C(Y_true)`` instead (of the encoded training outputs)
    default_C: ClassVar[Optional[float]] = None
    #: the tol to train with when none is given (None: the feature map's)
    default_tol: ClassVar[Optional[float]] = None

    def __call__(self, y_true, y_pred):  # pragma: no cover - abstract
        raise NotImplementedError

    def max_loss(self, y_true):
        """The largest loss any prediction can have for ``y_true`` (1 unless overridden)."""
        return 1.0

    def batch(self, Y_true, Y_pred):
        """Δ(y_i, ŷ_i) for a batch, as a float array (override to vectorise)."""
        return np.array([self(a, b) for a, b in zip(Y_true, Y_pred)], dtype=float)

    def part_losses(self, y_true, n_states):
        """Loss of each state at each part, ``(n_parts, n_states)``; losses that
        decompose over positions only."""
        raise TypeError(f"{type(self).__name__} does not decompose over positions")

    def part_cost(self, y_true):
        """The cost of one wrong part against ``y_true`` (losses that count wrong
        parts only)."""
        raise TypeError(f"{type(self).__name__} does not count wrong parts")

    def part_costs(self, Y_true):
        """:meth:`part_cost` of every output, as a float array (override to
        vectorise)."""
        return np.array([self.part_cost(y) for y in Y_true], dtype=float)

    def bind(self, decode):
        """The loss for a fitted feature map, ``decode`` turning one of its encoded
        outputs into the user's: this loss itself (it compares encoded outputs),
        unless it compares the user's (:class:`CallableLoss`)."""
        return self

    def __repr__(self):
        return f"{type(self).__name__}()"


class ZeroOneLoss(BaseLoss):
    """Δ(y, ŷ) = [y ≠ ŷ] on whole structures.

    A function of whole outputs (``decomposition = "whole"``): batches of class labels
    (multiclass, taxonomy) add it from a table over the classes; longer structures
    would enumerate their outputs, so use :class:`HammingLoss` or the exhaustive
    decoder there. On a one-part output it is also the table ``part_losses``.

    Examples
    --------
    >>> ZeroOneLoss()(3, 3), ZeroOneLoss()(3, 1)
    (0.0, 1.0)
    """

    name = "zero_one"

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
    decomposition: ClassVar[str] = "position"
    counts_wrong_parts: ClassVar[bool] = True

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

    def part_cost(self, y_true):
        """1 for every wrong part, or 1 / (number of parts) when normalised."""
        n = np.size(y_true)
        return 1.0 / n if self.normalize and n else 1.0

    def part_costs(self, Y_true):
        """:meth:`part_cost` of every output (from the lengths alone)."""
        if not self.normalize:
            return np.ones(len(Y_true))
        n = np.array([np.size(y) for y in Y_true], dtype=float)
        return 1.0 / np.maximum(n, 1.0)

    def __repr__(self):
        return f"HammingLoss(normalize={self.normalize})"


class CallableLoss(BaseLoss):
    """A user function ``func(y_true, y_pred) -> float`` on *raw* (decoded) outputs.

    It decomposes over nothing (``decomposition = "whole"``): loss-augmented decoding
    enumerates the output space (fine for multiclass, where the K×K table is
    computed once; otherwise use the exhaustive decoder).

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

    def bind(self, decode):
        """A copy that decodes encoded outputs with ``decode`` before calling ``func``
        (what the estimator does with the fitted map's ``decode_outputs``)."""
        return CallableLoss(self.func, decode=decode, max_value=self.max_value)

    def __repr__(self):
        return f"CallableLoss({getattr(self.func, '__name__', self.func)!r})"


def get_loss(loss):
    """Resolve a loss given by name (:func:`structsvm.registry.lookup`), instance or
    callable (a :class:`CallableLoss`).

    Examples
    --------
    >>> get_loss("hamming")([0, 1, 2], [0, 2, 2])
    1.0
    """
    if isinstance(loss, str):
        return lookup("loss", loss)()
    if isinstance(loss, BaseLoss):
        return loss
    if callable(loss):
        return CallableLoss(loss)
    raise TypeError(f"loss must be a name, a Loss or a callable, got {type(loss).__name__}")
