"""Deprecated: moved to :mod:`structsvm.corpora.clicks` (this re-export warns)."""
import warnings

from .corpora.clicks import ClickLog, RULES, click_preferences, make_ranking_problem, preferences_from_clicks, simulate_clicks  # noqa: F401

warnings.warn("structsvm.clicks is deprecated; import from structsvm.corpora.clicks", DeprecationWarning, stacklevel=2)

__all__ = ["ClickLog", "RULES", "click_preferences", "make_ranking_problem", "preferences_from_clicks", "simulate_clicks"]
