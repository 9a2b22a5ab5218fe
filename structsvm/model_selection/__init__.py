"""Choosing C, σ and ε: grid, golden-section line and subset search; σ/ε heuristics.

- :mod:`structsvm.model_selection.search`: :func:`grid_search`, :func:`line_search`
  (alternating golden-section searches in log space), :func:`subset_search` (tune on
  a subset, scale C_full = C_sub·N_sub/N_full), :func:`cv_error`;
- :mod:`structsvm.model_selection.heuristics`: :func:`cluster_sigma` (σ from cluster
  widths) and :func:`epsilon_from_residuals` (ε = υ·std of an ε = 0 SVR's residuals);
  :func:`median_sigma` (the median pairwise distance) comes from
  :mod:`structsvm.svm.kernels`.

>>> from structsvm.model_selection import golden_section
>>> x, fx = golden_section(lambda t: (t - 1.0) ** 2, 0.0, 3.0, xtol=1e-3)
>>> round(x, 2)
1.0
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from ..svm.kernels import median_sigma
    from .heuristics import cluster_sigma, epsilon_from_residuals
    from .search import (SearchResult, cv_error, golden_section, grid_search, line_search,
                         subset_search)

__all__ = ["SearchResult", "cv_error", "grid_search", "line_search", "subset_search",
           "golden_section", "median_sigma", "cluster_sigma", "epsilon_from_residuals"]

__getattr__, __dir__ = attach(__name__, globals())
