"""A fitted estimator's state as a model file's header, and back.

The estimator owns what its model files hold: its parameters, the fitted feature
map's state, the weights and the fitted attributes (``StructuredSVM.save``,
:func:`structsvm.load`). The file format itself (archive, checksums, size limits,
instantiating allowed classes) is :mod:`structsvm.io`, which is told here which
classes are allowed and how decoders are found by name.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .. import features, learners, losses
from ..io._format import Decoder, Encoder, ModelFileError, class_key, construct
from .._version import __version__
from ..structures.decoders import get_decoder
from ..io import (check_writable, read_model_file, refusing_inconsistent,
                 registered_classes, write_model_file)
from ..structures.user.structure import StructureMap, check_savable

__all__ = ["FITTED", "allowed_classes", "write", "read"]

#: Fitted attributes stored with the weights (besides ``interrupted_``).
FITTED = ("objective_", "objective_curve_", "n_iter_", "duality_gap_", "converged_")
# constructor parameters that hold code: never filled from a file
_NOT_FROM_FILES = ("CallableLoss",)


def allowed_classes(estimator):
    """Every class a model file may name, by "module:Class": ``estimator`` (also as
    "structsvm:Name"), the feature maps exported by :mod:`structsvm.features` (classes
    with ``structure`` and ``fit``), the learners of ``LEARNERS``, the loss classes of
    ``LOSSES`` or exported by :mod:`structsvm.losses` (also under the package's
    name), and the registered classes."""
    out = {}

    def add(cls, module=None):
        if cls.__name__ in _NOT_FROM_FILES:
            return
        out[class_key(cls)] = cls
        if module is not None:
            out[f"{module}:{cls.__qualname__}"] = cls

    add(estimator, "structsvm")
    add(StructureMap)
    for name in getattr(features, "__all__", ()):
        cls = getattr(features, name, None)
        if isinstance(cls, type) and hasattr(cls, "structure") and hasattr(cls, "fit"):
            add(cls, "structsvm.features")
    for cls in learners.LEARNERS.values():
        add(cls, "structsvm.learners")
    loss_classes = list(losses.LOSSES.values())
    loss_classes += [getattr(losses, n) for n in getattr(losses, "__all__", ())
                     if isinstance(getattr(losses, n), type)
                     and issubclass(getattr(losses, n), losses.BaseLoss)]
    for cls in loss_classes:
        if cls is not losses.BaseLoss:
            add(cls, "structsvm.losses")
    out.update(registered_classes())
    return out


def write(path, est, *, checkpoint=None):
    """Write the fitted estimator ``est`` (and the training progress ``checkpoint``,
    JSON values) to ``path``; return ``path`` as a Path."""
    check_writable(path)
    allowed = allowed_classes(type(est))
    fm = est.feature_map_
    if isinstance(fm, StructureMap):  # the structure's own class, when it can be
        check_savable(fm.user_structure)  # imported back and holds JSON values
        allowed[class_key(type(fm.user_structure))] = type(fm.user_structure)
    enc = Encoder(allowed)
    params = {k: enc(v, k) for k, v in est.get_params(deep=False).items()
              if k != "feature_map"}
    header = {
        "estimator": class_key(type(est)),
        "params": params,
        "feature_map": enc(fm, "feature_map"),
        "feature_map_state": {k: enc(v, f"feature_map_.{k}")
                              for k, v in fm.fitted_state().items()},
        "decoder": est.decoder_.name,
        "coef": enc(np.asarray(est.coef_, dtype=float), "coef_"),
        "fitted": {k: enc(getattr(est, k), k) for k in FITTED},
        "interrupted": bool(getattr(est, "interrupted_", False)),
    }
    if checkpoint is not None:
        header["checkpoint"] = enc(checkpoint, "checkpoint")
    header["structsvm_version"] = __version__
    return write_model_file(path, header, enc.arrays)


def read(path, max_bytes, estimator, *, checkpoint=False, trusted=()):
    """The fitted estimator in ``path`` (a subclass of ``estimator``) and, with
    ``checkpoint=True``, the header's ``checkpoint`` entry (empty for an ordinary
    model file; not read otherwise: ``{}``). The file may name the classes of
    ``allowed_classes`` and the ``trusted`` ones (by module and qualified name).

    Raises ``FileNotFoundError`` or :class:`~structsvm.io.ModelFileError` naming the
    file (see :mod:`structsvm.io`).
    """
    trusted = _trusted_keys(trusted)
    meta, arrays = read_model_file(path, max_bytes=max_bytes)
    with refusing_inconsistent(path):
        allowed = {**allowed_classes(estimator), **trusted}
        decode = Decoder(arrays, allowed, get_decoder)
        model, fm, coef, fitted = _decode_model(meta, decode, estimator)
        # fitted attributes are set by the estimator's one method for it, as in fit
        model._set_fitted_state(fm, coef, fitted,
                                interrupted=meta.get("interrupted", False) is True)
    if not checkpoint:
        return model, {}
    try:
        info = decode(meta.get("checkpoint", {}), "checkpoint")
    except Exception as exc:
        raise ModelFileError(f"{path}: damaged checkpoint entry ({exc})") from None
    if not isinstance(info, dict):
        raise ModelFileError(f"{path}: damaged checkpoint entry")
    return model, info


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
    model._check_params()
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
