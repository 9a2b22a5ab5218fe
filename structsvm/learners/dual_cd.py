"""Dual block-coordinate descent with per-example caches of outputs (DCD-SSVM).

The dual of ½‖w‖² + C Σ_i ξ_i (margin rescaling) has one simplex per example,
α_iy ≥ 0, Σ_y α_iy ≤ C (the rest, α_i,null = C − Σ_y α_iy, sits on y_i, whose
ψ_i(y_i) = 0 and Δ = 0):

    D(α) = Σ_i Σ_y α_iy Δ_i(y) − ½‖w‖²,     w = Σ_i Σ_y α_iy ψ_i(y),
    ψ_i(y) = Φ(x_i, y_i) − Φ(x_i, y).

Each example keeps a small cache of outputs that were once its most violated (their
sparse rows ψ_i(y), losses Δ_i(y), dual variables α_iy and the block's Gram matrix).
Training alternates

1. a sweep: the examples in random order, in ``n_batches`` batches; each batch is
   decoded by ONE batched oracle call at the current w, and every answer more
   violated than everything its example has cached joins the cache, the example's
   block being re-optimised at once (so later batches see the updated w); then the
   blocks of a 1/``n_batches`` slice of the examples with cached outputs are
   re-optimised over their caches (so a sweep also makes one pass over the cached
   outputs, spread between its oracle calls). The block gaps seen on the way,
   C·max(0, max_y g_iy) − Σ_y α_iy g_iy with g_iy = Δ_i(y) − w·ψ_i(y), give a
   (stale) estimate of the duality gap;
2. up to ``inner_passes`` passes over the cached outputs only (no oracle): per
   example, exact pairwise coordinate steps between the outputs with the largest and
   smallest g_iy,

       t = min( (g_up − g_down) / ‖ψ_up − ψ_down‖², α_down ),

   each the closed-form maximiser of D along that direction, with w updated
   sparsely. Passes stop when the cached gap (the same sum over cached outputs) falls
   below ``inner_tol`` × the gap; examples whose cached gap was negligible in a pass
   are skipped in the next (gap-based selection of examples). The steps of a sweep
   are the same pairwise steps;
3. when the estimate says the gap is below ``tol`` (or every 10 passes, and always on
   the last pass), a certifying pass: w is recomputed as Σ α ψ (so D(α) is exact),
   ONE batched oracle call for all examples at that w gives the exact primal
   P(w) = ½‖w‖² + C Σ_i max(0, max_y g_iy), and so the certified gap
   P(w) − D(α) ≥ P(w) − P(w*). Training stops when it is ≤ ``tol`` × P(w); otherwise
   its answers are offered to the caches like a sweep's.

A full cache drops its longest-unused output with α = 0; if every cached output is
in use, the two with the smallest α are merged into their convex combination (the
dual point, w and D(α) are unchanged: the convex hull of an example's outputs is in
its simplex). Slack rescaling is the same dual with rows Δ_i(y) ψ_i(y).

References
----------
M.-W. Chang, W.-t. Yih. Dual coordinate descent algorithms for efficient large margin
structured prediction. TACL 1, 2013.
N. Shah, V. Kolmogorov, C. H. Lampert. A multi-plane block-coordinate Frank-Wolfe
algorithm for training structural SVMs with a costly max-oracle. CVPR 2015.
A. Osokin, J.-B. Alayrac, I. Lukasewitz, P. Dokania, S. Lacoste-Julien. Minding the
gaps for block Frank-Wolfe optimization of structured SVMs. ICML 2016.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._compiled import loops, warmup
from ..protocols import LearnerBase, LearnerResult
from ._cache import problem_fingerprint
from ._dual_cd_pool import RowPool

# the loops (_dual_cd_jit) are imported where they run: importing the learners
# imports no numba

__all__ = ["DualCD"]

_CERTIFY_EVERY = 10  # a certifying pass at least every this many oracle passes
_EPS = 1e-12  # relative tolerance of a pairwise step (g_up − g_down ≤ eps (1 + |g_up|))
_UNWEIGHTED = np.empty(0)  # ω of the compiled steps: none (the plain ½‖w‖²)


class DualCD(LearnerBase, BaseEstimator):
    """Dual coordinate descent over per-example caches (DCD-SSVM), certified.

    ``max_iter`` counts oracle passes over the data (sweeps and certifying passes;
    default 200); ``tol`` is the certified relative duality gap (P(w) − D(α)) / P(w)
    at which training stops, measured by a full oracle pass at the returned w (never
    from cached outputs).

    Parameters
    ----------
    cache_size : int, default=16
        Outputs kept per example (≥ 1). A new most-violated output joins when it is
        more violated than every cached one; a full cache drops an unused output or
        merges the two least used into one (exact). 1 is block Frank-Wolfe with an
        exact two-output line search (the cache "off").
    n_batches : int, default=8
        Oracle calls per sweep (each decodes n / n_batches examples in one batch at
        the then current w: fresher answers than one call for all).
    inner_passes : int, default=10
        At most this many passes over the cached outputs between two oracle passes,
        besides the one a sweep makes between its batches (0: only that one, the
        default for sequences, measured in docs/learners.md).
    inner_tol : float, default=0.1
        Cached passes stop when the gap over cached outputs is below ``inner_tol`` ×
        the last certified duality gap (the cache is then worth less than a new
        oracle pass).

    Notes
    -----
    The returned ``w`` is the one the last full oracle pass certified, so
    ``objective`` is exactly P(w) and ``duality_gap`` bounds P(w) − P(w*), also when
    ``max_iter`` stops training; ``objective_curve`` holds P at each certifying pass.
    ``extra`` reports ``oracle_passes``, ``certified_passes``, ``inner_passes`` and
    ``cached_outputs`` (mean per example at the end). Memory: the cached rows (at most
    ``cache_size`` + 1 per example) and a (cache_size + 1)² Gram block per example.

    State: ``extra["state"]`` (kept by the estimator with ``warm_start=True``) and the
    state a checkpoint stores hold the caches and their dual variables (arrays). Given
    back as ``state`` on the same examples with the same ``cache_size``, training
    continues from that dual point (α scaled by C_new / C_old when C is smaller, so
    it stays feasible), with a certifying pass first. Otherwise a non-zero ``w0``
    (warm start) cannot be written as a dual point, so training starts from α = 0;
    the most violated outputs under ``w0`` seed the caches.

    References
    ----------
    M.-W. Chang, W.-t. Yih. Dual coordinate descent algorithms for efficient large
    margin structured prediction. TACL 1, 2013.
    N. Shah, V. Kolmogorov, C. H. Lampert. A multi-plane block-coordinate Frank-Wolfe
    algorithm for training structural SVMs with a costly max-oracle. CVPR 2015.
    A. Osokin et al. Minding the gaps for block Frank-Wolfe optimization of structured
    SVMs. ICML 2016.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures import MulticlassFeatures
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> m = structsvm.fit(X, ["a", "b", "a"], feature_map=MulticlassFeatures(),
    ...                   learner=DualCD(cache_size=4), C=10.0, tol=1e-8)
    >>> m.converged_, round(m.objective_, 6), m.learner_.name
    (True, 0.61, 'dual_cd')
    """

    name: ClassVar[str] = "dual_cd"
    compiled_loops: ClassVar[tuple] = tuple(
        "structsvm.learners._dual_cd_jit:" + f
        for f in ("insert_rows", "cached_pass", "compact_pool", "weights_from_alpha"))
    certifies_gap: ClassVar[bool] = True
    resumable: ClassVar[bool] = True
    keeps_state: ClassVar[bool] = True

    def __init__(self, cache_size=16, n_batches=8, inner_passes=10, inner_tol=0.1):
        self.cache_size = cache_size
        self.n_batches = n_batches
        self.inner_passes = inner_passes
        self.inner_tol = inner_tol

    def _check(self):
        for name, lo in (("cache_size", 1), ("n_batches", 1), ("inner_passes", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
        if not (isinstance(self.inner_tol, (int, float)) and self.inner_tol >= 0):
            raise ValueError(f"inner_tol must be a number >= 0, got {self.inner_tol!r}")

    @staticmethod
    def check_state(state):
        """Raise ValueError naming the array when a saved state of this learner (a
        checkpoint's) does not hold together (:func:`check_saved_state`)."""
        if isinstance(state, dict) and state.get("learner") == DualCD.name:
            check_saved_state(state)

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None,
              state=None):
        """Run oracle passes until the certified gap ≤ ``tol`` × primal or ``max_iter``.

        ``random_state=None`` uses the fixed seed 0: the order in which examples are
        visited changes the path, not the certified optimum, and the default call of
        the estimator should give the same model every time (as its tags promise).
        ``state`` (a previous result's ``extra["state"]`` or a checkpoint's) continues
        from its dual point when it belongs to this problem.
        """
        self._check()
        rng = check_random_state(0 if random_state is None else random_state)
        max_iter = 200 if max_iter is None else int(max_iter)
        n, C, D = problem.n_samples, float(problem.C), problem.n_features
        fp = problem_fingerprint(problem)
        st = _State.restored(state, n, int(self.cache_size) + 1, D, fp, C)
        certify = st is not None  # a restored dual point: certify it first
        if st is None:
            st = _State(n, int(self.cache_size) + 1, D)
            w = np.zeros(D)
            w0 = np.asarray(w0, dtype=float)
            if np.any(w0 != 0):
                self._offer(problem, st, problem.oracle(w0), w, 0)
        else:
            w = st.weights()
        est = np.full(n, np.inf)           # per-example block gaps, as last seen
        curve, gap, converged, t0 = [], np.inf, False, time.perf_counter()
        passes = inner = last = 0
        while True:
            if certify or passes >= max_iter - 1:
                # certifying pass: every example at one w, exactly Σ α ψ
                w = st.weights()
                v = problem.oracle(w)
                passes += 1
                wsq = float(w @ w)
                primal = 0.5 * wsq + C * float(v.slack.sum())
                gap = max(0.0, primal - (float(np.sum(st.alpha * st.loss)) - 0.5 * wsq))
                curve.append(primal)
                if callback is not None:
                    callback(dict(round=passes, w=w, objective=primal, gap=gap,
                                  n_constraints=int((st.slot >= 0).sum()),
                                  time=time.perf_counter() - t0,
                                  state=lambda: st.saved(fp, C)))
                if gap <= tol * max(primal, 1e-300):
                    converged = True
                    break
                if passes >= max_iter:
                    break
                est[v.idx] = self._offer(problem, st, v, w, passes)
                certify, last = False, passes
            else:
                self._sweep(problem, st, w, rng, est, passes + 1)
                passes += 1
                wsq = float(w @ w)
                dual = float(np.sum(st.alpha * st.loss)) - 0.5 * wsq
                g_est = float(est.sum())
                certify = (g_est <= tol * max(dual + g_est, 1e-300)
                           or passes - last >= _CERTIFY_EVERY)
            inner += self._inner(st, w, C, gap if np.isfinite(gap) else float(est.sum()),
                                 rng)
            st.pool.compact(st.slot)
        return LearnerResult(
            w=w, objective=curve[-1], objective_curve=curve, n_iter=passes,
            duality_gap=float(gap), converged=converged,
            extra=dict(oracle_passes=passes, certified_passes=len(curve),
                       inner_passes=inner,
                       cached_outputs=float((st.slot >= 0).sum() / max(n, 1)),
                       state=st.saved(fp, C, copy=False), light_state=None))

    # ------------------------------------------------------------------ steps
    def _sweep(self, problem, st, w, rng, est, it, C=None, examples=None, omega=None,
               shared=False):
        """The oracle on batches of examples at the current w, each followed by block
        steps over a 1/n_batches slice of the examples with cached outputs.

        ``C`` bounds each example's simplex (default ``problem.C``); ``examples`` maps
        the state's rows to the problem's examples (default: row i is example i);
        ``omega`` weights the quadratic term per feature (see :mod:`._dual_cd_jit`);
        ``shared``: other processes step on w at the same time (atomic additions;
        ``omega`` then only damps the steps, see :mod:`._dual_cd_jit`)."""
        jit = loops("structsvm.learners._dual_cd_jit")

        n = st.slot.shape[0]
        batches = np.array_split(rng.permutation(n), min(n, int(self.n_batches)))
        cached = np.flatnonzero((st.slot >= 0).any(axis=1))
        rng.shuffle(cached)
        slices = np.array_split(cached, len(batches))
        gaps = np.zeros(n)
        p = st.pool
        C = float(problem.C if C is None else C)
        omega = _UNWEIGHTED if omega is None else omega
        for batch, part in zip(batches, slices):
            v = problem.oracle(w, batch if examples is None else examples[batch])
            est[batch] = self._offer(problem, st, v, w, it, C=C, rows=batch, omega=omega,
                                     shared=shared)
            if part.size:
                warmup.wait(jit.cached_pass)
                jit.cached_pass(part, w, p.ind, p.dat, p.start, p.len, st.slot, st.alpha,
                                st.loss, st.gram, C, _EPS, st.steps, gaps, omega,
                                bool(shared))

    def _offer(self, problem, st, v, w, it, C=None, rows=None, omega=None, shared=False):
        """Offer an oracle answer to the caches (block steps); returns block gaps.

        ``rows``: the state's rows of the answer's examples (default ``v.idx``);
        ``omega`` and ``shared`` as for :meth:`_sweep`."""
        jit = loops("structsvm.learners._dual_cd_jit")

        C = float(problem.C if C is None else C)
        psi = sp.csr_matrix(v.psi)
        if problem.rescaling == "slack":  # constraint Δ(1 − w·δΦ) ≤ ξ: row Δ δΦ
            psi = sp.csr_matrix(sp.diags(v.loss) @ psi)
        ids = st.pool.append(psi)
        m = len(ids)
        merges = np.empty((m, 3), dtype=np.int64)
        coefs = np.empty((m, 2))
        est = np.empty(m)
        p = st.pool
        ex = np.asarray(v.idx if rows is None else rows, dtype=np.int64)
        warmup.wait(jit.insert_rows)
        jit.insert_rows(ex, ids, np.asarray(v.loss, dtype=float), w, p.ind, p.dat,
                        p.start, p.len, st.slot, st.alpha, st.loss, st.gram, st.stamp, C,
                        _EPS, st.steps, it, merges, coefs, est,
                        _UNWEIGHTED if omega is None else omega, bool(shared))
        k = np.flatnonzero(merges[:, 0] >= 0)
        if k.size:  # rows of merged slots: convex combinations of two cached rows
            st.slot[ex[k], merges[k, 0]] = p.append(p.rows(merges[k, 1:], coefs[k]))
        return est

    def _inner(self, st, w, C, gap, rng, omega=None):
        """Passes over cached outputs; returns how many were made."""
        jit = loops("structsvm.learners._dual_cd_jit")

        order = np.flatnonzero((st.slot >= 0).any(axis=1))
        rng.shuffle(order)
        gaps = np.zeros(st.slot.shape[0])
        p = st.pool
        for k in range(int(self.inner_passes)):
            if order.size == 0:
                return k
            warmup.wait(jit.cached_pass)
            cached = jit.cached_pass(order, w, p.ind, p.dat, p.start, p.len, st.slot,
                                     st.alpha, st.loss, st.gram, C, _EPS, st.steps, gaps,
                                     _UNWEIGHTED if omega is None else omega, False)
            if cached <= self.inner_tol * gap:
                return k + 1
            keep = gaps[order] > 1e-3 * cached / order.size
            order = order[keep]
            rng.shuffle(order)
        return int(self.inner_passes)


class _State:
    """Caches of all examples (see :mod:`._dual_cd_jit` for the layout)."""

    def __init__(self, n, S, D):
        self.pool = RowPool(D, warmup.wait)
        self.slot = np.full((n, S), -1, dtype=np.int64)
        self.alpha = np.zeros((n, S))
        self.loss = np.zeros((n, S))
        self.gram = np.zeros((n, S, S))
        self.stamp = np.zeros((n, S), dtype=np.int64)
        self.D = D
        self.steps = 4 * S

    def snapshot(self):
        """What :meth:`restore` needs to undo every change made after this call, as
        long as the pool is not compacted meanwhile (rows are only appended)."""
        return (self.slot.copy(), self.alpha.copy(), self.loss.copy(), self.gram.copy(),
                self.stamp.copy(), self.pool.used, self.pool.nrows)

    def restore(self, snapshot):
        """Back to the caches and dual variables of a :meth:`snapshot`."""
        (self.slot, self.alpha, self.loss, self.gram, self.stamp, self.pool.used,
         self.pool.nrows) = snapshot

    def weights(self):
        jit = loops("structsvm.learners._dual_cd_jit")

        p = self.pool
        warmup.wait(jit.weights_from_alpha)
        return jit.weights_from_alpha(self.D, p.ind, p.dat, p.start, p.len, self.slot,
                                      self.alpha)

    def saved(self, fingerprint, C, copy=True):
        """The caches and dual variables as arrays and JSON values: copies, or with
        ``copy=False`` views of this state's arrays (for a state that no longer
        changes: the result of a finished solve; restoring copies them)."""
        p = self.pool
        keep = np.copy if copy else (lambda a: a)
        return {"learner": DualCD.name, "fingerprint": fingerprint, "C": float(C),
                "n_features": int(self.D),
                "ind": keep(p.ind[:p.used]), "dat": keep(p.dat[:p.used]),
                "start": keep(p.start[:p.nrows]), "len": keep(p.len[:p.nrows]),
                "slot": keep(self.slot), "alpha": keep(self.alpha),
                "loss": keep(self.loss), "gram": keep(self.gram),
                "stamp": keep(self.stamp)}

    @classmethod
    def restored(cls, state, n, S, D, fingerprint, C):
        """The caches of a :meth:`saved` state of this problem (same examples,
        cache size and features), α scaled by min(1, C / C_saved); else None.

        A state of this learner is first checked whole (:func:`check_saved_state`):
        one whose arrays do not hold together raises ValueError naming the array,
        whatever problem it was saved for."""
        if not isinstance(state, dict) or state.get("learner") != DualCD.name:
            return None
        a = check_saved_state(state)
        if state.get("fingerprint") != fingerprint or a["n_features"] != D \
                or a["slot"].shape != (n, S):
            return None
        st = cls(n, S, D)
        p = st.pool
        p.ind = a["ind"].astype(p.idx_dtype)
        p.dat, p.start, p.len = a["dat"], a["start"], a["len"]
        p.used, p.nrows = p.ind.size, p.start.size
        st.slot, st.alpha, st.loss = a["slot"], a["alpha"], a["loss"]
        st.gram, st.stamp = a["gram"], a["stamp"]
        st.alpha *= min(1.0, C / a["C"])
        return st


def check_saved_state(state):
    """The arrays of a saved :class:`DualCD` state (copies, typed), each checked
    against what it indexes before any compiled loop sees it.

    Pool rows r = 0 .. R-1 hold ``ind[start[r]:start[r] + len[r]]`` (column indices
    in [0, n_features), increasing within a row) and as many finite ``dat``; an
    example's slots (n, S) name a pool row or −1; its α are finite, 0 on empty slots,
    ≥ 0 and sum to at most C (the simplex of its dual block); losses and Gram blocks
    are finite.

    Parameters
    ----------
    state : dict
        What :meth:`_State.saved` returned (e.g. read back from a checkpoint).

    Returns
    -------
    dict
        ``C``, ``n_features`` and the arrays ``ind``, ``dat``, ``start``, ``len``,
        ``slot``, ``alpha``, ``loss``, ``gram``, ``stamp``.

    Raises
    ------
    ValueError
        Naming the first array (or value) that does not fit.
    """
    def fail(key, why):
        raise ValueError(f"dual_cd state: {key} {why}")

    def arr(key, kind, ndim):
        v = state.get(key)
        if not isinstance(v, np.ndarray) or v.dtype.kind not in kind or v.ndim != ndim:
            got = f"{v.dtype} {v.shape}" if isinstance(v, np.ndarray) \
                else type(v).__name__
            fail(key, f"must be a {ndim}-D array of "
                      f"{'integers' if kind == 'iu' else 'numbers'}, got {got}")
        if kind == "iu":
            return np.array(v, dtype=np.int64)
        out = np.array(v, dtype=float)
        if not np.all(np.isfinite(out)):
            fail(key, "holds NaN or infinite values")
        return out

    C, D = state.get("C"), state.get("n_features")
    if isinstance(C, bool) or not isinstance(C, (int, float)) or not 0 < C < np.inf:
        fail("C", f"is {C!r:.40}; expected a finite number > 0")
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)) or D < 0:
        fail("n_features", f"is {D!r:.40}; expected an integer >= 0")
    out = {"C": float(C), "n_features": int(D)}
    for key, kind, ndim in (("ind", "iu", 1), ("dat", "iuf", 1), ("start", "iu", 1),
                            ("len", "iu", 1), ("slot", "iu", 2), ("alpha", "iuf", 2),
                            ("loss", "iuf", 2), ("gram", "iuf", 3), ("stamp", "iu", 2)):
        out[key] = arr(key, kind, ndim)
    ind, start, ln, slot = out["ind"], out["start"], out["len"], out["slot"]
    if out["dat"].shape != ind.shape:
        fail("dat", f"has {out['dat'].size} entries, ind {ind.size}")
    if ind.size and (ind.min() < 0 or ind.max() >= D):
        k = int(np.flatnonzero((ind < 0) | (ind >= D))[0])
        fail("ind", f"holds column {int(ind[k])} at position {k}; columns must lie in "
                    f"[0, {D})")
    if ln.shape != start.shape:
        fail("len", f"has {ln.size} rows, start {start.size}")
    bad = np.flatnonzero((start < 0) | (ln < 0) | (start + ln > ind.size))
    if bad.size:
        r = int(bad[0])
        fail("start", f"and len put row {r} at [{int(start[r])}, "
                      f"{int(start[r] + ln[r])}), outside the {ind.size} stored entries")
    rows = np.flatnonzero(ln > 1)  # columns increase within every row
    if rows.size:
        lens = ln[rows]
        at = np.repeat(start[rows] - np.cumsum(lens) + lens, lens) + \
            np.arange(int(lens.sum()))
        steps = np.diff(ind[at])
        inner = np.ones(steps.size, dtype=bool)
        inner[np.cumsum(lens)[:-1] - 1] = False  # the step from one row to the next
        if np.any(steps[inner] <= 0):
            fail("ind", "holds a row whose columns do not increase")
    n, S = slot.shape
    if slot.size and (slot.min() < -1 or slot.max() >= start.size):
        fail("slot", f"names a pool row outside [-1, {start.size})")
    for key, shape in (("alpha", (n, S)), ("loss", (n, S)), ("gram", (n, S, S)),
                       ("stamp", (n, S))):
        if out[key].shape != shape:
            fail(key, f"has shape {out[key].shape}, expected {shape} (slot's)")
    alpha = out["alpha"]
    if np.any(alpha < 0) or np.any(alpha[slot < 0] != 0):
        fail("alpha", "holds a negative value, or a value on an empty slot")
    if np.any(alpha.sum(axis=1) > C * (1 + 1e-9)):
        fail("alpha", f"sums to more than C = {C} for an example (outside its simplex)")
    return out
