"""StructuredSVM: the scikit-learn compatible estimator, ``structsvm.fit``, and its
model files (``StructuredSVM.save``, ``structsvm.load``).

The estimator builds on private modules: how its parameters resolve into plugins
(``_resolution``), the training run (``_training``, which returns the fitted state
the estimator adopts) and its model files' contents (``_saved_state``)."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _partitioned, _predictions, _saved_state, _training
from ._resolution import Resolution
from ._saved_state import Fitted
from ..io import MAX_BYTES
from ..protocols import as_sequence, capability
from ..structures.user.structure import check_savable

__all__ = ["StructuredSVM", "fit", "load", "read_checkpoint_info", "allowed_classes"]

#: examples decoded per batch when predicting or scoring
_PREDICT_CHUNK = 4096


class StructuredSVM(BaseEstimator):
    """Structural SVM: learn w so that argmax_y w·Φ(x, y) predicts structures.

    Parameters
    ----------
    feature_map : FeatureMap, Structure or callable, default=None
        Joint feature map Φ (e.g. :class:`~structsvm.structures.multiclass.features.MulticlassFeatures`,
        ``SequenceFeatures``), a :class:`structsvm.Structure` of your own, or a
        function ``phi(x, y)`` (then ``decoder`` is its argmax; see
        :class:`~structsvm.structures.user.structure.FunctionStructure`). Cloned and fitted in
        ``fit``; None means ``MulticlassFeatures()``.
    decoder : str, Decoder or callable, default=None
        Decoder name ("argmax", "viterbi", "tree", "sort", "exhaustive", ...); None
        uses the feature map's default (a Structure's ``argmax``). With a function
        ``feature_map``, a function ``argmax(x, w)`` returning the best output.
    loss : str, Loss or callable, default=None
        Task loss Δ; None uses the feature map's default (zero-one for classes,
        Hamming for sequences, a Structure's ``loss``). A callable
        ``f(y_true, y_pred)`` gets raw outputs.
    learner : str, learner object or None, default=None
        "dual_cd", "multiclass_cd", "one_slack", "n_slack", "frank_wolfe", "pegasos"
        or "perceptron", or a configured learner (e.g.
        ``OneSlackCuttingPlane(solver="osqp")``; grid-searchable as
        ``learner__solver``). None picks the feature map's default: the first of its
        ``default_learners`` that accepts the fitted problem
        (:func:`structsvm.learners.default_learner`: "one_slack" for rankings and
        for a :class:`structsvm.Structure`, "dual_cd" for the others, "multiclass_cd"
        for plain one-hot ``MulticlassFeatures`` problems; see docs/defaults.md, and
        docs/learners.md for the measurements), or "one_slack" when ``constraints``
        are given or the loss spans the whole data set (they need the cutting plane);
        ``learner_`` names the one that ran. Any object with a ``name`` and a
        ``solve`` method (:class:`structsvm.protocols.Learner`) is accepted.
    C : float, default=None
        Weight of the summed slacks: the objective is ½‖w‖² + C Σ_i ξ_i. None uses
        the loss's ``default_C`` where it declares one (losses over a whole data
        set), else the feature map's ``default_C`` (docs/defaults.md; smaller for
        sequences, where the slacks sum Hamming losses over many tokens).
    tol : float, default=None
        Cutting plane, dual_cd, frank_wolfe: stop when the certified duality gap ≤
        tol × primal objective (the returned objective is then within a relative tol
        of the optimum).
        Stochastic learners: stop when the objective changes by less than tol
        (relative) between evaluations. None uses the feature map's ``default_tol``
        (docs/defaults.md; larger for structures whose accuracy saturates long
        before the gap closes, such as sequences).
    max_iter : int, default=None
        Rounds (cutting planes), oracle passes (dual_cd, frank_wolfe), passes
        (multiclass_cd) or epochs (pegasos, perceptron). None uses the learner's own
        cap (docs/defaults.md).
    rescaling : {"margin", "slack"}, default="margin"
        How Δ enters the constraints. Slack rescaling needs an enumerable output
        space (multiclass, exhaustive).
    n_jobs : int, default=None
        Workers of the oracle (loss-augmented decoding of the training examples, in
        chunks): threads by default, kept for the whole fit; processes, a Dask
        cluster or Ray inside ``joblib.parallel_config(backend="loky" | "dask" |
        "ray")``. None means 1 unless an enclosing ``joblib.parallel_config`` sets
        ``n_jobs``. The model does not depend on it (see docs/scaling.md).
        ``multiclass_cd`` (the default for plain multiclass problems) never calls
        the oracle and runs in one thread whatever ``n_jobs``; so do problems with
        fewer than 512 training examples (:data:`structsvm.learners.problem.MIN_REMOTE`: no
        pool is opened) and oracle calls on fewer than 256 examples (2
        :data:`~structsvm.learners.problem.MIN_CHUNK`: such a call is one chunk; Pegasos'
        mini-batches, small sweep batches); with workers in other processes, calls
        on fewer than 512 examples run in the calling thread too.
    random_state : int, RandomState or None, default=None
        Seeds the stochastic learners.
    warm_start : bool, default=False
        Continue from the previous fit: its ``coef_``, the fitted feature map and the
        learner's state (the cutting planes' working set, Pegasos' and the
        perceptron's step counters and averages). Learners that cannot continue
        (frank_wolfe) refuse with a ValueError.
    verbose : int, default=0
        0 fits silently. > 0 says when the first round compiles loops and shows
        each round the learner reports (round, objective, duality gap where the
        learner has one, time; ``dual_cd`` and ``multiclass_cd`` report their
        certifying passes only): as a progress bar when standard error is a terminal
        (not with ``CI`` set or ``TERM=dumb``), otherwise as one line per reported
        round logged to the "structsvm" logger (files, pipes, CI logs); the
        documentation's Robustness page explains each column.
    constraints : callable, default=None
        ``f(w, feature_map)`` returning a list of cvxpy constraints on the cvxpy
        Variable ``w`` (e.g. ``[w[feature_map.feature_index("transition:*")] >= 0]``);
        the fitted map's ``feature_names_`` / ``feature_index`` address blocks by name.
        The cutting planes (one_slack, n_slack) then solve their working-set QP in
        primal form with cvxpy and certify the gap of the constrained problem; other
        learners refuse. See docs/constraints.md.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights w.
    feature_map_ : FeatureMap
        The fitted map: ``feature_map_.joint_feature(x, y)`` works on raw x, y.
    decoder_, loss_, learner_ : the resolved plugins.
    C_, tol_ : float
        The C and tol the fit used (the parameters, or the feature map's defaults).
    n_iter_ : int
    objective_ : float
        Primal objective ½‖w‖² + C Σ_i ξ_i at ``coef_`` (exact decoding).
    objective_curve_ : list of float
    duality_gap_ : float
        Primal − dual at the end (nan for learners without a dual).
    converged_ : bool
    interrupted_ : bool
        Training was stopped by Ctrl-C; ``coef_`` holds the best weights reached.
    learner_state_ : dict or None
        The learner's state for ``warm_start`` (opaque; not saved in model files).
        The cutting planes keep their working set and cache only when
        ``warm_start=True`` was set for this fit (otherwise only their counts of
        oracle calls and QP rounds); Pegasos and the perceptron always keep theirs.

    Notes
    -----
    Ctrl-C during ``fit`` stops training after the current round (a second Ctrl-C
    at once) and keeps the weights with the lowest objective seen so far, with
    ``converged_ = False``, ``interrupted_ = True`` and a ConvergenceWarning.

    References
    ----------
    I. Tsochantaridis, T. Joachims, T. Hofmann, Y. Altun. Large margin methods for
    structured and interdependent output variables. JMLR 6, 2005.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.structures import MulticlassFeatures
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.2])]
    >>> model = structsvm.fit(X, ["a", "b", "a"], feature_map=MulticlassFeatures(),
    ...                       decoder="argmax", C=10.0)
    >>> model.predict([np.array([0.9, 0.1]), np.array([0.1, 0.8])])
    ['a', 'b']
    """

    def __init__(self, feature_map=None, decoder=None, loss=None, learner=None,
                 C=None, tol=None, max_iter=None, rescaling="margin", n_jobs=None,
                 random_state=None, warm_start=False, verbose=0, constraints=None):
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
        self.constraints = constraints

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y=None, *, checkpoint=None, resume=None, checkpoint_every=60.0):
        """Train on inputs X and structured outputs Y (lists of equal length).

        Parameters
        ----------
        X, Y : sequences of inputs and structured outputs, or X a partitioned data set
            (:class:`~structsvm.corpora.Files`, :class:`~structsvm.corpora.DaskBag`:
            its partitions read by the workers, see the Scaling page) and Y None.
        checkpoint : str or Path, optional
            Write the training state (a model file with the best weights so far and
            the rounds done) here every ``checkpoint_every`` seconds, on Ctrl-C and
            at the end, with the learner's state where it has one (the dual
            variables of "dual_cd" and "multiclass_cd"). The learner is the same as
            without a checkpoint; a checkpoint of a learner that is not resumable
            (its ``resumable`` attribute) holds its best weights but cannot be
            resumed.
        resume : str or Path, optional
            Continue from a checkpoint written by a run with the same parameters on
            the same data (resumable learners: the default ones, "one_slack" and
            "n_slack"; they reach the same optimum, within ``tol``, as an
            uninterrupted run, and ``n_iter_`` counts on from the checkpoint's).
        checkpoint_every : float, default=60.0
            Seconds between checkpoints.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters or data (None/NaN labels, labels of different types that
            print the same), a checkpoint from other parameters or data, or a
            ``checkpoint`` of a structure a model file cannot hold.
        """
        resolution = Resolution(type(self), self.get_params(deep=False))
        if Y is None and not _partitioned.is_partitioned(X):
            raise TypeError("fit needs Y, the outputs of X (only a partitioned data "
                            "set, such as structsvm.corpora.Files, carries its own)")
        if Y is not None and _partitioned.is_partitioned(X):
            raise TypeError("a partitioned data set carries its outputs: pass Y=None")
        user = resolution.user_structure()
        if checkpoint is not None and user is not None:
            check_savable(user)  # before training, not at the first checkpoint
        previous = self._fitted() if self.warm_start and "coef_" in vars(self) else None
        fitted = _partitioned.fit_on_workers(resolution, X, Y, previous=previous,
                                             checkpoint=checkpoint, resume=resume,
                                             checkpoint_every=checkpoint_every)
        if fitted is not None:
            return self._adopt(fitted)
        return self._adopt(_training.run_fit(
            resolution, X, Y, previous=previous, checkpoint=checkpoint, resume=resume,
            checkpoint_every=checkpoint_every))

    def _adopt(self, fitted):
        """Make this estimator fitted from a :class:`Fitted` state (returns self):
        the one place its fitted attributes are set, by ``fit`` and :func:`load`."""
        self.feature_map_ = fitted.feature_map
        self.decoder_, self.loss_, self.learner_ = fitted.decoder, fitted.loss, \
            fitted.learner
        self.coef_ = np.array(fitted.coef, dtype=float)
        self.objective_ = float(fitted.objective)
        self.objective_curve_ = [float(v) for v in fitted.objective_curve]
        self.n_iter_ = int(fitted.n_iter)
        self.duality_gap_ = float(fitted.duality_gap)
        self.converged_ = bool(fitted.converged)
        self.interrupted_ = bool(fitted.interrupted)
        self.C_, self.tol_ = float(fitted.C), float(fitted.tol)
        self.learner_state_ = fitted.learner_state
        return self

    def _fitted(self):
        """This estimator's fitted state, as fit returned it."""
        return Fitted(self.feature_map_, self.coef_, self.objective_,
                      self.objective_curve_, self.n_iter_, self.duality_gap_,
                      self.converged_, interrupted=self.interrupted_,
                      decoder=self.decoder_, loss=self.loss_, learner=self.learner_,
                      C=self.C_, tol=self.tol_,
                      learner_state=vars(self).get("learner_state_"))

    # ------------------------------------------------------------------ fitted
    def _decode(self, Xe, n):
        out = []
        for start in range(0, n, _PREDICT_CHUNK):
            idx = np.arange(start, min(n, start + _PREDICT_CHUNK))
            batch = self.feature_map_.batch_potentials(Xe, self.coef_, idx)
            out.extend(self.decoder_(batch))
        return out

    def predict(self, X, constraints=None):
        """Best structure for every input: a list of raw outputs.

        For a partitioned data set (:class:`~structsvm.corpora.Files`,
        :class:`~structsvm.corpora.DaskBag`): one list per partition, each computed
        by the worker that reads the partition (``n_jobs`` processes, or the Dask
        cluster of an enclosing ``joblib.parallel_config(backend="dask")``).

        Parameters
        ----------
        X : sequence of inputs, or a partitioned data set
        constraints : OutputConstraints or list of them, optional
            Rules the outputs must obey
            (:class:`~structsvm.structures.constraints.OutputConstraints`: parts
            fixed, labels allowed or forbidden per part, BIO/BIOES or a user's own
            transitions), one for every input or a list with one (or None) per
            input: each output is then the best among those the rules allow, found
            by the same exact decoder. Sequences, dependency trees and classes take
            them.

        Raises
        ------
        ValueError
            A constraint names an unknown label or a part beyond an output's end, or
            allows no output (the message names the sample).
        TypeError
            Constraints for a structure that takes none.
        """
        check_is_fitted(self, "coef_")
        if _partitioned.is_partitioned(X):
            if constraints is not None:
                raise TypeError("predict: constraints apply to a list of inputs, not "
                                "to a partitioned data set")
            return _partitioned.predict_partitioned(self, X)
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        if constraints is None:
            return self.feature_map_.decode_outputs(self._decode(Xe, len(X)))
        return self.feature_map_.decode_outputs(
            _predictions.decode(self, Xe, len(X), constraints))

    def predict_max_marginals(self, X, constraints=None):
        """The max-marginals of every input: for each part and each choice there, the
        best score of an output that makes that choice.

        μ_p(c) = max {w·Φ(x, y) : y makes choice c at part p}, by the decoder's
        max-marginal search (forward-backward in the (max, +) semiring for chains,
        inside-outside over Eisner's spans for projective trees, the scores
        themselves for classes): exact, in about the time of two decodes.

        Parameters
        ----------
        X : sequence of inputs
        constraints : OutputConstraints or list of them, optional
            Only outputs the rules allow count (see :meth:`predict`); a choice they
            forbid gets −inf.

        Returns
        -------
        list of ndarray of shape (n_parts, n_choices)
            One table per input. Parts and choices: for a sequence, tokens × the
            tags of ``feature_map_.tags_``; for a dependency tree, words × heads
            0 .. n (× relations, code ``relation * (n + 1) + head``); for a class,
            one part × ``feature_map_.classes_``.

        Raises
        ------
        TypeError
            The decoder has no max-marginal search (its ``max_marginals``).
        """
        check_is_fitted(self, "coef_")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        return [table for table, _, _ in
                _predictions.max_marginals(self, Xe, len(X), constraints)]

    def predict_margins(self, X, level="part", constraints=None):
        """How far the predicted output of every input is from changing.

        The margin of a part is the best output's score minus the best score of an
        output that chooses differently there: μ_p(ŷ_p) − max_{c ≠ ŷ_p} μ_p(c) (0 on
        a tie, +inf where nothing else is allowed). The margin of the output is its
        score minus the second best's: the smallest of its parts' margins.
        :class:`~structsvm.estimator.calibration.CalibratedStructuredSVM` turns
        either into probabilities.

        Parameters
        ----------
        X : sequence of inputs
        level : {"part", "output"}, default="part"
        constraints : OutputConstraints or list of them, optional
            Only outputs the rules allow count (see :meth:`predict`).

        Returns
        -------
        list of ndarray of shape (n_parts,), or ndarray of shape (n_samples,)
            ``level="part"``: the margins of every input's parts (tokens, words, the
            one part of a class); ``level="output"``: one margin per input.

        Examples
        --------
        >>> import numpy as np, structsvm
        >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
        >>> model = structsvm.fit(X, ["a", "b"], C=10.0)
        >>> np.round(model.predict_margins([np.array([1.0, 0.0])], level="output"), 2)
        array([1.])
        """
        check_is_fitted(self, "coef_")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return [] if level == "part" else np.zeros(0)
        Xe = self.feature_map_.encode_inputs(X)
        return _predictions.margins(self, Xe, len(X), constraints, level)

    def predict_nbest(self, X, k=5, constraints=None):
        """The ``k`` best outputs of every input, best first, with their scores.

        By the decoder's k-best search (k-best Viterbi for chains of any order,
        Huang & Chiang's k-best parsing over Eisner's spans and CKY's items, the k
        best classes, Lawler's partition of orderings for rankings), or by scoring
        every output where it has none and the outputs are few enough to enumerate.

        Parameters
        ----------
        X : sequence of inputs
        k : int, default=5
        constraints : OutputConstraints or list of them, optional
            Only outputs the rules allow are listed (see :meth:`predict`).

        Returns
        -------
        list of list of (output, float)
            For every input up to k pairs (raw output, score w·Φ(x, y)), scores
            non-increasing; fewer when fewer outputs exist. Outputs tied in score
            come in the search's order.

        Raises
        ------
        TypeError
            The decoder has no k-best search and the outputs cannot be enumerated.
        """
        check_is_fitted(self, "coef_")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        found = _predictions.nbest(self, Xe, len(X), k, constraints)
        flat = [y for outputs, _ in found for y in outputs]
        raw = self.feature_map_.decode_outputs(flat) if flat else []
        out, at = [], 0
        for outputs, scores in found:
            m = len(outputs)
            out.append(list(zip(raw[at:at + m], (float(s) for s in scores))))
            at += m
        return out

    def predict_latent(self, X):
        """Best complete output (y, h) of every input, for a map whose outputs hold
        a hidden part h (``feature_map_.latent``): a list of raw pairs.

        Raises
        ------
        TypeError
            The feature map has no hidden part.
        """
        check_is_fitted(self, "coef_")
        if not capability(self.feature_map_, "latent"):
            raise TypeError(f"predict_latent: {type(self.feature_map_).__name__} has no "
                            "hidden part (its outputs are y only); use predict")
        X = as_sequence(X, "X")
        if len(X) == 0:
            return []
        Xe = self.feature_map_.encode_inputs(X)
        return self.feature_map_.decode_latent(self._decode(Xe, len(X)))

    def score(self, X, Y):
        """1 − Σ_i Δ(y_i, ŷ_i) / Σ_i max Δ(y_i, ·): accuracy for zero-one loss,
        token accuracy for unnormalised Hamming loss; 1 − Δ(Y, Ŷ) / max Δ(Y, ·) for a
        loss over the whole data set (1 − F1 for an F1 loss: F1)."""
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
        if type(self.loss_).decomposition == "dataset":
            Ye, pred = list(Ye), list(pred)
            total, worst = self.loss_(Ye, pred), self.loss_.max_loss(Ye)
        else:
            total = sum(self.loss_(y, p) for y, p in zip(Ye, pred))
            worst = sum(self.loss_.max_loss(y) for y in Ye)
        return 1.0 - total / worst if worst > 0 else 1.0

    def joint_feature(self, x, y):
        """Φ(x, y) of the fitted map (raw x and y)."""
        check_is_fitted(self, "coef_")
        return self.feature_map_.joint_feature(x, y)

    # ------------------------------------------------------------------ model files
    def save(self, path):
        """Write the fitted model to ``path`` (npz + json; see :mod:`structsvm.io`).

        The file is written to a temporary file in the same folder and then renamed,
        so ``path`` always holds a complete model (also when training is
        interrupted).

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        path
            As given.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The model is not fitted.
        ValueError
            A parameter cannot be stored (e.g. a user function); the message names it.
        FileNotFoundError
            The folder of ``path`` does not exist.
        """
        check_is_fitted(self, "coef_")
        self._save(path)
        return path

    def _save(self, path):
        _saved_state.write(path, type(self), self.get_params(deep=False),
                           self._fitted())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def fit(X, Y=None, *, feature_map=None, decoder=None, checkpoint=None, resume=None,
        checkpoint_every=60.0, **params):
    """Train a :class:`StructuredSVM` and return it (shorthand).

    Parameters
    ----------
    X, Y : sequences of inputs and structured outputs, or X a partitioned data set
        and Y None (see :meth:`StructuredSVM.fit`).
    feature_map, decoder
        See :class:`StructuredSVM`.
    checkpoint, resume, checkpoint_every
        See :meth:`StructuredSVM.fit`.
    **params
        Any other :class:`StructuredSVM` parameter (C, loss, learner, ...).

    Returns
    -------
    StructuredSVM
        The fitted estimator.
    """
    return StructuredSVM(feature_map=feature_map, decoder=decoder, **params).fit(
        X, Y, checkpoint=checkpoint, resume=resume, checkpoint_every=checkpoint_every)


# ---------------------------------------------------------------------- model files
def load(path, *, trusted=(), max_bytes=MAX_BYTES):
    """Load a model written by ``model.save(path)``; predictions are identical.

    Parameters
    ----------
    path : str or Path
    trusted : sequence of classes, default=()
        Classes of your own the file may name (a :class:`structsvm.Structure`
        subclass, say), matched by module and qualified name. The file names a class
        by its import path; it is instantiated only when it is structsvm's own
        (:func:`allowed_classes`) or one of these, never imported by the name read
        from the file.
    max_bytes : int, default=MAX_BYTES
        Refuse files whose arrays declare more bytes than this (checked before
        anything is inflated; :data:`structsvm.io.MAX_BYTES`).

    Returns
    -------
    StructuredSVM

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    structsvm.io.ModelFileError
        The file is damaged, truncated, edited, too large, of another format or
        version, or names a class model files may not name (a structure's class
        not in ``trusted``); the message names the file and the reason.

    Examples
    --------
    >>> import numpy as np, structsvm, tempfile, os
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    >>> model = structsvm.fit(X, ["a", "b"])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> structsvm.load(model.save(path)).predict(X)
    ['a', 'b']
    """
    model, fitted, _ = _saved_state.read(path, max_bytes, StructuredSVM, trusted=trusted)
    return model._adopt(fitted)


def read_checkpoint_info(path, *, trusted=(), max_bytes=MAX_BYTES):
    """The model in ``path`` and the training progress saved with it.

    Parameters
    ----------
    path : str or Path
        A file written by ``StructuredSVM.fit(..., checkpoint=path)``.
    trusted, max_bytes
        As :func:`load`.

    Returns
    -------
    model : StructuredSVM
    info : dict
        The ``checkpoint`` entry of the header (empty for an ordinary model file).

    Raises
    ------
    FileNotFoundError, structsvm.io.ModelFileError
        As :func:`load`.

    Examples
    --------
    >>> import numpy as np, structsvm, tempfile, os
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    >>> path = os.path.join(tempfile.mkdtemp(), "ck.npz")
    >>> _ = structsvm.StructuredSVM().fit(X, ["a", "b"], checkpoint=path)
    >>> model, info = read_checkpoint_info(path)
    >>> info["complete"], info["n_iter"] == model.n_iter_
    (True, True)
    """
    model, fitted, info = _saved_state.read(path, max_bytes, StructuredSVM,
                                            checkpoint=True, trusted=trusted)
    return model._adopt(fitted), info


def allowed_classes():
    """Every class a model file may name, by "module:Class".

    Derived from the registries at call time (:mod:`structsvm.registry`), so new
    plugins are allowed without editing structsvm: the estimator; the feature map of
    every registered structure; every registered learner and loss class; each of
    these also under the name of the package that exports it; the names model files
    written before a class moved give it; and the classes registered with
    :func:`structsvm.io.register_model_class`.

    Returns
    -------
    dict of str to type

    Examples
    --------
    >>> allowed = allowed_classes()
    >>> allowed["structsvm.structures:HammingLoss"].__name__    # the package's name
    'HammingLoss'
    >>> "structsvm.cli:main" in allowed
    False
    """
    return _saved_state.allowed_classes(StructuredSVM)
