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
(:class:`Decoder`); a loss declares how it decomposes (:data:`DECOMPOSITIONS`), and
what consumes it asks that, never its class. Plugins of every kind are registered by
name with :func:`structsvm.registry.register`.

This module sits at the bottom of the package: it imports nothing from structsvm.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Optional, Protocol,
                    runtime_checkable)

import numpy as np

if TYPE_CHECKING:  # annotations only (SciPy is imported where a call needs it)
    import scipy.sparse as sp

__all__ = [
    "FeatureMap", "Potentials", "PotentialsBatch", "Loss", "Learner", "Decoder",
    "LatentFeatureMap", "FeatureMapBase", "LearnerBase", "ClassBlocks",
    "FEATURE_MAP_CAPABILITIES",
    "LEARNER_CAPABILITIES", "capability", "plugin_name", "as_decoder",
    "LearnerResult", "QPError", "StructureMismatchError", "EnumerationError",
    "MAX_ENUMERATED_OUTPUTS", "check_enumerable", "as_sequence", "SparseRows",
    "LazyOutputs", "DECOMPOSITIONS", "check_decomposition", "POTENTIALS_CAPABILITIES",
    "LOSS_CAPABILITIES", "CERTIFIED_STOPPING_RULE", "Partitioned", "DaskPart",
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
    returns the batch with every example's scores plus Δ(y_i, ·), for the losses
    whose ``decomposition`` is among the batch class's ``augments``
    (:data:`POTENTIALS_CAPABILITIES`: ``("position",)`` unless declared; a batch of
    class labels, which can add any loss from a table over its classes, declares
    ``("position", "whole")``).

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

    Class attribute ``structure`` names the structure ("multiclass", "sequence",
    "taxonomy", "ranking", ...: the name it is registered under, and its folder's);
    a decoder is accepted only for its own structure. ``default_decoder``,
    ``default_loss``, ``default_C``, ``default_tol`` and ``default_learners`` are what
    the estimator uses when the user gives none: ``default_learners`` is a sequence of
    ``(learner name, parameters)``, the first one that accepts the fitted problem
    (its ``refusal`` is None) is chosen. A map is a scikit-learn estimator
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
      weights)`` gives the vector Σ_i weights_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) for
      the 1-slack oracle (dense, or a 1 × D sparse row);
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
    - ``decodes_in_python``: its decoding is Python code that holds the GIL (a
      structure written in Python), so with ``n_jobs > 1`` its oracle runs in worker
      processes and the fitting process, not on threads;
    - ``fit_encode(X, Y)``: fit and return ``encode_inputs(X)`` in one pass;
    - ``feature_support(Xe, idx)``: the columns of w in which Φ(x_i, y) can be
      non-zero for some output y, over the examples ``idx`` (sorted, unique): how
      many partitions share each column sets the partitioned learner's steps;
    - ``fit_summary(X, Y)`` and ``fit_from_summaries(summaries)``: the map fitted
      from one summary per partition of the training data, each computed where the
      partition lives (so that no process needs all the data to fit it);
    - ``compiled_loops``: the compiled loops (``"module:function"``) the map's
      default training path calls, in the order it calls them (they are compiled in
      a helper process while the fit starts, and a fit whose loops were all
      compiled at installation says nothing about compiling);
    - ``latent``: its outputs hold a hidden part h that training data do not give
      (a :class:`LatentFeatureMap`); ``convex_learners`` are then the learners of
      the convex problem of each round, as ``default_learners`` are for others;
    - ``constrain_potentials(batch, constraints)``: the batch with every output the
      constraints forbid scored −inf (``constraints``: one
      :class:`~structsvm.structures.constraints.OutputConstraints` or None per
      example, in the user's labels), so that decoding obeys them.
    """

    structure: ClassVar[str]
    default_decoder: ClassVar[str]
    default_loss: ClassVar[str]
    default_C: ClassVar[float]
    default_tol: ClassVar[float]
    default_learners: ClassVar[tuple]
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
class LatentFeatureMap(FeatureMap, Protocol):
    r"""A feature map whose outputs hold a hidden part: Φ(x, (y, h)).

    Training data give y; h (a sub-class, the hidden states of a chain, the tags of
    unlabelled tokens, a motif's position) is never observed. Yu & Joachims (2009)
    train such a map by minimising

    .. math::

        f(w) = \tfrac12 \|w\|^2 + C \sum_i \Big[\max_{\hat y, \hat h}
               \big(w \cdot \Phi(x_i, \hat y, \hat h) + \Delta(y_i, \hat y, \hat h)\big)
               - \max_h w \cdot \Phi(x_i, y_i, h)\Big],

    a difference of convex functions (:class:`structsvm.learners.CCCP`).

    A complete output is a pair (y, h) in the map's encoding; the decoder and the
    loss-augmented decoder range over complete outputs. ``encode_outputs(Y, X)``
    encodes the observed y of each example as a complete output whose hidden part
    is not yet chosen, and ``decode_outputs`` keeps y only. The map adds:

    - ``impute(Xe, Ye, w)``: the complete outputs with h_i = argmax_h
      w·Φ(x_i, (y_i, h)) (the best h for the given y, the "latent argmax");
    - ``init_latent(Xe, Ye, init, random_state)``: the complete outputs of the
      first round: ``"guess"`` (the map's own guess), ``"random"`` (a seeded random
      h), or a sequence of raw h, one per example;
    - ``latent_loss(loss)``: the loss over complete outputs, Δ(y_i, (ŷ, ĥ)), of a
      loss on y (the estimator's ``loss``);
    - ``select_inputs(Xe, idx)``: the encoded inputs of the examples ``idx`` (a
      subset to train on: self-paced learning);
    - ``decode_latent(Ye)``: complete outputs as raw (y, h) pairs.
    """

    latent: ClassVar[bool]
    convex_learners: ClassVar[tuple]

    def impute(self, Xe, Ye, w) -> list:
        """Complete outputs: Ye's y with h_i = argmax_h w·Φ(x_i, (y_i, h))."""

    def init_latent(self, Xe, Ye, init, random_state) -> list:
        """Complete outputs of the first round ("guess", "random" or given h)."""

    def latent_loss(self, loss) -> "Loss":
        """The loss Δ(y_i, (ŷ, ĥ)) over complete outputs of a loss on y."""

    def select_inputs(self, Xe, idx) -> Any:
        """The encoded inputs of the examples ``idx``."""

    def decode_latent(self, Ye) -> list:
        """Complete outputs as raw (y, h) pairs."""


#: How a loss decomposes: its ``decomposition``, the one thing a decoder, a map's
#: potentials or the oracle ask of a loss to know how to maximise Δ + score.
DECOMPOSITIONS = {
    "whole": "a function of whole outputs: loss-augmented decoding enumerates the "
             "outputs of each example (small output spaces only), unless the decoder "
             "maximises it itself",
    "position": "a sum over positions (the tokens of a sequence, the nodes of a graph, "
                "the one part of a class label): part_losses(y, n_states) gives the "
                "table added to the potentials",
    "span": "a sum over the labelled spans (anchored chart cells) of the predicted "
            "parse tree",
    "cell": "a sum over the match cells of the true alignment",
    "pair": "a sum over the preference pairs of a ranking",
    "own": "what the structure's own loss-augmented argmax maximises (the loss of a "
           "structsvm.Structure)",
    "dataset": "a function of the labelling of the whole data set (F1, precision at "
               "k, ROC area): most_violated(batch, Y) labels all examples at once, and "
               "only the 1-slack oracle asks for it",
}


@runtime_checkable
class Loss(Protocol):
    r"""Task loss Δ(y, ŷ) on encoded outputs.

    ``decomposition`` (a key of :data:`DECOMPOSITIONS`) says how Δ splits, and so how
    loss-augmented decoding is done:

    - ``"position"``: Δ(y, ŷ) = Σ_t δ_t(ŷ_t); ``part_losses(y_true, n_states)``
      returns the array of shape ``(n_parts, n_states)`` (``(n_states,)`` for a single
      part) of δ_t(k), and loss-augmented decoding is the plain decoder on potentials
      plus that table;
    - ``"span"``, ``"cell"``, ``"pair"``: Δ counts the wrong parts of that kind
      (``counts_wrong_parts``), each costing ``part_cost(y_true)``; the structure's
      potentials add the cost to every part and take it off the true ones;
    - ``"whole"``: loss-augmented decoding enumerates outputs (or the decoder's own
      ``augmented`` maximises it);
    - ``"dataset"``: Δ(Ȳ, Ŷ) is a function of the labellings of all n examples at
      once (Joachims 2005): ``most_violated(batch, Y)`` returns
      argmax_Ŷ Δ(Y, Ŷ) + Σ_i score_i(ŷ_i) for the batch of all examples' potentials,
      ``loss(Y, Ŷ)`` takes whole labellings, and the objective has one slack,
      ½‖w‖² + C ξ (the 1-slack cutting plane's ``oracle_sum``).

    ``counts_wrong_parts`` declares Δ(y, ŷ) = part_cost(y) × (number of parts of ŷ
    that are wrong, or of y that are missed): Hamming, spans, alignment cells,
    swapped pairs; maps then take a vectorised path (``part_costs(Y)``: every
    example's cost). ``max_loss(y)`` is the largest loss any prediction can have for
    ``y`` (``score`` = 1 − Σ loss / Σ max_loss). Optional
    (:data:`LOSS_CAPABILITIES`): ``default_C``, the C to train with when the
    estimator's is None, for a loss whose scale calls for another than the feature
    map's ``default_C`` (a number, or a method ``default_C(Ye)`` of the encoded
    training outputs); ``default_tol``, likewise for tol; ``ranks``, for a loss over a data set's labelling that
    reads only the order of the scores (precision at k, ROC area: a constant
    feature carries nothing), with ``positives(Y)``, the number of positive labels
    of the labellings it ranges over (where a classifier puts its threshold).
    """

    name: str
    decomposition: ClassVar[str]
    counts_wrong_parts: ClassVar[bool]

    def __call__(self, y_true, y_pred) -> float: ...

    def batch(self, Y_true, Y_pred) -> np.ndarray:
        """Δ(y_i, ŷ_i) of every pair of encoded outputs, as a float array."""

    def max_loss(self, y_true) -> float:
        """The largest loss any prediction can have for ``y_true``."""


def check_decomposition(loss, allowed, where):
    """Refuse, with a TypeError naming both, a loss whose ``decomposition`` is not
    among ``allowed`` (what ``where``, a structure's potentials, can add).

    Examples
    --------
    >>> class Spans:
    ...     name, decomposition = "spans", "span"
    >>> check_decomposition(Spans(), ("position",), "a sequence batch")
    Traceback (most recent call last):
    ...
    TypeError: a sequence batch adds losses that decompose over position, but loss 'spans' decomposes over span
    """
    got = type(loss).decomposition
    if got not in allowed:
        raise TypeError(f"{where} adds losses that decompose over "
                        f"{' or '.join(allowed)}, but loss {plugin_name(loss)!r} "
                        f"decomposes over {got}")


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
    then the potentials' ``augment`` (a loss whose decomposition the batch adds), then
    enumeration.

    Optional, for predictions: ``max_marginals(batch)`` returns ``(tables, best)``,
    for every example a table of shape (n_parts, n_choices) whose entry [p, c] is
    the best score of an output that makes choice c at part p (−inf: none; an
    encoded output ``y`` makes the choices ``np.ravel(y)``), and the best score of
    every example; ``nbest(batch, k)`` returns for every example its k
    highest-scoring outputs, best first, and their scores (fewer where fewer have
    a finite score). Both search the outputs ``func`` searches, exactly.
    """

    name: str
    structure: str
    func: Any
    augmented: Any = None
    max_marginals: Any = None
    nbest: Any = None

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
    ...     structure, enumerable = "sequence", True
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


# --------------------------------------------------------------------------- capabilities
#: Optional capabilities of a feature map and their defaults (see :class:`FeatureMap`).
FEATURE_MAP_CAPABILITIES = {
    "has_feature_differences": False,  # joint_feature_differences(Xe, Ye, Ye_hat, idx)
    "has_difference_sum": False,   # joint_feature_difference_sum(Xe, Ye, Ye_hat, idx, weights)
    "has_aggregate_oracle": False,  # aggregate_violation(Xe, Ye, w, loss[, idx])
    "has_chunked_aggregate": False,  # aggregate_violation accepts idx (chunks)
    "has_fused_oracle": False,     # fused_oracle(Xe, Ye, w, loss, decoder, idx, augment)
    "has_class_blocks": False,     # class_blocks(Xe, loss) -> ClassBlocks or None
    "example_costs": None,         # example_costs(Xe): relative decoding cost per example
    "decodes_in_python": False,    # its decoding holds the GIL: oracle workers are processes
    "fit_encode": None,            # fit_encode(X, Y): fit, return encode_inputs(X)
    "feature_support": None,       # feature_support(Xe, idx): columns Φ(x_i, ·) may touch
    "fit_summary": None,           # fit_summary(X, Y): what fit needs of one partition
    "default_learners": (("dual_cd", {}),),  # (name, params): the first that accepts
    "compiled_loops": (),          # "module:function" of the default path, in order
    "latent": False,               # outputs hold a hidden part h (LatentFeatureMap)
    "convex_learners": (("dual_cd", {}),),  # a latent map: the learners of each
                                   # round's convex problem (as default_learners)
    "constrain_potentials": None,  # constrain_potentials(batch, constraints): the
                                   # outputs the constraints forbid scored -inf
}

#: Optional capabilities of a learner and their defaults (see :class:`Learner`).
LEARNER_CAPABILITIES = {
    "certifies_gap": False,        # reports a certified duality gap (tol is a gap)
    "resumable": False,            # continues from a checkpoint to the same optimum
    "accepts_constraints": False,  # solve(..., constraints=) honours constraints on w
    "supports_warm_start": True,   # continues from a previous fit (False: refuses)
    "keeps_state": False,          # solve(..., state=) takes a previous or saved state
    "refusal": None,               # refusal(feature_map, decoder, loss, rescaling)
    "trains_dataset_losses": False,  # asks the oracle for the whole labelling at once
    "compiled_loops": (),          # "module:function" its training calls, in order
    "check_state": None,           # check_state(state): ValueError for a saved state
                                   # (a checkpoint's) that does not hold together
    "stopping_rule": None,         # when it stops, if not at a certified gap ≤ tol
    "runs_blocks": False,          # run(blocks, ...): its work in blocks on workers
    "trains_latent": False,        # trains a latent map (imputes h itself)
}

#: The stopping rule of every learner that ``certifies_gap`` (docs/defaults.md).
CERTIFIED_STOPPING_RULE = (
    "the certified relative duality gap (P(w) − D) / P(w) ≤ tol, with P(w) the exact "
    "primal objective at the returned w and D a dual lower bound on the optimum")

#: Optional capabilities of a batch of potentials and their defaults (see
#: :class:`PotentialsBatch`).
POTENTIALS_CAPABILITIES = {
    "augments": ("position",),     # the loss decompositions augment(Y, loss) adds
}

#: Optional capabilities of a loss and their defaults (see :class:`Loss`).
LOSS_CAPABILITIES = {
    "default_C": None,             # the C it trains with when none is given: a
                                   # number, or default_C(Ye) of the encoded training
                                   # outputs (None: the feature map's default_C)
    "default_tol": None,           # the tol it trains with when none is given
                                   # (None: the feature map's default_tol)
    "ranks": False,                # a function of the order of the scores only (no
                                   # threshold); then positives(Y) gives the number
                                   # of positives its labellings have
}

_CAPABILITIES = {**FEATURE_MAP_CAPABILITIES, **LEARNER_CAPABILITIES,
                 **POTENTIALS_CAPABILITIES, **LOSS_CAPABILITIES}


def capability(plugin, name):
    """The optional capability ``name`` of a plugin: what it declares, or the default.

    Parameters
    ----------
    plugin : object
        A feature map or learner (instance or class).
    name : str
        A key of :data:`FEATURE_MAP_CAPABILITIES` or :data:`LEARNER_CAPABILITIES`.

    Returns
    -------
    object
        The declared value (for a method: the bound method), else the default.

    Raises
    ------
    KeyError
        ``name`` is no declared capability.

    Examples
    --------
    >>> class MyLearner:
    ...     name, resumable = "mine", True
    >>> capability(MyLearner(), "resumable"), capability(MyLearner(), "certifies_gap")
    (True, False)
    """
    return getattr(plugin, name, _CAPABILITIES[name])


def plugin_name(plugin):
    """A plugin's ``name``, or its class name when it has none (for messages)."""
    return getattr(plugin, "name", None) or type(plugin).__name__


class FeatureMapBase:
    """Defaults of the optional capabilities of a feature map
    (:data:`FEATURE_MAP_CAPABILITIES`); a map overrides the ones it has."""

    has_feature_differences: ClassVar[bool] = False
    has_difference_sum: ClassVar[bool] = False
    has_aggregate_oracle: ClassVar[bool] = False
    has_chunked_aggregate: ClassVar[bool] = False
    has_fused_oracle: ClassVar[bool] = False
    has_class_blocks: ClassVar[bool] = False
    example_costs: ClassVar[Optional[Callable]] = None
    decodes_in_python: ClassVar[bool] = False
    fit_encode: ClassVar[Optional[Callable]] = None
    feature_support: ClassVar[Optional[Callable]] = None
    fit_summary: ClassVar[Optional[Callable]] = None
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)
    compiled_loops: ClassVar[tuple] = ()
    latent: ClassVar[bool] = False
    convex_learners: ClassVar[tuple] = (("dual_cd", {}),)
    constrain_potentials: ClassVar[Optional[Callable]] = None


class LearnerBase:
    """Defaults of the optional capabilities of a learner (:data:`LEARNER_CAPABILITIES`);
    a learner overrides the ones it has."""

    certifies_gap: ClassVar[bool] = False
    resumable: ClassVar[bool] = False
    accepts_constraints: ClassVar[bool] = False
    supports_warm_start: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = False
    refusal: ClassVar[Optional[Callable]] = None
    trains_dataset_losses: ClassVar[bool] = False
    compiled_loops: ClassVar[tuple] = ()
    check_state: ClassVar[Optional[Callable]] = None
    stopping_rule: ClassVar[Optional[str]] = None
    runs_blocks: ClassVar[bool] = False
    trains_latent: ClassVar[bool] = False


@dataclass(frozen=True)
class ClassBlocks:
    """A multiclass problem whose Φ(x, k) = x ⊗ e_k (one-hot class blocks), as a map
    with ``has_class_blocks`` describes it to a learner that solves such problems.

    Attributes
    ----------
    inputs : ndarray or sparse matrix of shape (n_samples, n_inputs), or None
        The rows x_i (None when no encoded inputs were asked for); w is class-major,
        ``w[k * n_inputs + j]``, and the encoded outputs are class indices 0..K-1.
    loss_table : ndarray of shape (n_classes, n_classes)
        Δ(c, k) for every pair of classes.
    """

    inputs: Any
    loss_table: np.ndarray


# --------------------------------------------------------------------------- learners
@runtime_checkable
class Learner(Protocol):
    """An optimiser of the structural-SVM objective over a :class:`Problem`.

    ``solve(problem, w0, *, max_iter, tol, random_state, callback)`` returns a
    :class:`LearnerResult` (the learner keeps no state on ``self``); ``name`` is the
    name it is registered and reported under. The estimator clones a learner
    (``get_params`` where it has one, a deep copy otherwise).

    ``callback(info)``, where given, is called once per round or epoch with a dict:
    ``round``, ``w``, ``objective``, ``time`` and, where the learner has them,
    ``gap``, ``n_constraints``, ``mistakes`` and ``state`` (a function of no
    arguments returning the learner's state at that round, as numbers, strings and
    arrays, which a checkpoint stores). The callback may raise to stop training.

    Optional capabilities (:data:`LEARNER_CAPABILITIES`, defaults in
    :class:`LearnerBase`), each a class attribute:

    - ``certifies_gap``: ``tol`` is a relative duality gap, the result's
      ``duality_gap`` certifies it (a ConvergenceWarning when ``max_iter`` stops it);
    - ``resumable``: a run continued from a checkpoint reaches the same optimum (from
      the saved ``state`` when the learner gives one in its callback, else from the
      saved weights);
    - ``accepts_constraints``: ``solve(..., constraints=f)`` honours constraints on w;
    - ``supports_warm_start``: False refuses ``warm_start=True``;
    - ``keeps_state``: ``solve(..., state=...)`` takes ``extra["state"]`` of a
      previous result (warm start) or a checkpoint's state (resume);
    - ``refusal(feature_map, decoder, loss, rescaling)``: a static method saying why
      the learner cannot solve such a problem (None when it can), for learners that
      solve only some problems;
    - ``trains_dataset_losses``: the learner asks the oracle for the most violated
      labelling of the whole data set (``Problem.oracle_sum``), so it trains losses
      whose ``decomposition`` is ``"dataset"``;
    - ``compiled_loops``: as a feature map's, for the learner's own loops;
    - ``trains_latent``: the learner trains a map whose outputs hold a hidden part
      (``latent``), completing the training outputs itself (the estimator hands
      such a map to another learner inside :class:`structsvm.learners.CCCP`).
    """

    name: ClassVar[str]

    def solve(self, problem, w0, *, max_iter, tol, random_state, callback=None):
        """Minimise ½‖w‖² + C Σ ξ_i from ``w0``; return a :class:`LearnerResult`."""


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


# --------------------------------------------------------------------------- partitioned data
class Partitioned:
    """A data set in partitions that workers read where they live (files, a Dask
    bag): ``partitions()`` returns one source per partition, each with ``read()``
    returning its ``(X, Y)`` lists (run in the worker) and ``describe()`` (words for
    messages). ``fit`` and ``predict`` take such a data set in place of X (and no Y).
    """

    def partitions(self):
        """One source per partition (each with ``read()`` and ``describe()``)."""
        raise NotImplementedError


class DaskPart:
    """A partition that a Dask cluster computes (``delayed``: a Dask delayed object
    of a list of ``(x, y)`` pairs), where its data live; the worker that holds it
    receives the result. Only workers of that cluster can read it."""

    def __init__(self, delayed, name):
        self.delayed, self.name = delayed, str(name)

    def describe(self):
        """Words for messages."""
        return self.name


# --------------------------------------------------------------------------- samples and outputs
def as_sequence(X, name):
    """Turn X into a list-like of samples, with a clear error for non-sequences."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of samples, got a string")
    import scipy.sparse as sp  # here, not at import: importing the contract stays light

    if sp.issparse(X):
        return SparseRows(X)
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


class SparseRows(Sequence):
    """The rows of a sparse matrix as a sequence, without splitting the matrix.

    ``rows[i]`` is ``matrix[i]`` (a one-row sparse matrix), a slice is again a
    :class:`SparseRows`; maps that take a matrix read ``rows.matrix`` in one piece.

    Parameters
    ----------
    matrix : sparse matrix or array of shape (n_samples, n_features)

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rows = SparseRows(sp.identity(3, format="csr"))
    >>> len(rows), rows[1].toarray().tolist()
    (3, [[0.0, 1.0, 0.0]])
    """

    __slots__ = ("matrix",)

    def __init__(self, matrix):
        self.matrix = matrix

    def __len__(self):
        return self.matrix.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return SparseRows(self.matrix[i])
        if not -len(self) <= i < len(self):
            raise IndexError(f"row {i} out of range for {len(self)} samples")
        return self.matrix[i]


class LazyOutputs(Sequence):
    """A read-only sequence of encoded outputs whose items are built on access.

    Subclasses give ``__len__`` and ``_item(i)`` (0 <= i < len); this class adds
    negative indices, slices (a list) and the IndexError past the end, so an
    oracle's answers index like the list of outputs without building one object per
    example up front.
    """

    def _item(self, i):  # pragma: no cover - abstract
        raise NotImplementedError

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"output {i} out of range for {n} outputs")
        return self._item(i % n)
