"""Decoder lookup: a registered name or a :class:`~structsvm.protocols.Decoder`.

Decoders are pure functions from a batch of potentials to the best structures; each
structure's folder registers its own (:mod:`structsvm.registry`), and the exhaustive
decoder (:mod:`structsvm.structures.exhaustive`) serves every structure whose outputs
can be enumerated.
"""
from __future__ import annotations

from ..protocols import Decoder
from ..registry import lookup

__all__ = ["get_decoder"]


def get_decoder(decoder):
    """Resolve a decoder name (:func:`structsvm.registry.lookup`) or pass a
    :class:`~structsvm.protocols.Decoder` through.

    Raises
    ------
    ValueError
        An unknown name; the message lists the registered decoders.
    TypeError
        Neither a name nor a Decoder.

    Examples
    --------
    >>> get_decoder("viterbi").structure
    'sequence'
    """
    if isinstance(decoder, Decoder):
        return decoder
    if isinstance(decoder, str):
        return lookup("decoder", decoder)
    raise TypeError(f"decoder must be a name or a structsvm.protocols.Decoder, got "
                    f"{type(decoder).__name__}")
