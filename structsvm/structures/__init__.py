"""The structures structsvm learns to predict, one folder each, and what they share.

Each built-in structure is a folder that holds everything that is only its own: its
joint feature map Φ(x, y) and potentials, its decoders, its losses and metrics, its
compiled loops, its defaults (class attributes of the map: decoder, loss, C, tol,
learner) and its registration (the folder's ``__init__``):

=============  =======================================================  ============
folder         what it predicts                                         decoders
=============  =======================================================  ============
multiclass     a class, optionally described by attributes              argmax
taxonomy       a root-to-leaf path in a class tree                      tree
sequence       a tag per token (HMM-style features)                     viterbi
ranking        an ordering of a query's documents                       sort
grammar        a parse tree (CFG rule features)                         cky
graph          a label per node of a graph                              max_product, lp
alignment      the aligned positions of two sequences                   needleman_wunsch
dependency     a head for every word (arc-factored features)            eisner, chu_liu_edmonds
binary         the labelling of a whole data set (F1, ROC area, ...)    sign
user           any structure written as a :class:`structsvm.Structure`  its argmax
=============  =======================================================  ============

What several structures share lives here: the zero-one, Hamming and callable losses
(:mod:`structsvm.structures.losses`), the exhaustive decoder
(:mod:`structsvm.structures.exhaustive`), constraints on predicted outputs
(:mod:`structsvm.structures.constraints`), decoder lookup
(:func:`get_decoder`) and helpers of the maps (private modules).

The feature maps and their potentials are exported here; everything else of a
structure from its folder (``from structsvm.structures.sequence import viterbi,
token_accuracy``). Importing this package registers every built-in structure by
name (:mod:`structsvm.registry`) and imports none of their code: a structure's
modules are imported the first time one of its names is used.

>>> from structsvm.structures import SequenceFeatures
>>> SequenceFeatures.structure, SequenceFeatures.default_decoder
('sequence', 'viterbi')
"""
import importlib
from typing import TYPE_CHECKING

from .._lazy import attach
from ..registry import register

if TYPE_CHECKING:  # the exported names and their modules (imported on first use)
    from .multiclass import MulticlassFeatures, MulticlassPotentials
    from .taxonomy import TaxonomyFeatures, TreePotentials
    from .sequence import ChainPotentials, SequenceFeatures
    from .ranking import RankingFeatures, RankingPotentials
    from .grammar import GrammarFeatures, GrammarPotentials
    from .graph import GraphFeatures, GraphPotentials
    from .alignment import AlignmentFeatures, AlignmentPotentials
    from .dependency import ArcPotentials, DependencyFeatures
    from .binary import BinaryFeatures, BinaryPotentials
    from .losses import BaseLoss, CallableLoss, HammingLoss, ZeroOneLoss, get_loss
    from .decoders import get_decoder
    from .exhaustive import exhaustive
    from .constraints import OutputConstraints

__all__ = ["MulticlassFeatures", "MulticlassPotentials", "TaxonomyFeatures",
           "TreePotentials", "SequenceFeatures", "ChainPotentials", "RankingFeatures",
           "RankingPotentials", "GrammarFeatures", "GrammarPotentials", "GraphFeatures",
           "GraphPotentials", "AlignmentFeatures", "AlignmentPotentials",
           "DependencyFeatures", "ArcPotentials",
           "BinaryFeatures", "BinaryPotentials"]
__all__ += ["BaseLoss", "ZeroOneLoss", "HammingLoss", "CallableLoss", "get_loss",
            "get_decoder", "exhaustive", "OutputConstraints", "BUILTIN"]

#: The built-in structures: a folder each, registered when this package is imported.
BUILTIN = ("multiclass", "taxonomy", "sequence", "ranking", "grammar", "graph",
           "binary", "alignment", "user", "dependency")

__getattr__, __dir__ = attach(__name__, globals(), submodules=BUILTIN)

# what the structures share
register("loss", "zero_one", f"{__name__}.losses:ZeroOneLoss")
register("loss", "hamming", f"{__name__}.losses:HammingLoss")
register("decoder", "exhaustive", f"{__name__}.exhaustive:EXHAUSTIVE")

for _name in BUILTIN:  # each folder registers its own plugins (by name: no import)
    importlib.import_module(f"{__name__}.{_name}")
