"""Compiled inner loop of (kernel) Pegasos. Private: no validation in here.

The public wrappers are :class:`structsvm.svm.PegasosClassifier`,
:class:`structsvm.svm.PegasosRegressor` and
:class:`structsvm.svm.KernelPegasosClassifier`; the plain-Python reference that
the tests compare against lives in ``tests/test_linear.py``.

Representation. The iterate is kept as ``w = a * v`` (scalar ``a``), so the shrink
``w <- (1 - 1/t) w`` of every step is O(1) and a step costs O(nnz(x_i)). In the
primal ``v`` lives in feature space (CSR rows of X); in the dual ("kernel") mode
``v`` holds coefficients over the training points and ``x_i . v`` is a row of the
Gram matrix times ``v``. Averaging uses ``sum_t a_t v_t = S v - B`` with
``S = sum_t a_t`` and ``B = sum_s delta_s S_(s-1)``, so the average is exact and
O(nnz) per step as well.

Losses: 0 hinge, 1 logistic, 2 exponential (classification, ``z = y f``),
3 epsilon-insensitive (regression, ``r = y - f``).
"""
import math

import numpy as np
from numba import njit

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "steps": (
        "b1 i8 i8:1 i8 f8:1 f8 f8 b1 f8 f8 i8 i8 "
        "i8:1 i8:1 f8:1 f8:2 f8:1 i8 b1 f8:1 f8:1 f8:1 f8:1 f8:1",
        "(i8 i8)"),
    "objective": ("b1 i8 f8:1 f8 f8:1 f8 f8 i8:1 i8:1 f8:1 f8:2", "f8"),
    "new_state": ("b1 i8 i8", "(f8:1 f8:1 f8:1 f8:1 f8:1)"),
    "averaged_sum": ("f8:1 f8:1 f8:1 f8:1", "(f8:1 f8 f8)"),
}

HINGE, LOG, EXP, EPS_INSENSITIVE = 0, 1, 2, 3
_LOG_BIG = 40.0     # log(eta * e^{-z}) above this: the exact log-domain step
_A_MIN = 1e-6       # renormalise w = a v below this (bounds the cancellation in S v - B)
STATUS_OK, STATUS_OVERFLOW = 0, 1


@njit(cache=True)
def _dot(dual, i, v, indptr, indices, data, K):
    s = 0.0
    if dual:
        for j in range(v.shape[0]):
            s += K[i, j] * v[j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * v[indices[k]]
    return s


@njit(cache=True)
def _sqnorm_x(dual, i, indptr, data, K):
    if dual:
        return K[i, i]
    s = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        s += data[k] * data[k]
    return s


@njit(cache=True)
def _add(dual, i, delta, S, v, B, indptr, indices, data):
    if dual:
        v[i] += delta
        B[i] += delta * S
    else:
        for k in range(indptr[i], indptr[i + 1]):
            v[indices[k]] += delta * data[k]
            B[indices[k]] += delta * S * data[k]


@njit(cache=True)
def _gradient(loss, y, f, epsilon):
    """Return (c, log|c|, big): the step direction factor -dloss/df.

    For the exponential loss ``c`` can overflow; then ``big`` is True and only the
    sign (in ``c``) and ``log|c|`` are meaningful.
    """
    if loss == EPS_INSENSITIVE:
        r = y - f
        if r > epsilon:
            return 1.0, 0.0, False
        if r < -epsilon:
            return -1.0, 0.0, False
        return 0.0, -np.inf, False
    z = y * f
    if loss == HINGE:
        if z < 1.0:
            return y, 0.0, False
        return 0.0, -np.inf, False
    if loss == LOG:  # -d/dz log(1 + e^{-z}) = 1 / (1 + e^{z}), stably
        if z >= 0.0:
            e = math.exp(-z)
            g = e / (1.0 + e)
        else:
            g = 1.0 / (1.0 + math.exp(z))
        return y * g, math.log(g) if g > 0.0 else -np.inf, False
    # exponential: -d/dz e^{-z} = e^{-z}
    if -z > 700.0:
        return y, -z, True
    g = math.exp(-z)
    return y * g, -z, False


@njit(cache=True)
def _lambertw_exp(L):
    """W(e^L), the root w > 0 of w e^w = e^L, without forming e^L."""
    if L < 1.0:
        X = math.exp(L)
        w = math.log1p(X)
        for _ in range(50):
            ew = math.exp(w)
            step = (w * ew - X) / (ew * (w + 1.0))
            w -= step
            if abs(step) <= 1e-15 * max(w, 1e-300):
                break
        return w
    w = L - math.log(L) if L > 1.5 else 1.0
    for _ in range(50):          # Newton on w + log w = L
        step = (w + math.log(w) - L) / (1.0 + 1.0 / w)
        w -= step
        if w <= 0.0:
            w = 1e-300
        if abs(step) <= 1e-15 * w:
            break
    return w


@njit(cache=True)
def _implicit(loss, y, f, epsilon, s):
    """Coefficient c of the proximal (implicit) loss step with s = eta * q.

    Solves c = -dloss(f + s c): the new point's gradient, not the old one's, so the
    step is bounded for every loss (q = |x|^2 + [fit_intercept]).
    """
    if loss == EPS_INSENSITIVE:
        r = y - f
        if abs(r) <= epsilon:
            return 0.0
        sgn = 1.0 if r > 0.0 else -1.0
        return sgn * min(1.0, (abs(r) - epsilon) / s) if s > 0.0 else sgn
    z = y * f
    if loss == HINGE:
        if z >= 1.0:
            return 0.0
        return y * min(1.0, (1.0 - z) / s) if s > 0.0 else y
    if loss == EXP:   # u = e^{-(z + s u)}  <=>  s u = W(s e^{-z})
        if s <= 0.0:
            return y * math.exp(min(-z, 700.0))
        return y * _lambertw_exp(math.log(s) - z) / s
    # logistic: u = sigma(-(z + s u)), u in [0, sigma(-z)]: bisection
    lo, hi = 0.0, 1.0
    for _ in range(60):
        u = 0.5 * (lo + hi)
        m = z + s * u
        g = math.exp(-m) / (1.0 + math.exp(-m)) if m >= 0.0 else 1.0 / (1.0 + math.exp(m))
        if u > g:
            hi = u
        else:
            lo = u
    return y * 0.5 * (lo + hi)


@njit(cache=True)
def _loss_value(loss, y, f, epsilon):
    if loss == EPS_INSENSITIVE:
        return max(0.0, abs(y - f) - epsilon)
    z = y * f
    if loss == HINGE:
        return max(0.0, 1.0 - z)
    if loss == LOG:  # log(1 + e^{-z}) without overflow
        if z >= 0.0:
            return math.log1p(math.exp(-z))
        return -z + math.log1p(math.exp(z))
    return math.exp(-z) if -z <= 709.0 else np.inf


@njit(cache=True)
def objective(dual, loss, u, b, y, C, epsilon, indptr, indices, data, K):
    """1/2 |w|^2 + C sum_i loss_i at w = u (coefficients in dual mode), bias b."""
    n = y.shape[0]
    total = 0.0
    if dual:
        Ku = K @ u
        sq = 0.0
        for j in range(n):
            sq += u[j] * Ku[j]
        for i in range(n):
            total += _loss_value(loss, y[i], Ku[i] + b, epsilon)
    else:
        sq = 0.0
        for j in range(u.shape[0]):
            sq += u[j] * u[j]
        for i in range(n):
            total += _loss_value(loss, y[i], _dot(False, i, u, indptr, indices, data, K)
                                 + b, epsilon)
    return 0.5 * sq + C * total


@njit(cache=True)
def run(dual, loss, order, y, C, epsilon, fit_intercept, radius, b_bound, avg_start,
        eval_every, indptr, indices, data, K, dim, curve, implicit):
    """Run Pegasos over the sample sequence ``order`` (steps t = 1..len(order)).

    Step t on sample i, with eta_t = n C / t (= 1 / (lambda t), lambda = 1/(nC)):
        w <- (1 - 1/t) w + eta_t c_i x_i,   b <- b + eta_t c_i  (no shrinking),
    c_i = -dloss/df at w_t (explicit) or at the new point (``implicit``), then the
    projection onto |w| <= radius, |b| <= b_bound (radius = inf: none). The average
    covers steps avg_start..len(order). Returns (w, b, w_avg, b_avg, n_curve, status,
    n_updates).
    """
    v, B, base, updates, sc = new_state(dual, dim, y.shape[0])
    n_curve, status = steps(dual, loss, order, 0, y, C, epsilon, fit_intercept, radius,
                            b_bound, avg_start, eval_every, indptr, indices, data, K,
                            curve, 0, implicit, v, B, base, updates, sc)
    a, b, S, count, b_sum = sc[0], sc[2], sc[3], sc[4], sc[5]
    w = a * v
    if count > 0:
        w_avg = (base + S * v - B) / count
        b_avg = b_sum / count
    else:
        w_avg = w.copy()
        b_avg = b
    return w, b, w_avg, b_avg, n_curve, status, updates


@njit(cache=True)
def new_state(dual, dim, n):
    """Fresh iterate state: v, B, base (dim,), updates, and the scalars
    sc = [a, |v|^2, b, S, count, b_sum] (w = a v; sum of averaged iterates
    = base + S v - B, see the module docstring)."""
    sc = np.zeros(6)
    sc[0] = 1.0
    return (np.zeros(dim), np.zeros(dim), np.zeros(dim), np.zeros(dim if dual else 1),
            sc)


@njit(cache=True)
def averaged_sum(v, B, base, sc):
    """(sum of the averaged iterates, sum of their biases, their count)."""
    return base + sc[3] * v - B, sc[5], sc[4]


@njit(cache=True)
def steps(dual, loss, order, t_offset, y, C, epsilon, fit_intercept, radius, b_bound,
          avg_start, eval_every, indptr, indices, data, K, curve, n_curve, implicit,
          v, B, base, updates, sc):
    """Steps t = t_offset+1 .. t_offset+len(order), continuing the state in place.

    Returns (n_curve, status); see :func:`run`.
    """
    n = y.shape[0]
    nC = n * C
    a, vnorm2, b, S, count, b_sum = sc[0], sc[1], sc[2], sc[3], int(sc[4]), sc[5]
    status = STATUS_OK
    for step in range(order.shape[0]):
        t = t_offset + step + 1
        i = order[step]
        xv = _dot(dual, i, v, indptr, indices, data, K)
        f = a * xv + b
        eta = nC / t
        shrink = 1.0 - 1.0 / t
        if implicit:     # proximal loss step at the shrunk point
            q = _sqnorm_x(dual, i, indptr, data, K) + (1.0 if fit_intercept else 0.0)
            c = _implicit(loss, y[i], shrink * a * xv + b, epsilon, eta * q)
            logc, big = 0.0, False
        else:
            c, logc, big = _gradient(loss, y[i], f, epsilon)
        if big or (not implicit and c != 0.0 and logc + math.log(eta) > _LOG_BIG):
            # exact step in the log domain: w' = P(shrink w + e^L sgn(c) x)
            if radius == np.inf:
                status = STATUS_OVERFLOW
                break
            L = logc + math.log(eta)
            sgn = 1.0 if c > 0.0 else -1.0
            base += S * v - B
            B[:] = 0.0
            S = 0.0
            xx = _sqnorm_x(dual, i, indptr, data, K)
            eps_w = shrink * math.exp(-L) * a      # shrink * e^{-L} * a (may underflow)
            nrm2 = eps_w * eps_w * vnorm2 + 2.0 * eps_w * sgn * xv + xx
            v *= eps_w
            _add(dual, i, sgn, 0.0, v, B, indptr, indices, data)
            nrm = math.sqrt(max(nrm2, 0.0))
            a = math.exp(min(L, math.log(radius) - math.log(nrm))) if nrm > 0 else 0.0
            vnorm2 = nrm2
            if dual:
                updates[i] += 1.0
            if fit_intercept:
                b = min(max(b + sgn * math.exp(min(L, 700.0)), -b_bound), b_bound)
        else:
            if shrink == 0.0:      # t = 1: the initial w is wiped out
                base += S * v - B
                B[:] = 0.0
                S = 0.0
                v[:] = 0.0
                vnorm2, xv, a = 0.0, 0.0, 1.0
            else:
                a *= shrink
            if c != 0.0:
                delta = eta * c / a
                xx = _sqnorm_x(dual, i, indptr, data, K)
                vnorm2 += 2.0 * delta * xv + delta * delta * xx
                _add(dual, i, delta, S, v, B, indptr, indices, data)
                if dual:
                    updates[i] += 1.0
                if fit_intercept:
                    b += eta * c
            if b > b_bound:
                b = b_bound
            elif b < -b_bound:
                b = -b_bound
            wn = a * math.sqrt(max(vnorm2, 0.0))
            if wn > radius:
                a *= radius / wn
        if a < _A_MIN:             # renormalise w = a v (folds the averaging sums)
            base += S * v - B
            B[:] = 0.0
            S = 0.0
            v *= a
            vnorm2 *= a * a
            a = 1.0
        if t >= avg_start:
            S += a
            count += 1
            b_sum += b
        if eval_every > 0 and t % eval_every == 0 and n_curve < curve.shape[0]:
            if count > 0:
                u = (base + S * v - B) / count
                bb = b_sum / count
            else:
                u = a * v
                bb = b
            curve[n_curve] = objective(dual, loss, u, bb, y, C, epsilon, indptr, indices,
                                       data, K)
            n_curve += 1
    sc[0], sc[1], sc[2], sc[3], sc[4], sc[5] = a, vnorm2, b, S, count, b_sum
    return n_curve, status
