"""Loss-augmented decoding by enumeration: what the oracle falls back on for slack
rescaling and for losses that do not decompose over the decoder's parts, over output
spaces small enough to enumerate (:func:`structsvm.protocols.check_enumerable`).

Private: :class:`structsvm.learners.problem.Problem` is the public interface.
"""
from __future__ import annotations

from ..protocols import check_enumerable, plugin_name

__all__ = ["enumerated_argmax", "slack_rescaled_argmax"]


def enumerated_argmax(batch, Y, loss, slack):
    """Loss-augmented argmax by enumeration (non-decomposable losses, slack rescaling)."""
    check_enumerable(batch, "slack rescaling" if slack else
                     f"loss {plugin_name(loss)!r}, which does "
                     "not decompose over the decoder's parts,",
                     "Use rescaling='margin'." if slack else "Use a decomposable loss.")
    out = []
    for i, y_true in enumerate(Y):
        pot = batch[i]
        s_true = pot.score(y_true)
        best, best_val = y_true, 0.0
        for y in pot.enumerate():
            d = loss(y_true, y)
            h = s_true - pot.score(y)  # w·δΦ
            val = d * (1.0 - h) if slack else d - h
            if val > best_val:
                best, best_val = y, val
        out.append(best)
    return out


def slack_rescaled_argmax(batch, Y, loss):
    """Slack rescaling is not decomposable: exact only over enumerable output spaces."""
    return enumerated_argmax(batch, Y, loss, slack=True)
