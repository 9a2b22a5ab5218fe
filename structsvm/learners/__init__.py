"""Learners: optimisers of the structural-SVM objective over a Problem."""
from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
from .dual_cd import DualCD
from .frank_wolfe import FrankWolfe
from .pegasos import Pegasos
from .perceptron import Perceptron

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane", "DualCD", "FrankWolfe", "Pegasos",
           "Perceptron", "LEARNERS", "DEFAULT_LEARNERS", "DEFAULT_PARAMS", "default_learner",
           "make_default_learner", "get_learner"]

LEARNERS = {cls.name: cls for cls in (OneSlackCuttingPlane, NSlackCuttingPlane, DualCD,
                                      FrankWolfe, Pegasos, Perceptron)}


#: The learner ``StructuredSVM(learner=None)`` runs, per output structure (the
#: feature map's ``structure``); any other structure gets ``DEFAULT_LEARNERS[None]``.
#: The measurements behind each choice: docs/learners.md.
DEFAULT_LEARNERS = {None: "dual_cd", "multiclass": "dual_cd", "tree": "dual_cd",
                    "chain": "dual_cd", "ranking": "one_slack"}


#: Parameters of the default learner per structure, where measurements preferred
#: others than the learner's own defaults: a multiclass/taxonomy oracle call costs
#: O(n_features) on top of its examples (the class-score product), so fewer, larger
#: oracle batches per pass (QC: 8.6 s instead of 14.9 s CPU, same passes). Since the
#: multiclass scores gather only the columns a batch uses, 1, 2 and 4 batches measure
#: alike on QC and digits (docs/learners.md); 2 stays.
DEFAULT_PARAMS = {"multiclass": {"n_batches": 2}, "tree": {"n_batches": 2},
                  "chain": {"n_batches": 16, "inner_passes": 0}}


def make_default_learner(structure):
    """The configured default learner for a feature map's ``structure``."""
    learner = get_learner(default_learner(structure))
    return learner.set_params(**DEFAULT_PARAMS.get(structure, {}))


def default_learner(structure):
    """Name of the default learner for a feature map's ``structure``.

    Examples
    --------
    >>> default_learner("chain"), default_learner("ranking")
    ('dual_cd', 'one_slack')
    """
    return DEFAULT_LEARNERS.get(structure, DEFAULT_LEARNERS[None])


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
