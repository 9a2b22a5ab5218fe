"""A structure written in plain Python: :class:`Structure`, the functions form
:class:`FunctionStructure`, and :class:`StructureMap`, which lets the estimator train
either one like a built-in feature map.

A structure gives the joint feature map Φ(x, y) and the argmax over outputs; the
estimator needs more of a feature map (batched features, potentials, a decoder, a
loss). :class:`StructureMap` supplies them by calling the structure's methods one
example at a time:

- inputs and outputs are the user's own objects (arrays, tuples, trees): encoding
  and decoding are the identity;
- ``joint_features(Xe, Ye, idx)`` stacks the rows Φ(x_i, y_i) (dense or sparse) into
  a CSR matrix;
- the potentials of a batch hold (x_i, w); the decoder calls ``argmax(x_i, w)``, and
  after ``augment(Y, loss)`` the loss-augmented argmax: the structure's own
  ``loss_augmented_argmax(x_i, y_i, w)`` for its own loss, else the best of
  Δ(y_i, y) + w·Φ(x_i, y) over ``outputs(x_i)``.
"""
from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ...io import importable, not_json
from ._params import Params
from ._map import (STRUCTURE_DECODER, EnumerableStructurePotentials,
                             StructureLoss, StructurePotentials, joint_feature_row,
                             same_output, stack_rows, structure_plugins)
from ...protocols import Decoder, as_sequence
from .._state import StateReader

__all__ = ["Structure", "FunctionStructure", "StructureMap", "StructureLoss",
           "StructurePotentials", "EnumerableStructurePotentials", "STRUCTURE_DECODER",
           "same_output", "as_structure", "structure_plugins", "check_savable",
           "importable"]

#: The optional methods of a structure, in the order training looks for them
#: (``latent_argmax`` and ``init_latent``: a structure with hidden variables).
OPTIONAL = ("loss", "loss_augmented_argmax", "outputs", "latent_argmax", "init_latent")


class Structure(Params):
    """Base class of a structure written in plain Python.

    Subclass it and write ``joint_feature`` and ``argmax``; ``loss``,
    ``loss_augmented_argmax`` and ``outputs`` are optional. Parameters are set in
    ``__init__`` the scikit-learn way (stored under their own names), so ``clone``,
    ``get_params`` and grid search (``feature_map__<param>``) work.

    Methods
    -------
    joint_feature(x, y)
        Φ(x, y): a 1-D numpy array, or a 1 × d ``scipy.sparse`` row; the same length
        d for every (x, y). Required.
    argmax(x, w)
        The output y maximising w·Φ(x, y). Required.
    loss(y_true, y_pred)
        Δ(y_true, y_pred) ≥ 0, 0 when they are equal. Default: zero-one
        (:func:`same_output`).
    loss_augmented_argmax(x, y, w)
        The output ŷ maximising Δ(y, ŷ) + w·Φ(x, ŷ). Optional: training enumerates
        ``outputs(x)`` without it.
    outputs(x)
        Every output of x (small output spaces). Optional.

    A structure with hidden variables sets ``latent = True``: an output is then a
    pair (y, h) of which training data give y only, and it writes
    ``joint_feature(x, (y, h))``, ``argmax(x, w)`` returning the best pair, and

    latent_argmax(x, y, w)
        The h maximising w·Φ(x, (y, h)) for the given y. Required when latent.
    init_latent(x, y)
        The structure's own first guess of h (optional; default:
        ``latent_argmax(x, y, 0)``).

    Its ``loss(y, (ŷ, ĥ))`` compares a training output with a pair (default:
    zero-one on y), ``loss_augmented_argmax(x, y, w)`` and ``outputs(x)`` give
    pairs. It trains with ``structsvm.learners.CCCP``; ``predict`` gives y,
    ``predict_latent`` the pairs.

    Attributes
    ----------
    n_features : int or None
        The length of Φ; None (the default) reads it from ``joint_feature`` of the
        first training example (a latent structure needs ``n_features`` or
        ``init_latent`` to do so).
    latent : bool
        Whether outputs hold a hidden part h (default False).

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> class Sign(structsvm.Structure):
    ...     def joint_feature(self, x, y):
    ...         return y * np.asarray(x, dtype=float)
    ...     def argmax(self, x, w):
    ...         return 1 if w @ x >= 0 else -1
    ...     def outputs(self, x):
    ...         return [-1, 1]
    >>> X = [np.array([1.0, 0.2]), np.array([-1.0, 0.1]), np.array([0.9, -0.3])]
    >>> structsvm.fit(X, [1, -1, 1], feature_map=Sign()).predict(X)
    [1, -1, 1]
    """

    n_features = None
    latent = False

    def joint_feature(self, x, y):
        """Φ(x, y): a 1-D array or a 1 × d sparse row."""
        raise NotImplementedError(f"{type(self).__name__} must define "
                                  "joint_feature(self, x, y)")

    def argmax(self, x, w):
        """The output y maximising w·Φ(x, y)."""
        raise NotImplementedError(f"{type(self).__name__} must define argmax(self, x, w)")

    def loss(self, y_true, y_pred):
        """Zero-one loss: 0.0 when :func:`same_output`, else 1.0 (a latent
        structure compares y with the ŷ of the pair (ŷ, ĥ))."""
        if self.latent:
            y_pred = y_pred[0]
        return 0.0 if same_output(y_true, y_pred) else 1.0

    def loss_augmented_argmax(self, x, y, w):
        """The output maximising loss(y, ·) + w·Φ(x, ·) (optional)."""
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "loss_augmented_argmax(self, x, y, w)")

    def outputs(self, x):
        """Every output of ``x`` (optional; small output spaces)."""
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "outputs(self, x)")

    def latent_argmax(self, x, y, w):
        """The hidden part h maximising w·Φ(x, (y, h)) (a latent structure)."""
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "latent_argmax(self, x, y, w)")

    def init_latent(self, x, y):
        """The structure's own first guess of h (optional, a latent structure)."""
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "init_latent(self, x, y)")

    def provides(self, method):
        """Whether the structure defines the optional ``method`` (one of
        :data:`OPTIONAL`) itself.

        Examples
        --------
        >>> Structure().provides("outputs")
        False
        """
        if method not in OPTIONAL:
            raise ValueError(f"provides: {method!r} is not one of {OPTIONAL}")
        return getattr(type(self), method) is not getattr(Structure, method)

    def method_hint(self, *methods):
        """How to supply the optional ``methods``, for error messages."""
        sigs = {"loss": "loss(self, y_true, y_pred)", "outputs": "outputs(self, x)",
                "loss_augmented_argmax": "loss_augmented_argmax(self, x, y, w)",
                "latent_argmax": "latent_argmax(self, x, y, w)",
                "init_latent": "init_latent(self, x, y)"}
        return f"define {' or '.join(sigs[m] for m in methods)} in {type(self).__name__}"


class FunctionStructure(Structure):
    """A structure made of plain functions.

    ``StructuredSVM(feature_map=phi, decoder=argmax)`` builds
    ``FunctionStructure(joint_feature=phi, argmax=argmax)`` (and ``loss`` from a
    callable ``loss=``). Such a structure trains and predicts but cannot be saved:
    a model file stores classes, not code.

    Parameters
    ----------
    joint_feature : callable
        ``joint_feature(x, y)``: Φ(x, y).
    argmax : callable
        ``argmax(x, w)``: the best output.
    loss : callable, default=None
        ``loss(y_true, y_pred)``; None means zero-one.
    loss_augmented_argmax : callable, default=None
        ``loss_augmented_argmax(x, y, w)``.
    outputs : callable, default=None
        ``outputs(x)``: every output of x.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures.user.structure import FunctionStructure
    >>> s = FunctionStructure(joint_feature=lambda x, y: y * np.asarray(x, dtype=float),
    ...                       argmax=lambda x, w: 1 if w @ x >= 0 else -1,
    ...                       outputs=lambda x: [-1, 1])
    >>> X = [np.array([1.0, 0.2]), np.array([-1.0, 0.1])]
    >>> structsvm.fit(X, [1, -1], feature_map=s).predict(X)
    [1, -1]
    """

    def __init__(self, joint_feature=None, argmax=None, loss=None,
                 loss_augmented_argmax=None, outputs=None):
        # stored under their own names (the scikit-learn contract): they shadow the
        # methods on the instance, which is what calling them should do
        self.joint_feature = joint_feature
        self.argmax = argmax
        self.loss = loss
        self.loss_augmented_argmax = loss_augmented_argmax
        self.outputs = outputs

    def provides(self, method):
        """Whether the function ``method`` was given."""
        if method not in OPTIONAL:
            raise ValueError(f"provides: {method!r} is not one of {OPTIONAL}")
        return self.get_params(deep=False).get(method) is not None

    def method_hint(self, *methods):
        """How to supply the optional ``methods``, for error messages."""
        return f"pass {' or '.join(m + '=' for m in methods)} to FunctionStructure"


def as_structure(feature_map, decoder=None, loss=None):
    """The :class:`Structure` that ``feature_map`` (and ``decoder``, ``loss``) stand
    for, or None when ``feature_map`` is not one (a built-in map, or None).

    A :class:`Structure` is returned as it is; a function of (x, y) becomes a
    :class:`FunctionStructure` with ``decoder`` (a function of (x, w)) as its argmax
    and a callable ``loss`` as its loss.

    Raises
    ------
    TypeError
        A class instead of an instance, a function map without a function decoder, or
        a function decoder with anything but a function map.
    """
    if isinstance(feature_map, type):
        raise TypeError(f"feature_map={feature_map.__name__} is a class: pass an "
                        f"instance, feature_map={feature_map.__name__}()")
    func_decoder = callable(decoder) and not isinstance(decoder, Decoder)
    if isinstance(feature_map, Structure):
        if func_decoder:
            raise TypeError("decoder= a function goes with feature_map= a function; a "
                            f"{type(feature_map).__name__} decodes with its argmax")
        return feature_map
    if callable(feature_map) and not hasattr(feature_map, "get_params"):
        if not func_decoder:
            raise TypeError("feature_map is a function of (x, y): give its argmax as "
                            "decoder=, a function of (x, w)")
        return FunctionStructure(joint_feature=feature_map, argmax=decoder,
                                 loss=loss if callable(loss) else None)
    if func_decoder:
        raise TypeError("decoder= a function of (x, w) needs feature_map= a function "
                        "of (x, y) or a structsvm.Structure")
    return None


# --------------------------------------------------------------------------- the map
class StructureMap(Params):
    """The feature map of a :class:`Structure`: what the estimator trains.

    ``StructuredSVM(feature_map=MyStructure())`` fits ``StructureMap(MyStructure())``;
    the fitted estimator's ``feature_map_`` is that map and
    ``feature_map_.user_structure`` the structure.

    Parameters
    ----------
    user_structure : Structure

    Attributes
    ----------
    n_features_ : int
        The structure's ``n_features``, or the length of Φ(x_1, y_1).
    """

    structure: ClassVar[str] = "user"
    # the structure's methods run in Python and hold the GIL: the oracle's workers
    # (n_jobs) are processes, which share each call with the fitting process
    decodes_in_python: ClassVar[bool] = True
    default_decoder: ClassVar[str] = "structure"
    default_loss: ClassVar[str] = "structure"
    default_C: ClassVar[float] = 1.0
    # a certified relative duality gap of 1 %: the objective within 1 % of the
    # optimum (benchmarks/bench_own_structure.py: a tenth of it takes about twice
    # the oracle passes for about the same test score)
    default_tol: ClassVar[float] = 1e-2
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)

    def __init__(self, user_structure=None):
        self.user_structure = user_structure

    def fit(self, X, Y):
        """Read ``n_features_`` (the structure's ``n_features`` or the length of
        Φ(x_1, y_1)); return self."""
        s = self.user_structure
        d = s.n_features
        if d is None:
            d = joint_feature_row(s, X[0], Y[0]).shape[-1]
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ValueError(f"{type(s).__name__}.n_features must be a positive integer, "
                             f"got {d!r}")
        self.n_features_ = int(d)
        return self

    def check_trainable(self, loss):
        """Refuse, before training, a structure whose loss-augmented argmax cannot
        be computed for ``loss`` (a :class:`StructureLoss`).

        Raises
        ------
        TypeError
            Naming the method to write: ``loss_augmented_argmax`` or ``outputs``.
        """
        s = self.user_structure
        if s.provides("outputs") or (loss.own and s.provides("loss_augmented_argmax")):
            return
        name = type(s).__name__
        if not loss.own:
            raise TypeError(f"loss={loss.name!r} is not {name}'s own loss: training "
                            "enumerates outputs(x) to maximise it: "
                            f"{s.method_hint('outputs')}")
        raise TypeError(f"{name} has neither loss_augmented_argmax nor outputs: "
                        "training needs the most violated output argmax_y "
                        "loss(y_i, y) + w·Φ(x_i, y): "
                        f"{s.method_hint('loss_augmented_argmax', 'outputs')}")

    def encode_inputs(self, X):
        """The inputs as a sequence (the user's objects)."""
        return as_sequence(X, "X")

    def encode_outputs(self, Y, X=None):
        """The outputs as a list (the user's objects)."""
        return list(as_sequence(Y, "Y"))

    def decode_outputs(self, Ye):
        """The outputs as a list."""
        return list(Ye)

    def _idx(self, Xe, idx):
        return range(len(Xe)) if idx is None else np.asarray(idx, dtype=np.intp).ravel()

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row k is Φ(x_{idx_k}, Ye_k)."""
        rows = [joint_feature_row(self.user_structure, Xe[i], y, self.n_features_)
                for i, y in zip(self._idx(Xe, idx), Ye)]
        return stack_rows(rows, self.n_features_)

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`StructurePotentials` of the examples ``idx`` under ``w``."""
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the structure has "
                             f"{self.n_features_} features")
        s = self.user_structure
        cls = EnumerableStructurePotentials if s.provides("outputs") \
            else StructurePotentials
        return cls(s, [Xe[i] for i in self._idx(Xe, idx)], w)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector of length ``n_features_``."""
        phi = joint_feature_row(self.user_structure, x, y, self.n_features_)
        return phi.toarray().ravel() if sp.issparse(phi) else phi

    def potentials(self, x, w):
        """:class:`StructurePotentials` of one input."""
        return self.batch_potentials([x], w)

    def fitted_state(self):
        """Fitted attributes for the model file (the number of features)."""
        return {"n_features_": self.n_features_}

    def load_fitted_state(self, state):
        """Restore :meth:`fitted_state`; return self (a count that is no
        non-negative integer is a :class:`~structsvm.io.ModelFileError`)."""
        self.n_features_ = StateReader(state, type(self).__name__).integer("n_features_")
        return self


def check_savable(structure):
    """Refuse, with a ValueError saying why, a structure a model file cannot hold:
    plain functions, a class that cannot be imported back by its path, parameters
    that are not JSON values."""
    if isinstance(structure, FunctionStructure):
        raise ValueError("Cannot save a model of plain functions (FunctionStructure): "
                         "a model file stores a structure's class and parameters, not "
                         "code. Write the functions as a structsvm.Structure subclass "
                         "in a module to save the model")
    why = importable(type(structure))
    if why is not None:
        raise ValueError(f"Cannot save the model: {why}")
    for name, value in structure.get_params(deep=False).items():
        bad = not_json(value)
        if bad is not None:
            raise ValueError(f"Cannot save the model: parameter {name!r} of "
                             f"{type(structure).__name__} holds {bad}; a model file "
                             "stores parameters that are JSON values (numbers, "
                             "strings, booleans, None, and lists, tuples and dicts with "
                             "string keys of these)")
