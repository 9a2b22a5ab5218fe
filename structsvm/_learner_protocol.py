"""The learner's side of the plugin contract: :class:`Learner` and what it returns,
:class:`LearnerResult`.

Private: :mod:`structsvm.protocols` is the public interface (every name here is
exported there). Imports nothing from structsvm.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

__all__ = ["Learner", "LearnerResult"]


@runtime_checkable
class Learner(Protocol):
    """An optimiser of the structural-SVM objective over a :class:`Problem`.

    ``solve(problem, w0, *, max_iter, tol, random_state, callback)`` returns a
    :class:`LearnerResult` (the learner keeps no state on ``self``); ``name`` is the
    name it is registered and reported under. The estimator clones a learner
    (``get_params`` where it has one, a deep copy otherwise).

    ``callback(info)``, where given, is called once per round or epoch with a dict:
    ``round``, ``w``, ``objective``, ``time`` and, where the learner has them,
    ``gap``, ``n_constraints``, ``mistakes`` and ``state`` (a function of no
    arguments returning the learner's state at that round, as numbers, strings and
    arrays, which a checkpoint stores). The callback may raise to stop training.

    Optional capabilities (:data:`LEARNER_CAPABILITIES`, defaults in
    :class:`LearnerBase`), each a class attribute:

    - ``certifies_gap``: ``tol`` is a relative duality gap, the result's
      ``duality_gap`` certifies it (a ConvergenceWarning when ``max_iter`` stops it);
    - ``resumable``: a run continued from a checkpoint reaches the same optimum (from
      the saved ``state`` when the learner gives one in its callback, else from the
      saved weights);
    - ``accepts_constraints``: ``solve(..., constraints=f)`` honours constraints on w;
    - ``supports_warm_start``: False refuses ``warm_start=True``;
    - ``keeps_state``: ``solve(..., state=...)`` takes ``extra["state"]`` of a
      previous result (warm start) or a checkpoint's state (resume);
    - ``refusal(feature_map, decoder, loss, rescaling)``: a static method saying why
      the learner cannot solve such a problem (None when it can), for learners that
      solve only some problems.
    """

    name: ClassVar[str]

    def solve(self, problem, w0, *, max_iter, tol, random_state, callback=None):
        """Minimise ½‖w‖² + C Σ ξ_i from ``w0``; return a :class:`LearnerResult`."""


@dataclass
class LearnerResult:
    """What a learner returns: the model and its certificate.

    Attributes
    ----------
    w : ndarray of shape (n_features,)
        Returned weights.
    objective : float
        Primal objective ½‖w‖² + C Σ ξ_i at ``w`` (computed with exact decoding).
    objective_curve : list of float
        Primal objective per round (or per evaluation for stochastic learners).
    n_iter : int
        Rounds (cutting plane) or epochs (stochastic learners) run.
    duality_gap : float
        Primal minus dual objective at the end (``nan`` when the learner has no dual).
    converged : bool
    extra : dict
        Learner-specific diagnostics (working-set size, ...).
    """

    w: np.ndarray
    objective: float
    objective_curve: list
    n_iter: int
    duality_gap: float = float("nan")
    converged: bool = False
    extra: dict = field(default_factory=dict)
