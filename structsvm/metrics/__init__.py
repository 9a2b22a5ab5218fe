"""Evaluation metrics for structured outputs (raw, decoded outputs).

- :mod:`structsvm.metrics.sequence`: token and sentence accuracy, chunk scores and F1;
- :mod:`structsvm.metrics.ranking`: NDCG@k, MAP, pairwise accuracy, Kendall's τ;
- :mod:`structsvm.metrics.taxonomy`: tree distance between taxonomy classes;
- :mod:`structsvm.metrics.grammar`: labelled bracket scores of parse trees;
- :mod:`structsvm.metrics.alignment`: Q and precision of alignments.

Each function validates its inputs and names the offending sample. The metrics are
imported the first time one is used, so importing this package alone loads neither
numba nor NLTK.

>>> from structsvm.metrics import token_accuracy
>>> token_accuracy([["D", "N"], ["V"]], [["D", "N"], ["N"]])
0.6666666666666666
"""
from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:  # the exported names and their modules (imported on first use),
    # in the order the API reference lists them
    from .sequence import (token_accuracy, sentence_accuracy, iob_chunks, chunk_scores,
                           chunk_f1)
    from .ranking import (ndcg_at_k, average_precision, mean_average_precision,
                          pairwise_accuracy, kendall_tau)
    from .taxonomy import tree_distance
    from .grammar import bracket_scores, BracketScores
    from .alignment import alignment_scores

__all__ = ["token_accuracy", "sentence_accuracy", "iob_chunks", "chunk_scores",
           "chunk_f1"]
__all__ += ["ndcg_at_k", "average_precision", "mean_average_precision",
            "pairwise_accuracy", "kendall_tau"]
__all__ += ["tree_distance"]
__all__ += ["bracket_scores", "BracketScores"]
__all__ += ["alignment_scores"]

__getattr__, __dir__ = attach(__name__, globals())
