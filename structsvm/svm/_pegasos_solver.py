"""The primal Pegasos training loop shared by the linear Pegasos estimators.

:class:`_PegasosBase` runs the compiled loop (``_pegasos_jit``) in its primal mode:
all steps in one call, or epoch by epoch until the objective settles (``tol``). The
update, the projection and the averaging are described in
:mod:`structsvm.svm.pegasos` and :class:`structsvm.svm.PegasosClassifier`.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from .._compiled import loops
from ._pegasos_utils import SuffixAverage, check_params, check_tol, csr_arrays, pegasos_order

# the compiled loops (compiled at installation where they can be)
_jit = loops("structsvm.svm._pegasos_jit")


class _PegasosBase(BaseEstimator):
    """Shared fitting code (primal mode of the compiled loop)."""

    _loss_name = "hinge"

    def _run(self, X, y, loss_code, epsilon, radius, b_bound):
        n, d = X.shape
        T, avg_start, every = check_params(self, n)
        tol, patience = check_tol(self)
        indptr, indices, data = csr_arrays(X)
        if not self.projection:
            radius, b_bound = np.inf, np.inf
        if not self.fit_intercept:
            b_bound = 0.0
        if tol is not None:
            return self._run_until(X, y, loss_code, epsilon, radius, b_bound, T, avg_start,
                                   every, tol, patience, (indptr, indices, data))
        order = pegasos_order(n, T // n, self.sampling, self.random_state)
        curve = np.zeros(T // every if every else 0)
        w, b, w_avg, b_avg, n_curve, status, _ = _jit.run(
            False, loss_code, order, y, float(self.C), float(epsilon),
            bool(self.fit_intercept), float(radius), float(b_bound), avg_start, every,
            indptr, indices, data, np.zeros((1, 1)), d, curve, self._implicit())
        self._check_status(status)
        averaged = avg_start <= T
        return self._finish(w_avg if averaged else w, b_avg if averaged else b, y,
                            loss_code, epsilon, curve[:n_curve].copy(), T // n, T,
                            (indptr, indices, data))

    def _run_until(self, X, y, loss_code, epsilon, radius, b_bound, T, avg_start, every,
                   tol, patience, csr):
        """Epoch by epoch until the objective has changed by at most a relative ``tol``
        over the last ``patience`` epochs (its values at the last patience + 1 epoch
        ends lie within tol · min of each other), or ``max_iter`` epochs. On a
        decreasing curve that is "no improvement by tol over patience epochs"; a
        noisy early curve (large steps) does not stop it.

        The objective F of the model that would be returned (the suffix average, see
        :class:`SuffixAverage`) is evaluated at each epoch's end in one compiled pass
        over X (O(nnz), no Python loop), the cost of one epoch's steps.
        """
        n, d = X.shape
        indptr, indices, data = csr
        K0, implicit = np.zeros((1, 1)), self._implicit()
        args = (float(self.C), float(epsilon), bool(self.fit_intercept), float(radius),
                float(b_bound))
        v, B, base, updates, sc = _jit.new_state(False, d, n)
        avg = SuffixAverage(avg_start, T, n, suffix=self.average is True)
        avg.take(0, _jit.averaged_sum(v, B, base, sc))
        rng = check_random_state(self.random_state)
        no_curve = np.zeros(0)

        def model(step):
            out = avg.average(step, _jit.averaged_sum(v, B, base, sc))
            return out if out is not None else (sc[0] * v, sc[2])

        def F(step):
            w, b = model(step)
            return float(_jit.objective(False, loss_code, w, b, y, args[0], args[1],
                                        indptr, indices, data, K0))

        curve, ends, t, epoch = [], [], 0, 0
        for epoch in range(1, T // n + 1):
            order = pegasos_order(n, 1, self.sampling, rng)
            cuts = {t + n}
            if every:
                cuts.update(range((t // every + 1) * every, t + n + 1, every))
            if t < avg.fixed <= t + n:
                cuts.add(avg.fixed)
            pos, f_end = t, None
            for c in sorted(cuts):
                _, status = _jit.steps(False, loss_code, order[pos - t:c - t], pos, y,
                                       *args, 1, 0, indptr, indices, data, K0, no_curve, 0,
                                       implicit, v, B, base, updates, sc)
                self._check_status(status)
                pos = c
                if avg.wants(c):
                    avg.take(c, _jit.averaged_sum(v, B, base, sc))
                if every and c % every == 0:
                    curve.append(F(c))
                    f_end = curve[-1] if c == t + n else f_end
            t += n
            ends.append(F(t) if f_end is None else f_end)
            window = ends[-patience - 1:]
            if len(window) > patience and \
                    max(window) - min(window) <= tol * abs(min(window)):
                break
        w, b = model(t)
        return self._finish(np.array(w), float(b), y, loss_code, epsilon, np.array(curve),
                            epoch, t, csr)

    def _check_status(self, status):
        if status == _jit.STATUS_OVERFLOW:
            raise FloatingPointError(
                f"loss={self._loss_name!r}: a step overflowed (exp(-y f) > 1e300) with "
                "projection=False; use projection=True, which bounds w and b")

    def _finish(self, coef, intercept, y, loss_code, epsilon, curve, n_epochs, steps, csr):
        self.coef_ = coef
        self.intercept_ = float(intercept)
        self.objective_curve_ = curve
        self.objective_ = float(_jit.objective(
            False, loss_code, self.coef_, self.intercept_, y, float(self.C), float(epsilon),
            *csr, np.zeros((1, 1))))
        self.n_iter_ = int(n_epochs)
        self.t_ = int(steps)
        self.n_features_in_ = coef.shape[0]
        return self

    def _implicit(self):
        if self.step not in ("auto", "explicit", "implicit"):
            raise ValueError(f"step must be 'auto', 'explicit' or 'implicit', got "
                             f"{self.step!r}")
        if self.step == "auto":
            return self._loss_name == "exp"
        return self.step == "implicit"

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input")
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
