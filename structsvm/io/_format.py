"""The model-file format's machinery: reading the archive within size limits, the
JSON header codec, and instantiating allowed classes (see :mod:`structsvm.io` for the
format and the guarantees).

Private: :mod:`structsvm.io` is the public interface. Nothing here knows which
classes are allowed or how a decoder name is resolved: the callers pass both in.
"""
from __future__ import annotations

import inspect
import math
import zipfile

import numpy as np

from ..protocols import Decoder as _DecoderPlugin

__all__ = ["ModelFileError", "ValueEncoder", "ValueDecoder", "construct", "read_archive",
           "class_key", "MAX_HEADER_BYTES", "META"]

META = "__meta__"
#: Largest JSON header (bytes) a model file may have.
MAX_HEADER_BYTES = 64 * 2 ** 20
_MAX_MEMBERS = 10_000
#: Deepest nesting of header values (lists, tuples, dicts, arrays, objects) written or
#: read: far beyond any model's, far below Python's recursion limit.
MAX_DEPTH = 100
#: Most dimensions of an object array in a model file (numpy's limit before 2.0).
_MAX_NDIM = 32


class ModelFileError(ValueError):
    """A model file is damaged, truncated, foreign, too large, or names a class that a
    model file may not name."""


def class_key(cls):
    """"module:QualName" of a class, as model files name it."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _param_names(cls):
    getter = getattr(cls, "_get_param_names", None)
    if getter is not None:
        return set(getter())
    sig = inspect.signature(cls.__init__)
    return {p.name for p in list(sig.parameters.values())[1:]
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def construct(key, params, allowed, where):
    """Instantiate the allowed class ``key`` with ``params`` (checked names), or refuse."""
    if not isinstance(key, str) or key not in allowed:
        name = key.rsplit(":", 1)[-1] if isinstance(key, str) else "TheClass"
        raise ModelFileError(f"{where} names {key!r}, which is not a class model files "
                             "may name (see structsvm.estimator.allowed_classes); if it "
                             "is a class of yours that you trust, load with "
                             f"structsvm.load(path, trusted=[{name}])")
    cls = allowed[key]
    if not isinstance(params, dict):
        raise ModelFileError(f"{where}: the parameters of {key} are a "
                             f"{type(params).__name__}, not a mapping")
    unknown = set(params) - _param_names(cls)
    if unknown:
        raise ModelFileError(f"{where}: {key} has no parameter(s) {sorted(unknown)}")
    return cls(**params)


class ValueEncoder:
    """Python values -> JSON header values; numeric arrays are collected in ``arrays``."""

    def __init__(self, allowed):
        self.arrays = {}
        self.allowed = allowed

    def _store(self, arr, hint):
        key = f"a{len(self.arrays)}_{hint}"
        self.arrays[key] = np.ascontiguousarray(arr)
        return {"__array__": key}

    def __call__(self, obj, where, depth=0):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return float(obj)
        if isinstance(obj, np.bool_):
            return bool(obj)
        if depth >= MAX_DEPTH:  # a container inside MAX_DEPTH others
            raise ValueError(f"Cannot save the model: {where} nests values deeper than "
                             f"{MAX_DEPTH} levels (a model file holds at most that many; "
                             "is a list holding itself?)")
        down = depth + 1
        if isinstance(obj, tuple):
            return {"__tuple__": [self(v, where, down) for v in obj]}
        if isinstance(obj, list):
            return [self(v, where, down) for v in obj]
        if isinstance(obj, dict):
            if all(isinstance(k, str) and not k.startswith("__") for k in obj):
                return {k: self(v, f"{where}[{k!r}]", down) for k, v in obj.items()}
            return {"__dict__": [[self(k, where, down), self(v, f"{where}[{k!r}]", down)]
                                 for k, v in obj.items()]}
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind in "biufc":
                return self._store(obj, where.split(".")[-1][:40])
            if obj.dtype.kind in "OU":
                # the items in C order, whatever the shape (a 0-d array has one item)
                items = obj.reshape(-1).tolist()  # the items themselves, as a list
                out = {"__objarray__": [v if type(v) is str else self(v, where, down)
                                        for v in items],
                       "shape": list(obj.shape), "order": "C"}
                if obj.dtype.kind == "U":
                    out["dtype"] = obj.dtype.str
                return out
        if isinstance(obj, _DecoderPlugin):
            return {"__decoder__": obj.name}
        try:
            import networkx as nx

            if isinstance(obj, nx.DiGraph):
                return {"__digraph__": {
                    "nodes": [self(n, where, down) for n in obj.nodes],
                    "edges": [[self(a, where, down), self(b, where, down)]
                              for a, b in obj.edges]}}
        except ImportError:  # pragma: no cover
            pass
        cls = type(obj)
        if self.allowed.get(class_key(cls)) is cls:
            if callable(getattr(obj, "get_params", None)):
                params = obj.get_params(deep=False)
            else:
                params = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
            return {"__object__": class_key(cls),
                    "params": {k: self(v, f"{where}.{k}", down)
                               for k, v in params.items()}}
        what = getattr(obj, "__name__", type(obj).__name__)
        raise ValueError(f"Cannot save the model: {where} is {what!r}, which a model file "
                         "cannot hold (only numbers, strings, arrays, tuples, dicts, "
                         "networkx digraphs and the structsvm classes of "
                         "structsvm.estimator.allowed_classes(); pass plugins by name, "
                         "use built-in feature functions, or register a plugin class "
                         "with structsvm.io.register_model_class)")


class ValueDecoder:
    """JSON header values -> Python values; objects only from the ``allowed`` classes,
    decoders by name through ``decoders`` (a function: name -> decoder)."""

    def __init__(self, arrays, allowed, decoders):
        self.arrays = arrays
        self.allowed = allowed
        self.decoders = decoders

    def __call__(self, obj, where="header", depth=0):
        if not isinstance(obj, (list, dict)):
            return obj
        if depth >= MAX_DEPTH:  # a container inside MAX_DEPTH others
            raise ModelFileError(f"{where} nests values deeper than {MAX_DEPTH} levels")
        down = depth + 1
        if isinstance(obj, list):
            return [self(v, where, down) for v in obj]
        if "__tuple__" in obj:
            return tuple(self(v, where, down) for v in obj["__tuple__"])
        if "__dict__" in obj:
            return {self(k, where, down): self(v, where, down) for k, v in obj["__dict__"]}
        if "__array__" in obj:
            name = obj["__array__"]
            if not isinstance(name, str) or name not in self.arrays:
                raise ModelFileError(f"{where} refers to a missing array {name!r}")
            return self.arrays[name]
        if "__objarray__" in obj:
            return self._objarray(obj, where, down)
        if "__decoder__" in obj:
            return self.decoders(obj["__decoder__"])
        if "__digraph__" in obj:
            import networkx as nx

            g = nx.DiGraph()
            g.add_nodes_from(_hashable(self(n, where, down))
                             for n in obj["__digraph__"]["nodes"])
            g.add_edges_from((_hashable(self(a, where, down)),
                              _hashable(self(b, where, down)))
                             for a, b in obj["__digraph__"]["edges"])
            return g
        if "__object__" in obj:
            params = obj.get("params")
            if isinstance(params, dict):
                params = {k: self(v, f"{where}.{k}", down) for k, v in params.items()}
            return construct(obj["__object__"], params, self.allowed, where)
        return {k: self(v, f"{where}[{k!r}]", down) for k, v in obj.items()}

    def _objarray(self, obj, where, depth):
        """An object (or str) array: its items, in C order, filled into its shape.

        Files written before the ``"order"`` key hold the items as ``tolist()`` nests
        them: a plain list for 1-D arrays (read as they always were), nested lists for
        more dimensions (unnested level by level against the shape)."""
        items, order = obj["__objarray__"], obj.get("order")
        if not isinstance(items, list):
            raise ModelFileError(f"{where}: damaged object array (its items are a "
                                 f"{type(items).__name__}, not a list)")
        shape = _objarray_shape(obj.get("shape"), where)
        if order is None:  # written before the "order" key
            if not shape:
                raise ModelFileError(f"{where}: a 0-d object array written by a structsvm "
                                     "that did not keep its item; save the model again")
            items = _unnest(items, shape, where)
        elif order != "C":
            raise ModelFileError(f"{where}: object array order {order!r}; model files "
                                 "hold the items in C order ('C')")
        size = math.prod(shape)
        if len(items) != size:
            raise ModelFileError(f"{where}: an object array declares shape {list(shape)} "
                                 f"({size} items) but holds {len(items)} items")
        if "dtype" in obj:
            return _str_array(items, shape, obj["dtype"], where)
        flat = np.fromiter((v if type(v) is str else self(v, where, depth)
                            for v in items), dtype=object, count=size)
        return flat.reshape(shape)


def _objarray_shape(shape, where):
    """The checked shape of an object array: at most ``_MAX_NDIM`` dimensions, each an
    int >= 0, with at most ``MAX_HEADER_BYTES`` items counting a zero dimension as one
    (numpy must be able to size the array even where it is empty)."""
    if not isinstance(shape, list) or len(shape) > _MAX_NDIM \
            or not all(type(n) is int and 0 <= n <= MAX_HEADER_BYTES for n in shape):
        raise ModelFileError(f"{where}: an object array declares shape {shape!r:.80}; "
                             f"expected a list of at most {_MAX_NDIM} integers from 0 to "
                             f"{MAX_HEADER_BYTES}")
    extent = math.prod(max(n, 1) for n in shape)  # exact: Python ints do not overflow
    if extent > MAX_HEADER_BYTES:
        raise ModelFileError(f"{where}: an object array declares shape {shape}, "
                             f"{extent} items (without its zero dimensions), more than a "
                             f"model header can hold ({MAX_HEADER_BYTES})")
    return tuple(shape)


def _unnest(items, shape, where):
    """The items, in C order, of nested lists matching ``shape`` (one level a
    dimension, iteratively: no recursion whatever the nesting)."""
    level = [items]
    for n in shape:
        nxt = []
        for row in level:
            if not isinstance(row, list) or len(row) != n:
                raise ModelFileError(f"{where}: damaged object array (its nested lists "
                                     f"do not match its shape {list(shape)})")
            nxt.extend(row)
        level = nxt
    return level


def _str_array(items, shape, dtype, where):
    """A numpy str array (``"dtype"``: its ``dtype.str``, e.g. ``"<U5"``) of ``items``."""
    try:
        dt = np.dtype(dtype) if isinstance(dtype, str) else None
    except (TypeError, ValueError):
        dt = None
    if dt is None or dt.kind != "U":
        raise ModelFileError(f"{where}: an object array declares dtype {dtype!r:.40}; "
                             "model files hold str arrays ('<U...') as such")
    width = dt.itemsize // 4
    if width * max(len(items), 1) > MAX_HEADER_BYTES:
        raise ModelFileError(f"{where}: a str array declares dtype {dt.str} for "
                             f"{len(items)} items, more characters than a model header "
                             f"can hold ({MAX_HEADER_BYTES})")
    if not all(isinstance(v, str) and len(v) <= width for v in items):
        bad = next(v for v in items if not isinstance(v, str) or len(v) > width)
        raise ModelFileError(f"{where}: a str array of dtype {dt.str} holds "
                             f"{bad!r:.40}, not a string of at most {width} characters")
    return np.array(items, dtype=dt).reshape(shape)


def _hashable(v):
    hash(v)
    return v


def _read_member(zf, info, limit, path, expect=None):
    """One ``.npy`` member: header checked (dtype, shape, size; ``expect``: the
    ``(dtype, shape)`` the model header declares, if any) before reading data."""
    with zf.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ModelFileError(f"{path}: array {info.filename} has .npy version "
                                 f"{version}")
        if dtype.hasobject or dtype.kind not in "biufc" or dtype.fields is not None \
                or dtype.subdtype is not None:
            raise ModelFileError(f"{path}: array {info.filename} has dtype {dtype}; model "
                                 "files hold plain numbers only")
        if not all(isinstance(s, int) and 0 <= s for s in shape):
            raise ModelFileError(f"{path}: array {info.filename} has shape {shape}")
        if expect is not None and (dtype, tuple(shape)) != expect:
            raise ModelFileError(f"{path}: array {info.filename} has dtype {dtype}, "
                                 f"shape {shape}; the header declares {expect[0]}, "
                                 f"{expect[1]}")
        count = 1
        for s in shape:
            count *= s
        nbytes = count * dtype.itemsize
        if nbytes > limit:
            raise ModelFileError(f"{path}: array {info.filename} declares {nbytes} bytes, "
                                 f"more than the limit of {limit}")
        if nbytes + fp.tell() != info.file_size:
            raise ModelFileError(f"{path}: array {info.filename} declares shape {shape} "
                                 f"({nbytes} bytes) but its member holds "
                                 f"{info.file_size - fp.tell()} bytes")
        data = fp.read(nbytes)
        if len(data) != nbytes:
            raise ModelFileError(f"{path}: array {info.filename} is truncated")
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C").copy()


def _member_name(info, path):
    """The array name of a member: ``<name>.npy``, no folders, no parent references."""
    name = info.filename
    stem = name[:-4]
    if (not name.endswith(".npy") or not stem or "/" in name or "\\" in name
            or "\0" in name or ".." in name):
        raise ModelFileError(f"{path}: unexpected archive member {name!r} (a model file "
                             "holds only <name>.npy members, without folders)")
    return stem


def read_archive(path, max_bytes, check_header):
    """The checked header and ``{name: array}`` of an npz archive.

    Every declared size is checked against the limits, then the header member alone is
    read and passed to ``check_header`` (which returns ``(header, listed)``: the checked
    header and ``{name: (dtype, shape) or None}`` for the arrays it lists, or raises); a
    member the header does not list, a listed array without a member, and a member
    whose declared size differs from its declared dtype and shape are refused before
    any array is inflated.
    """
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > _MAX_MEMBERS:
            raise ModelFileError(f"{path}: the archive has {len(infos)} members, more "
                                 f"than the limit of {_MAX_MEMBERS}")
        names = [_member_name(i, path) for i in infos]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ModelFileError(f"{path}: the archive has duplicate members {dup}")
        total = 0
        for info in infos:
            limit = MAX_HEADER_BYTES if info.filename == META + ".npy" else max_bytes
            if info.file_size > limit + 4096:
                raise ModelFileError(f"{path}: member {info.filename} declares "
                                     f"{info.file_size} bytes uncompressed, more than the "
                                     f"limit of {limit} (a larger model needs "
                                     "load(path, max_bytes=...))")
            if info.filename != META + ".npy":
                total += info.file_size
        if total > max_bytes + 4096 * len(infos):
            raise ModelFileError(f"{path}: the arrays declare {total} bytes uncompressed, "
                                 f"more than the limit of {max_bytes} (a larger model "
                                 "needs load(path, max_bytes=...))")
        by_name = dict(zip(names, infos))
        if META not in by_name:
            raise ModelFileError(f"{path} is an npz archive but not a structsvm model "
                                 "(no header)")
        header, listed = check_header(
            _read_member(zf, by_name.pop(META), MAX_HEADER_BYTES, path))
        extra = sorted(set(by_name) - set(listed))
        missing = sorted(set(listed) - set(by_name))
        if extra or missing:
            why = ([f"the header does not list {extra[:5]}"] if extra else []) + \
                ([f"the archive lacks {missing[:5]}"] if missing else [])
            raise ModelFileError(f"{path}: damaged model file (arrays missing or extra: "
                                 f"{'; '.join(why)})")
        for name, info in by_name.items():
            if listed[name] is not None:
                dtype, shape = listed[name]
                nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if not nbytes + 10 <= info.file_size <= nbytes + 4096:
                    raise ModelFileError(f"{path}: member {info.filename} declares "
                                         f"{info.file_size} bytes uncompressed; the "
                                         f"header's dtype {dtype} and shape {shape} "
                                         f"imply {nbytes} bytes of data")
        files = {name: _read_member(zf, info, max_bytes, path, listed[name])
                 for name, info in by_name.items()}
    return header, files
