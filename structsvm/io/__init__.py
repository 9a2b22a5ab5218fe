"""Model files: one ``.npz`` archive holding numeric arrays plus a JSON header.

This module is the file format: writing and reading the archive, the header and its
checksums, the size limits, and the registry of plugin classes model files may name.
What a model file holds (an estimator's parameters and fitted state) is the
estimator's business: ``model.save(path)`` writes one and :func:`structsvm.load`
reads it back (see :mod:`structsvm.estimator`).

A model file is data, never code:

- nothing is unpickled (every array is read with its ``.npy`` header checked and
  ``allow_pickle=False``; object arrays are refused);
- the header may name only classes on an explicit allow-list
  (:func:`structsvm.estimator.allowed_classes`): structsvm's estimator, the feature
  maps, learners and losses registered in :mod:`structsvm.registry`, classes
  registered with :func:`register_model_class`, and the classes the caller
  passes as ``structsvm.load(path, trusted=[...])`` (a user's structure, matched by
  module and qualified name; never imported by a name read from the file). No
  function is ever called; an allowed class is instantiated with keyword arguments that must be among
  its constructor's parameters;
- the SHA-256 of the header (canonical JSON) and of every array is recorded and
  checked, so a damaged or edited file is refused;
- sizes are checked before anything is inflated: each archive member's declared
  size (from the zip central directory) and each array's shape and dtype (from its
  ``.npy`` header) against :data:`MAX_BYTES`, so a small file that inflates to
  gigabytes is refused without inflating it;
- the header is read and checked before any array: it lists every array with its
  dtype and shape, and a member it does not list, a listed array without a member,
  or a member whose declared size, dtype or shape differs is refused before it is
  inflated.

Every failure to read a file raises :class:`ModelFileError` naming the file and the
reason (a missing file raises ``FileNotFoundError``).

Header codec (JSON values, with tagged dicts for what JSON lacks): tuples
``{"__tuple__": [...]}``, dicts with non-string keys ``{"__dict__": [[k, v], ...]}``,
numeric arrays ``{"__array__": name}`` (stored in the archive), object (label)
and str arrays ``{"__objarray__": [...], "shape": [...], "order": "C"}``, networkx
digraphs ``{"__digraph__": {...}}``, decoders ``{"__decoder__": name}`` and structsvm
objects ``{"__object__": "module:Class", "params": {...}}``.

An object or str array of any shape (0-d, empty, 2-D and more, nested object arrays)
is stored as the list of its items in C (row-major) order, with its shape;
``"order": "C"`` marks that layout, and a str array records its dtype
(``"dtype": "<U5"``) so it loads back as a str array of that width. Files without
``"order"`` hold the items as ``ndarray.tolist()`` nests them (a plain list for a 1-D
array) and load as they were written; a 0-d object array in such a file is refused,
as its item was not kept. The reader refuses, naming the value, an array whose shape
is not a list of at most 32 integers from 0 to :data:`MAX_HEADER_BYTES`, whose items
(counting zero dimensions as one) would exceed :data:`MAX_HEADER_BYTES`, whose
number of items differs from its shape's, or a str array whose items are not strings
within its width. Values nested more than 100 levels deep (lists, tuples, dicts,
arrays, objects) are refused when writing and when reading.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from pathlib import Path

import numpy as np

from ._format import (MAX_HEADER_BYTES, META, ModelFileError, ValueDecoder, ValueEncoder,
                      class_key, construct, read_archive)
from ._savable import importable, not_json

__all__ = ["ModelFileError", "FORMAT", "VERSION", "MAX_BYTES", "MAX_HEADER_BYTES",
           "register_model_class", "registered_classes", "write_model_file",
           "read_model_file", "check_writable", "refusing_inconsistent",
           "ValueEncoder", "ValueDecoder", "class_key", "construct", "importable",
           "not_json"]

FORMAT = "structsvm-model"
#: Format version written. Version 1 files (no checksum of the header itself) are read.
VERSION = 2
_READS = (1, 2)
_HEADER_KEY = "__header__"
_RESERVED = ("format", "version", "sha256")

#: Largest total size (bytes, uncompressed) of the arrays of a model file that
#: :func:`structsvm.load` accepts unless told otherwise (``max_bytes=``).
MAX_BYTES = 512 * 2 ** 20


# ------------------------------------------------------------------------- registry
_REGISTERED: dict[str, type] = {}
#: structsvm's own classes registered by name ("structsvm.…:Class"): a second feature
#: map of a structure's folder, kept apart so that clearing the user's
#: registrations leaves them
_BUILT_IN: dict[str, type] = {}


def register_model_class(cls, *aliases):
    """Allow model files to name ``cls`` (and the other names ``aliases``, "module:Class").

    The feature maps, learners and losses registered in :mod:`structsvm.registry`
    are allowed already; use this for a plugin that is not registered, or for the
    names its files used before it moved (``aliases``). Its constructor must only store its parameters (the scikit-learn
    contract): :func:`structsvm.load` calls it with the parameters read from the file.

    Parameters
    ----------
    cls : type or str
        The class, or the text "package.module:Class" naming it (imported the first
        time the allowed classes are read, so registering imports nothing; one of
        structsvm's own, "structsvm.…", stays registered when the others are
        cleared).
    *aliases : str
        Further names ("module:Class") under which files may refer to ``cls``.

    Returns
    -------
    type or str
        ``cls`` (so this works as a class decorator).

    Examples
    --------
    >>> from structsvm.structures import MulticlassFeatures
    >>> class MyFeatures(MulticlassFeatures):
    ...     pass
    >>> _ = register_model_class(MyFeatures, "mypackage.old_module:MyFeatures")
    >>> registered_classes()["mypackage.old_module:MyFeatures"] is MyFeatures
    True
    >>> _REGISTERED.clear()
    """
    if isinstance(cls, str):
        module, _, name = cls.partition(":")
        if not module or not name:
            raise ValueError(f"register_model_class: a class by name is "
                             f"'package.module:Class', got {cls!r}")
    elif not isinstance(cls, type):
        raise TypeError(f"register_model_class needs a class, got {type(cls).__name__}")
    into = _BUILT_IN if isinstance(cls, str) and cls.startswith("structsvm.") \
        else _REGISTERED
    for key in ((cls if isinstance(cls, str) else class_key(cls)), *aliases):
        into[key] = cls
    return cls


def registered_classes():
    """The classes registered with :func:`register_model_class`, by "module:Class"
    (those registered by name imported now).

    Returns
    -------
    dict of str to type
        A copy: changing it changes nothing.
    """
    import importlib

    out = {}
    for table in (_BUILT_IN, _REGISTERED):
        for key, cls in list(table.items()):
            if isinstance(cls, str):
                module, _, name = cls.partition(":")
                cls = table[key] = getattr(importlib.import_module(module), name)
            out[key] = cls
    return out


# ------------------------------------------------------------------------- checksums
def _digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def _header_digest(meta):
    body = {k: v for k, v in meta.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, allow_nan=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


# ------------------------------------------------------------------------- writing
def check_writable(path):
    """Raise ``FileNotFoundError``/``IsADirectoryError`` now if ``path`` cannot be
    written later (missing folder, or a folder in its place).

    Parameters
    ----------
    path : str or Path
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"Cannot write the model to {path}: folder "
                                f"{path.parent} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"Cannot write the model to {path}: it is a folder")


def write_model_file(path, header, arrays):
    """Write a model file: ``header`` (JSON values) and the numeric ``arrays``.

    The format, version, every array's dtype and shape, and the checksums of the
    header and of every array are added to the header. The file is written to a temporary file in the same folder and
    then renamed, so ``path`` always holds a complete file.

    Parameters
    ----------
    path : str or Path
    header : dict
        JSON values (the header codec's output); the keys "format", "version" and
        "sha256" are reserved; "arrays" is replaced by the record of the arrays'
        dtypes and shapes (so a header read from a model file can be written back).
    arrays : dict of str to ndarray
        Numeric arrays the header refers to by name.

    Returns
    -------
    Path

    Raises
    ------
    FileNotFoundError
        The folder of ``path`` does not exist.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "f.npz")
    >>> _ = write_model_file(path, {"w": {"__array__": "w"}}, {"w": np.ones(2)})
    >>> meta, arrays = read_model_file(path)
    >>> meta["w"], arrays["w"].tolist()
    ({'__array__': 'w'}, [1.0, 1.0])
    """
    path = Path(path)
    check_writable(path)
    clash = sorted(set(header) & set(_RESERVED))
    if clash:
        raise ValueError(f"header keys {clash} are reserved")
    meta = {"format": FORMAT, "version": VERSION, **header}
    meta["arrays"] = {k: {"dtype": np.asarray(v).dtype.str, "shape": list(np.shape(v))}
                      for k, v in arrays.items()}
    sums = {k: _digest(v) for k, v in arrays.items()}
    sums[_HEADER_KEY] = _header_digest(meta)
    meta["sha256"] = sums
    blob = np.frombuffer(json.dumps(meta, allow_nan=True).encode("utf-8"), dtype=np.uint8)
    # a temporary file beside the target, renamed over it when complete; created with
    # mode 0666 less the umask, as any new file of the user's (mkstemp's would be 0600)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **{META: blob}, **arrays)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


# ------------------------------------------------------------------------- reading
def _check_header(path, header):
    """The checked header of a model file and the array names it lists (read before
    any array is inflated)."""
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
    names = [k for k in sums if k != _HEADER_KEY]
    if meta["version"] >= 2:
        try:
            header_sum = _header_digest(meta)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ModelFileError(f"{path}: damaged model header ({exc})") from None
        if sums.get(_HEADER_KEY) != header_sum:
            raise ModelFileError(f"{path}: the header's checksum differs: the file was "
                                 "damaged or edited")
    else:
        names = list(sums)
    return meta, _declared(path, meta, names)


def _declared(path, meta, names):
    """``{name: (dtype, shape) or None}``: what the header says of each array (files
    written before the header recorded it say nothing)."""
    shapes = meta.get("arrays")
    if shapes is None:
        return dict.fromkeys(names)
    if not isinstance(shapes, dict) or set(shapes) != set(names):
        raise ModelFileError(f"{path}: damaged model header (the arrays' dtypes and "
                             "shapes do not match the arrays' checksums)")
    out = {}
    for name in names:
        entry = shapes[name]
        try:
            dtype, shape = np.dtype(entry["dtype"]), tuple(entry["shape"])
        except (TypeError, ValueError, KeyError) as exc:
            raise ModelFileError(f"{path}: damaged model header (array {name}: "
                                 f"{exc})") from None
        if not isinstance(entry["dtype"], str) or dtype.kind not in "biufc" \
                or not all(type(n) is int and n >= 0 for n in shape):
            raise ModelFileError(f"{path}: damaged model header (array {name} has dtype "
                                 f"{entry['dtype']!r}, shape {entry['shape']!r})")
        out[name] = (dtype, shape)
    return out


def read_model_file(path, *, max_bytes=MAX_BYTES):
    """The header and arrays of a model file, every size and checksum checked.

    Parameters
    ----------
    path : str or Path
    max_bytes : int, default=MAX_BYTES
        Refuse files whose arrays declare more bytes than this (checked before
        anything is inflated).

    Returns
    -------
    header : dict
        JSON values, as written (with "format", "version" and "sha256").
    arrays : dict of str to ndarray

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        The file is damaged, truncated, edited, too large, or of another format or
        version; the message names the file and the reason.
    """
    path = Path(path)
    if not path.is_file():
        if path.exists():  # a FIFO, device or folder: never opened (it could block)
            raise ModelFileError(f"{path}: not a regular file, so not a model file")
        raise FileNotFoundError(f"No model file at {path}")
    try:
        meta, files = read_archive(path, max_bytes, lambda h: _check_header(path, h))
    except ModelFileError:
        raise
    except MemoryError:
        raise ModelFileError(f"{path}: not enough memory to read the model") from None
    except Exception as exc:  # any failure of the zip/npy layers: a damaged file
        raise ModelFileError(f"{path} is not a structsvm model file or is damaged "
                             f"({type(exc).__name__}: {exc})") from None
    sums = meta["sha256"]
    for k, arr in files.items():
        if _digest(arr) != sums[k]:
            raise ModelFileError(f"{path}: damaged model file (checksum of {k} differs)")
    return meta, files


@contextlib.contextmanager
def refusing_inconsistent(path):
    """Turn any failure to build objects from a checked file into a
    :class:`ModelFileError` naming ``path`` (values of the right types that do not fit
    together, a class refusing its parameters, ...).

    Parameters
    ----------
    path : str or Path

    Examples
    --------
    >>> try:
    ...     with refusing_inconsistent("m.npz"):
    ...         int("three")
    ... except ModelFileError as exc:
    ...     print(exc)
    m.npz: inconsistent model file (ValueError: invalid literal for int() with base 10: 'three')
    """
    try:
        yield
    except ModelFileError as exc:
        msg = str(exc)
        raise ModelFileError(msg if msg.startswith(str(path)) else f"{path}: {msg}") \
            from None
    except MemoryError as exc:  # a size refused before allocation says which
        raise ModelFileError(f"{path}: {exc}" if str(exc) else
                             f"{path}: not enough memory to build the model") from None
    except Exception as exc:
        raise ModelFileError(f"{path}: inconsistent model file ({type(exc).__name__}: "
                             f"{exc})") from None
