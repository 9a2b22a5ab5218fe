"""How the parameters of a :class:`~structsvm.estimator.StructuredSVM` become what
``fit`` trains with: their validation, the feature map to clone, the decoder and the
loss for the fitted map, the learner and C (the feature map's defaults where a
parameter is None).

Private: :class:`structsvm.estimator.StructuredSVM` is the public interface; it
inherits :class:`ParameterResolution`.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..structures.multiclass.features import MulticlassFeatures
from ..structures.decoders import get_decoder
from ..learners import get_learner, make_default_learner
from ..structures.losses import CallableLoss, get_loss
from ..protocols import StructureMismatchError
from ..structures.user.structure import StructureMap, as_structure, structure_plugins

__all__ = ["ParameterResolution"]


class ParameterResolution:
    """The estimator's parameters, checked and resolved into plugins (a base class of
    :class:`~structsvm.estimator.StructuredSVM`, reading its parameters)."""

    def _check_params(self):
        if self.C is not None and (isinstance(self.C, bool) or
                                   not isinstance(self.C, numbers.Real) or
                                   not np.isfinite(self.C) or self.C <= 0):
            raise ValueError(f"C must be a finite number > 0, got {self.C!r}")
        if self.tol is not None and (not isinstance(self.tol, numbers.Real) or
                                     not self.tol >= 0):
            raise ValueError(f"tol must be a number >= 0, got {self.tol!r}")
        if self.max_iter is not None and (isinstance(self.max_iter, bool) or
                                          not isinstance(self.max_iter, numbers.Integral)
                                          or self.max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer or None, got "
                             f"{self.max_iter!r}")
        if self.rescaling not in ("margin", "slack"):
            raise ValueError(f"rescaling must be 'margin' or 'slack', got {self.rescaling!r}")

    def _feature_map_prototype(self):
        """The unfitted feature map ``fit`` clones: ``feature_map``, a
        :class:`~structsvm.structures.user.structure.StructureMap` of a Structure or of plain
        functions, or ``MulticlassFeatures()``."""
        user = as_structure(self.feature_map, self.decoder, self.loss)
        if user is not None:
            return StructureMap(user)
        return MulticlassFeatures() if self.feature_map is None else self.feature_map

    def _trusted(self):
        """The classes a checkpoint of this estimator may name: its Structure's."""
        user = as_structure(self.feature_map, self.decoder, self.loss)
        return [] if user is None else [type(user)]

    def _resolve_plugins(self, fm):
        if isinstance(fm, StructureMap):
            return structure_plugins(fm, self.decoder, self.loss)
        decoder = get_decoder(self.decoder if self.decoder is not None
                              else type(fm).default_decoder)
        if decoder.structure not in (type(fm).structure, "any"):
            raise StructureMismatchError(
                f"decoder {decoder.name!r} decodes {decoder.structure!r} structures but "
                f"{type(fm).__name__} produces {type(fm).structure!r} structures")
        loss = get_loss(self.loss if self.loss is not None else type(fm).default_loss)
        if isinstance(loss, CallableLoss):
            loss = CallableLoss(loss.func, decode=lambda y: fm.decode_outputs([y])[0],
                                max_value=loss.max_value)
        return decoder, loss

    def _resolve_learner(self, fm, *, plugins=None):
        """The configured learner, or the default one for the map's structure (and
        the fitted ``plugins`` = (map, decoder, loss, rescaling), when known: a
        specialised learner that accepts them comes first).

        With ``learner=None``, constraints on w need a learner that honours them:
        the 1-slack cutting plane is chosen then.
        """
        if self.learner is None:
            if self.constraints is not None:
                return get_learner("one_slack")
            return make_default_learner(type(fm).structure, plugins)
        return get_learner(self.learner)

    def _C(self, fm):
        return float(type(fm).default_C if self.C is None else self.C)
