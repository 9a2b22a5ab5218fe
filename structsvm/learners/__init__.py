"""Learners: optimisers of the structural-SVM objective over a Problem."""
from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
from .dual_cd import DualCD
from .frank_wolfe import FrankWolfe
from .pegasos import Pegasos
from .perceptron import Perceptron

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane", "DualCD", "FrankWolfe", "Pegasos", "Perceptron",
           "LEARNERS", "get_learner"]

LEARNERS = {cls.name: cls for cls in (OneSlackCuttingPlane, NSlackCuttingPlane, DualCD,
                                      FrankWolfe, Pegasos, Perceptron)}


def get_learner(learner):
    """Resolve a learner name or instance (an instance is cloned, never mutated)."""
    from sklearn.base import clone

    if isinstance(learner, str):
        if learner not in LEARNERS:
            raise ValueError(f"Unknown learner {learner!r}; choose one of {sorted(LEARNERS)}")
        return LEARNERS[learner]()
    if isinstance(learner, tuple(LEARNERS.values())):
        return clone(learner)
    raise TypeError(f"learner must be a name or a structsvm learner, got "
                    f"{type(learner).__name__}")
