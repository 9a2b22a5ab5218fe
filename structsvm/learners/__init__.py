"""Learners: optimisers of the structural-SVM objective over a Problem.

Learners live in a registry (name → class, :data:`LEARNERS`); a learner class is
added with :func:`register_learner`, and :func:`get_learner` resolves a name or
passes any object satisfying :class:`structsvm.protocols.Learner` through (cloned).
"""
from ..protocols import Learner, capability
from .cutting_plane import NSlackCuttingPlane, OneSlackCuttingPlane
from .dual_cd import DualCD
from .frank_wolfe import FrankWolfe
from .multiclass_cd import MulticlassDualCD
from .pegasos import Pegasos
from .perceptron import Perceptron

__all__ = ["OneSlackCuttingPlane", "NSlackCuttingPlane", "DualCD", "MulticlassDualCD",
           "FrankWolfe", "Pegasos", "Perceptron", "LEARNERS", "DEFAULT_LEARNERS",
           "SPECIALISED_DEFAULTS", "DEFAULT_PARAMS", "default_learner",
           "make_default_learner", "get_learner", "register_learner"]

LEARNERS = {}


def register_learner(cls):
    """Register a learner class under its ``name`` (usable as a decorator).

    Parameters
    ----------
    cls : type
        A class whose instances satisfy :class:`structsvm.protocols.Learner`,
        constructible without arguments; its optional capabilities are class
        attributes (:class:`structsvm.protocols.LearnerBase`).

    Returns
    -------
    cls

    Raises
    ------
    TypeError
        ``cls`` has no string ``name`` or no ``solve``.
    """
    try:
        name, solve = cls.name, cls.solve
    except AttributeError:
        name = solve = None
    if not (isinstance(cls, type) and isinstance(name, str) and name and callable(solve)):
        raise TypeError(f"register_learner needs a learner class with a str name and a "
                        f"solve method, got {cls!r}")
    LEARNERS[name] = cls
    return cls


for _cls in (OneSlackCuttingPlane, NSlackCuttingPlane, DualCD, MulticlassDualCD,
             FrankWolfe, Pegasos, Perceptron):
    register_learner(_cls)


#: The learner ``StructuredSVM(learner=None)`` runs, per output structure (the
#: feature map's ``structure``); any other structure gets ``DEFAULT_LEARNERS[None]``.
#: The measurements behind each choice: docs/learners.md; a structsvm.Structure
#: ("user": its oracle calls Python per example) gets the learner with the fewest
#: oracle passes, which converges at every C.
DEFAULT_LEARNERS = {None: "dual_cd", "multiclass": "dual_cd", "tree": "dual_cd",
                    "chain": "dual_cd", "ranking": "one_slack", "user": "one_slack",
                    "alignment": "dual_cd"}

#: Specialised learners the default prefers for a structure when the problem is one
#: they solve (their ``refusal(feature_map, decoder, loss, rescaling)`` is None):
#: plain one-hot multiclass problems get the sequential dual method of Crammer-Singer
#: SVMs; class-attribute maps, other decoders or losses keep ``DEFAULT_LEARNERS``.
SPECIALISED_DEFAULTS = {"multiclass": "multiclass_cd"}


#: Parameters of the default learner per structure, where measurements preferred
#: others than the learner's own defaults: a multiclass/taxonomy oracle call costs
#: O(n_features) on top of its examples (the class-score product), so these take
#: fewer, larger oracle batches per pass (docs/learners.md has the measurements).
DEFAULT_PARAMS = {"multiclass": {"n_batches": 2}, "tree": {"n_batches": 2},
                  "chain": {"n_batches": 16, "inner_passes": 0}}


def make_default_learner(structure, plugins=None):
    """The configured default learner for a feature map's ``structure`` (and, when
    given, the fitted ``plugins``: see :func:`default_learner`)."""
    name = default_learner(structure, plugins)
    learner = get_learner(name)
    if name != DEFAULT_LEARNERS.get(structure, DEFAULT_LEARNERS[None]):
        return learner  # a specialised learner, at its own defaults
    return learner.set_params(**DEFAULT_PARAMS.get(structure, {}))


def default_learner(structure, plugins=None):
    """Name of the default learner for a feature map's ``structure``.

    Parameters
    ----------
    structure : str or None
    plugins : tuple, optional
        ``(feature_map, decoder, loss, rescaling)`` of the problem, the map fitted:
        then the structure's specialised learner (:data:`SPECIALISED_DEFAULTS`) is
        chosen when it accepts them.

    Examples
    --------
    >>> default_learner("chain"), default_learner("ranking")
    ('dual_cd', 'one_slack')
    """
    special = SPECIALISED_DEFAULTS.get(structure)
    if plugins is not None and special is not None and \
            _accepts(LEARNERS[special], plugins):
        return special
    return DEFAULT_LEARNERS.get(structure, DEFAULT_LEARNERS[None])


def _accepts(cls, plugins):
    refusal = capability(cls, "refusal")
    return refusal is None or refusal(*plugins) is None


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
        if learner not in LEARNERS:
            raise ValueError(f"Unknown learner {learner!r}; choose one of {sorted(LEARNERS)}")
        return LEARNERS[learner]()
    if not isinstance(learner, type) and isinstance(learner, Learner):
        return clone(learner, safe=False)
    raise TypeError(f"learner must be a name or a learner (an object with a name and a "
                    f"solve method), got {type(learner).__name__}")
