"""How the parameters of a :class:`~structsvm.estimator.StructuredSVM` become what
``fit`` trains with: their validation, the feature map to clone, the decoder and the
loss for the fitted map, the learner, C and tol (the feature map's defaults where a
parameter is None).

Private: the estimator builds a :class:`Resolution` of its parameters and hands it
to the training run (:mod:`structsvm.estimator._training`), which asks it everything
it needs of the parameters; neither calls the other's private methods.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..learners import default_learner, get_learner
from ..protocols import StructureMismatchError, capability, plugin_name
from ..registry import registered
from ..structures.decoders import get_decoder
from ..structures.losses import get_loss
from ..structures.multiclass.features import MulticlassFeatures
from ..structures.user.latent import LatentStructureMap
from ..structures.user.structure import StructureMap, as_structure, structure_plugins

__all__ = ["Resolution"]


class Resolution:
    """The parameters of an estimator, checked, and what they resolve to.

    Parameters
    ----------
    estimator : type
        The estimator's class (what its model files name).
    params : dict
        Its parameters (``get_params(deep=False)``).

    Raises
    ------
    ValueError
        A parameter out of range (C, tol, max_iter, n_jobs, rescaling).
    TypeError
        A feature map given by a name (a string) instead of an object.
    """

    def __init__(self, estimator, params):
        self.estimator = estimator
        self.params = dict(params)
        for name, value in self.params.items():
            setattr(self, name, value)
        self._check()

    def _check(self):
        C, tol, max_iter = self.C, self.tol, self.max_iter
        if C is not None and (isinstance(C, bool) or not isinstance(C, numbers.Real)
                              or not np.isfinite(C) or C <= 0):
            raise ValueError(f"C must be a finite number > 0, got {C!r}")
        if tol is not None and (not isinstance(tol, numbers.Real) or not tol >= 0):
            raise ValueError(f"tol must be a number >= 0, got {tol!r}")
        if max_iter is not None and (isinstance(max_iter, bool) or
                                     not isinstance(max_iter, numbers.Integral)
                                     or max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer or None, got "
                             f"{max_iter!r}")
        n_jobs = self.n_jobs
        if n_jobs is not None and (isinstance(n_jobs, bool)
                                   or not isinstance(n_jobs, numbers.Integral)
                                   or n_jobs == 0):
            raise ValueError(f"n_jobs must be None or a non-zero integer (-1: every "
                             f"core), got {n_jobs!r}")
        if isinstance(self.feature_map, str):
            from ..registry import registered

            raise TypeError(
                f"feature_map must be a feature map object, such as "
                f"structsvm.structures.SequenceFeatures(), or a structsvm.Structure, "
                f"not the string {self.feature_map!r} (the built-in structures, each a "
                f"map in structsvm.structures: {', '.join(sorted(registered('structure')))})")
        if self.rescaling not in ("margin", "slack"):
            raise ValueError(f"rescaling must be 'margin' or 'slack', got "
                             f"{self.rescaling!r}")

    def user_structure(self):
        """The :class:`~structsvm.structures.user.Structure` the parameters stand for,
        or None (a built-in map)."""
        return as_structure(self.feature_map, self.decoder, self.loss)

    def prototype(self):
        """The unfitted feature map ``fit`` clones: ``feature_map``, a
        :class:`~structsvm.structures.user.StructureMap` of a Structure or of plain
        functions (a :class:`~structsvm.structures.user.LatentStructureMap` of a
        Structure whose outputs hold a hidden part), or ``MulticlassFeatures()``."""
        user = self.user_structure()
        if user is not None:
            return (LatentStructureMap if user.latent else StructureMap)(user)
        return MulticlassFeatures() if self.feature_map is None else self.feature_map

    def trusted(self):
        """The classes a checkpoint of this estimator may name: its Structure's."""
        user = self.user_structure()
        return [] if user is None else [type(user)]

    def plugins(self, fm):
        """``(decoder, loss)`` for the fitted map ``fm``.

        Raises
        ------
        structsvm.protocols.StructureMismatchError
            A decoder of another structure.
        """
        if isinstance(fm, StructureMap):
            decoder, loss = structure_plugins(fm, self.decoder, self.loss)
        else:
            decoder = get_decoder(self.decoder if self.decoder is not None
                                  else type(fm).default_decoder)
            if decoder.structure not in (type(fm).structure, "any"):
                raise StructureMismatchError(
                    f"decoder {decoder.name!r} decodes {decoder.structure!r} structures "
                    f"but {type(fm).__name__} produces {type(fm).structure!r} structures")
            loss = get_loss(self.loss if self.loss is not None else type(fm).default_loss)
            if not capability(fm, "latent"):
                loss = loss.bind(lambda y: fm.decode_outputs([y])[0])
        if capability(fm, "latent"):  # the loss on y read on complete outputs (y, h)
            loss = fm.latent_loss(loss)
        return decoder, loss

    def learner_for(self, fm, plugins=None):
        """The configured learner, or the default one for the map (and the fitted
        ``plugins`` = (map, decoder, loss, rescaling), when known: a learner that
        must accept the problem is considered then).

        With ``learner=None``, constraints on w and a loss over the whole data set
        need the 1-slack cutting plane: it is chosen then. A map whose outputs
        hold a hidden part (``latent``) trains with a learner that
        ``trains_latent``: any other learner given becomes the learner of the
        convex problems of :class:`~structsvm.learners.CCCP`.

        Raises
        ------
        ValueError
            A configured learner that cannot train a loss over the whole data set.
        """
        spans = plugins is not None and type(plugins[2]).decomposition == "dataset"
        if self.learner is None:
            if self.constraints is not None or spans:
                return get_learner("one_slack")
            return default_learner(fm, plugins)
        learner = get_learner(self.learner)
        if capability(fm, "latent") and not capability(learner, "trains_latent"):
            return get_learner("cccp").set_params(learner=learner)
        if spans and not capability(learner, "trains_dataset_losses"):
            able = sorted(n for n, cls in registered("learner").items()
                          if capability(cls, "trains_dataset_losses"))
            raise ValueError(f"loss {plugin_name(plugins[2])!r} is a function of the "
                             f"whole data set's labelling: learner {learner.name!r} "
                             f"cannot train it; use one of {able}")
        return learner

    def C_for(self, fm, loss=None, Ye=None):
        """C: the parameter, else the loss's ``default_C`` where it declares one
        (losses over a whole data set have scales of their own; a method
        ``default_C(Ye)`` reads the encoded training outputs ``Ye``), else the map's
        ``default_C``."""
        if self.C is not None:
            return float(self.C)
        own = None if loss is None else capability(loss, "default_C")
        if callable(own):
            own = None if Ye is None else own(Ye)
        return float(type(fm).default_C if own is None else own)

    def tol_for(self, fm, loss=None):
        """tol: the parameter, else the loss's ``default_tol`` where it declares one,
        else the map's ``default_tol``."""
        if self.tol is not None:
            return float(self.tol)
        own = None if loss is None else capability(loss, "default_tol")
        return float(type(fm).default_tol if own is None else own)
