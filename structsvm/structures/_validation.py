"""Input checks shared by several feature maps (not tied to one structure).

Public boundaries validate; compiled loops don't.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..protocols import SparseRows, as_sequence
from ._input_columns import compact_columns

__all__ = ["check_matrix", "check_finite", "label_index", "check_training_inputs",
           "inputs_with_bias", "as_label_array", "sorted_unique"]


def check_finite(values, what):
    """Raise ValueError naming ``what`` when ``values`` holds NaN or infinity."""
    values = np.asarray(values)
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        bad = np.flatnonzero(~np.isfinite(values.ravel()))[0]
        raise ValueError(f"{what} contains NaN or infinite values (first at flat "
                         f"position {bad})")


def _stack_numeric_rows(X):
    """The common case in one step: every sample a 1-D numeric ndarray of one length
    (the rows of a 2-D array the estimator split), stacked as float64; None for any
    other input, which the per-sample checks then go through (naming a bad sample)."""
    first = X[0]
    if type(first) is not np.ndarray or first.ndim != 1:
        return None
    shape = first.shape
    for x in X:
        if (type(x) is not np.ndarray or x.shape != shape
                or x.dtype.kind not in "biuf"):
            return None
    return np.array(X, dtype=float)


def check_matrix(X, name="X"):
    """Stack samples into a 2-D float array (or CSR when any sample is sparse).

    Accepts a 2-D array, a sparse matrix, or a sequence of 1-D vectors (dense or
    sparse rows). Errors name the offending sample.
    """
    if isinstance(X, SparseRows):  # a matrix the estimator passed on undivided
        X = X.matrix
    if sp.issparse(X):
        M = sp.csr_matrix(X, dtype=float)
        if M.ndim != 2:
            raise ValueError(f"{name} must be 2-D")
    elif isinstance(X, np.ndarray) and X.ndim == 2:
        if X.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
        M = np.asarray(X, dtype=float)
    else:
        X = as_sequence(X, name)
        if len(X) == 0:
            raise ValueError(f"{name} is empty: at least one sample is needed")
        M = _stack_numeric_rows(X)
    if M is None:
        rows, any_sparse = [], False
        for i, x in enumerate(X):
            if sp.issparse(x):
                any_sparse = True
                if x.shape[0] != 1:
                    raise ValueError(f"Sample {i}: a sparse input must be one row, "
                                     f"got shape {x.shape}")
                rows.append(sp.csr_matrix(x, dtype=float))
                continue
            if isinstance(x, (str, bytes)):
                raise TypeError(f"Sample {i}: expected a numeric feature vector, got "
                                f"a string {x!r}")
            try:
                a = np.asarray(x, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"Sample {i}: expected a numeric feature vector, got "
                                f"{type(x).__name__}") from None
            if a.ndim != 1:
                raise ValueError(f"Sample {i}: expected a 1-D feature vector, got shape "
                                 f"{a.shape}")
            rows.append(a)
        widths = {r.shape[-1] for r in rows}
        if len(widths) != 1:
            first = rows[0].shape[-1]
            bad = next(i for i, r in enumerate(rows) if r.shape[-1] != first)
            raise ValueError(f"Sample {bad}: has {rows[bad].shape[-1]} features, sample 0 "
                             f"has {first}")
        if any_sparse:
            M = sp.vstack([sp.csr_matrix(r) for r in rows], format="csr")
        else:
            M = np.vstack(rows)
    if M.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is needed")
    data = M.data if sp.issparse(M) else M
    if not np.all(np.isfinite(data)):
        if sp.issparse(M):
            bad_row = int(np.searchsorted(M.indptr, np.flatnonzero(~np.isfinite(M.data))[0],
                                          side="right") - 1)
        else:
            bad_row = int(np.flatnonzero(~np.all(np.isfinite(M), axis=1))[0])
        raise ValueError(f"Sample {bad_row}: {name} contains NaN or infinite values")
    return M


def label_index(classes):
    """Map each label to its position; duplicates are an error."""
    index = {}
    for k, c in enumerate(classes):
        if c in index:
            raise ValueError(f"label {c!r} appears twice in the output space")
        index[c] = k
    return index


def as_label_array(labels):
    """The labels as a 1-D object array (tuples and other sequences stay one item)."""
    arr = np.empty(len(labels), dtype=object)
    arr[:] = list(labels)
    return arr


def sorted_unique(Y):
    """The distinct labels of ``Y`` sorted (first-seen order when they cannot be
    ordered), as an object array; an unhashable label is a TypeError naming it."""
    uniq = set()
    for i, y in enumerate(Y):
        try:
            uniq.add(y)
        except TypeError:
            raise TypeError(f"Sample {i}: label {y!r} is not hashable") from None
    try:
        return as_label_array(sorted(uniq))
    except TypeError:  # mixed, unorderable labels: keep first-seen order
        seen = {}
        for y in Y:
            seen.setdefault(y, None)
        return as_label_array(list(seen))


def check_training_inputs(X, Y, bias):
    """Stack X (see :func:`check_matrix`), list Y, check lengths and the bias value.

    Returns
    -------
    Xm : ndarray or csr_matrix of shape (n_samples, n_features)
    Y : list
    """
    Xm = check_matrix(X, "X")
    Y = list(as_sequence(Y, "Y"))
    if len(Y) != Xm.shape[0]:
        raise ValueError(f"X has {Xm.shape[0]} samples but Y has {len(Y)} labels")
    if not (np.isscalar(bias) and np.isfinite(bias) and bias >= 0):
        raise ValueError(f"bias must be a finite number >= 0, got {bias!r}")
    return Xm, Y


def inputs_with_bias(X, n_input_features, bias, width=None, kept=None):
    """φ(x) for every sample, with a constant ``bias`` column appended when bias > 0.

    ``n_input_features`` counts that column. ``width`` is the number of columns the
    inputs must have (default ``n_input_features`` less the bias column) and
    ``kept`` the columns the weights cover (None: all; see
    :mod:`structsvm.structures._input_columns`); a width mismatch is an error naming
    both.
    """
    Xm = check_matrix(X, "X")
    d = n_input_features - (1 if bias > 0 else 0) if width is None else int(width)
    if Xm.shape[1] != d:
        raise ValueError(f"X has {Xm.shape[1]} features per sample, the feature map "
                         f"was fitted with {d}")
    Xm = compact_columns(Xm, kept)
    if bias > 0:
        col = np.full((Xm.shape[0], 1), float(bias))
        Xm = sp.hstack([Xm, col], format="csr") if sp.issparse(Xm) else np.hstack([Xm, col])
    return Xm
