"""Joint feature maps Φ(x, y)."""
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
