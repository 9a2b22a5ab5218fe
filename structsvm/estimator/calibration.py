"""Calibrated confidence: margins turned into the probability that a predicted part
(or a whole output) is right, by a calibrator fitted on held-out data, and the
measures of calibration (reliability curves, expected calibration error).

A structural SVM scores outputs; it gives no probabilities. Its margins
(:meth:`StructuredSVM.predict_margins`) rank the parts by how far they are from
changing, and a monotone map fitted on held-out data turns them into frequencies,
as scikit-learn's ``CalibratedClassifierCV`` does for a classifier's decision
function: Platt's sigmoid (two parameters) or isotonic regression (a
non-decreasing step function).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.utils.validation import check_is_fitted

from ..protocols import as_sequence

__all__ = ["MarginCalibrator", "CalibratedStructuredSVM", "reliability_curve",
           "expected_calibration_error", "N_BINS"]

#: equal-width confidence bins of reliability curves and the expected calibration
#: error (Guo et al. 2017 use 15)
N_BINS = 15


class MarginCalibrator(BaseEstimator):
    """A monotone map from margins to the probability of being right.

    Parameters
    ----------
    method : {"isotonic", "sigmoid"}, default="isotonic"
        ``"sigmoid"``: Platt scaling, p(m) = 1 / (1 + exp(−(a m + b))) with a and b
        minimising the log loss of the held-out parts against Platt's smoothed
        targets (N₊ + 1) / (N₊ + 2) and 1 / (N₋ + 2). ``"isotonic"``: the
        non-decreasing step function of least squared error (pool adjacent
        violators), clipped to [0, 1]; it needs more held-out parts (a thousand or
        more) than the sigmoid, and fits any monotone shape.

    Attributes
    ----------
    a_, b_ : float
        The sigmoid's slope and offset (``method="sigmoid"``).
    isotonic_ : sklearn.isotonic.IsotonicRegression
        The fitted step function (``method="isotonic"``).
    n_fit_ : int
        Number of held-out parts it was fitted on (those of finite margin).

    Notes
    -----
    A margin of +inf (a part no other allowed output changes, e.g. fixed by a
    constraint) is certain: it gets probability 1 and does not enter the fit.

    References
    ----------
    J. Platt. Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods. Advances in Large Margin Classifiers, 1999.
    H.-T. Lin, C.-J. Lin, R. C. Weng. A note on Platt's probabilistic outputs for
    support vector machines. Machine Learning 68(3), 2007.
    B. Zadrozny, C. Elkan. Transforming classifier scores into accurate multiclass
    probability estimates. KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([0.1, 0.2, 0.4, 0.8, 1.0, 1.5, 2.0, 3.0])
    >>> right = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    >>> cal = MarginCalibrator("isotonic").fit(m, right)
    >>> cal.predict_proba(np.array([0.0, 1.2, np.inf])).round(3).tolist()
    [0.0, 1.0, 1.0]
    """

    def __init__(self, method="isotonic"):
        self.method = method

    def fit(self, margins, correct):
        """Fit on held-out margins and whether each part was right.

        Parameters
        ----------
        margins : array-like of float of shape (n,)
            Non-negative margins (+inf allowed: left out).
        correct : array-like of bool of shape (n,)

        Returns
        -------
        self
        """
        if self.method not in ("isotonic", "sigmoid"):
            raise ValueError(f"method must be 'isotonic' or 'sigmoid', got "
                             f"{self.method!r}")
        m, y = _pairs(margins, correct)
        keep = np.isfinite(m)
        m, y = m[keep], y[keep]
        if m.size < 2 or y.min() == y.max():
            raise ValueError(f"calibration needs held-out parts both right and wrong; "
                             f"got {m.size} of finite margin, {int(y.sum())} right")
        self.n_fit_ = int(m.size)
        if self.method == "isotonic":
            self.isotonic_ = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True,
                                                out_of_bounds="clip").fit(m, y)
        else:
            self.a_, self.b_ = _platt(m, y)
        return self

    def predict_proba(self, margins):
        """The probability that each part is right, from its margin.

        Parameters
        ----------
        margins : array-like of float

        Returns
        -------
        ndarray of float, of the shape of ``margins``
        """
        check_is_fitted(self, "n_fit_")
        m = np.asarray(margins, dtype=float)
        if np.isnan(m).any():
            raise ValueError("margins contain NaN")
        out = np.ones(m.shape)
        fin = np.isfinite(m)
        if not fin.any():
            pass
        elif self.method == "isotonic":
            out[fin] = self.isotonic_.predict(m[fin])
        else:
            z = self.a_ * m[fin] + self.b_
            out[fin] = np.exp(-np.logaddexp(0.0, -z))
        out[m == -np.inf] = 0.0
        return out


def _pairs(margins, correct):
    m = np.asarray(margins, dtype=float).ravel()
    y = np.asarray(correct).ravel()
    if m.shape != y.shape:
        raise ValueError(f"{m.size} margins but {y.size} correctness flags")
    if np.isnan(m).any():
        raise ValueError("margins contain NaN")
    return m, y.astype(float)


def _platt(m, y):
    """Slope and offset of Platt's sigmoid, by Newton-type minimisation of the log
    loss against the smoothed targets (scaled margins, for conditioning)."""
    n_pos = y.sum()
    n_neg = y.size - n_pos
    t = np.where(y > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = m.std() or 1.0
    x = m / scale

    def loss(p):
        z = p[0] * x + p[1]
        # -t log σ(z) - (1 - t) log(1 - σ(z)) = log(1 + e^z) - t z, stably
        value = np.sum(np.logaddexp(0.0, z) - t * z)
        r = np.exp(-np.logaddexp(0.0, -z)) - t      # σ(z) - t
        return value, np.array([np.dot(r, x), r.sum()])

    prior = np.log((n_pos + 1.0) / (n_neg + 1.0))
    res = minimize(loss, np.array([0.0, prior]), jac=True, method="L-BFGS-B")
    return float(res.x[0] / scale), float(res.x[1])


# --------------------------------------------------------------------------- estimator
class CalibratedStructuredSVM(BaseEstimator):
    """A fitted :class:`StructuredSVM` whose predictions come with probabilities.

    ``fit(X, Y)`` on held-out data (not the training data: their margins are too
    large) computes the margins of the estimator's predictions and fits a
    :class:`MarginCalibrator` to whether each part (token, word's head, class) or
    each whole output was right; ``predict_proba`` then gives the calibrated
    probability of every predicted part. The estimator is not refitted.

    Parameters
    ----------
    estimator : StructuredSVM
        Fitted.
    method : {"isotonic", "sigmoid"}, default="isotonic"
        See :class:`MarginCalibrator`.
    level : {"part", "output"}, default="part"
        Calibrate the margins of parts (is this tag right?) or of whole outputs (is
        this whole tagging right?; the output's margin over the second best).

    Attributes
    ----------
    calibrator_ : MarginCalibrator
    margins_, correct_ : ndarray
        The held-out margins and correctness the calibrator was fitted on.

    References
    ----------
    A. Niculescu-Mizil, R. Caruana. Predicting good probabilities with supervised
    learning. ICML 2005.
    V. Kuleshov, P. Liang. Calibrated structured prediction. NIPS 2015.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))        # noisy labels: some held-out ones wrong
    >>> Y = list(np.where(X[:, 0] + rng.normal(scale=0.5, size=400) > 0, "a", "b"))
    >>> model = structsvm.fit(list(X[:200]), Y[:200], C=1.0)
    >>> cal = CalibratedStructuredSVM(model, method="sigmoid").fit(list(X[200:]),
    ...                                                            Y[200:])
    >>> p = cal.predict_proba([np.array([3.0, 0.0]), np.array([0.01, 0.0])])
    >>> bool(p[0][0] > p[1][0])
    True
    """

    def __init__(self, estimator, method="isotonic", level="part"):
        self.estimator = estimator
        self.method = method
        self.level = level

    def fit(self, X, Y, constraints=None):
        """Fit the calibrator on held-out inputs X and their true outputs Y.

        Parameters
        ----------
        X, Y : sequences
            Held-out data (not used to train the estimator).
        constraints : OutputConstraints or list of them, optional
            As at prediction time (the margins are those under the constraints).

        Returns
        -------
        self
        """
        check_is_fitted(self.estimator, "coef_")
        if self.level not in ("part", "output"):
            raise ValueError(f"level must be 'part' or 'output', got {self.level!r}")
        X, Y = as_sequence(X, "X"), as_sequence(Y, "Y")
        if len(X) != len(Y):
            raise ValueError(f"X has {len(X)} samples but Y has {len(Y)}")
        margins, correct = self._margins_and_truth(X, Y, constraints)
        self.margins_, self.correct_ = margins, correct
        self.calibrator_ = MarginCalibrator(self.method).fit(margins, correct)
        return self

    def _margins_and_truth(self, X, Y, constraints):
        model = self.estimator
        fm = model.feature_map_
        Ye = fm.encode_outputs(Y, X)
        pred = fm.encode_outputs(model.predict(X, constraints=constraints), X)
        margins = model.predict_margins(X, level=self.level, constraints=constraints)
        if self.level == "output":
            right = [np.array_equal(np.ravel(a), np.ravel(b)) for a, b in zip(Ye, pred)]
            return np.asarray(margins, dtype=float), np.asarray(right, dtype=bool)
        right = [np.ravel(a) == np.ravel(b) for a, b in zip(Ye, pred)]
        flat = np.concatenate(margins) if margins else np.zeros(0)
        return flat, np.concatenate(right) if right else np.zeros(0, dtype=bool)

    def predict(self, X, constraints=None):
        """The estimator's predictions (see :meth:`StructuredSVM.predict`)."""
        return self.estimator.predict(X, constraints=constraints)

    def predict_proba(self, X, constraints=None):
        """The calibrated probability that each predicted part (or output) is right.

        Returns
        -------
        list of ndarray of shape (n_parts,), or ndarray of shape (n_samples,)
            Per part (``level="part"``, parts as :meth:`StructuredSVM.predict_margins`
            gives them), or per output (``level="output"``).
        """
        check_is_fitted(self, "calibrator_")
        margins = self.estimator.predict_margins(X, level=self.level,
                                                 constraints=constraints)
        if self.level == "output":
            return self.calibrator_.predict_proba(margins)
        return [self.calibrator_.predict_proba(m) for m in margins]


# --------------------------------------------------------------------------- measures
def reliability_curve(probabilities, correct, n_bins=N_BINS):
    """Accuracy against confidence in equal-width bins of the confidence.

    Parameters
    ----------
    probabilities : array-like of float in [0, 1]
        Predicted probabilities of being right (one per part or output).
    correct : array-like of bool
        Whether each was right.
    n_bins : int, default=15

    Returns
    -------
    confidence : ndarray of shape (n_bins,)
        Mean predicted probability in each bin (nan for an empty bin).
    accuracy : ndarray of shape (n_bins,)
        Fraction right in each bin (nan for an empty bin).
    counts : ndarray of int of shape (n_bins,)

    Examples
    --------
    >>> conf, acc, n = reliability_curve([0.1, 0.15, 0.9, 0.95], [0, 0, 1, 1], n_bins=2)
    >>> conf.round(3).tolist(), acc.tolist(), n.tolist()
    ([0.125, 0.925], [0.0, 1.0], [2, 2])
    """
    p, y = _pairs(probabilities, correct)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("probabilities must lie in [0, 1]")
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an int >= 1, got {n_bins!r}")
    b = np.minimum((p * n_bins).astype(np.intp), n_bins - 1)
    counts = np.bincount(b, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(b, weights=p, minlength=n_bins) / counts
        acc = np.bincount(b, weights=y, minlength=n_bins) / counts
    return conf, acc, counts


def expected_calibration_error(probabilities, correct, n_bins=N_BINS):
    """Expected calibration error: Σ_b (n_b / n) |accuracy_b − confidence_b| over
    equal-width confidence bins (Naeini et al. 2015; Guo et al. 2017).

    Parameters
    ----------
    probabilities : array-like of float in [0, 1]
    correct : array-like of bool
    n_bins : int, default=15

    Returns
    -------
    float

    References
    ----------
    M. P. Naeini, G. F. Cooper, M. Hauskrecht. Obtaining well calibrated
    probabilities using Bayesian binning. AAAI 2015.
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On calibration of modern neural
    networks. ICML 2017.

    Examples
    --------
    >>> round(expected_calibration_error([0.1, 0.15, 0.9, 0.95], [0, 0, 1, 1],
    ...                                  n_bins=2), 6)
    0.1
    """
    conf, acc, counts = reliability_curve(probabilities, correct, n_bins)
    n = counts.sum()
    if n == 0:
        raise ValueError("no probabilities to measure")
    full = counts > 0
    return float(np.sum(counts[full] * np.abs(acc[full] - conf[full])) / n)
