"""Learners: optimisers of the structural-SVM objective over a :class:`Problem`, and
the problem's oracle that they share (:mod:`structsvm.learners.problem`).

Learners are registered by name (:func:`structsvm.registry.register`, kind
``"learner"``; the built-in ones in :data:`BUILT_IN`, each imported on first use, so
that importing the problem alone, as a worker process does, imports no learner and
no scikit-learn), :func:`get_learner` resolves a name or passes any object
satisfying :class:`structsvm.protocols.Learner` through (cloned),
and :func:`default_learner` picks the one a structure trains with when the
estimator's ``learner`` is None: the first of the feature map's
``default_learners`` that accepts the problem.
"""
from typing import TYPE_CHECKING

from .._lazy import attach
from ..protocols import Learner, capability
from ..registry import lookup, register
from ._qp import SOLVERS as _SOLVERS

if TYPE_CHECKING:  # imported on first use (a worker process needs the problem only)
    from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
    from .dual_cd import DualCD
    from .frank_wolfe import FrankWolfe
    from .latent import CCCP
    from .multiclass_cd import MulticlassDualCD
    from .pegasos import Pegasos
    from .perceptron import Perceptron
    from .problem import Problem, Violation

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane", "DualCD", "MulticlassDualCD",
           "FrankWolfe", "Pegasos", "Perceptron", "CCCP", "Problem", "Violation",
           "default_learner", "get_learner", "QP_SOLVERS"]

#: The working-set QP solvers of the cutting planes (their ``solver`` parameter):
#: ``"AUTO"``, the compiled ``"SMO"``, and cvxpy's back ends.
QP_SOLVERS = _SOLVERS

#: The built-in learners by name: "module:class", imported when first looked up.
BUILT_IN = {"one_slack": "cutting_plane:OneSlackCuttingPlane",
            "n_slack": "cutting_plane:NSlackCuttingPlane",
            "dual_cd": "dual_cd:DualCD",
            "multiclass_cd": "multiclass_cd:MulticlassDualCD",
            "frank_wolfe": "frank_wolfe:FrankWolfe",
            "pegasos": "pegasos:Pegasos",
            "perceptron": "perceptron:Perceptron",
            "cccp": "latent:CCCP"}
for _name, _where in BUILT_IN.items():
    register("learner", _name, f"{__name__}.{_where}")

__getattr__, __dir__ = attach(__name__, globals())


def default_learner(feature_map, plugins=None, which="default_learners"):
    """The learner a feature map trains with by default, configured.

    Parameters
    ----------
    feature_map : FeatureMap (class or instance)
        Its ``default_learners``: ``(name, parameters)`` pairs in order of preference
        (:data:`structsvm.protocols.FEATURE_MAP_CAPABILITIES`).
    plugins : tuple, optional
        ``(feature_map, decoder, loss, rescaling)`` of the problem, the map fitted:
        then a learner whose ``refusal`` refuses them is passed over. Without them
        the first learner that refuses nothing up front is chosen (a learner with a
        ``refusal`` needs the fitted problem to accept it).
    which : {"default_learners", "convex_learners"}, default="default_learners"
        The capability read: a latent map's ``convex_learners`` are those of the
        convex problem of each round (:class:`~structsvm.learners.CCCP`).

    Returns
    -------
    Learner

    Examples
    --------
    >>> from structsvm.structures import MulticlassFeatures, SequenceFeatures
    >>> default_learner(SequenceFeatures).get_params()["n_batches"]
    16
    >>> default_learner(MulticlassFeatures).name   # multiclass_cd needs the problem
    'dual_cd'
    """
    choices = list(capability(feature_map, which))
    if not choices:
        raise ValueError(f"{type(feature_map).__name__} declares no default learner")
    for name, params in choices:
        cls = lookup("learner", name)
        refusal = capability(cls, "refusal")
        if refusal is None or (plugins is not None and refusal(*plugins) is None):
            return cls(**params)
    name, params = choices[-1]
    return lookup("learner", name)(**params)


def get_learner(learner):
    """Resolve a learner name or object.

    Parameters
    ----------
    learner : str or Learner
        A registered name, or any object with a ``name`` and a ``solve`` method
        (:class:`structsvm.protocols.Learner`): it is cloned (``get_params`` where it
        has one, a deep copy otherwise), never mutated.

    Returns
    -------
    Learner

    Raises
    ------
    ValueError
        Unknown name.
    TypeError
        Neither a name nor a learner.
    """
    from sklearn.base import clone

    if isinstance(learner, str):
        return lookup("learner", learner)()
    if not isinstance(learner, type) and isinstance(learner, Learner):
        return clone(learner, safe=False)
    raise TypeError(f"learner must be a name or a learner (an object with a name and a "
                    f"solve method), got {type(learner).__name__}")
