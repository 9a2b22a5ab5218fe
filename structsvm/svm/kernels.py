r"""Kernel functions, output embeddings Λ and joint kernels for the dual models.

Input kernels :math:`k(x, x')`: linear, polynomial, Gaussian RBF (width σ or
γ = 1/(2σ²)) and "precomputed" (the caller passes Gram matrices).

Joint kernels. With the joint feature map :math:`\Phi(x, y) = \phi(x) \otimes
\Lambda(y)` of :class:`structsvm.structures.multiclass.features.MulticlassFeatures`,

.. math::

    k\bigl((x, y), (x', y')\bigr) = \Phi(x, y)^\top \Phi(x', y')
    = k(x, x')\, \Lambda(y)^\top \Lambda(y'),

so a dual model only needs the input Gram matrix and the small class-similarity
matrix :math:`L = \Lambda\Lambda^\top`. Λ is the identity for plain multiclass
(:func:`onehot_embedding`), a matrix of class attributes (e.g. TF vectors of class
descriptions), or the stacked per-level indicators of a taxonomy path
(:func:`taxonomy_embedding`), where :math:`\Lambda(y)^\top\Lambda(y')` counts the
tree nodes two classes share.

The dual estimators built on these kernels live in :mod:`structsvm.svm`:
:class:`~structsvm.svm.KernelPegasosClassifier` (dual Pegasos) and
:class:`~structsvm.svm.KernelCuttingPlaneSVM` (cutting plane on the joint-kernel
dual QP).
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array, check_random_state

__all__ = [
    "KERNELS", "linear_kernel", "polynomial_kernel", "rbf_kernel", "pairwise_kernel",
    "sigma_to_gamma", "gamma_to_sigma", "resolve_gamma", "median_sigma", "onehot_embedding",
    "taxonomy_embedding", "joint_kernel",
]

KERNELS = ("linear", "poly", "rbf", "precomputed")


def _as_matrix(X, name):
    return check_array(X, accept_sparse="csr", dtype=np.float64, input_name=name)


def _sq_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def linear_kernel(X, Y=None):
    """k(x, x') = xᵀx'.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_x, n_features)
    Y : {array-like, sparse matrix} of shape (n_y, n_features), optional
        Defaults to X.

    Returns
    -------
    ndarray of shape (n_x, n_y)

    Examples
    --------
    >>> linear_kernel([[1., 2.]], [[3., 4.], [0., 1.]]).tolist()
    [[11.0, 2.0]]
    """
    X = _as_matrix(X, "X")
    Y = X if Y is None else _as_matrix(Y, "Y")
    K = X @ Y.T
    return K.toarray() if sp.issparse(K) else np.asarray(K)


def polynomial_kernel(X, Y=None, degree=3, gamma=1.0, coef0=1.0):
    """k(x, x') = (γ xᵀx' + coef0)^degree.

    Examples
    --------
    >>> polynomial_kernel([[1., 1.]], [[1., 2.]], degree=2).tolist()
    [[16.0]]
    """
    if not (isinstance(degree, numbers.Integral) and degree >= 1):
        raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
    return (gamma * linear_kernel(X, Y) + coef0) ** degree


def sigma_to_gamma(sigma):
    """γ = 1/(2σ²) of the Gaussian kernel exp(−‖x − x'‖²/(2σ²))."""
    return 1.0 / (2.0 * float(sigma) ** 2)


def gamma_to_sigma(gamma):
    """σ = 1/√(2γ), the inverse of :func:`sigma_to_gamma`."""
    return 1.0 / np.sqrt(2.0 * float(gamma))


def rbf_kernel(X, Y=None, sigma=None, gamma=None):
    r"""Gaussian kernel :math:`k(x, x') = \exp(-\lVert x - x'\rVert^2 / (2\sigma^2))`.

    Parameters
    ----------
    X, Y : {array-like, sparse matrix}
    sigma : float, optional
        Kernel width σ > 0.
    gamma : float, optional
        γ = 1/(2σ²) > 0 instead of σ. When neither is given, σ is the median
        pairwise distance of X (:func:`median_sigma`).

    Returns
    -------
    ndarray of shape (n_x, n_y)

    Examples
    --------
    >>> import numpy as np
    >>> K = rbf_kernel([[0., 0.]], [[0., 0.], [1., 0.]], sigma=1.0)
    >>> np.allclose(K, [[1.0, np.exp(-0.5)]])
    True
    """
    X = _as_matrix(X, "X")
    Y = X if Y is None else _as_matrix(Y, "Y")
    g = resolve_gamma(sigma, gamma, X)
    d2 = _sq_norms(X)[:, None] + _sq_norms(Y)[None, :] - 2.0 * linear_kernel(X, Y)
    return np.exp(-g * np.maximum(d2, 0.0))


def resolve_gamma(sigma, gamma, X=None):
    """γ from exactly one of σ and γ (or the median heuristic on X when both are None)."""
    if sigma is not None and gamma is not None:
        raise ValueError(f"give sigma or gamma, not both (sigma={sigma!r}, gamma={gamma!r})")
    if sigma is not None:
        if not (isinstance(sigma, numbers.Real) and np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
        return sigma_to_gamma(sigma)
    if gamma is not None:
        if not (isinstance(gamma, numbers.Real) and np.isfinite(gamma) and gamma > 0):
            raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
        return float(gamma)
    if X is None:
        raise ValueError("rbf kernel: give sigma or gamma")
    return sigma_to_gamma(median_sigma(X))


def median_sigma(X, max_samples=1000, random_state=0):
    """Median pairwise Euclidean distance of the rows of X (the "median heuristic").

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    max_samples : int, default=1000
        Rows used (a random subset when X has more).
    random_state : int, RandomState instance or None, default=0

    Returns
    -------
    float
        The median over distinct pairs (1.0 if all rows coincide).

    Examples
    --------
    >>> median_sigma([[0., 0.], [3., 4.], [6., 8.]])
    5.0
    """
    X = _as_matrix(X, "X")
    if X.shape[0] > max_samples:
        idx = check_random_state(random_state).choice(X.shape[0], max_samples, replace=False)
        X = X[idx]
    sq = _sq_norms(X)
    d2 = sq[:, None] + sq[None, :] - 2.0 * linear_kernel(X)
    d = np.sqrt(np.maximum(d2[np.triu_indices(X.shape[0], k=1)], 0.0))
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


def pairwise_kernel(X, Y=None, kernel="rbf", *, sigma=None, gamma=None, degree=3,
                    coef0=1.0):
    """Gram matrix k(X, Y) for a kernel named in :data:`KERNELS` (or a callable).

    With ``kernel="precomputed"`` X already is the Gram matrix k(X, Y) and is
    returned as a dense array. A callable is called as ``kernel(X, Y)``.

    Examples
    --------
    >>> pairwise_kernel([[1., 0.]], [[2., 0.]], kernel="poly", degree=2).tolist()
    [[9.0]]
    """
    if callable(kernel):
        return np.asarray(kernel(X, X if Y is None else Y), dtype=float)
    if kernel == "linear":
        return linear_kernel(X, Y)
    if kernel == "poly":
        return polynomial_kernel(X, Y, degree=degree,
                                 gamma=1.0 if gamma is None else gamma, coef0=coef0)
    if kernel == "rbf":
        if sigma is None and gamma is None:
            raise ValueError("kernel='rbf' needs sigma or gamma (see median_sigma)")
        return rbf_kernel(X, Y, sigma=sigma, gamma=gamma)
    if kernel == "precomputed":
        K = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
        if K.ndim != 2:
            raise ValueError(f"kernel='precomputed' needs a 2-D Gram matrix, got shape "
                             f"{K.shape}")
        return K
    raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")


# --------------------------------------------------------------------- output side
def onehot_embedding(n_classes):
    """Λ = I: the plain multiclass map, Λ(y)ᵀΛ(y') = [y = y'].

    Examples
    --------
    >>> onehot_embedding(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return np.eye(int(n_classes))


def taxonomy_embedding(labels, sep="."):
    """Λ of a taxonomy: one indicator per tree node on the class's root-to-leaf path.

    A class is a path y = (y_1, ..., y_d) in a tree (given as a tuple or a string
    like ``"comp.sys.mac"`` split at ``sep``); Λ(y) stacks the per-level indicators
    I[y_l = v] over the nodes v of level l, so Λ(y)ᵀΛ(y') is the number of levels
    on which the two paths agree from the root (their common prefix length).

    Parameters
    ----------
    labels : sequence of str or tuple
        The classes (duplicates are ignored; order of first appearance is kept).
    sep : str, default="."
        Level separator of string labels.

    Returns
    -------
    classes : list
        The distinct labels, in order (row k of Λ is ``classes[k]``).
    Lambda : ndarray of shape (n_classes, n_nodes)
    nodes : list of tuple
        The tree node (path prefix) of each column.

    Examples
    --------
    >>> classes, L, nodes = taxonomy_embedding(["a.x", "a.y", "b.z"])
    >>> (L @ L.T).tolist()
    [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
    """
    classes = list(dict.fromkeys(labels))
    paths = []
    for k, c in enumerate(classes):
        path = tuple(c.split(sep)) if isinstance(c, str) else tuple(c)
        if not path:
            raise ValueError(f"class {k} ({c!r}) is an empty path")
        paths.append(path)
    nodes = list(dict.fromkeys(p[:l + 1] for p in paths for l in range(len(p))))
    col = {node: j for j, node in enumerate(nodes)}
    Lam = np.zeros((len(classes), len(nodes)))
    for k, p in enumerate(paths):
        for l in range(len(p)):
            Lam[k, col[p[:l + 1]]] = 1.0
    return classes, Lam, nodes


def joint_kernel(Kx, y_left, y_right, Lambda):
    """Joint kernel matrix k((x_i, y_i), (x'_j, y'_j)) = Kx[i, j] · Λ(y_i)ᵀΛ(y'_j).

    Parameters
    ----------
    Kx : ndarray of shape (n, m)
        Input kernel between the left and right inputs.
    y_left : array-like of int, shape (n,)
        Encoded outputs (row indices of Λ) of the left pairs.
    y_right : array-like of int, shape (m,)
    Lambda : ndarray of shape (n_classes, n_attributes)

    Returns
    -------
    ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> joint_kernel(np.ones((2, 2)), [0, 1], [0, 1], np.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    Kx = np.asarray(Kx, dtype=float)
    Lam = np.asarray(Lambda, dtype=float)
    yl = np.asarray(y_left, dtype=np.intp)
    yr = np.asarray(y_right, dtype=np.intp)
    if Kx.shape != (len(yl), len(yr)):
        raise ValueError(f"Kx has shape {Kx.shape} but there are {len(yl)} left and "
                         f"{len(yr)} right outputs")
    return Kx * (Lam[yl] @ Lam[yr].T)

