"""Decoders: pure functions from a batch of potentials to the best structures.

Decoders live in a registry (name → :class:`structsvm.protocols.Decoder`). A decoder
module registers itself with :func:`register_decoder`; :func:`get_decoder` resolves
a name (or passes a :class:`~structsvm.protocols.Decoder` through).
"""
from __future__ import annotations

from ..protocols import Decoder
from ..registry import DECODERS, register_decoder

__all__ = ["register_decoder", "get_decoder", "DECODERS"]


def get_decoder(decoder):
    """Resolve a decoder name or :class:`Decoder`; clear error on unknown names."""
    _load_builtin()
    if isinstance(decoder, Decoder):
        return decoder
    if isinstance(decoder, str):
        if decoder not in DECODERS:
            raise ValueError(f"Unknown decoder {decoder!r}; choose one of "
                             f"{sorted(DECODERS)}")
        return DECODERS[decoder]
    raise TypeError(f"decoder must be a name or a structsvm.protocols.Decoder, got "
                    f"{type(decoder).__name__}")


def _load_builtin():
    # importing the modules registers their decoders
    from .multiclass import argmax
    from .grammar import cky
    from . import exhaustive
    from .graph import lp, max_product
    from .alignment import needleman_wunsch
    from .ranking import sort
    from .taxonomy import decoder as tree
    from .sequence import viterbi
