"""The plugin contract: everything the core calls on a feature map, potentials, a
decoder, a loss and a learner, required and optional.

Data flows one way: inputs and outputs are *encoded* once by the fitted
:class:`FeatureMap`; the map turns a weight vector into *potentials* (factor scores);
a *decoder* maximises over structures; a :class:`Loss` augments the potentials so
that loss-augmented decoding is the same decoder on other scores. Around that loop,
:meth:`structsvm.learners.problem.Problem.oracle` finds the most violated constraint of every
example and is the only thing learners ask of the model.

Required members are the methods and attributes of the protocol classes below.
Optional capabilities are class attributes with a default: a plugin declares one by
setting it (``has_fused_oracle = True``, ``resumable = True``, ...); one that does not
has the default listed in :data:`FEATURE_MAP_CAPABILITIES` and
:data:`LEARNER_CAPABILITIES`. The base classes :class:`FeatureMapBase` and
:class:`LearnerBase` carry those defaults; the core reads a capability with
:func:`capability`, so a plugin that only satisfies the protocol (without the base
class) works too. A decoder's optional capability is its ``augmented`` function
(:class:`Decoder`). Plugins are registered by name with
:func:`structsvm.registry.register_feature_map`,
:func:`structsvm.registry.register_decoder`, :func:`structsvm.registry.register_loss`
and :func:`structsvm.learners.register_learner`.

This module sits at the bottom of the package: it imports nothing from structsvm but
its private parts, which import nothing at all from structsvm (the capabilities and
their defaults, ``_capabilities``; the learner's contract, ``_learner_protocol``; the
input checks, ``_samples``). Every name is exported here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ._capabilities import (FEATURE_MAP_CAPABILITIES, LEARNER_CAPABILITIES, ClassBlocks,
                            FeatureMapBase, LearnerBase, capability, plugin_name)
from ._learner_protocol import Learner, LearnerResult
from ._samples import SparseRows, as_sequence

if TYPE_CHECKING:  # annotations only (SciPy is imported where a call needs it)
    import scipy.sparse as sp

__all__ = [
    "FeatureMap", "Potentials", "PotentialsBatch", "Loss", "Learner", "Decoder",
    "FeatureMapBase", "LearnerBase", "ClassBlocks", "FEATURE_MAP_CAPABILITIES",
    "LEARNER_CAPABILITIES", "capability", "plugin_name", "as_decoder",
    "LearnerResult", "QPError", "StructureMismatchError", "EnumerationError",
    "MAX_ENUMERATED_OUTPUTS", "check_enumerable", "as_sequence", "SparseRows",
]

#: Largest number of outputs of one example that structsvm enumerates (exhaustive
#: decoder, slack rescaling, losses that do not decompose). Scoring one output takes
#: a few microseconds in Python, so this keeps one example's enumeration under about
#: a second; larger spaces are refused up front with an :class:`EnumerationError`.
MAX_ENUMERATED_OUTPUTS = 100_000

class QPError(RuntimeError):
    """A working-set QP could not be solved (after the retries)."""


class StructureMismatchError(TypeError):
    """Plugins of incompatible structures were combined (e.g. a chain map with argmax)."""


class EnumerationError(StructureMismatchError):
    """Something would enumerate an output space that cannot or should not be
    enumerated (no enumeration exists, or more than ``MAX_ENUMERATED_OUTPUTS``)."""


# --------------------------------------------------------------------------- protocols
@runtime_checkable
class Potentials(Protocol):
    """Factor scores of ONE example under a weight vector.

    ``score(y)`` must equal ``w @ feature_map.joint_feature(x, y)`` for every output
    ``y`` in the map's *encoded* output space; ``enumerate()`` yields every encoded
    output (used by the exhaustive decoder, so only for small spaces: callers check
    the batch's ``output_space_sizes()`` first, see :func:`check_enumerable`).
    """

    def score(self, y) -> float:
        """Score w·Φ(x, y) of the encoded output ``y`` of this example."""

    def enumerate(self):
        """Yield every encoded output of this example (small output spaces only)."""


@runtime_checkable
class PotentialsBatch(Protocol):
    """Potentials of a batch of examples (what decoders consume).

    ``batch[i]`` is the :class:`Potentials` of example i; ``augment(Y, loss)``
    returns the batch with every example's scores plus Δ(y_i, ·) decomposed over the
    decoder's parts (only for ``loss.decomposable`` losses).

    ``enumerable`` says whether outputs can be enumerated at all; a batch that sets
    it provides ``output_space_sizes()``, the number of outputs of each example
    (e.g. K^T for a chain of T tokens and K states), so that enumeration is refused
    up front where it is infeasible (:func:`check_enumerable`).
    """

    structure: ClassVar[str]
    enumerable: ClassVar[bool]  # can every example's outputs be enumerated?

    def __len__(self) -> int: ...

    def __getitem__(self, i) -> Potentials: ...

    def augment(self, Y, loss) -> "PotentialsBatch":
        """The batch with Δ(y_i, ·) added to every example's scores, over the decoder's parts."""

    def score(self, Y) -> np.ndarray:
        """w·Φ(x_i, y_i) of every example i for the encoded outputs ``Y``, as an array."""


@runtime_checkable
class FeatureMap(Protocol):
    """Joint feature map Φ(x, y).

    Class attribute ``structure`` names the output structure ("multiclass", "chain",
    "tree", "ranking", ...); a decoder is accepted only for its own structure.
    ``default_decoder``, ``default_loss``, ``default_C`` and ``default_tol`` are what
    the estimator uses when the user gives none. A map is a scikit-learn estimator
    (``get_params``/``set_params``): ``fit`` clones it.

    The public pair works on raw (user) data:
    ``joint_feature(x, y)`` and ``potentials(x, w)``. Learners use the encoded,
    batched methods: ``encode_inputs``/``encode_outputs`` once, then
    ``joint_features(Xe, Ye)`` (a CSR matrix, one row Φ(x_i, y_i) per example) and
    ``batch_potentials(Xe, w)`` every round. Model files store ``fitted_state()``
    (a dict of numbers, strings and arrays) and give it back to
    ``load_fitted_state(state)`` of an unfitted map with the same parameters.

    Optional capabilities (:data:`FEATURE_MAP_CAPABILITIES`, defaults in
    :class:`FeatureMapBase`), each a class attribute:

    - ``has_feature_differences``: ``joint_feature_differences(Xe, Ye, Ye_hat, idx)``
      gives the CSR rows Φ(x_i, y_i) − Φ(x_i, ŷ_i); the oracle then uses it instead
      of two ``joint_features`` calls;
    - ``has_difference_sum``: ``joint_feature_difference_sum(Xe, Ye, Ye_hat, idx,
      weights)`` gives the dense vector Σ_i weights_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) for
      the 1-slack oracle;
    - ``has_aggregate_oracle``: ``aggregate_violation(Xe, Ye, w, loss) -> (Σ_i Δ_i,
      Σ_i δΦ_i (dense or a sparse row), ξ per example)`` computes the whole
      margin-rescaled 1-slack oracle with the map's default decoder (e.g. Joachims'
      O(n log n) ranking oracle); with ``has_chunked_aggregate`` it also takes the
      examples ``idx`` as a fifth argument, so chunks run in parallel;
    - ``has_fused_oracle``: ``fused_oracle(Xe, Ye, w, loss, decoder, idx, augment)``
      returns ``(y_hat, losses, δΦ rows, margins)`` in one pass, or None where it does
      not apply (another decoder or loss), margin rescaling only;
    - ``has_class_blocks``: ``class_blocks(Xe, loss)`` returns a :class:`ClassBlocks`
      when the fitted map's Φ is one-hot class blocks (None otherwise), what the
      multiclass dual method solves on; ``Xe`` may be None (only the loss table);
    - ``example_costs(Xe)``: the relative decoding cost of every example (e.g.
      sentence lengths), so parallel chunks get equal work;
    - ``fit_encode(X, Y)``: fit and return ``encode_inputs(X)`` in one pass.
    """

    structure: ClassVar[str]
    default_decoder: ClassVar[str]
    default_loss: ClassVar[str]
    default_C: ClassVar[float]
    default_tol: ClassVar[float]
    n_features_: int

    def fit(self, X, Y) -> "FeatureMap":
        """Learn what the map needs from training data (vocabularies, label sets); return self."""

    def encode_inputs(self, X) -> Any:
        """Encode raw inputs once, in the form the batched methods take."""

    def encode_outputs(self, Y, X=None) -> list:
        """Encode raw outputs (``X`` where the encoding needs the inputs)."""

    def decode_outputs(self, Ye) -> list:
        """Encoded outputs back to the user's labels."""

    def joint_features(self, Xe, Ye, idx=None) -> sp.csr_matrix:
        """CSR matrix whose row i is Φ(x_i, y_i), for the examples ``idx`` (all by default)."""

    def batch_potentials(self, Xe, w, idx=None) -> PotentialsBatch:
        """The :class:`PotentialsBatch` of the examples ``idx`` (all by default) under ``w``."""

    def joint_feature(self, x, y) -> np.ndarray:
        """Φ(x, y) of one raw input and output, as a dense vector of length ``n_features_``."""

    def potentials(self, x, w) -> Potentials:
        """The :class:`Potentials` of one raw input under ``w``."""

    def fitted_state(self) -> dict:
        """What fit learnt, as numbers, strings and arrays (stored in model files)."""

    def load_fitted_state(self, state) -> "FeatureMap":
        """Become fitted from a ``fitted_state()``; return self."""


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

    def batch(self, Y_true, Y_pred) -> np.ndarray:
        """Δ(y_i, ŷ_i) of every pair of encoded outputs, as a float array."""

    def max_loss(self, y_true) -> float:
        """The largest loss any prediction can have for ``y_true``."""


@dataclass(frozen=True)
class Decoder:
    """A named decoder: a pure function of a :class:`PotentialsBatch`.

    ``func(batch, exclude=None)`` returns a list of encoded outputs, one per example:
    the highest-scoring structure, or, when ``exclude`` (a list of encoded outputs)
    is given, the highest-scoring structure different from ``exclude[i]``
    (the lecture's "argmax over y ≠ y_i").
    ``structure`` is the structure it decodes; "any" accepts every batch that can
    enumerate its outputs.

    Optional: ``augmented(batch, Y, loss)`` decodes loss-augmented itself, the argmax
    over y of Δ(y_i, y) + score_i(y) for every example (margin rescaling), e.g. for a
    loss that does not decompose over the parts of the potentials; it returns the
    list of outputs, or None where it cannot for that loss. The oracle asks it first,
    then the potentials' ``augment`` (a decomposable loss), then enumeration.
    """

    name: str
    structure: str
    func: Any
    augmented: Any = None

    def __call__(self, batch, exclude=None):
        return self.func(batch, exclude=exclude)

    def loss_augmented(self, batch, Y, loss):
        """``augmented(batch, Y, loss)``, or None when the decoder has none."""
        if self.augmented is None:
            return None
        out = self.augmented(batch, Y, loss)
        return None if out is None or out is NotImplemented else out


def as_decoder(decoder, structure):
    """``decoder`` as a :class:`Decoder`: a Decoder as it is, a plain function
    ``f(batch, exclude=None)`` named after itself, decoding ``structure``."""
    if isinstance(decoder, Decoder):
        return decoder
    if not callable(decoder):
        raise TypeError(f"decoder must be a Decoder or a function of a batch of "
                        f"potentials, got {type(decoder).__name__}")
    return Decoder(name=getattr(decoder, "__name__", type(decoder).__name__),
                   structure=structure, func=decoder)

# --------------------------------------------------------------------------- enumeration
def _size_text(n):
    return str(n) if n < 10 ** 12 else f"about 10^{len(str(n)) - 1}"


def check_enumerable(batch, why, alternative, limit=None):
    """Refuse, before enumerating anything, an output space too large to enumerate.

    Parameters
    ----------
    batch : PotentialsBatch
    why : str
        What would enumerate (e.g. "rescaling='slack'"); starts the message.
    alternative : str
        What to use instead (named in the message).
    limit : int, optional
        Default :data:`MAX_ENUMERATED_OUTPUTS` (read when called, so a test may
        raise it with ``monkeypatch.setattr(structsvm.protocols,
        "MAX_ENUMERATED_OUTPUTS", ...)``).

    Raises
    ------
    EnumerationError
        The batch cannot enumerate its outputs, or an example has more than
        ``limit`` outputs; the message names the sample, its number of outputs, the
        limit and ``alternative``.

    Examples
    --------
    >>> class Chains:
    ...     structure, enumerable = "chain", True
    ...     def output_space_sizes(self):
    ...         return [3 ** 4, 3 ** 40]
    >>> check_enumerable(Chains(), "the exhaustive decoder",
    ...                  "Use 'viterbi'.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    structsvm.protocols.EnumerationError: ... sample 1 has about 10^19 outputs ...
    """
    limit = MAX_ENUMERATED_OUTPUTS if limit is None else int(limit)
    if not type(batch).enumerable:
        raise EnumerationError(
            f"{why} enumerates every output of an example, but {type(batch).__name__} "
            f"({batch.structure!r} outputs) cannot enumerate its outputs. {alternative}")
    sizes = getattr(batch, "output_space_sizes", None)
    if sizes is None:  # a plugin that sets enumerable = True must say how many
        raise TypeError(f"{type(batch).__name__} sets enumerable = True but has no "
                        "output_space_sizes() (the number of outputs of each example)")
    for i, n in enumerate(sizes()):
        if n > limit:
            raise EnumerationError(
                f"{why} enumerates every output of an example, but sample {i} has "
                f"{_size_text(int(n))} outputs (more than MAX_ENUMERATED_OUTPUTS = "
                f"{limit}). {alternative}")
