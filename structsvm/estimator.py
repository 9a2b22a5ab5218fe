"""StructuredSVM: the scikit-learn compatible estimator, and ``structsvm.fit``."""
from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .problem import Problem
from .protocols import StructureMismatchError, as_sequence
from .inference import get_decoder
from .learners import get_learner, make_default_learner
from .losses import CallableLoss, get_loss

__all__ = ["StructuredSVM", "fit"]

logger = logging.getLogger("structsvm")
_PREDICT_CHUNK = 4096


class StructuredSVM(BaseEstimator):
    """Structural SVM: learn w so that argmax_y w·Φ(x, y) predicts structures.

    Parameters
    ----------
    feature_map : FeatureMap, default=None
        Joint feature map Φ (e.g. :class:`~structsvm.features.MulticlassFeatures`,
        ``SequenceFeatures``). Cloned and fitted in ``fit``; None means
        ``MulticlassFeatures()``.
    decoder : str or Decoder, default=None
        Decoder name ("argmax", "viterbi", "tree", "sort", "exhaustive", ...); None
        uses the feature map's default.
    loss : str, Loss or callable, default=None
        Task loss Δ; None uses the feature map's default (zero-one for classes,
        Hamming for sequences). A callable ``f(y_true, y_pred)`` gets raw outputs.
    learner : str, learner object or None, default=None
        "dual_cd", "one_slack", "n_slack", "frank_wolfe", "pegasos" or "perceptron",
        or a configured learner (e.g. ``OneSlackCuttingPlane(solver="osqp")``;
        grid-searchable as ``learner__solver``). None picks the learner for the
        feature map's structure (:data:`structsvm.learners.DEFAULT_LEARNERS`:
        "dual_cd" for classes, taxonomies and chains, "one_slack" for rankings; the
        measurements are in docs/learners.md); ``learner_`` names the one that ran.
    C : float, default=None
        Weight of the summed slacks: the objective is ½‖w‖² + C Σ_i ξ_i. None uses
        the feature map's ``default_C`` (1.0 for classes, 0.1 for sequences, where
        the slacks sum Hamming losses over many tokens).
    tol : float, default=None
        Cutting plane, dual_cd, frank_wolfe: stop when the certified duality gap ≤
        tol × primal objective (the returned objective is then within a relative tol
        of the optimum).
        Stochastic learners: stop when the objective changes by less than tol
        (relative) between evaluations. None uses the feature map's ``default_tol``
        (5e-4 for classes; 0.1 for sequences, where accuracy saturates long before
        the gap closes -- svm_hmm's default ε = 0.5 is a similar relative gap).
    max_iter : int, default=None
        Rounds (cutting plane, default 1000), oracle passes (dual_cd 200,
        frank_wolfe 50) or epochs (pegasos 50, perceptron 20).
    rescaling : {"margin", "slack"}, default="margin"
        How Δ enters the constraints. Slack rescaling needs an enumerable output
        space (multiclass, exhaustive).
    n_jobs : int, default=None
        Parallel oracle (joblib; runs on Dask/Ray via ``joblib.parallel_config``).
    random_state : int, RandomState or None, default=None
        Seeds the stochastic learners.
    warm_start : bool, default=False
        Start from the previous ``coef_`` (and keep the fitted feature map).
    verbose : int, default=0
        > 0 logs round, objective, gap and time to the "structsvm" logger.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights w.
    feature_map_ : FeatureMap
        The fitted map: ``feature_map_.joint_feature(x, y)`` works on raw x, y.
    decoder_, loss_, learner_ : the resolved plugins.
    n_iter_ : int
    objective_ : float
        Primal objective ½‖w‖² + C Σ_i ξ_i at ``coef_`` (exact decoding).
    objective_curve_ : list of float
    duality_gap_ : float
        Primal − dual at the end (nan for learners without a dual).
    converged_ : bool

    References
    ----------
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.features import MulticlassFeatures
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> model = structsvm.fit(X, ["a", "b", "a"], feature_map=MulticlassFeatures(),
    ...                       decoder="argmax", C=10.0)
    >>> model.predict([np.array([0.9, 0.1]), np.array([0.1, 0.8])])
    ['a', 'b']
    """

    def __init__(self, feature_map=None, decoder=None, loss=None, learner=None,
                 C=None, tol=None, max_iter=None, rescaling="margin", n_jobs=None,
                 random_state=None, warm_start=False, verbose=0):
        self.feature_map = feature_map
        self.decoder = decoder
        self.loss = loss
        self.learner = learner
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.rescaling = rescaling
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        if self.C is not None and (isinstance(self.C, bool) or
                                   not isinstance(self.C, numbers.Real) or
                                   not np.isfinite(self.C) or self.C <= 0):
            raise ValueError(f"C must be a finite number > 0, got {self.C!r}")
        if self.tol is not None and (not isinstance(self.tol, numbers.Real) or
                                     not self.tol >= 0):
            raise ValueError(f"tol must be a number >= 0, got {self.tol!r}")
        if self.max_iter is not None and (isinstance(self.max_iter, bool) or
                                          not isinstance(self.max_iter, numbers.Integral)
                                          or self.max_iter < 1):
            raise ValueError(f"max_iter must be a positive integer or None, got "
                             f"{self.max_iter!r}")
        if self.rescaling not in ("margin", "slack"):
            raise ValueError(f"rescaling must be 'margin' or 'slack', got {self.rescaling!r}")

    def _resolve_plugins(self, fm):
        decoder = get_decoder(self.decoder if self.decoder is not None
                              else type(fm).default_decoder)
        if decoder.structure not in (type(fm).structure, "any"):
            raise StructureMismatchError(
                f"decoder {decoder.name!r} decodes {decoder.structure!r} structures but "
                f"{type(fm).__name__} produces {type(fm).structure!r} structures")
        loss = get_loss(self.loss if self.loss is not None else type(fm).default_loss)
        if isinstance(loss, CallableLoss):
            loss = CallableLoss(loss.func, decode=lambda y: fm.decode_outputs([y])[0],
                                max_value=loss.max_value)
        return decoder, loss

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Train on inputs X and structured outputs Y (lists of equal length).

        Returns
        -------
        self
        """
        from .features import MulticlassFeatures

        self._check_params()
        X = as_sequence(X, "X")
        Y = as_sequence(Y, "Y")
        if len(X) != len(Y):
            raise ValueError(f"X and Y must have the same length: X has {len(X)} samples, "
                             f"Y has {len(Y)}")
        if len(X) == 0:
            raise ValueError("Cannot fit on an empty data set (X and Y have 0 samples)")
        if self.learner is not None:
            get_learner(self.learner)  # fail fast on a bad name, before fitting the map
        warm = self.warm_start and hasattr(self, "coef_")
        if warm:
            fm = self.feature_map_
        else:
            fm = clone(self.feature_map) if self.feature_map is not None \
                else MulticlassFeatures()
            fm.fit(X, Y)
        decoder, loss = self._resolve_plugins(fm)
        learner = self._resolve_learner(fm)
        problem = Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y, X),
                          feature_map=fm, decoder=decoder, loss=loss, C=self._C(fm),
                          rescaling=self.rescaling, n_jobs=self.n_jobs)
        w0 = self.coef_ if warm else np.zeros(fm.n_features_)
        tol = float(type(fm).default_tol if self.tol is None else self.tol)
        result = learner.solve(problem, w0, max_iter=self.max_iter, tol=tol,
                               random_state=self.random_state,
                               callback=self._log_round if self.verbose else None)
        self.feature_map_, self.decoder_, self.loss_, self.learner_ = fm, decoder, loss, learner
        self.coef_ = result.w
        self.objective_ = float(result.objective)
        self.objective_curve_ = list(result.objective_curve)
        self.n_iter_ = int(result.n_iter)
        self.duality_gap_ = float(result.duality_gap)
        self.converged_ = bool(result.converged)
        if not result.converged and learner.name in ("one_slack", "n_slack", "dual_cd",
                                                     "frank_wolfe"):
            warnings.warn(f"{learner.name} stopped after max_iter={result.n_iter} rounds "
                          f"with duality gap {result.duality_gap:.3g} "
                          f"(objective {result.objective:.6g}); increase max_iter or tol",
                          ConvergenceWarning, stacklevel=2)
        return self

    def _resolve_learner(self, fm):
        """The configured learner, or the default one for the map's structure."""
        if self.learner is None:
            return make_default_learner(type(fm).structure)
        return get_learner(self.learner)

    def _C(self, fm):
        return float(type(fm).default_C if self.C is None else self.C)

    def _log_round(self, info):
        if not logger.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[structsvm] %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
        logger.info("round %4d  objective %.6g  gap %.3g  constraints %s  %.2fs",
                    info["round"], info["objective"], info.get("gap", float("nan")),
                    info.get("n_constraints", "-"), info["time"])

    # ------------------------------------------------------------------ prediction
    def _decode(self, Xe, n):
        out = []
        for start in range(0, n, _PREDICT_CHUNK):
            idx = np.arange(start, min(n, start + _PREDICT_CHUNK))
            batch = self.feature_map_.batch_potentials(Xe, self.coef_, idx)
            out.extend(self.decoder_(batch))
        return out

    def predict(self, X):
        """Best structure for every input: a list of raw outputs."""
        check_is_fitted(self, "coef_")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        return self.feature_map_.decode_outputs(self._decode(Xe, len(X)))

    def score(self, X, Y):
        """1 − Σ_i Δ(y_i, ŷ_i) / Σ_i max Δ(y_i, ·): accuracy for zero-one loss,
        token accuracy for unnormalised Hamming loss."""
        check_is_fitted(self, "coef_")
        X, Y = as_sequence(X, "X"), as_sequence(Y, "Y")
        if len(X) != len(Y):
            raise ValueError(f"X has {len(X)} samples but Y has {len(Y)}")
        if len(X) == 0:
            raise ValueError("Cannot score an empty data set")
        fm = self.feature_map_
        Xe = fm.encode_inputs(X)
        Ye = fm.encode_outputs(Y, X)
        pred = self._decode(Xe, len(X))
        total = sum(self.loss_(y, p) for y, p in zip(Ye, pred))
        worst = sum(self.loss_.max_loss(y) for y in Ye)
        return 1.0 - total / worst if worst > 0 else 1.0

    def joint_feature(self, x, y):
        """Φ(x, y) of the fitted map (raw x and y)."""
        check_is_fitted(self, "coef_")
        return self.feature_map_.joint_feature(x, y)

    # ------------------------------------------------------------------ model files
    def save(self, path):
        """Write the fitted model to ``path`` (npz + json; see :mod:`structsvm.io`)."""
        from .io import save_model

        save_model(self, path)
        return path

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def fit(X, Y, *, feature_map=None, decoder=None, **params):
    """Train a :class:`StructuredSVM` and return it (shorthand).

    Parameters
    ----------
    X, Y : sequences of inputs and structured outputs.
    feature_map, decoder : see :class:`StructuredSVM`.
    **params : any other :class:`StructuredSVM` parameter (C, loss, learner, ...).

    Returns
    -------
    StructuredSVM
        The fitted estimator.
    """
    return StructuredSVM(feature_map=feature_map, decoder=decoder, **params).fit(X, Y)
