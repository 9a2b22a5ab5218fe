"""Joint feature maps Φ(x, y), and their registry (:data:`FEATURE_MAPS`,
:func:`register_feature_map`)."""
from .multiclass import MulticlassFeatures, MulticlassPotentials

__all__ = ["MulticlassFeatures", "MulticlassPotentials"]
# sequence maps
from .sequence import ChainPotentials, SequenceFeatures  # noqa: E402

__all__ += ["SequenceFeatures", "ChainPotentials"]

# taxonomy and ranking maps
from .taxonomy import TaxonomyFeatures, TreePotentials  # noqa: E402
from .ranking import RankingFeatures, RankingPotentials  # noqa: E402

__all__ += ["TaxonomyFeatures", "TreePotentials", "RankingFeatures", "RankingPotentials"]

# parse trees
from .grammar import GrammarFeatures, GrammarPotentials  # noqa: E402

__all__ += ["GrammarFeatures", "GrammarPotentials"]

# graph maps
from .graph import GraphFeatures, GraphPotentials  # noqa: E402

__all__ += ["GraphFeatures", "GraphPotentials"]

# pairwise sequence alignments
from .alignment import AlignmentFeatures, AlignmentPotentials  # noqa: E402

__all__ += ["AlignmentFeatures", "AlignmentPotentials"]

# ------------------------------------------------------------------ the registry
#: Feature-map classes by name (what ``register_feature_map`` adds to).
FEATURE_MAPS = {}


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
    try:
        ok = isinstance(cls, type) and isinstance(cls.structure, str) and callable(cls.fit)
    except AttributeError:
        ok = False
    if not (ok and isinstance(name, str) and name):
        raise TypeError(f"register_feature_map needs a name and a feature-map class "
                        f"(with structure and fit), got {name!r}, {cls!r}")
    FEATURE_MAPS[name] = cls
    return cls


for _name, _cls in (("multiclass", MulticlassFeatures), ("sequence", SequenceFeatures),
                    ("taxonomy", TaxonomyFeatures), ("ranking", RankingFeatures),
                    ("grammar", GrammarFeatures), ("graph", GraphFeatures),
                    ("alignment", AlignmentFeatures)):
    register_feature_map(_name, _cls)

__all__ += ["FEATURE_MAPS", "register_feature_map"]
