"""Dependency trees: a head (and a relation) for every word, with arc-factored
features (McDonald, Crammer & Pereira 2005) and optional sibling and grandparent
factors (McDonald & Pereira 2006; Carreras 2007); decoded by ``eisner``
(projective) and ``chu_liu_edmonds`` (non-projective); labelled and unlabelled
attachment losses; attachment scores; CoNLL-X and CoNLL-U files.
"""
from typing import TYPE_CHECKING

from ..._lazy import attach
from ...registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .features import DependencyFeatures, EncodedSentences
    from ._arcs import (ArcPotentials, count_projective_trees, decode_tree, encode_tree,
                        is_projective, is_tree, projective_trees)
    from ._second_order import (DenseFactors, SecondOrderPotentials,
                                grandparent_factors, sibling_factors)
    from .decoders import eisner, chu_liu_edmonds, all_trees_nbest
    from .spans import eisner_max_marginals, kbest_eisner
    from .constraints import constrain_arcs, constrain_heads
    from .losses import LabelledAttachmentLoss, UnlabelledAttachmentLoss
    from .metrics import AttachmentScores, attachment_scores, is_punctuation
    from .conll import (DependencyData, SentenceLayout, read_conllu, read_conllx,
                        write_conllu, write_conllx, from_dependency_graphs,
                        to_dependency_graphs)

__all__ = ["DependencyFeatures", "EncodedSentences", "ArcPotentials",
           "SecondOrderPotentials", "DenseFactors", "sibling_factors",
           "grandparent_factors", "eisner", "chu_liu_edmonds", "all_trees_nbest",
           "eisner_max_marginals", "kbest_eisner", "constrain_arcs", "constrain_heads",
           "is_tree",
           "is_projective", "projective_trees", "count_projective_trees",
           "encode_tree", "decode_tree", "LabelledAttachmentLoss",
           "UnlabelledAttachmentLoss", "attachment_scores", "AttachmentScores",
           "is_punctuation", "DependencyData", "SentenceLayout", "read_conllu",
           "read_conllx", "write_conllu", "write_conllx", "from_dependency_graphs",
           "to_dependency_graphs"]

__getattr__, __dir__ = attach(__name__, globals())

# the registration: what this structure adds to structsvm, by name (no import)
register("structure", "dependency", f"{__name__}.features:DependencyFeatures")
register("decoder", "eisner", f"{__name__}.decoders:EISNER")
register("decoder", "chu_liu_edmonds", f"{__name__}.decoders:CHU_LIU_EDMONDS")
register("decoder", "eisner_one_root", f"{__name__}.decoders:EISNER_ONE_ROOT")
register("decoder", "chu_liu_edmonds_one_root",
         f"{__name__}.decoders:CHU_LIU_EDMONDS_ONE_ROOT")
register("loss", "las", f"{__name__}.losses:LabelledAttachmentLoss")
register("loss", "uas", f"{__name__}.losses:UnlabelledAttachmentLoss")
