"""Model files: one ``.npz`` archive holding numeric arrays plus a JSON header.

Never pickle: the archive is read with ``allow_pickle=False``, every object in the
header is rebuilt from a class inside the ``structsvm`` package by its constructor
parameters, and every array's SHA-256 is recorded in the header and checked on
load, so a truncated, damaged or foreign file is refused with a clear
:class:`ModelFileError`.

Header codec (JSON values, with tagged dicts for what JSON lacks): tuples
``{"__tuple__": [...]}``, dicts with non-string keys ``{"__dict__": [[k, v], ...]}``,
numeric arrays ``{"__array__": name}`` (stored in the archive), object (label)
arrays ``{"__objarray__": [...]}``, networkx digraphs ``{"__digraph__": {...}}`` and
structsvm objects ``{"__object__": "module:Class", "params": {...}}``.
"""
from __future__ import annotations

import hashlib
import importlib
import io as _io
import json
import zipfile
from pathlib import Path

import numpy as np

from .protocols import Decoder

__all__ = ["save_model", "load", "ModelFileError", "FORMAT", "VERSION"]

FORMAT = "structsvm-model"
VERSION = 1
_META = "__meta__"


class ModelFileError(ValueError):
    """A model file is damaged, truncated, foreign or from an unknown version."""


# ------------------------------------------------------------------------- encoding
class _Encoder:
    def __init__(self):
        self.arrays = {}

    def _store(self, arr, hint):
        key = f"a{len(self.arrays)}_{hint}"
        self.arrays[key] = np.ascontiguousarray(arr)
        return {"__array__": key}

    def __call__(self, obj, where):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return float(obj)
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, tuple):
            return {"__tuple__": [self(v, where) for v in obj]}
        if isinstance(obj, list):
            return [self(v, where) for v in obj]
        if isinstance(obj, dict):
            if all(isinstance(k, str) and not k.startswith("__") for k in obj):
                return {k: self(v, f"{where}[{k!r}]") for k, v in obj.items()}
            return {"__dict__": [[self(k, where), self(v, f"{where}[{k!r}]")]
                                 for k, v in obj.items()]}
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind in "biufc":
                return self._store(obj, where.split(".")[-1][:40])
            if obj.dtype.kind in "OU":
                return {"__objarray__": [self(v, where) for v in obj.tolist()],
                        "shape": list(obj.shape)}
        if isinstance(obj, Decoder):
            return {"__decoder__": obj.name}
        try:
            import networkx as nx

            if isinstance(obj, nx.DiGraph):
                return {"__digraph__": {
                    "nodes": [self(n, where) for n in obj.nodes],
                    "edges": [[self(a, where), self(b, where)] for a, b in obj.edges]}}
        except ImportError:  # pragma: no cover
            pass
        cls = type(obj)
        if cls.__module__.split(".")[0] == "structsvm":
            if callable(getattr(obj, "get_params", None)):
                params = obj.get_params(deep=False)
            else:
                params = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
            return {"__object__": f"{cls.__module__}:{cls.__qualname__}",
                    "params": {k: self(v, f"{where}.{k}") for k, v in params.items()}}
        what = getattr(obj, "__name__", type(obj).__name__)
        raise ValueError(f"Cannot save the model: {where} is {what!r}, which a model file "
                         "cannot hold (only numbers, strings, arrays, tuples, dicts, "
                         "networkx digraphs and structsvm objects; pass plugins by name "
                         "or use built-in feature functions)")


def _decode(obj, arrays):
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tuple__" in obj:
        return tuple(_decode(v, arrays) for v in obj["__tuple__"])
    if "__dict__" in obj:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in obj["__dict__"]}
    if "__array__" in obj:
        return arrays[obj["__array__"]]
    if "__objarray__" in obj:
        items = [_decode(v, arrays) for v in obj["__objarray__"]]
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(obj["shape"]) if len(obj["shape"]) > 1 else out
    if "__decoder__" in obj:
        from .inference import get_decoder

        return get_decoder(obj["__decoder__"])
    if "__digraph__" in obj:
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(_decode(n, arrays) for n in obj["__digraph__"]["nodes"])
        g.add_edges_from((_decode(a, arrays), _decode(b, arrays))
                         for a, b in obj["__digraph__"]["edges"])
        return g
    if "__object__" in obj:
        module, _, name = obj["__object__"].partition(":")
        if module.split(".")[0] != "structsvm":
            raise ModelFileError(f"model file names a class outside structsvm: {module}")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ModelFileError(f"model file names an unknown class {obj['__object__']}: "
                                 f"{exc}") from None
        return cls(**{k: _decode(v, arrays) for k, v in obj["params"].items()})
    return {k: _decode(v, arrays) for k, v in obj.items()}


def _digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


# ------------------------------------------------------------------------- save/load
_FITTED = ("objective_", "objective_curve_", "n_iter_", "duality_gap_", "converged_")


def save_model(model, path):
    """Write a fitted :class:`~structsvm.StructuredSVM` to ``path`` (.npz).

    Raises
    ------
    sklearn.exceptions.NotFittedError
        The model is not fitted.
    ValueError
        A parameter cannot be stored (e.g. a user function); the message names it.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "coef_")
    enc = _Encoder()
    params = {k: enc(v, k) for k, v in model.get_params(deep=False).items()
              if k != "feature_map"}
    fm = model.feature_map_
    meta = {
        "format": FORMAT, "version": VERSION,
        "estimator": f"{type(model).__module__}:{type(model).__qualname__}",
        "params": params,
        "feature_map": enc(fm, "feature_map"),
        "feature_map_state": {k: enc(v, f"feature_map_.{k}")
                              for k, v in fm.fitted_state().items()},
        "decoder": model.decoder_.name,
        "coef": enc(np.asarray(model.coef_, dtype=float), "coef_"),
        "fitted": {k: enc(getattr(model, k), k) for k in _FITTED},
    }
    from . import __version__

    meta["structsvm_version"] = __version__
    meta["sha256"] = {k: _digest(v) for k, v in enc.arrays.items()}
    blob = np.frombuffer(json.dumps(meta, allow_nan=True).encode("utf-8"), dtype=np.uint8)
    path = Path(path)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **{_META: blob}, **enc.arrays)
    return path


def _read(path):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No model file at {path}")
    raw = path.read_bytes()
    try:
        with np.load(_io.BytesIO(raw), allow_pickle=False) as npz:
            files = {k: npz[k] for k in npz.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise ModelFileError(f"{path} is not a structsvm model file or is damaged "
                             f"({type(exc).__name__}: {exc})") from None
    if _META not in files:
        raise ModelFileError(f"{path} is an npz archive but not a structsvm model "
                             "(no header)")
    try:
        meta = json.loads(files.pop(_META).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: damaged model header ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not a structsvm model file")
    if meta.get("version") != VERSION:
        raise ModelFileError(f"{path}: model file version {meta.get('version')!r}; this "
                             f"structsvm reads version {VERSION}")
    sums = meta.get("sha256", {})
    if set(sums) != set(files):
        raise ModelFileError(f"{path}: damaged model file (arrays missing or extra)")
    for k, arr in files.items():
        if _digest(arr) != sums[k]:
            raise ModelFileError(f"{path}: damaged model file (checksum of {k} differs)")
    return meta, files


def load(path):
    """Load a model written by ``model.save(path)``; predictions are identical.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is damaged, truncated, of another format or version.
    """
    meta, arrays = _read(path)
    module, _, name = meta["estimator"].partition(":")
    if module.split(".")[0] != "structsvm":
        raise ModelFileError(f"{path}: estimator class outside structsvm: {module}")
    cls = getattr(importlib.import_module(module), name)
    try:
        params = {k: _decode(v, arrays) for k, v in meta["params"].items()}
        fm = _decode(meta["feature_map"], arrays)
        state = {k: _decode(v, arrays) for k, v in meta["feature_map_state"].items()}
        model = cls(feature_map=fm, **params)
        fm.load_fitted_state(state)
        model.feature_map_ = fm
        model.decoder_, model.loss_ = model._resolve_plugins(fm)
        model.learner_ = model._resolve_learner(fm)
        model.coef_ = np.array(_decode(meta["coef"], arrays), dtype=float)
        for k in _FITTED:
            setattr(model, k, _decode(meta["fitted"][k], arrays))
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path}: inconsistent model file ({type(exc).__name__}: "
                             f"{exc})") from None
    if model.coef_.shape != (fm.n_features_,):
        raise ModelFileError(f"{path}: coef_ has shape {model.coef_.shape}, the feature "
                             f"map has {fm.n_features_} features")
    return model
