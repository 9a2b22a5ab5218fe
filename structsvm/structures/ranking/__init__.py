"""Rankings (the ranking SVM): a query's documents ordered by score, trained on
preference pairs (relevance grades or clicks, optionally weighted); decoded by
``sort``; swapped-pairs loss; NDCG, MAP, pairwise accuracy and Kendall's τ; from
biased click logs: Propensity SVM-Rank's targets, position-bias estimation and
counterfactual (IPS) evaluation.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import RankingFeatures, RankingPotentials
    from .outputs import PairLabelling, Preferences
    from .sort import sort_decode, violated_pair_counts, kbest_orderings
    from .losses import SwappedPairsLoss
    from .metrics import (ndcg_at_k, average_precision, mean_average_precision,
                          pairwise_accuracy, kendall_tau)
    from .clicks import (propensity_preferences, click_weights, click_totals,
                         preferences_from_totals)
    from .propensity import (PropensityCurve, propensities_from_swaps,
                             propensities_from_rankers, harvest_position_pairs)
    from .counterfactual import (CounterfactualEstimate, ips_estimate,
                                 expected_click_metric)

__all__ = ["RankingFeatures", "RankingPotentials", "Preferences", "PairLabelling",
           "sort_decode", "violated_pair_counts", "kbest_orderings", "SwappedPairsLoss",
           "ndcg_at_k",
           "average_precision", "mean_average_precision", "pairwise_accuracy",
           "kendall_tau", "propensity_preferences", "click_weights", "click_totals",
           "preferences_from_totals", "PropensityCurve",
           "propensities_from_swaps", "propensities_from_rankers",
           "harvest_position_pairs", "CounterfactualEstimate", "ips_estimate",
           "expected_click_metric"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "ranking", f"{__name__}.features:RankingFeatures")
register("decoder", "sort", f"{__name__}.sort:SORT")
register("loss", "swapped_pairs", f"{__name__}.losses:SwappedPairsLoss")
