"""σ and ε heuristics (re-exported by :mod:`structsvm.model_selection`)."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import KFold

__all__ = ["cluster_sigma", "epsilon_from_residuals"]


def cluster_sigma(X, y=None, *, n_clusters=8, random_state=0):
    """σ range from cluster widths: cluster (x, y) with k-means, measure each spread.

    The notes cluster the vectors q = (x, y) (Competitive Agglomeration; k-means
    here) and read σ off the clusters' widths: width_c = sqrt(mean squared distance
    of the cluster's inputs to their centre / n_features), the per-dimension
    standard deviation of a Gaussian blob. Clusters of one point are ignored.

    Returns
    -------
    dict
        ``{"min": ..., "mean": ..., "max": ...}``: the notes suggest the lower part
        of [min, max] (large σ over-smooths).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.randn(200, 2) * 0.5, rng.randn(200, 2) * 0.5 + 10]
    >>> s = cluster_sigma(X, n_clusters=2)
    >>> bool(0.4 < s["mean"] < 0.6)
    True
    """
    from sklearn.cluster import KMeans

    Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    if Xd.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {Xd.shape}")
    Q = Xd if y is None else np.column_stack([Xd, np.asarray(y, dtype=float)])
    k = min(int(n_clusters), Xd.shape[0])
    labels = KMeans(n_clusters=k, n_init=4, random_state=random_state).fit_predict(Q)
    widths = []
    for c in range(k):
        P = Xd[labels == c]
        if len(P) > 1:
            widths.append(math.sqrt(float(np.mean(np.sum((P - P.mean(0)) ** 2, axis=1)))
                                    / Xd.shape[1]))
    widths = [w for w in widths if w > 0] or [1.0]
    return {"min": min(widths), "mean": float(np.mean(widths)), "max": max(widths)}


def epsilon_from_residuals(estimator, X, y, *, upsilon=1.645, cv=None, random_state=0):
    """ε = υ · std(residuals) of the regressor trained with ε = 0.

    With υ = 1.645 (1.96) about 90% (95%) of Gaussian residuals fall inside the tube.

    Parameters
    ----------
    estimator : regressor with an ``epsilon`` parameter (e.g.
        :class:`structsvm.svm.PegasosRegressor`)
    upsilon : float, default=1.645
    cv : int, optional
        Use k-fold out-of-fold residuals instead of training residuals.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.svm import PegasosRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(300, 1); y = 3 * X.ravel() + 0.1 * rng.randn(300)
    >>> eps = epsilon_from_residuals(PegasosRegressor(C=10, random_state=0), X, y)
    >>> bool(0.12 < eps < 0.2)
    True
    """
    if not (np.isscalar(upsilon) and upsilon > 0):
        raise ValueError(f"upsilon must be a number > 0, got {upsilon!r}")
    est = clone(estimator).set_params(epsilon=0.0)
    y = np.asarray(y, dtype=float)
    if cv is None:
        resid = y - est.fit(X, y).predict(X)
    else:
        from sklearn.model_selection import cross_val_predict

        resid = y - cross_val_predict(
            est, X, y, cv=KFold(cv, shuffle=True, random_state=random_state))
    return float(upsilon * np.std(resid))
