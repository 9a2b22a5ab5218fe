"""Feature names of the joint feature maps: ``feature_names_`` and ``feature_index``.

Shared by every map of this package (not tied to one structure).

Every map names each dimension of Φ, so blocks of w can be addressed by name, e.g. in
constraints on w (:class:`structsvm.StructuredSVM` ``constraints=``). Names are built
on first use and cached until the map is refitted (a POS map has millions).
"""
from __future__ import annotations

import fnmatch
import re

import numpy as np

__all__ = ["FeatureNamesMixin", "input_feature_names"]

_WILDCARDS = re.compile(r"[*?\[]")


def input_feature_names(n_raw, bias, kept=None):
    """``x0 .. x{n_raw-1}`` (or ``x<j>`` for the input columns ``kept``, where the
    weights cover only those) plus ``bias`` for the constant column (when bias > 0)."""
    cols = range(n_raw) if kept is None else kept.tolist()
    return [f"x{j}" for j in cols] + (["bias"] if bias > 0 else [])


class FeatureNamesMixin:
    """``feature_names_`` (built lazily, cached per fit) and ``feature_index``.

    A map implements ``_build_feature_names()`` (a list of str, one per dimension of
    Φ) and ``_feature_names_key()`` (an object that changes identity on every fit).
    """

    @property
    def feature_names_(self):
        """ndarray of str of shape (n_features_,): the name of every dimension of Φ."""
        if "n_features_" not in vars(self):
            raise AttributeError(f"{type(self).__name__} is not fitted yet: "
                                 "feature_names_ exists after fit")
        key = self._feature_names_key()
        cached = vars(self).get("_feature_names_cache")
        if cached is None or cached[0] is not key or len(cached[1]) != self.n_features_:
            names = np.asarray(self._build_feature_names(), dtype=object)
            if names.shape != (self.n_features_,):  # pragma: no cover - map bug
                raise RuntimeError(f"{type(self).__name__}: {names.shape} names for "
                                   f"{self.n_features_} features")
            self._feature_names_cache = (key, names)
            cached = self._feature_names_cache
        return cached[1]

    def feature_index(self, name):
        """Indices into w of the features named ``name`` (a name, a pattern or a list).

        Parameters
        ----------
        name : str or sequence of str
            An exact name from ``feature_names_`` or a shell-style pattern
            (``*``, ``?``, ``[...]``, as in :mod:`fnmatch`), e.g. ``"transition:*"``;
            an exact name takes precedence over a pattern reading.

        Returns
        -------
        ndarray of int
            Sorted, unique indices.

        Raises
        ------
        ValueError
            When a name or pattern matches no feature (the message shows a few names).
        """
        names = self.feature_names_
        if isinstance(name, str):
            queries = [name]
        else:
            queries = list(name)
            if not all(isinstance(q, str) for q in queries):
                raise TypeError(f"feature_index takes a name, a pattern or a list of "
                                f"them (str), got {name!r}")
        found = []
        for q in queries:
            hit = np.flatnonzero(names == q)
            if hit.size == 0 and _WILDCARDS.search(q):
                rx = re.compile(fnmatch.translate(q))
                hit = np.fromiter((j for j, s in enumerate(names) if rx.match(s)),
                                  dtype=np.intp)
            if hit.size == 0:
                sample = ", ".join(repr(s) for s in names[:3])
                raise ValueError(f"{type(self).__name__}: no feature named {q!r} (names "
                                 f"look like {sample}, ...; see feature_names_)")
            found.append(hit)
        return np.unique(np.concatenate(found)).astype(np.intp)
