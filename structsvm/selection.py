"""Deprecated: moved to :mod:`structsvm.model_selection` (this re-export warns)."""
import warnings

from .model_selection import SearchResult, cv_error, golden_section, grid_search, line_search, subset_search, cluster_sigma, epsilon_from_residuals, median_sigma  # noqa: F401

warnings.warn("structsvm.selection is deprecated; import from structsvm.model_selection", DeprecationWarning, stacklevel=2)

__all__ = ["SearchResult", "cv_error", "golden_section", "grid_search", "line_search", "subset_search", "cluster_sigma", "epsilon_from_residuals", "median_sigma"]
