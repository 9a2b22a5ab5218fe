"""A fitted model's state (:class:`Fitted`) as a model file's header, and back.

The estimator owns what its model files hold: its parameters, the fitted feature
map's state, the weights and the fitted attributes (``StructuredSVM.save``,
:func:`structsvm.load`, checkpoints). The file format itself (archive, checksums,
size limits, instantiating allowed classes) is :mod:`structsvm.io`, which is told
here which classes are allowed and how decoders are found by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from .._version import __version__
from ..io import (ModelFileError, ValueDecoder, ValueEncoder, check_writable, class_key,
                  construct, read_model_file, refusing_inconsistent, registered_classes,
                  write_model_file)
from ..registry import registered
from ..structures.decoders import get_decoder
from ..structures.losses import HammingLoss, ZeroOneLoss
from ..structures.user.structure import StructureMap, check_savable
from ._resolution import Resolution

__all__ = ["FITTED", "FORMER_NAMES", "Fitted", "allowed_classes", "write", "read"]

#: Fitted attributes stored with the weights (besides ``interrupted_``).
FITTED = ("objective_", "objective_curve_", "n_iter_", "duality_gap_", "converged_")
# constructor parameters that hold code: never filled from a file
_NOT_FROM_FILES = ("CallableLoss",)

#: The names that model files written before the classes moved to their structure's
#: folder give them (structsvm 0.1.0 of earlier days), and the names they have now:
#: such files load as they did.
FORMER_NAMES = {
    "structsvm.structure:StructureMap": "structsvm.structures.user:StructureMap",
    "structsvm.losses.basic:ZeroOneLoss": "structsvm.structures:ZeroOneLoss",
    "structsvm.losses.basic:HammingLoss": "structsvm.structures:HammingLoss",
    "structsvm.losses:ZeroOneLoss": "structsvm.structures:ZeroOneLoss",
    "structsvm.losses:HammingLoss": "structsvm.structures:HammingLoss",
}
for _name, _cls, _loss in (
        ("multiclass", "MulticlassFeatures", None), ("taxonomy", "TaxonomyFeatures",
                                                     ("tree", "TreeDistanceLoss")),
        ("sequence", "SequenceFeatures", None),
        ("ranking", "RankingFeatures", ("ranking", "SwappedPairsLoss")),
        ("grammar", "GrammarFeatures", ("spans", "SpanLoss")),
        ("graph", "GraphFeatures", None),
        ("alignment", "AlignmentFeatures", ("alignment", "AlignmentLoss"))):
    FORMER_NAMES[f"structsvm.features.{_name}:{_cls}"] = f"structsvm.structures:{_cls}"
    FORMER_NAMES[f"structsvm.features:{_cls}"] = f"structsvm.structures:{_cls}"
    if _loss is not None:
        _new = f"structsvm.structures.{_name}:{_loss[1]}"
        FORMER_NAMES[f"structsvm.losses.{_loss[0]}:{_loss[1]}"] = _new
        FORMER_NAMES[f"structsvm.losses:{_loss[1]}"] = _new


@dataclass
class Fitted:
    """A fitted model's state: what a training run returns, a model file holds and
    the estimator's fitted attributes show (``coef_``, ``objective_``, ...).

    ``decoder``, ``loss`` and ``learner`` are None where they are to be resolved
    again from the estimator's parameters (a model read from a file).
    """

    feature_map: Any
    coef: np.ndarray
    objective: float
    objective_curve: list
    n_iter: int
    duality_gap: float
    converged: bool
    interrupted: bool = False
    decoder: Any = None
    loss: Any = None
    learner: Any = None
    C: float = float("nan")
    tol: float = float("nan")
    learner_state: Any = field(default=None, repr=False)

    def attributes(self):
        """The fitted attributes a model file stores (:data:`FITTED`), by name."""
        return {"objective_": self.objective, "objective_curve_": self.objective_curve,
                "n_iter_": self.n_iter, "duality_gap_": self.duality_gap,
                "converged_": self.converged}


def allowed_classes(estimator):
    """Every class a model file may name, by "module:Class": ``estimator`` (also as
    "structsvm:Name" and "structsvm.estimator:Name"), every registered structure's
    feature map, learner and loss class (:mod:`structsvm.registry`; each also under
    the name of the package that exports it), the shared losses, the classes
    registered with :func:`structsvm.io.register_model_class`, and the names earlier
    files gave them (:data:`FORMER_NAMES`)."""
    out = {}

    def add(cls, *packages):
        if cls.__name__ in _NOT_FROM_FILES:
            return
        out[class_key(cls)] = cls
        for package in packages:
            out[f"{package}:{cls.__qualname__}"] = cls

    add(estimator, "structsvm", "structsvm.estimator")
    for name, cls in registered("structure").items():
        add(cls, "structsvm.structures", f"structsvm.structures.{name}")
    for cls in registered("learner").values():
        add(cls, "structsvm.learners")
    for cls in (ZeroOneLoss, HammingLoss):
        add(cls, "structsvm.structures")
    for cls in registered("loss").values():
        add(cls, cls.__module__.rsplit(".", 1)[0])
    for former, now in FORMER_NAMES.items():
        if now in out:
            out.setdefault(former, out[now])
    out.update(registered_classes())
    return out


def write(path, estimator, params, fitted, *, checkpoint=None):
    """Write a model file: an ``estimator`` (class) with ``params`` and the
    :class:`Fitted` state ``fitted`` (and the training progress ``checkpoint``, JSON
    values); return ``path`` as a Path."""
    check_writable(path)
    allowed = allowed_classes(estimator)
    fm = fitted.feature_map
    if isinstance(fm, StructureMap):  # the structure's own class, when it can be
        check_savable(fm.user_structure)  # imported back and holds JSON values
        allowed[class_key(type(fm.user_structure))] = type(fm.user_structure)
    enc = ValueEncoder(allowed)
    header = {
        "estimator": class_key(estimator),
        "params": {k: enc(v, k) for k, v in params.items() if k != "feature_map"},
        "feature_map": enc(fm, "feature_map"),
        "feature_map_state": {k: enc(v, f"feature_map_.{k}")
                              for k, v in fm.fitted_state().items()},
        "decoder": fitted.decoder.name,
        "coef": enc(np.asarray(fitted.coef, dtype=float), "coef_"),
        "fitted": {k: enc(v, k) for k, v in fitted.attributes().items()},
        "interrupted": bool(fitted.interrupted),
        "C": float(fitted.C),
    }
    if checkpoint is not None:
        header["checkpoint"] = enc(checkpoint, "checkpoint")
    header["structsvm_version"] = __version__
    return write_model_file(path, header, enc.arrays)


def read(path, max_bytes, estimator, *, checkpoint=False, trusted=()):
    """The model in ``path``: ``(unfitted estimator, Fitted, info)``.

    The estimator is of a subclass of ``estimator``, built with the file's
    parameters; ``info`` is the header's ``checkpoint`` entry with
    ``checkpoint=True`` (empty for an ordinary model file; ``{}`` when not asked
    for). The file may name the classes of :func:`allowed_classes` and the
    ``trusted`` ones (by module and qualified name).

    Raises ``FileNotFoundError`` or :class:`~structsvm.io.ModelFileError` naming the
    file (see :mod:`structsvm.io`).
    """
    trusted = _trusted_keys(trusted)
    meta, arrays = read_model_file(path, max_bytes=max_bytes)
    with refusing_inconsistent(path):
        allowed = {**allowed_classes(estimator), **trusted}
        decode = ValueDecoder(arrays, allowed, get_decoder)
        model, fm, coef, fitted = _decode_model(meta, decode, estimator)
        # the plugins, resolved from the parameters as fit resolves them
        resolution = Resolution(type(model), model.get_params(deep=False))
        decoder, loss = resolution.plugins(fm)
        learner = resolution.learner_for(fm, (fm, decoder, loss, resolution.rescaling))
        state = Fitted(fm, coef, float(fitted["objective_"]),
                       [float(v) for v in fitted["objective_curve_"]],
                       int(fitted["n_iter_"]), float(fitted["duality_gap_"]),
                       bool(fitted["converged_"]),
                       interrupted=meta.get("interrupted", False) is True,
                       decoder=decoder, loss=loss, learner=learner,
                       C=_saved_C(meta, resolution, fm, loss),
                       tol=resolution.tol_for(fm, loss))
    if not checkpoint:
        return model, state, {}
    try:
        info = decode(meta.get("checkpoint", {}), "checkpoint")
    except Exception as exc:
        raise ModelFileError(f"{path}: damaged checkpoint entry ({exc})") from None
    if not isinstance(info, dict):
        raise ModelFileError(f"{path}: damaged checkpoint entry")
    return model, state, info


def _decode_model(meta, decode, estimator):
    """(unfitted estimator, fitted feature map, weights, fitted attributes) of a
    checked header; ModelFileError when they do not fit together."""
    for key in ("estimator", "params", "feature_map", "feature_map_state", "coef",
                "fitted"):
        if key not in meta:
            raise ModelFileError(f"the header has no {key!r}")
    params, state, fitted = meta["params"], meta["feature_map_state"], meta["fitted"]
    if not all(isinstance(v, dict) for v in (params, state, fitted)):
        raise ModelFileError("damaged header (params, feature_map_state and fitted must "
                             "be mappings)")
    params = {k: decode(v, k) for k, v in params.items()}
    fm = decode(meta["feature_map"], "feature_map")
    if not (hasattr(type(fm), "structure") and callable(getattr(fm, "load_fitted_state",
                                                                   None))):
        raise ModelFileError(f"the header's feature_map is a {type(fm).__name__}, not a "
                             "feature map")
    key = meta["estimator"]
    cls = decode.allowed.get(key) if isinstance(key, str) else None
    if cls is None or not issubclass(cls, estimator):
        raise ModelFileError(f"the header's estimator {key!r} is not a structsvm "
                             "estimator")
    # the estimator's parameter is the structure itself, as the user passed it
    param = clone(fm.user_structure) if isinstance(fm, StructureMap) else fm
    model = construct(key, dict(params, feature_map=param), decode.allowed, "estimator")
    fm.load_fitted_state({k: decode(v, f"feature_map_.{k}") for k, v in state.items()})
    coef = decode(meta["coef"], "coef")
    if not isinstance(coef, np.ndarray) or coef.dtype.kind not in "iuf":
        raise ModelFileError("coef is not a numeric array")
    coef = np.array(coef, dtype=float)
    if coef.shape != (int(fm.n_features_),):
        raise ModelFileError(f"coef_ has shape {coef.shape}, the feature map has "
                             f"{fm.n_features_} features")
    if not np.all(np.isfinite(coef)):
        raise ModelFileError("coef_ holds non-finite values")
    missing = [k for k in FITTED if k not in fitted]
    if missing:
        raise ModelFileError(f"the header has no fitted value {missing[0]!r}")
    return model, fm, coef, {k: decode(fitted[k], k) for k in FITTED}


def _saved_C(meta, resolution, fm, loss):
    """The C the model was trained with: the file's (a default may depend on the
    training data), else the parameters' (files written before it was kept)."""
    if "C" not in meta:
        return resolution.C_for(fm, loss)
    C = meta["C"]
    if isinstance(C, bool) or not isinstance(C, (int, float)) or not np.isfinite(C) \
            or C <= 0:
        raise ModelFileError(f"C is {C!r}, not a finite number > 0")
    return float(C)


def _trusted_keys(trusted):
    """{"module:QualName": class} of the classes a caller trusts."""
    if isinstance(trusted, type):
        trusted = [trusted]
    out = {}
    for cls in trusted:
        if not isinstance(cls, type):
            raise TypeError(f"trusted must be a list of classes, got a "
                            f"{type(cls).__name__} ({cls!r:.60})")
        out[class_key(cls)] = cls
    return out
