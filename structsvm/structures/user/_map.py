"""What the feature map of a :class:`~structsvm.structures.user.structure.Structure` hands the core:
potentials, the decoder, the loss and feature rows, built from the structure's
per-example methods, and which decoder and loss a structure trains with
(:func:`structure_plugins`).

Private: :mod:`structsvm.structures.user.structure` is the public interface.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..decoders import get_decoder
from ..losses import BaseLoss, get_loss
from ...protocols import Decoder, StructureMismatchError, check_decomposition

__all__ = ["same_output", "StructureLoss", "StructurePotentials",
           "EnumerableStructurePotentials", "STRUCTURE_DECODER", "joint_feature_row",
           "stack_rows", "structure_plugins"]


def same_output(a, b):
    """Whether two outputs are equal: numpy arrays by ``np.array_equal``, other
    objects by ``==`` (an element-wise ``==`` counts as equal when all are).

    Examples
    --------
    >>> import numpy as np
    >>> same_output(np.array([0, 1]), np.array([0, 1])), same_output((0, 1), (0, 2))
    (True, False)
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    eq = a == b
    if isinstance(eq, (bool, np.bool_)):
        return bool(eq)
    try:
        return bool(np.all(eq))
    except (TypeError, ValueError):
        return False


# --------------------------------------------------------------------------- loss
class StructureLoss:
    """The loss of a structure as a :class:`~structsvm.protocols.Loss`.

    Its ``decomposition`` is ``"own"``: loss-augmented decoding is the structure's
    decoder on augmented potentials (:meth:`StructurePotentials.augment`): its own
    ``loss_augmented_argmax`` for its own loss, else enumeration of ``outputs(x)``.

    Parameters
    ----------
    structure : Structure
    func : callable or Loss, optional
        Another loss of raw outputs (the estimator's ``loss=``); None uses the
        structure's own ``loss``.
    """

    decomposition: ClassVar[str] = "own"
    counts_wrong_parts: ClassVar[bool] = False

    def __init__(self, structure, func=None):
        self.structure = structure
        self.func = func
        if func is None:
            self.name = "structure"
        elif isinstance(func, BaseLoss):
            self.name = func.name
        else:  # a function
            self.name = getattr(func, "__name__", type(func).__name__)

    @property
    def own(self):
        """Whether this is the structure's own loss."""
        return self.func is None

    def __call__(self, y_true, y_pred):
        f = self.structure.loss if self.func is None else self.func
        if f is None:  # a FunctionStructure without a loss: zero-one
            val = 0.0 if same_output(y_true, y_pred) else 1.0
        else:
            val = float(f(y_true, y_pred))
        if not np.isfinite(val) or val < 0:
            raise ValueError(f"loss returned {val!r} for ({y_true!r}, {y_pred!r}); a "
                             "loss must be finite and >= 0")
        return val

    def batch(self, Y_true, Y_pred):
        """Δ(y_i, ŷ_i) of every pair, as a float array."""
        return np.array([self(a, b) for a, b in zip(Y_true, Y_pred)], dtype=float)

    def max_loss(self, y_true):
        """1: ``score`` is then 1 − the mean loss."""
        return 1.0

    def __repr__(self):
        return f"StructureLoss({self.name!r})"


# --------------------------------------------------------------------------- potentials
class _ExamplePotentials:
    """The potentials of one example: ``score(y)`` and ``enumerate()``."""

    def __init__(self, structure, x, w):
        self.structure, self.x, self.w = structure, x, w

    def score(self, y):
        return float(_dot(self.w, joint_feature_row(self.structure, self.x, y, len(self.w))))

    def enumerate(self):
        return iter(self.structure.outputs(self.x))


class StructurePotentials:
    """Potentials of a batch of examples of a :class:`Structure`: (x_i, w), and
    after :meth:`augment` the true outputs and the loss.

    ``enumerable`` is True for structures with ``outputs``
    (:class:`EnumerableStructurePotentials`).
    """

    structure: ClassVar[str] = "user"
    enumerable: ClassVar[bool] = False
    augments: ClassVar[tuple] = ("own",)  # the structure's loss (StructureLoss)

    def __init__(self, user, X, w, Y=None, loss=None):
        self.user, self.X, self.w = user, X, np.asarray(w, dtype=float)
        self.Y, self.loss = Y, loss

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return _ExamplePotentials(self.user, self.X[i], self.w)

    def augment(self, Y, loss):
        """This batch with Δ(y_i, ·) added to the scores of example i (a
        :class:`StructureLoss`)."""
        check_decomposition(loss, self.augments, "a batch of a structsvm.Structure")
        return type(self)(self.user, self.X, self.w, list(Y), loss)

    def score(self, Y):
        """w·Φ(x_i, y_i) of every example, as an array."""
        return np.array([self[i].score(y) for i, y in enumerate(Y)], dtype=float)

    def output_space_sizes(self):
        """The number of outputs of every example (``len(list(outputs(x)))``)."""
        return [sum(1 for _ in self.user.outputs(x)) for x in self.X]

    def decode(self, exclude=None):
        """The best output of every example: plain, or loss-augmented after
        :meth:`augment`; ``exclude[i]`` is skipped (by enumeration)."""
        out = []
        for i, x in enumerate(self.X):
            if exclude is not None:
                out.append(self._enumerate(i, exclude[i]))
            elif self.Y is None:
                out.append(self.user.argmax(x, self.w))
            elif self.loss.own and self.user.provides("loss_augmented_argmax"):
                out.append(self.user.loss_augmented_argmax(x, self.Y[i], self.w))
            else:
                out.append(self._enumerate(i))
        return out

    def _enumerate(self, i, exclude=None):
        pot, y_true = self[i], None if self.Y is None else self.Y[i]
        best, best_val = None, -np.inf
        if y_true is not None and exclude is None:  # ties keep the truth
            best, best_val = y_true, pot.score(y_true)
        for y in pot.enumerate():
            if exclude is not None and same_output(y, exclude):
                continue
            val = pot.score(y) + (0.0 if y_true is None else self.loss(y_true, y))
            if val > best_val:
                best, best_val = y, val
        if best is None:
            raise ValueError(f"Sample {i}: outputs(x) left no output to choose from")
        return best


class EnumerableStructurePotentials(StructurePotentials):
    """:class:`StructurePotentials` of a structure with ``outputs``."""

    enumerable: ClassVar[bool] = True


def _decode(batch, exclude=None):
    return batch.decode(exclude)


#: The decoder of every :class:`Structure`: its ``argmax`` (and, on augmented
#: potentials, its loss-augmented argmax).
STRUCTURE_DECODER = Decoder(name="structure", structure="user", func=_decode)


def structure_plugins(fm, decoder=None, loss=None):
    """(decoder, loss) of a fitted :class:`StructureMap` for the estimator's
    ``decoder`` and ``loss`` parameters; refuses, before training, a structure that
    cannot find its most violated outputs for that loss.

    Raises
    ------
    structsvm.protocols.StructureMismatchError
        A decoder of another structure.
    TypeError
        The structure has neither the method the loss-augmented argmax needs nor
        ``outputs`` (the message names the method to write).
    """
    user = fm.user_structure
    if decoder is None or (callable(decoder) and not isinstance(decoder, Decoder)):
        dec = STRUCTURE_DECODER
    else:
        dec = get_decoder(decoder)
        if dec.structure not in ("user", "any"):
            raise StructureMismatchError(
                f"decoder {dec.name!r} decodes {dec.structure!r} structures; a "
                f"{type(user).__name__} decodes with its argmax (decoder=None)")
    if loss is None or loss is user.loss:
        lo = StructureLoss(user)
    elif callable(loss) and not isinstance(loss, BaseLoss):
        lo = StructureLoss(user, loss)
    else:
        lo = StructureLoss(user, get_loss(loss))
    fm.check_trainable(lo)
    return dec, lo


# --------------------------------------------------------------------------- rows
def _dot(w, row):
    return float(row @ w) if not sp.issparse(row) else float((row @ w)[0])


def joint_feature_row(structure, x, y, d=None):
    """Φ(x, y) checked: a 1-D float array or a 1 × d CSR row."""
    phi = structure.joint_feature(x, y)
    if sp.issparse(phi):
        if phi.ndim != 2 or phi.shape[0] != 1:
            raise ValueError(f"joint_feature returned a sparse matrix of shape "
                             f"{phi.shape}; it must be a 1 x d row")
        if phi.format != "csr" or phi.dtype != np.float64:
            phi = sp.csr_matrix(phi, dtype=float)
    else:
        phi = np.asarray(phi, dtype=float)
        if phi.ndim != 1:
            raise ValueError(f"joint_feature returned an array of shape {phi.shape}; "
                             "it must be 1-D (or a 1 x d sparse row)")
    n = phi.shape[-1]
    if d is not None and n != d:
        raise ValueError(f"joint_feature returned {n} features, expected {d} (the "
                         "length of w): it must have one length for every (x, y)")
    return phi


def stack_rows(rows, d):
    """CSR matrix of the rows (dense 1-D arrays or 1 × d CSR rows), built from their
    arrays at once (no matrix per row)."""
    if not rows:
        return sp.csr_matrix((0, d))
    if all(not sp.issparse(r) for r in rows):
        return sp.csr_matrix(np.vstack(rows))
    indices, data = [], []
    for r in rows:
        if sp.issparse(r):
            nnz = r.indptr[-1]
            indices.append(r.indices[:nnz])
            data.append(r.data[:nnz])
        else:
            nz = np.flatnonzero(r)
            indices.append(nz)
            data.append(r[nz])
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([a.size for a in data], out=indptr[1:])
    M = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                      shape=(len(rows), d))
    M.sum_duplicates()  # rows as given may repeat or unsort their columns
    return M
