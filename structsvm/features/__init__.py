"""Joint feature maps Φ(x, y)."""
from .multiclass import MulticlassFeatures, MulticlassPotentials

__all__ = ["MulticlassFeatures", "MulticlassPotentials"]
# sequence maps

# taxonomy and ranking maps
