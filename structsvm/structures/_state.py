"""Checks of a feature map's fitted state as a model file gives it back.

A model file's checksums only detect damage: anyone can write a model file with
:func:`structsvm.io.write_model_file` and fresh checksums. So every value a map's
``load_fitted_state`` reads is checked here, as if hostile, before the map is
rebuilt from it and before any compiled loop sees it: an index array against the
dimension it indexes, a count against the layout it must match, a label set for
repeats. A failure is a :class:`~structsvm.io.ModelFileError` naming the value
(``feature_map_.rules``); :func:`structsvm.load` adds the file.

Shared by the maps of every structure (not tied to one).
"""
from __future__ import annotations

import numpy as np

from ..io import ModelFileError

__all__ = ["StateReader", "read_input_columns"]


class StateReader:
    """Typed, checked access to the fitted state of one feature map.

    Parameters
    ----------
    state : dict
        What the model file holds under ``feature_map_state`` (decoded).
    owner : str
        The map's class name, for messages.

    Examples
    --------
    >>> r = StateReader({"parent_": np.array([-1, 0, 7])}, "TaxonomyFeatures")
    >>> r.indices("parent_", -1, 3)
    Traceback (most recent call last):
    ...
    structsvm.io._format.ModelFileError: feature_map_.parent_ holds 7 at position 2; \
its entries must lie in [-1, 3)
    """

    def __init__(self, state, owner):
        if not isinstance(state, dict):
            raise ModelFileError(f"the fitted state of {owner} is a "
                                 f"{type(state).__name__}, not a mapping")
        self.state = state
        self.owner = owner

    def _get(self, key):
        if key not in self.state:
            raise ModelFileError(f"feature_map_.{key} is missing (the fitted state of "
                                 f"{self.owner})")
        return self.state[key]

    def has(self, key):
        """Whether the state holds ``key``."""
        return key in self.state

    def fail(self, key, why):
        """Raise the ModelFileError of ``key``: ``"feature_map_.<key> <why>"``."""
        raise ModelFileError(f"feature_map_.{key} {why}")

    def integer(self, key, low=0, high=None):
        """An int in ``[low, high]`` (``high`` None: no upper bound)."""
        v = self._get(key)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            self.fail(key, f"is {v!r:.40}, not an integer")
        v = int(v)
        if v < low or (high is not None and v > high):
            bound = f"[{low}, {high}]" if high is not None else f">= {low}"
            self.fail(key, f"is {v}; it must be {bound}")
        return v

    def flag(self, key):
        """A bool (or 0/1)."""
        v = self._get(key)
        if not isinstance(v, (bool, np.bool_, int, np.integer)) or v not in (0, 1):
            self.fail(key, f"is {v!r:.40}, not a bool")
        return bool(v)

    def choice(self, key, options):
        """A str among ``options``."""
        v = self._get(key)
        if not isinstance(v, str) or v not in options:
            self.fail(key, f"is {v!r:.40}; expected one of {list(options)}")
        return v

    def array(self, key, kind="i", ndim=1, shape=None):
        """A numeric array of dtype kind among ``kind`` ("i": integers, also unsigned
        and bool; "f": finite floats, also integers), ``ndim`` dimensions and, where
        given, ``shape`` (None entries: any length)."""
        v = self._get(key)
        arr = v if isinstance(v, np.ndarray) else None
        if arr is None and isinstance(v, (list, tuple)):
            try:
                arr = np.asarray(v)
            except (ValueError, TypeError):
                arr = None
        kinds = {"i": "iub", "f": "iubf"}[kind]
        if arr is None or arr.dtype.kind not in kinds:
            what = "integers" if kind == "i" else "numbers"
            got = arr.dtype if arr is not None else type(v).__name__
            self.fail(key, f"is not an array of {what} (got {got})")
        if arr.ndim != ndim or (shape is not None and any(
                s is not None and s != n for s, n in zip(shape, arr.shape))):
            want = "x".join("any" if s is None else str(s) for s in shape) \
                if shape is not None else f"{ndim}-D"
            self.fail(key, f"has shape {arr.shape}; expected {want}")
        if kind == "f":
            arr = np.asarray(arr, dtype=float)
            if not np.all(np.isfinite(arr)):
                self.fail(key, "holds NaN or infinite values")
        else:
            arr = np.asarray(arr, dtype=np.int64)
        return arr

    def indices(self, key, low, high, ndim=1, shape=None, what="its entries"):
        """An integer array whose entries lie in ``[low, high)``."""
        arr = self.array(key, "i", ndim, shape)
        bad = np.flatnonzero((arr < low) | (arr >= high))
        if bad.size:
            pos = np.unravel_index(int(bad[0]), arr.shape)
            pos = int(pos[0]) if len(pos) == 1 else tuple(int(p) for p in pos)
            self.fail(key, f"holds {int(arr.flat[bad[0]])} at position {pos}; {what} "
                           f"must lie in [{low}, {high})")
        return arr

    def distinct(self, key, arr, what="entries"):
        """Refuse repeated entries of ``arr`` (rows of a 2-D array)."""
        a = np.asarray(arr)
        n = len(a)
        if a.ndim == 2:
            uniq = np.unique(a, axis=0) if n else a
        else:
            uniq = np.unique(a)
        if len(uniq) != n:
            self.fail(key, f"repeats {what}")
        return arr

    def labels(self, key, strings=False):
        """A 1-D sequence of distinct hashable labels (str when ``strings``), as a list."""
        v = self._get(key)
        if isinstance(v, np.ndarray):
            if v.ndim != 1:
                self.fail(key, f"has shape {v.shape}; expected a 1-D array of labels")
            items = v.tolist()
        elif isinstance(v, (list, tuple)):
            items = list(v)
        else:
            self.fail(key, f"is a {type(v).__name__}, not a sequence of labels")
        if strings and not all(isinstance(s, str) for s in items):
            bad = next(s for s in items if not isinstance(s, str))
            self.fail(key, f"holds {bad!r:.40}, not a string")
        seen = set()
        for s in items:
            try:
                if s in seen:
                    self.fail(key, f"repeats the label {s!r:.40}")
                seen.add(s)
            except TypeError:
                self.fail(key, f"holds {s!r:.40}, which is not hashable")
        return items

    def count(self, key, expected, layout):
        """An int that must equal ``expected`` (what ``layout`` in words gives)."""
        v = self.integer(key)
        if v != expected:
            self.fail(key, f"is {v}, but {layout} give {expected}")
        return v


def read_input_columns(r, n_kept):
    """``(n_features_in_, input_columns_)`` of a map over input columns
    (:mod:`structsvm.structures._input_columns`): the input width and the sorted
    columns the weights cover (None: all), checked against the ``n_kept`` columns
    the layout has. Files written before maps kept columns hold neither (all)."""
    width = r.integer("n_features_in_") if r.has("n_features_in_") else n_kept
    if not r.has("input_columns_") or r.state["input_columns_"] is None:
        if width != n_kept:
            r.fail("n_features_in_", f"is {width}, but the weights cover {n_kept} input "
                                     "columns (and no input_columns_ says which)")
        return width, None
    kept = r.indices("input_columns_", 0, max(width, 0), shape=(n_kept,),
                     what="input columns")
    if np.any(np.diff(kept) <= 0):
        r.fail("input_columns_", "must increase")
    return width, kept
