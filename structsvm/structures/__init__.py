"""Joint feature maps Φ(x, y), and their registry (:data:`FEATURE_MAPS`,
:func:`register_feature_map`).

The maps are imported the first time one is used (or the registry is read), so
importing this package alone loads neither scikit-learn nor numba.
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .multiclass.features import MulticlassFeatures, MulticlassPotentials
    from .sequence.features import ChainPotentials, SequenceFeatures
    from .taxonomy.features import TaxonomyFeatures, TreePotentials
    from .ranking.features import RankingFeatures, RankingPotentials
    from .grammar.features import GrammarFeatures, GrammarPotentials
    from .graph.features import GraphFeatures, GraphPotentials
    from .alignment.features import AlignmentFeatures, AlignmentPotentials

__all__ = ["MulticlassFeatures", "MulticlassPotentials"]
__all__ += ["SequenceFeatures", "ChainPotentials"]
__all__ += ["TaxonomyFeatures", "TreePotentials", "RankingFeatures", "RankingPotentials"]
__all__ += ["GrammarFeatures", "GrammarPotentials"]
__all__ += ["GraphFeatures", "GraphPotentials"]

__all__ += ["AlignmentFeatures", "AlignmentPotentials"]

# ------------------------------------------------------------------ the registry
# the built-in maps by registry name (registered before the registry is first read)
_BUILTIN = {"multiclass": "MulticlassFeatures", "sequence": "SequenceFeatures",
            "taxonomy": "TaxonomyFeatures", "ranking": "RankingFeatures",
            "grammar": "GrammarFeatures", "graph": "GraphFeatures",
            "alignment": "AlignmentFeatures"}
_REGISTRY = {}
_FILLED = []


def register_feature_map(name, cls=None):
    """Register a feature-map class under ``name`` (usable as a decorator:
    ``@register_feature_map("mine")``).

    Parameters
    ----------
    name : str
    cls : type, optional
        A class whose instances satisfy :class:`structsvm.protocols.FeatureMap`; its
        optional capabilities are class attributes
        (:class:`structsvm.protocols.FeatureMapBase`).

    Returns
    -------
    cls, or a decorator when ``cls`` is not given.

    Raises
    ------
    TypeError
        ``cls`` is no class with ``structure`` and ``fit``.
    """
    if cls is None:
        return lambda c: register_feature_map(name, c)
    registry = _feature_maps()  # the built-ins first: a user's map may replace one
    try:
        ok = isinstance(cls, type) and isinstance(cls.structure, str) and callable(cls.fit)
    except AttributeError:
        ok = False
    if not (ok and isinstance(name, str) and name):
        raise TypeError(f"register_feature_map needs a name and a feature-map class "
                        f"(with structure and fit), got {name!r}, {cls!r}")
    registry[name] = cls
    return cls


def _feature_maps():
    """:data:`FEATURE_MAPS`: the registry, the built-in maps imported and in it."""
    if not _FILLED:
        _REGISTRY.update({name: __getattr__(cls) for name, cls in _BUILTIN.items()})
        _FILLED.append(True)
    return _REGISTRY


__all__ += ["FEATURE_MAPS", "register_feature_map"]

__getattr__, __dir__ = attach(__name__, globals(), on_load={"FEATURE_MAPS": _feature_maps})
if TYPE_CHECKING:
    #: Feature-map classes by name (what ``register_feature_map`` adds to).
    FEATURE_MAPS: dict = {}
