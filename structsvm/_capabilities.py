"""Optional capabilities of plugins: the declared class attributes, their defaults
and the one way the core reads them (:func:`capability`).

Private: :mod:`structsvm.protocols` is the public interface (every name here is
exported there). Imports nothing from structsvm.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

import numpy as np

__all__ = ["FEATURE_MAP_CAPABILITIES", "LEARNER_CAPABILITIES", "capability",
           "plugin_name", "FeatureMapBase", "LearnerBase", "ClassBlocks"]


#: Optional capabilities of a feature map and their defaults (see :class:`FeatureMap`).
FEATURE_MAP_CAPABILITIES = {
    "has_feature_differences": False,  # joint_feature_differences(Xe, Ye, Ye_hat, idx)
    "has_difference_sum": False,   # joint_feature_difference_sum(Xe, Ye, Ye_hat, idx, weights)
    "has_aggregate_oracle": False,  # aggregate_violation(Xe, Ye, w, loss[, idx])
    "has_chunked_aggregate": False,  # aggregate_violation accepts idx (chunks)
    "has_fused_oracle": False,     # fused_oracle(Xe, Ye, w, loss, decoder, idx, augment)
    "has_class_blocks": False,     # class_blocks(Xe, loss) -> ClassBlocks or None
    "example_costs": None,         # example_costs(Xe): relative decoding cost per example
    "fit_encode": None,            # fit_encode(X, Y): fit, return encode_inputs(X)
}

#: Optional capabilities of a learner and their defaults (see :class:`Learner`).
LEARNER_CAPABILITIES = {
    "certifies_gap": False,        # reports a certified duality gap (tol is a gap)
    "resumable": False,            # continues from a checkpoint to the same optimum
    "accepts_constraints": False,  # solve(..., constraints=) honours constraints on w
    "supports_warm_start": True,   # continues from a previous fit (False: refuses)
    "keeps_state": False,          # solve(..., state=) takes a previous or saved state
    "refusal": None,               # refusal(feature_map, decoder, loss, rescaling)
}

_CAPABILITIES = {**FEATURE_MAP_CAPABILITIES, **LEARNER_CAPABILITIES}


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
    fit_encode: ClassVar[Optional[Callable]] = None


class LearnerBase:
    """Defaults of the optional capabilities of a learner (:data:`LEARNER_CAPABILITIES`);
    a learner overrides the ones it has."""

    certifies_gap: ClassVar[bool] = False
    resumable: ClassVar[bool] = False
    accepts_constraints: ClassVar[bool] = False
    supports_warm_start: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = False
    refusal: ClassVar[Optional[Callable]] = None


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
