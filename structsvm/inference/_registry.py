"""The decoder registry (name → :class:`structsvm.protocols.Decoder`), apart from the
package so that the decoder modules can register themselves without importing it."""
from __future__ import annotations

from ..protocols import Decoder

__all__ = ["register_decoder", "DECODERS"]

DECODERS: dict[str, Decoder] = {}


def register_decoder(name, structure):
    """Decorator: register ``func(batch, exclude=None)`` as decoder ``name``.

    Parameters
    ----------
    name : str
        Registry key (what users pass as ``decoder=``).
    structure : str
        The structure it decodes ("multiclass", "chain", ...; "any" for decoders that
        only need enumerable outputs).
    """
    def wrap(func):
        DECODERS[name] = Decoder(name=name, structure=structure, func=func)
        return func
    return wrap
