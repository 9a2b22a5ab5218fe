"""Deprecated: :mod:`structsvm.protocols` and :mod:`structsvm.problem` replace this module.

``structsvm.base`` held the protocols, the Problem and the oracle until 0.2; it keeps
working as a re-export that warns.
"""
import warnings

from .problem import Problem, Violation, weighted_row_sum  # noqa: F401
from .protocols import (Decoder, FeatureMap, Learner, LearnerResult, Loss,  # noqa: F401
                        Potentials, PotentialsBatch, QPError, StructureMismatchError,
                        as_sequence)

warnings.warn("structsvm.base is deprecated; import from structsvm.protocols (plugins, "
              "errors) or structsvm.problem (Problem, the oracle)",
              DeprecationWarning, stacklevel=2)

__all__ = ["FeatureMap", "Potentials", "PotentialsBatch", "Loss", "Learner", "Decoder",
           "Problem", "Violation", "LearnerResult", "QPError", "StructureMismatchError"]
