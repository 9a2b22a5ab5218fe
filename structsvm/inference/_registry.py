"""The decoder registry (name → :class:`structsvm.protocols.Decoder`), apart from the
package so that the decoder modules can register themselves without importing it."""
from __future__ import annotations

from ..protocols import Decoder

__all__ = ["register_decoder", "DECODERS"]

DECODERS: dict[str, Decoder] = {}


def register_decoder(name, structure, *, augmented=None):
    """Decorator: register ``func(batch, exclude=None)`` as decoder ``name``.

    Parameters
    ----------
    name : str
        Registry key (what users pass as ``decoder=``).
    structure : str
        The structure it decodes ("multiclass", "chain", ...; "any" for decoders that
        only need enumerable outputs).
    augmented : callable, optional
        ``augmented(batch, Y, loss)``: loss-augmented decoding done by the decoder
        itself, or None where it cannot for that loss (see
        :class:`structsvm.protocols.Decoder`).

    Examples
    --------
    >>> from structsvm.inference import get_decoder
    >>> @register_decoder("first_class", "multiclass")
    ... def first_class(batch, exclude=None):
    ...     return [0] * len(batch)
    >>> get_decoder("first_class").structure
    'multiclass'
    >>> del DECODERS["first_class"]
    """
    def wrap(func):
        DECODERS[name] = Decoder(name=name, structure=structure, func=func,
                                 augmented=augmented)
        return func
    return wrap
