"""The sequential dual method for multiclass (Crammer-Singer) SVMs, certified.

For one-hot class blocks, Φ(x, y) = x ⊗ e_y, the structural SVM with margin
rescaling is Crammer & Singer's multiclass SVM with a loss table Δ(y, k):

    min_W  ½ Σ_k ‖w_k‖² + C Σ_i max_k ( Δ(y_i, k) + w_k·x_i − w_{y_i}·x_i ).

Its dual, written with β_ik (β_ik = −α_ik for k ≠ y_i, β_iy_i = Σ_{k≠y_i} α_ik):

    max_β  D(β) = Σ_i ( C Δ_i(y_i) − Σ_k β_ik Δ_i(k) ) − ½ Σ_k ‖w_k‖²,
    w_k = Σ_i β_ik x_i,   Σ_k β_ik = 0,   β_ik ≤ 0 (k ≠ y_i),   β_iy_i ≤ C,

which is D(α) = Σ α·Δ − ½‖w‖² of the structural dual (the null output's mass sits on
y_i). Every example's block is a K-variable problem solved exactly in O(K log K)
(:mod:`._multiclass_cd_jit`), so a pass visits each example once, reads its class
scores once and writes only the weights of classes whose β changed (Keerthi et al.
2008: liblinear's Crammer-Singer solver). Classes at their bound whose gradient is below
every free one are shrunk (skipped until the next certification), examples left with
their own class only likewise.

Training stops on the certified relative duality gap: after a pass whose block gaps
(as seen during the pass) sum to ≤ ``tol`` × the estimated primal, and at least every
50 passes, w is recomputed exactly as Xᵀβ, all class scores at that w give the exact
primal P(w) = ½‖w‖² + C Σ_i ξ_i(w), and training stops when P(w) − D(β) ≤ tol × P(w);
otherwise every shrunk class and example becomes active again.

References
----------
S. S. Keerthi, S. Sundararajan, K.-W. Chang, C.-J. Hsieh, C.-J. Lin. A sequential dual
method for large scale multi-class linear SVMs. KDD 2008.
K. Crammer, Y. Singer. On the algorithmic implementation of multiclass kernel-based
vector machines. JMLR 2, 2001.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops
from ..protocols import LearnerBase, LearnerResult, capability

# the learners that solve any problem (Frank-Wolfe: with margin rescaling), by name:
# importing them here would tie this module to every learner's imports
_GENERAL = ("dual_cd", "frank_wolfe", "n_slack", "one_slack", "partitioned_cd",
            "pegasos", "perceptron")

__all__ = ["MulticlassDualCD", "multiclass_cd_refusal"]

# default cap on passes: a pass over a small problem costs microseconds, and small
# ill-conditioned ones need thousands (40 overlapping 3-d blobs at C = 1: 1,750 passes
# to a certified 5e-4; LinearSVC(crammer_singer) 2,712 iterations to its tol 1e-4)
_MAX_PASSES = 10_000
_CERTIFY_EVERY = 50  # a certification at least every this many passes
# a dense X with fewer non-zeros than this fraction is read as CSR (12 bytes per stored
# entry against 8 per dense one: no more memory, and shorter rows; digits: 0.06 s vs 0.07)
_DENSE_AS_CSR = 2 / 3
_UNSHRINK_EVERY = 5  # every this many passes one over every example and class


def multiclass_cd_refusal(feature_map, decoder, loss, rescaling="margin"):
    """Why :class:`MulticlassDualCD` cannot solve a problem (None when it can).

    It solves one-hot multiclass problems: a fitted map that describes itself as
    one-hot class blocks (capability ``has_class_blocks``, e.g.
    :class:`~structsvm.structures.multiclass.features.MulticlassFeatures` without class attributes), an exact
    decoder (the map's own default decoder or exhaustive enumeration), margin
    rescaling (or slack rescaling with the zero-one loss, the same problem) and a
    finite loss table Δ(y, k) ≥ 0. (Constraints on w are refused by the estimator, as
    for every learner without ``accepts_constraints``.)

    Parameters
    ----------
    feature_map : FeatureMap
        The fitted map.
    decoder : Decoder
    loss : Loss
    rescaling : {"margin", "slack"}, default="margin"

    Returns
    -------
    str or None
        A sentence naming what does not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures import MulticlassFeatures
    >>> from structsvm.structures import get_decoder
    >>> from structsvm.structures import get_loss
    >>> X, Y = np.eye(2), ["a", "b"]
    >>> fm = MulticlassFeatures().fit(X, Y)
    >>> multiclass_cd_refusal(fm, get_decoder("argmax"), get_loss("zero_one")) is None
    True
    >>> fm = MulticlassFeatures(attributes=np.eye(2)).fit(X, Y)
    >>> multiclass_cd_refusal(fm, get_decoder("argmax"), get_loss("zero_one"))
    'it needs one-hot class blocks (MulticlassFeatures without attributes)'
    """
    from ..structures.decoders import get_decoder

    blocks = feature_map.class_blocks(None, loss) \
        if capability(feature_map, "has_class_blocks") else None
    if blocks is None:
        return "it needs one-hot class blocks (MulticlassFeatures without attributes)"
    own = get_decoder(type(feature_map).default_decoder)
    if not (decoder.func is own.func or decoder.structure == "any"):
        return (f"it decodes exactly by itself; decoder {decoder.name!r} is neither "
                f"{own.name!r} nor exhaustive")
    table = np.asarray(blocks.loss_table, dtype=float)
    if not np.all(np.isfinite(table)) or np.any(table < 0):
        return "its loss table Δ(y, k) must be finite and >= 0"
    if rescaling == "slack":
        if not np.array_equal(table, 1.0 - np.eye(table.shape[0])):
            return ("slack rescaling is the same problem only with the zero-one loss; "
                    "use rescaling='margin'")
    elif rescaling != "margin":
        return f"unknown rescaling {rescaling!r}"
    return None


class MulticlassDualCD(LearnerBase, BaseEstimator):
    """Sequential dual method for Crammer-Singer multiclass SVMs, certified.

    One pass visits every example once, in random order, and solves its whole K-class
    block of the dual exactly (a sort of K numbers); only the weights of classes
    whose dual variables changed are written. ``max_iter`` counts passes (default
    10000); ``tol`` is the certified relative duality gap (P(w) − D(β)) / P(w) at which
    training stops, P(w) computed from all class scores at the returned w.

    Parameters
    ----------
    shrinking : bool, default=True
        Skip classes (and examples) at their bounds whose gradient says they will stay
        there, until the next certification (which always uses every example and
        class).

    Notes
    -----
    The objective (margin rescaling, loss table Δ, one-hot blocks w_k):

    .. math::

        \\min_w \\tfrac12 \\sum_k \\|w_k\\|^2 + C \\sum_i \\max_k \\big(\\Delta(y_i, k)
        + w_k \\cdot x_i - w_{y_i} \\cdot x_i\\big)

    The returned w is the one certified (recomputed exactly from the dual
    variables), so ``objective`` is P(w) and ``duality_gap`` bounds P(w) − P(w*), also
    when ``max_iter`` stops training. ``objective_curve`` holds P at each
    certification. ``extra`` reports ``passes``, ``certifications`` and
    ``active_classes`` (mean per example after the last pass). The learner runs in one
    thread (the problem's ``n_jobs`` is not used) and never calls the oracle.

    Warm start: with ``warm_start=True`` the estimator hands back the previous fit's
    dual variables; when they fit the problem (same examples and labels), training
    continues from them, scaled by C_new / C_old when C changed (still feasible).
    Otherwise it starts from β = 0 (a weight vector alone is no dual point). A
    checkpoint stores the same state (β, the labels and C), and a run resumed from
    it certifies that dual point first, then continues.

    Only problems :func:`multiclass_cd_refusal` accepts: a ValueError otherwise.

    References
    ----------
    S. S. Keerthi, S. Sundararajan, K.-W. Chang, C.-J. Hsieh, C.-J. Lin. A sequential
    dual method for large scale multi-class linear SVMs. KDD 2008.
    K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
    kernel-based vector machines. JMLR 2, 2001.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures import MulticlassFeatures
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> m = structsvm.fit(X, ["a", "b", "a"], feature_map=MulticlassFeatures(),
    ...                   learner="multiclass_cd", C=10.0, tol=1e-8)
    >>> m.converged_, round(m.objective_, 6), m.learner_.name
    (True, 0.61, 'multiclass_cd')
    """

    name: ClassVar[str] = "multiclass_cd"
    compiled_loops: ClassVar[tuple] = ("structsvm.learners._multiclass_cd_jit:sweep",)
    certifies_gap: ClassVar[bool] = True
    resumable: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = True

    def __init__(self, shrinking=True):
        self.shrinking = shrinking

    @staticmethod
    def refusal(feature_map, decoder, loss, rescaling="margin"):
        """Why this learner cannot solve such a problem, or None
        (:func:`multiclass_cd_refusal`)."""
        return multiclass_cd_refusal(feature_map, decoder, loss, rescaling)

    @staticmethod
    def check_state(state):
        """Raise ValueError naming the value when a saved state of this learner (a
        checkpoint's: ``beta``, ``labels``, ``C``) does not hold together: β must be
        a finite (n, K) array, the labels n classes in [0, K), C a finite number > 0
        and β a dual point for them (β_ik ≤ 0 off the label, β_iy_i = −Σ_{k≠y_i}
        β_ik ≤ C)."""
        if not isinstance(state, dict):
            return
        beta, labels, C = state.get("beta"), state.get("labels"), state.get("C")
        if not isinstance(beta, np.ndarray) or beta.ndim != 2 \
                or beta.dtype.kind not in "iuf" or not np.all(np.isfinite(beta)):
            raise ValueError("multiclass_cd state: beta must be a finite 2-D array")
        n, K = beta.shape
        if not isinstance(labels, np.ndarray) or labels.shape != (n,) \
                or labels.dtype.kind not in "iu" or (n and (labels.min() < 0
                                                            or labels.max() >= K)):
            raise ValueError(f"multiclass_cd state: labels must hold {n} classes in "
                             f"[0, {K})")
        if isinstance(C, bool) or not isinstance(C, (int, float)) or not 0 < C < np.inf:
            raise ValueError(f"multiclass_cd state: C is {C!r:.40}; expected a finite "
                             "number > 0")
        y = labels.astype(np.int64)
        others = np.array(beta, dtype=float)
        others[np.arange(n), y] = 0.0
        own = beta[np.arange(n), y]
        tol = 1e-9 * max(float(C), 1.0)
        if np.any(others > tol) or np.any(own > C + tol) \
                or not np.allclose(own, -others.sum(axis=1), atol=tol):
            raise ValueError("multiclass_cd state: beta is no dual point for its labels "
                             "and C")

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None):
        """Passes until the certified gap ≤ ``tol`` × primal, or ``max_iter`` passes.

        ``random_state=None`` uses the fixed seed 0 (the order of the examples changes
        the path, not the certified optimum; the default call gives the same model
        every time).

        Raises
        ------
        ValueError
            When the problem is not one this learner solves (naming the learners
            that can).
        """
        jit = loops("structsvm.learners._multiclass_cd_jit")

        why = multiclass_cd_refusal(problem.feature_map, problem.decoder, problem.loss,
                                    problem.rescaling)
        if why is not None:
            others = sorted(n for n in _GENERAL if not (
                n == "frank_wolfe" and problem.rescaling != "margin"))
            raise ValueError(f"learner={self.name!r} cannot solve this problem: {why}. "
                             f"Learners that can: {', '.join(others)}")
        rng = check_random_state(0 if random_state is None else random_state)
        max_iter = _MAX_PASSES if max_iter is None else int(max_iter)
        C = float(problem.C)
        blocks = problem.feature_map.class_blocks(problem.Xe, problem.loss)
        X, dense = _as_rows(blocks.inputs)
        indptr, indices, data = X
        n = problem.n_samples
        table = np.asarray(blocks.loss_table, dtype=float)
        K, d = table.shape[0], blocks.inputs.shape[1]
        Y = np.asarray(problem.Ye, dtype=np.int64).reshape(n)
        sqn = _row_sqnorms(indptr, data, n)
        beta = _start(state, Y, C, K)
        resumed = bool(beta.any())  # a previous dual point: certify it first
        zero = sqn <= 0.0
        if zero.any():  # x_i = 0: w ignores the example; its block's optimum is a vertex
            beta[zero] = _vertex(Y[zero], table, C)
        Xm = data.reshape(n, d) if dense else sp.csr_matrix((data, indices, indptr),
                                                            shape=(n, d))
        WT = np.zeros((d, K))
        WT[...] = weights_from_beta(Xm, beta)
        cls = np.tile(np.arange(K, dtype=np.int32), (n, 1))
        cls[np.arange(n), Y] = 0
        cls[:, 0] = Y  # the own class first, always active
        n_act = np.full(n, K, dtype=np.int32)
        active = np.flatnonzero(~zero)
        gaps = np.zeros(n)
        const = C * float(table[Y, Y].sum())
        shrink = bool(self.shrinking)
        curve, gap, converged, t0 = [], np.inf, False, time.perf_counter()
        passes = certs = last = 0
        dual = const - float(np.sum(beta * table[Y])) - 0.5 * float(np.dot(WT.ravel(),
                                                                           WT.ravel()))
        full = True  # the next pass sees every example and class
        est = float("nan")
        while True:
            if not resumed:
                if full:
                    n_act[:] = K
                    active = np.flatnonzero(~zero)
                order = rng.permutation(active).astype(np.int64)
                _, gain = jit.sweep(order, indptr, indices, data, dense, Y, sqn, table, C,
                                    WT, beta, cls, n_act, shrink, gaps)
                passes += 1
                dual += gain  # exact up to rounding; recomputed at each certification
                # the block gaps of a pass over every class estimate the duality gap (a
                # pass after shrinking misses the shrunk ones)
                trusted, full = full or not shrink, shrink and passes % _UNSHRINK_EVERY == 0
                if shrink:
                    active = active[n_act[active] > 1]
                est = float(gaps.sum())
                if not ((trusted and est <= tol * max(dual + est, 1e-300))
                        or passes - last >= _CERTIFY_EVERY or passes >= max_iter):
                    continue
            resumed = False
            # certification: w exactly from β, every class score at that w
            certs, last = certs + 1, passes
            WT[...] = weights_from_beta(Xm, beta)
            slack, gaps[:] = primal_terms(Xm, WT, Y, table, beta, C)  # exact block gaps
            wsq = float(np.dot(WT.ravel(), WT.ravel()))
            primal = 0.5 * wsq + C * slack
            dual = const - float(np.sum(beta * table[Y])) - 0.5 * wsq
            gap = max(0.0, primal - dual)
            curve.append(primal)
            if callback is not None:
                callback(dict(round=passes, w=np.ascontiguousarray(WT.T).ravel(),
                              objective=primal, gap=gap, gap_estimate=est,
                              time=time.perf_counter() - t0,
                              state=lambda: dict(beta=beta.copy(), labels=Y.copy(), C=C)))
            if gap <= tol * max(primal, 1e-300):
                converged = True
                break
            if passes >= max_iter:
                break
            full = True
        w = np.ascontiguousarray(WT.T).ravel()  # class-major: w[k * d + j]
        return LearnerResult(
            w=w, objective=curve[-1], objective_curve=curve, n_iter=passes,
            duality_gap=float(gap), converged=converged,
            extra=dict(passes=passes, certifications=certs,
                       active_classes=float(n_act[~zero].mean()) if (~zero).any() else 0.0,
                       state=dict(beta=beta, labels=Y, C=C), light_state=None))


def _as_rows(Xe):
    """((indptr, indices, data), dense) of the encoded inputs, without copying a
    canonical CSR matrix or a C-contiguous float array (a dense one that is mostly
    zeros is converted to CSR: its rows are then shorter)."""
    if sp.issparse(Xe):
        Xs = Xe if Xe.format == "csr" else sp.csr_matrix(Xe)
        if not Xs.has_canonical_format:
            Xs = Xs.copy()
            Xs.sum_duplicates()
        return (Xs.indptr.astype(np.int64, copy=False), Xs.indices,
                np.asarray(Xs.data, dtype=float)), False
    A = np.ascontiguousarray(Xe, dtype=float)
    n, d = A.shape
    if np.count_nonzero(A) < _DENSE_AS_CSR * A.size:  # many zeros: rows as CSR are shorter
        return _as_rows(sp.csr_matrix(A))
    return (np.arange(n + 1, dtype=np.int64) * d, np.zeros(1, dtype=np.int32),
            A.ravel()), True


def weights_from_beta(X, beta):
    """Wᵀ = Xᵀβ: column k is w_k = Σ_i β_ik x_i (``X`` an (n, d) array or CSR
    matrix, ``beta`` (n, K)); a (d, K) array."""
    return np.asarray(X.T @ beta)


def primal_terms(X, WT, Y, table, beta, C):
    """Σ_i ξ_i at w = Wᵀ and the exact block gaps, from every class score.

    With s_ik = w_k·x_i and G_ik = Δ(y_i, k) + s_ik: ξ_i = max_k G_ik − s_iy_i and
    gap_i = C (max_k G_ik − G_iy_i) + Σ_k β_ik G_ik, whose sum is P(w) − D(β).

    Returns
    -------
    slack : float
        Σ_i ξ_i.
    gaps : ndarray of shape (n,)
    """
    S = np.asarray(X @ WT)
    rows = np.arange(S.shape[0])
    G = table[Y] + S
    top = G.max(axis=1)
    own = S[rows, Y]
    slack = float(np.sum(top - own))
    gaps = C * (top - G[rows, Y]) + np.einsum("ik,ik->i", beta, G)
    return slack, gaps


def _row_sqnorms(indptr, data, n):
    owner = np.repeat(np.arange(n), np.diff(indptr))
    return np.bincount(owner, weights=data * data, minlength=n).astype(float)


def _vertex(y, table, C):
    """β of an example with x = 0: mass C on its largest loss."""
    K = table.shape[0]
    out = np.zeros((len(y), K))
    top = np.argmax(table[y], axis=1)
    rows = np.arange(len(y))
    better = table[y, top] > table[y, y]
    out[rows[better], top[better]] = -C
    out[rows[better], y[better]] = C
    return out


def _start(state, Y, C, K):
    """β to start from: the previous fit's, when it is feasible for these labels."""
    n = len(Y)
    old_C = state.get("C") if isinstance(state, dict) else None
    if isinstance(old_C, float) and old_C > 0 and isinstance(state.get("beta"), np.ndarray):
        beta = state["beta"]
        if beta.shape == (n, K) and np.array_equal(state.get("labels"), Y):
            if C == old_C and _feasible(beta, Y, C):
                return np.array(beta, dtype=float)  # the same dual point, exactly
            beta = beta * (C / old_C)
            beta[np.arange(n), Y] = 0.0
            own = -beta.sum(axis=1)  # β_iy_i = Σ_{k≠y_i} α_ik
            if np.all(beta <= 0) and np.all(own <= C * (1 + 1e-12)):
                beta[np.arange(n), Y] = np.minimum(C, own)
                return beta
    return np.zeros((n, K))


def _feasible(beta, Y, C):
    """β is a dual point for labels Y and this C (to rounding)."""
    n = len(Y)
    own = beta[np.arange(n), Y]
    others = beta.copy()
    others[np.arange(n), Y] = 0.0
    return bool(np.all(others <= 0) and np.all(own <= C * (1 + 1e-12))
                and np.allclose(beta.sum(axis=1), 0.0, atol=1e-9 * max(C, 1.0)))
