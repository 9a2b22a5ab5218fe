"""Model files: one ``.npz`` archive holding numeric arrays plus a JSON header.

A model file is data, never code:

- nothing is unpickled (every array is read with its ``.npy`` header checked and
  ``allow_pickle=False``; object arrays are refused);
- the header may name only classes on an explicit allow-list
  (:func:`allowed_classes`): structsvm's estimator, the feature maps exported by
  :mod:`structsvm.features`, the learners of :data:`structsvm.learners.LEARNERS`,
  the losses of :data:`structsvm.losses.LOSSES`, the 0.1 module paths of those
  classes, and classes registered with :func:`register_model_class`. No function is
  ever called; an allowed class is instantiated with keyword arguments that must
  be among its constructor's parameters;
- the SHA-256 of the header (canonical JSON) and of every array is recorded and
  checked, so a damaged or edited file is refused;
- sizes are checked before anything is inflated: each archive member's declared
  size (from the zip central directory) and each array's shape and dtype (from its
  ``.npy`` header) against :data:`MAX_BYTES`, so a small file that inflates to
  gigabytes is refused without inflating it.

Every failure to read a file raises :class:`ModelFileError` naming the file and the
reason (a missing file raises ``FileNotFoundError``).

Header codec (JSON values, with tagged dicts for what JSON lacks): tuples
``{"__tuple__": [...]}``, dicts with non-string keys ``{"__dict__": [[k, v], ...]}``,
numeric arrays ``{"__array__": name}`` (stored in the archive), object (label)
arrays ``{"__objarray__": [...]}``, networkx digraphs ``{"__digraph__": {...}}`` and
structsvm objects ``{"__object__": "module:Class", "params": {...}}``.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ._model_format import (MAX_HEADER_BYTES, META as _META, Decoder as _Decoder,
                            Encoder as _Encoder, ModelFileError, class_key, construct,
                            read_archive)

__all__ = ["save_model", "load", "ModelFileError", "FORMAT", "VERSION", "MAX_BYTES",
           "MAX_HEADER_BYTES", "allowed_classes", "register_model_class",
           "read_checkpoint_info"]

FORMAT = "structsvm-model"
VERSION = 2          # 2: the header's own SHA-256 is recorded; 1 (structsvm 0.1) is read
_READS = (1, 2)
_HEADER_KEY = "__header__"

#: Largest total size (bytes, uncompressed) of the arrays of a model file that
#: :func:`load` accepts unless told otherwise (``max_bytes=``).
MAX_BYTES = 512 * 2 ** 20


# ------------------------------------------------------------------------- allow-list
_REGISTERED: dict[str, type] = {}
# constructor parameters that hold code: never filled from a file
_NOT_FROM_FILES = ("CallableLoss",)


def register_model_class(cls, *aliases):
    """Allow model files to name ``cls`` (and the old paths ``aliases``, "module:Class").

    Feature maps exported by :mod:`structsvm.features`, learners in ``LEARNERS`` and
    losses in ``LOSSES`` are allowed already; use this for a plugin that lives
    elsewhere. Its constructor must only store its parameters (the scikit-learn
    contract): :func:`load` calls it with the parameters read from the file.

    Parameters
    ----------
    cls : type
    *aliases : str
        Further names ("module:Class") under which files may refer to ``cls``.

    Returns
    -------
    type
        ``cls`` (so this works as a class decorator).

    Examples
    --------
    >>> from structsvm.features import MulticlassFeatures
    >>> class MyFeatures(MulticlassFeatures):
    ...     pass
    >>> _ = register_model_class(MyFeatures, "mypackage.old_module:MyFeatures")
    >>> allowed_classes()["mypackage.old_module:MyFeatures"] is MyFeatures
    True
    >>> _REGISTERED.clear()
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_model_class needs a class, got {type(cls).__name__}")
    for key in (class_key(cls), *aliases):
        _REGISTERED[key] = cls
    return cls


def allowed_classes():
    """Every class a model file may name, by "module:Class".

    Derived from the registries at call time, so new plugins are allowed without
    editing this module: the estimator; every feature map exported by
    :mod:`structsvm.features` (a class with ``structure`` and ``fit``); every
    learner in :data:`structsvm.learners.LEARNERS`; every loss class in
    :data:`structsvm.losses.LOSSES` or exported by :mod:`structsvm.losses`; the
    0.1 paths of these classes; and :func:`register_model_class` entries.

    Returns
    -------
    dict of str to type

    Examples
    --------
    >>> allowed = allowed_classes()
    >>> allowed["structsvm.losses:HammingLoss"].__name__    # a 0.1 path still loads
    'HammingLoss'
    >>> "structsvm.cli:main" in allowed
    False
    """
    from . import features, learners, losses
    from .estimator import StructuredSVM

    out = {}

    def add(cls, module=None):
        if cls.__name__ in _NOT_FROM_FILES:
            return
        out[class_key(cls)] = cls
        if module is not None:
            out[f"{module}:{cls.__qualname__}"] = cls

    add(StructuredSVM, "structsvm")
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
    out.update(_REGISTERED)
    return out


# ------------------------------------------------------------------------- encoding
def _digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def _header_digest(meta):
    body = {k: v for k, v in meta.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, allow_nan=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# ------------------------------------------------------------------------- save/load
_FITTED = ("objective_", "objective_curve_", "n_iter_", "duality_gap_", "converged_")


def save_model(model, path, *, checkpoint=None):
    """Write a fitted :class:`~structsvm.StructuredSVM` to ``path`` (.npz).

    The file is written to a temporary file in the same folder and then renamed, so
    ``path`` always holds a complete model (also when training is interrupted).

    Parameters
    ----------
    model : StructuredSVM
        A fitted estimator.
    path : str or Path
    checkpoint : dict, optional
        Training progress (JSON values) stored with the model; see
        :func:`read_checkpoint_info`.

    Returns
    -------
    Path

    Raises
    ------
    sklearn.exceptions.NotFittedError
        The model is not fitted.
    ValueError
        A parameter cannot be stored (e.g. a user function); the message names it.
    FileNotFoundError
        The folder of ``path`` does not exist.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "coef_")
    path = Path(path)
    check_writable(path)
    enc = _Encoder(allowed_classes())
    params = {k: enc(v, k) for k, v in model.get_params(deep=False).items()
              if k != "feature_map"}
    fm = model.feature_map_
    meta = {
        "format": FORMAT, "version": VERSION,
        "estimator": class_key(type(model)),
        "params": params,
        "feature_map": enc(fm, "feature_map"),
        "feature_map_state": {k: enc(v, f"feature_map_.{k}")
                              for k, v in fm.fitted_state().items()},
        "decoder": model.decoder_.name,
        "coef": enc(np.asarray(model.coef_, dtype=float), "coef_"),
        "fitted": {k: enc(getattr(model, k), k) for k in _FITTED},
        "interrupted": bool(getattr(model, "interrupted_", False)),
    }
    if checkpoint is not None:
        meta["checkpoint"] = enc(checkpoint, "checkpoint")
    from . import __version__

    meta["structsvm_version"] = __version__
    sums = {k: _digest(v) for k, v in enc.arrays.items()}
    sums[_HEADER_KEY] = _header_digest(meta)
    meta["sha256"] = sums
    blob = np.frombuffer(json.dumps(meta, allow_nan=True).encode("utf-8"), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **{_META: blob}, **enc.arrays)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def check_writable(path):
    """Raise ``FileNotFoundError``/``IsADirectoryError`` now if ``path`` cannot be
    written later (missing folder, or a folder in its place)."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"Cannot write the model to {path}: folder "
                                f"{path.parent} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"Cannot write the model to {path}: it is a folder")


def _read(path, max_bytes=MAX_BYTES):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No model file at {path}")
    try:
        files = read_archive(path, max_bytes)
    except ModelFileError:
        raise
    except MemoryError:
        raise ModelFileError(f"{path}: not enough memory to read the model") from None
    except Exception as exc:  # any failure of the zip/npy layers: a damaged file
        raise ModelFileError(f"{path} is not a structsvm model file or is damaged "
                             f"({type(exc).__name__}: {exc})") from None
    if _META not in files:
        raise ModelFileError(f"{path} is an npz archive but not a structsvm model "
                             "(no header)")
    header = files.pop(_META)
    if header.dtype != np.uint8 or header.ndim != 1:
        raise ModelFileError(f"{path}: damaged model header (not a byte string)")
    try:
        meta = json.loads(header.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFileError(f"{path}: damaged model header ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not a structsvm model file")
    if meta.get("version") not in _READS:
        raise ModelFileError(f"{path}: model file version {meta.get('version')!r}; this "
                             f"structsvm reads versions {list(_READS)}")
    sums = meta.get("sha256")
    if not isinstance(sums, dict):
        raise ModelFileError(f"{path}: damaged model file (no checksums)")
    if meta["version"] >= 2:
        try:
            header_sum = _header_digest(meta)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ModelFileError(f"{path}: damaged model header ({exc})") from None
        if sums.get(_HEADER_KEY) != header_sum:
            raise ModelFileError(f"{path}: the header's checksum differs: the file was "
                                 "damaged or edited")
        sums = {k: v for k, v in sums.items() if k != _HEADER_KEY}
    if set(sums) != set(files):
        raise ModelFileError(f"{path}: damaged model file (arrays missing or extra)")
    for k, arr in files.items():
        if _digest(arr) != sums[k]:
            raise ModelFileError(f"{path}: damaged model file (checksum of {k} differs)")
    return meta, files


def load(path, *, max_bytes=MAX_BYTES):
    """Load a model written by ``model.save(path)``; predictions are identical.

    Parameters
    ----------
    path : str or Path
    max_bytes : int, default=MAX_BYTES
        Refuse files whose arrays declare more bytes than this (checked before
        anything is inflated).

    Returns
    -------
    StructuredSVM

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is damaged, truncated, edited, too large, of another format or
        version, or names a class model files may not name; the message names the
        file and the reason.

    Examples
    --------
    >>> import numpy as np, structsvm, tempfile, os
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    >>> model = structsvm.fit(X, ["a", "b"])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> structsvm.load(model.save(path)).predict(X)
    ['a', 'b']
    """
    return _load(path, max_bytes)[0]


def _load(path, max_bytes):
    meta, arrays = _read(path, max_bytes)
    try:
        return _build(meta, arrays, path), meta, arrays
    except ModelFileError as exc:
        msg = str(exc)
        raise ModelFileError(msg if msg.startswith(str(path)) else f"{path}: {msg}") \
            from None
    except MemoryError:
        raise ModelFileError(f"{path}: not enough memory to build the model") from None
    except Exception as exc:  # values of the right types but inconsistent with each other
        raise ModelFileError(f"{path}: inconsistent model file ({type(exc).__name__}: "
                             f"{exc})") from None


def _build(meta, arrays, path):
    decode = _Decoder(arrays, allowed_classes())
    for key in ("estimator", "params", "feature_map", "feature_map_state", "coef",
                "fitted"):
        if key not in meta:
            raise ModelFileError(f"{path}: the header has no {key!r}")
    params = meta["params"]
    state = meta["feature_map_state"]
    if not isinstance(params, dict) or not isinstance(state, dict) or \
            not isinstance(meta["fitted"], dict):
        raise ModelFileError(f"{path}: damaged header (params, feature_map_state and "
                             "fitted must be mappings)")
    params = {k: decode(v, k) for k, v in params.items()}
    fm = decode(meta["feature_map"], "feature_map")
    if not (hasattr(type(fm), "structure") and callable(getattr(fm, "load_fitted_state",
                                                                   None))):
        raise ModelFileError(f"{path}: the header's feature_map is a "
                             f"{type(fm).__name__}, not a feature map")
    from .estimator import StructuredSVM

    cls = decode.allowed.get(meta["estimator"]) if isinstance(meta["estimator"], str) \
        else None
    if cls is None or not issubclass(cls, StructuredSVM):
        raise ModelFileError(f"the header's estimator {meta['estimator']!r} is not a "
                             "structsvm estimator")
    model = construct(meta["estimator"], dict(params, feature_map=fm),
                       decode.allowed, "estimator")
    model._check_params()
    fm.load_fitted_state({k: decode(v, f"feature_map_.{k}") for k, v in state.items()})
    model.feature_map_ = fm
    model.decoder_, model.loss_ = model._resolve_plugins(fm)
    model.learner_ = model._resolve_learner(  # learner=None: the structure's default
        fm, plugins=(fm, model.decoder_, model.loss_, model.rescaling))
    coef = decode(meta["coef"], "coef")
    if not isinstance(coef, np.ndarray) or coef.dtype.kind not in "iuf":
        raise ModelFileError(f"{path}: coef is not a numeric array")
    model.coef_ = np.array(coef, dtype=float)
    for k in _FITTED:
        if k not in meta["fitted"]:
            raise ModelFileError(f"{path}: the header has no fitted value {k!r}")
        setattr(model, k, decode(meta["fitted"][k], k))
    model.interrupted_ = meta.get("interrupted", False) is True  # absent before 0.2
    if model.coef_.shape != (int(fm.n_features_),):
        raise ModelFileError(f"{path}: coef_ has shape {model.coef_.shape}, the feature "
                             f"map has {fm.n_features_} features")
    if not np.all(np.isfinite(model.coef_)):
        raise ModelFileError(f"{path}: coef_ holds non-finite values")
    return model


def read_checkpoint_info(path, *, max_bytes=MAX_BYTES):
    """The model in ``path`` and the training progress saved with it.

    Parameters
    ----------
    path : str or Path
        A file written by ``StructuredSVM.fit(..., checkpoint=path)``.
    max_bytes : int, default=MAX_BYTES

    Returns
    -------
    model : StructuredSVM
    info : dict
        The ``checkpoint`` entry of the header (empty for an ordinary model file).

    Raises
    ------
    FileNotFoundError, ModelFileError
        As :func:`load`.

    Examples
    --------
    >>> import numpy as np, structsvm, tempfile, os
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    >>> path = os.path.join(tempfile.mkdtemp(), "ck.npz")
    >>> _ = structsvm.StructuredSVM().fit(X, ["a", "b"], checkpoint=path)
    >>> model, info = read_checkpoint_info(path)
    >>> info["complete"], info["n_iter"] == model.n_iter_
    (True, True)
    """
    model, meta, arrays = _load(path, max_bytes)
    info = meta.get("checkpoint", {})
    try:
        info = _Decoder(arrays, allowed_classes())(info, "checkpoint")
    except Exception as exc:
        raise ModelFileError(f"{path}: damaged checkpoint entry ({exc})") from None
    if not isinstance(info, dict):
        raise ModelFileError(f"{path}: damaged checkpoint entry")
    return model, info
