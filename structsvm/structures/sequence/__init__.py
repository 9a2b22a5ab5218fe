"""Sequences: a tag per token, with HMM-style label-observation and label-label
features; decoded by ``viterbi``; Hamming loss (shared); token, sentence and chunk
scores (an NLTK tagger of a fitted model: :class:`structsvm.estimator.StructSVMTagger`).
Tags split into hidden states, and partially tagged training sentences:
:class:`LatentSequenceFeatures`.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...io import register_model_class
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import SequenceFeatures
    from ._chain import ChainPotentials, OrderKChainPotentials
    from .viterbi import viterbi, viterbi_flat, pruned_viterbi
    from .metrics import (token_accuracy, sentence_accuracy, iob_chunks, chunk_scores,
                          chunk_f1, chunk_margins)
    from .lattice import chain_max_marginals, kbest_viterbi
    from .constraints import constrain_chains, transition_mask
    from .latent import LatentSequenceFeatures, HiddenStateLoss, constrained_viterbi

__all__ = ["SequenceFeatures", "ChainPotentials", "OrderKChainPotentials", "viterbi",
           "viterbi_flat", "pruned_viterbi",
           "token_accuracy", "sentence_accuracy", "iob_chunks", "chunk_scores",
           "chunk_f1", "chunk_margins", "chain_max_marginals", "kbest_viterbi",
           "constrain_chains", "transition_mask", "LatentSequenceFeatures",
           "HiddenStateLoss", "constrained_viterbi"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "sequence", f"{__name__}.features:SequenceFeatures")
register("decoder", "viterbi", f"{__name__}.viterbi:VITERBI")
# a second feature map of this structure, which model files may name
register_model_class(f"{__name__}.latent:LatentSequenceFeatures")
