"""How a learner is chosen: by name or object (:func:`get_learner`), or as a feature
map's default (:func:`default_learner`). Re-exported by :mod:`structsvm.learners`;
a module of its own so that a learner choosing another (the CCCP of a latent map)
imports it without importing the package."""
from ..protocols import Learner, capability
from ..registry import lookup

__all__ = ["default_learner", "get_learner"]


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
