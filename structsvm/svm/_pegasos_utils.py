"""Shared, validated pieces of the Pegasos estimators (linear and kernel)."""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array, check_random_state, column_or_1d

__all__ = ["pegasos_order", "check_params", "check_xy", "max_row_norm", "csr_arrays",
           "epochs", "check_tol", "SuffixAverage"]

_SAMPLING = ("permutation", "replacement", "cyclic")


def pegasos_order(n_samples, n_iter, sampling, random_state):
    """The sequence of example indices Pegasos visits (``n_iter * n_samples`` steps).

    Parameters
    ----------
    n_samples : int
    n_iter : int
        Number of epochs.
    sampling : {"permutation", "replacement", "cyclic"}
        A fresh random permutation per epoch, i.i.d. draws with replacement (the
        original Pegasos), or the fixed order 0, 1, ..., n-1, 0, 1, ...
    random_state : int, RandomState instance or None

    Returns
    -------
    ndarray of shape (n_iter * n_samples,) of int64

    Examples
    --------
    >>> pegasos_order(2, 3, "cyclic", None).tolist()
    [0, 1, 0, 1, 0, 1]
    """
    if sampling == "cyclic":
        return np.tile(np.arange(n_samples, dtype=np.int64), n_iter)
    rng = check_random_state(random_state)
    if sampling == "replacement":
        return rng.randint(0, n_samples, size=n_iter * n_samples).astype(np.int64)
    return np.concatenate([rng.permutation(n_samples) for _ in range(n_iter)]).astype(
        np.int64)


def epochs(est):
    """The number of epochs ``est`` runs: its ``max_iter``, checked."""
    value = est.max_iter
    if not (isinstance(value, numbers.Integral) and value >= 1):
        raise ValueError(f"max_iter must be an integer >= 1 (epochs), got {value!r}")
    return int(value)


def check_params(est, n_samples):
    """Validate the shared Pegasos hyper-parameters; return (T, avg_start, eval_every)."""
    C = est.C
    if not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0, got {C!r}")
    n_epochs = epochs(est)
    if est.sampling not in _SAMPLING:
        raise ValueError(f"sampling must be one of {_SAMPLING}, got {est.sampling!r}")
    T = n_epochs * n_samples
    avg = est.average
    if isinstance(avg, (bool, np.bool_)):
        avg_start = T // 2 + 1 if avg else T + 1
    elif isinstance(avg, numbers.Integral) and avg >= 1:
        avg_start = int(avg)
    else:
        raise ValueError(f"average must be True, False or a step number >= 1, got {avg!r}")
    every = est.objective_every
    if every is None:
        every = n_samples
    elif not (isinstance(every, numbers.Integral) and every >= 0):
        raise ValueError(f"objective_every must be None or an integer >= 0, got {every!r}")
    return T, avg_start, int(every)


def check_tol(est):
    """Validate ``tol`` (None or a number >= 0) and ``n_iter_no_change`` (int >= 1)."""
    tol, patience = est.tol, est.n_iter_no_change
    if tol is not None and not (isinstance(tol, numbers.Real) and np.isfinite(tol)
                                and tol >= 0):
        raise ValueError(f"tol must be None or a finite number >= 0, got {tol!r}")
    if not (isinstance(patience, numbers.Integral) and patience >= 1):
        raise ValueError(f"n_iter_no_change must be an integer >= 1, got {patience!r}")
    return (None if tol is None else float(tol)), int(patience)


class SuffixAverage:
    """Averages of the iterates over a suffix of the steps, for runs of unknown length.

    The compiled loop keeps the sum of all iterates since step 1; snapshots of that
    sum at a few steps give the average over steps s+1..t as a difference. With
    ``average=True`` snapshots are taken at the ends of epochs 1, 2, 3, 4, 5, 6, 8,
    10, 12, 15, ... (ratio 1.2) and at step T//2 of the ``max_iter`` run, and the
    average at step t starts after the latest snapshot at or before t // 2: the
    last half of the run, or up to 60% of it when stopped early (suffix averaging,
    Rakhlin et al. 2012); a run that reaches ``max_iter`` averages exactly steps
    T//2+1..T. With an int k it averages from step k on (snapshot at k−1).
    Snapshots no longer needed are dropped, so a few vectors are kept.
    """

    def __init__(self, avg_start, T, n, suffix):
        self.fixed = avg_start - 1          # snapshot step of the max_iter run
        self.suffix = bool(suffix)
        self.n = n
        self.snaps = []                     # (step, sum_w, sum_b, count)
        grid, e = set(), 1.0
        while e <= T // n + 1:
            grid.add(int(np.ceil(e)))
            e *= 1.2
        self.grid = grid

    def wants(self, step):
        """Whether a snapshot is due at ``step`` (an epoch end or the fixed step)."""
        return step == self.fixed or (self.suffix and step % self.n == 0
                                      and step // self.n in self.grid) or step == 0

    def take(self, step, sums):
        w, b, count = sums
        self.snaps.append((step, np.array(w, dtype=float), float(b), float(count)))

    def start(self, step):
        """The snapshot the average at ``step`` starts after (None: not averaging yet)."""
        if not self.suffix:
            hit = [s for s in self.snaps if s[0] == self.fixed]
            return hit[0] if hit and step > self.fixed else None
        ok = [s for s in self.snaps if s[0] <= step // 2]
        best = max(ok, key=lambda s: s[0]) if ok else None
        # drop the snapshots that no later step will start after
        self.snaps = [s for s in self.snaps if best is None or s[0] >= best[0]]
        return best

    def average(self, step, sums):
        s = self.start(step)
        if s is None:
            return None
        w, b, count = sums
        k = count - s[3]
        return (w - s[1]) / k, (b - s[2]) / k


def csr_arrays(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data


def check_xy(X, y, est):
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y "
                         "is None")
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    y = column_or_1d(y, warn=True)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has shape {np.shape(y)}")
    if X.shape[0] == 0:
        raise ValueError("X is empty: at least one sample is needed")
    return X, y


def max_row_norm(X):
    Xs = sp.csr_matrix(X)
    return float(np.sqrt(np.max(np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel(),
                                initial=0.0)))


def kernel_to_support(est, X):
    """k(X, support vectors) of a fitted dual estimator (kernel Pegasos, kernel cutting
    plane): with ``kernel="precomputed"`` X is k(X, X_train) and its support columns
    are taken; otherwise X must have the training number of features."""
    from sklearn.utils.validation import check_array

    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    if est.kernel == "precomputed":
        Kt = X.toarray() if sp.issparse(X) else X
        if Kt.shape[1] != est.n_features_in_:
            raise ValueError(f"kernel='precomputed': X must have {est.n_features_in_}"
                             f" columns (training samples), got {Kt.shape[1]}")
        return Kt[:, est.support_]
    if X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted "
                         f"with {est.n_features_in_}")
    if not len(est.support_):
        return np.zeros((X.shape[0], 0))
    return est._gram(X, est.support_vectors_)
