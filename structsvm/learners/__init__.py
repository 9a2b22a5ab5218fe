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
from ..registry import register
from ._choice import default_learner, get_learner
from ._qp import SOLVERS as _SOLVERS

if TYPE_CHECKING:  # imported on first use (a worker process needs the problem only)
    from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
    from .dual_cd import DualCD
    from .partitioned_cd import PartitionedCD
    from .frank_wolfe import FrankWolfe
    from .latent import CCCP
    from .multiclass_cd import MulticlassDualCD
    from .pegasos import Pegasos
    from .perceptron import Perceptron
    from .problem import Problem, Violation

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane", "DualCD", "PartitionedCD",
           "MulticlassDualCD", "FrankWolfe", "Pegasos", "Perceptron", "CCCP", "Problem",
           "Violation",
           "default_learner", "get_learner", "QP_SOLVERS"]

#: The working-set QP solvers of the cutting planes (their ``solver`` parameter):
#: ``"AUTO"``, the compiled ``"SMO"``, and cvxpy's back ends.
QP_SOLVERS = _SOLVERS

#: The built-in learners by name: "module:class", imported when first looked up.
BUILT_IN = {"one_slack": "cutting_plane:OneSlackCuttingPlane",
            "n_slack": "cutting_plane:NSlackCuttingPlane",
            "dual_cd": "dual_cd:DualCD",
            "partitioned_cd": "partitioned_cd:PartitionedCD",
            "multiclass_cd": "multiclass_cd:MulticlassDualCD",
            "frank_wolfe": "frank_wolfe:FrankWolfe",
            "pegasos": "pegasos:Pegasos",
            "perceptron": "perceptron:Perceptron",
            "cccp": "latent:CCCP"}
for _name, _where in BUILT_IN.items():
    register("learner", _name, f"{__name__}.{_where}")

__getattr__, __dir__ = attach(__name__, globals())
