"""A structure written in Python whose outputs hold a hidden part:
:class:`LatentStructureMap`, the feature map the estimator trains for a
:class:`~structsvm.structures.user.structure.Structure` with ``latent = True``.

Outputs are pairs (y, h). Training data give y; the map encodes each training output
as the pair (y, h₀) with the structure's own first guess h₀ (``init_latent(x, y)``, or
``latent_argmax(x, y, 0)``), and :class:`structsvm.learners.CCCP` replaces h by
``latent_argmax(x, y, w)`` every round. The loss compares the observed y with a
predicted pair: ``loss(y, (ŷ, ĥ))``.
"""
from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state

from ._map import (EnumerableStructurePotentials, StructurePotentials,
                   joint_feature_row)
from .structure import StructureMap

__all__ = ["LatentStructureMap", "LatentStructureLoss"]


class LatentStructureMap(StructureMap):
    """The feature map of a :class:`~structsvm.structures.user.structure.Structure`
    whose outputs are pairs (y, h) with a hidden h (``latent = True``).

    Encoded outputs are tuples (y, h); ``decode_outputs`` keeps y,
    ``decode_latent`` the pairs. The map adds what
    :class:`structsvm.learners.CCCP` asks of a latent map
    (:class:`structsvm.protocols.LatentFeatureMap`) by calling the structure's
    ``latent_argmax`` one example at a time.

    Parameters
    ----------
    user_structure : Structure
        With ``latent = True`` and ``latent_argmax``.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> class Best(structsvm.Structure):    # y = +1 when some row of x scores high
    ...     latent, n_features = True, 2
    ...     def joint_feature(self, x, yh):
    ...         y, h = yh
    ...         return x[h] if y == 1 else np.zeros(2)
    ...     def latent_argmax(self, x, y, w):
    ...         return int(np.argmax(x @ w)) if y == 1 else 0
    ...     def argmax(self, x, w):
    ...         h = self.latent_argmax(x, 1, w)
    ...         return (1, h) if x[h] @ w > 0 else (-1, 0)
    ...     def outputs(self, x):
    ...         return [(-1, 0)] + [(1, h) for h in range(len(x))]
    >>> X = [np.array([[3.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [-1.0, 0.0]])]
    >>> model = structsvm.fit(X, [1, -1], feature_map=Best(), C=10.0)
    >>> model.predict(X), model.predict_latent(X)
    ([1, -1], [(1, 0), (-1, 0)])
    """

    latent: ClassVar[bool] = True
    default_learners: ClassVar[tuple] = (("cccp", {}),)
    convex_learners: ClassVar[tuple] = StructureMap.default_learners

    def _check_latent(self):
        s = self.user_structure
        if not s.provides("latent_argmax"):
            raise TypeError(f"{type(s).__name__} sets latent = True but has no "
                            f"latent_argmax: {s.method_hint('latent_argmax')}")
        return s

    def _guess(self, x, y, d):
        s = self.user_structure
        if s.provides("init_latent"):
            return s.init_latent(x, y)
        return s.latent_argmax(x, y, np.zeros(d))

    def fit(self, X, Y):
        """Read ``n_features_`` (the structure's ``n_features``, or the length of
        Φ(x_1, (y_1, init_latent(x_1, y_1)))); return self.

        Raises
        ------
        TypeError
            No ``latent_argmax``, or neither ``n_features`` nor ``init_latent``.
        """
        s = self._check_latent()
        d = s.n_features
        if d is None:
            if not s.provides("init_latent"):
                raise TypeError(f"{type(s).__name__} is latent: set its n_features "
                                "(the length of Φ) or define init_latent(self, x, y), "
                                "so that Φ(x, (y, h)) can be built before training")
            d = joint_feature_row(s, X[0], (Y[0], s.init_latent(X[0], Y[0]))).shape[-1]
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ValueError(f"{type(s).__name__}.n_features must be a positive integer, "
                             f"got {d!r}")
        self.n_features_ = int(d)
        return self

    # ------------------------------------------------------------------ encoding
    def encode_outputs(self, Y, X=None):
        """Training outputs y as pairs (y, h₀), h₀ the structure's first guess.

        Raises
        ------
        ValueError
            Without ``X`` (the guess reads the inputs).
        """
        if X is None:
            raise ValueError("a latent structure encodes outputs with their inputs: "
                             "pass X")
        Y, Xs = super().encode_outputs(Y), self.encode_inputs(X)
        if len(Xs) != len(Y):
            raise ValueError(f"X has {len(Xs)} samples but Y has {len(Y)}")
        self._check_latent()
        return [(y, self._guess(x, y, self.n_features_)) for x, y in zip(Xs, Y)]

    def decode_outputs(self, Ye):
        """Pairs (y, h) to y."""
        return [_pair(p)[0] for p in Ye]

    def decode_latent(self, Ye):
        """Pairs as tuples (y, h)."""
        return [tuple(_pair(p)) for p in Ye]

    # ------------------------------------------------------------------ latent
    def latent_loss(self, loss):
        """The loss of training outputs and predicted pairs:
        :class:`LatentStructureLoss`."""
        return LatentStructureLoss(loss)

    def impute(self, Xe, Ye, w):
        """Pairs (y_i, latent_argmax(x_i, y_i, w))."""
        s = self._check_latent()
        w = np.asarray(w, dtype=float)
        return [(p[0], s.latent_argmax(Xe[i], p[0], w)) for i, p in enumerate(Ye)]

    def init_latent(self, Xe, Ye, init, random_state):
        """First pairs: the encoded guesses (``"guess"``), the latent argmax under a
        random w with N(0, 1) entries (``"random"``), or (y_i, h_i) of one given h
        per example."""
        s = self._check_latent()
        if not isinstance(init, str):
            H = list(init)
            if len(H) != len(Ye):
                raise ValueError(f"init has {len(H)} hidden parts for {len(Ye)} examples")
            return [(p[0], h) for p, h in zip(Ye, H)]
        if init == "guess":
            return list(Ye)
        w = check_random_state(random_state).standard_normal(self.n_features_)
        return [(p[0], s.latent_argmax(Xe[i], p[0], w)) for i, p in enumerate(Ye)]

    def select_inputs(self, Xe, idx):
        """The inputs of the examples ``idx`` (a list)."""
        return [Xe[int(i)] for i in np.asarray(idx).ravel()]

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`LatentStructurePotentials` of the examples ``idx`` under ``w``."""
        batch = super().batch_potentials(Xe, w, idx)
        cls = LatentEnumerablePotentials if type(batch).enumerable \
            else LatentStructurePotentials
        return cls(batch.user, batch.X, batch.w)


def _pair(p):
    if not (isinstance(p, tuple) and len(p) == 2):
        raise ValueError(f"an output of a latent structure is a pair (y, h), got {p!r}")
    return p


class LatentStructurePotentials(StructurePotentials):
    """Potentials of a latent structure's batch: after ``augment``, the
    loss-augmented argmax is the structure's ``loss_augmented_argmax(x, y, w)`` with
    the training output y of each pair (y, h)."""

    def decode(self, exclude=None):
        """The best pair of every example: plain, or loss-augmented."""
        if (exclude is None and self.Y is not None and self.loss.own
                and self.user.provides("loss_augmented_argmax")):
            return [self.user.loss_augmented_argmax(x, _pair(self.Y[i])[0], self.w)
                    for i, x in enumerate(self.X)]
        return super().decode(exclude)


class LatentEnumerablePotentials(LatentStructurePotentials):
    """:class:`LatentStructurePotentials` of a structure with ``outputs``."""

    enumerable: ClassVar[bool] = EnumerableStructurePotentials.enumerable


class LatentStructureLoss:
    """The loss of a latent structure on (training output, predicted pair):
    ``loss((y, h), (ŷ, ĥ))`` is the structure's (or the estimator's function's)
    ``loss(y, (ŷ, ĥ))``; the training output's h is never read.

    Parameters
    ----------
    loss : StructureLoss
        The structure's loss (or a function given as the estimator's ``loss``).
    """

    decomposition: ClassVar[str] = "own"
    counts_wrong_parts: ClassVar[bool] = False

    def __init__(self, loss):
        self.base = loss
        self.name = loss.name

    @property
    def own(self):
        """Whether this is the structure's own loss."""
        return self.base.own

    def __call__(self, y_true, y_pred):
        return self.base(_pair(y_true)[0], y_pred)

    def batch(self, Y_true, Y_pred):
        """Δ of every pair, as a float array."""
        return np.array([self(a, b) for a, b in zip(Y_true, Y_pred)], dtype=float)

    def max_loss(self, y_true):
        """1: ``score`` is then 1 − the mean loss."""
        return 1.0

    def __repr__(self):
        return f"LatentStructureLoss({self.name!r})"
