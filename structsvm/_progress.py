"""A progress bar for long work, shown only where a person watches.

:func:`on_terminal` says whether standard error is an interactive terminal (not a
file, a pipe, a CI log or a ``TERM=dumb`` console); :class:`RoundBar` is the bar a
verbose fit shows there, one step per round or pass, with the objective, the duality
gap against ``tol`` and the elapsed time; :func:`in_batches` runs a prediction over
many examples in batches under a bar. Elsewhere the plain log lines stay.
"""
from __future__ import annotations

import math
import os
import sys

__all__ = ["on_terminal", "RoundBar", "in_batches"]


def on_terminal(stream=None):
    """True when ``stream`` (default: the current ``sys.stderr``) is an interactive
    terminal and neither ``CI`` is set nor ``TERM`` is ``dumb``."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class RoundBar:
    """A tqdm bar on standard error, one step per round.

    Parameters
    ----------
    name : str
        Shown before the bar (the learner's name).
    total : int or None
        Rounds at most (``max_iter``); None for an open-ended bar.
    tol : float
        The duality gap at which training stops, shown next to the gap.
    initial : int
        Rounds done before (a resumed run).
    """

    def __init__(self, name, total=None, tol=math.nan, initial=0):
        from tqdm import tqdm  # imported only when a bar is shown

        self.tol = float(tol)
        self._bar = tqdm(total=None if total is None else int(total) + int(initial),
                         initial=int(initial), desc=name, unit="round",
                         file=sys.stderr, dynamic_ncols=True, mininterval=0.2)

    def update(self, rounds, objective, gap=None):
        """Move the bar to ``rounds`` and show the objective and the gap against tol."""
        parts = [f"objective {objective:.6g}"]
        if gap is not None and math.isfinite(gap):
            parts.append(f"gap {gap:.3g} (tol {self.tol:.3g})")
        self._bar.set_postfix_str(", ".join(parts), refresh=False)
        self._bar.update(max(0, int(rounds) - self._bar.n))

    def close(self):
        """End the bar's line (also after an interruption)."""
        self._bar.close()


def in_batches(fn, items, size=1000, desc=None):
    """``fn(items)`` as a list, called on batches of ``size`` items under a progress
    bar when standard error is a terminal and there is more than one batch; otherwise
    in one call."""
    if len(items) <= size or not on_terminal():
        return list(fn(items))
    from tqdm import tqdm  # imported only when a bar is shown

    out = []
    with tqdm(total=len(items), desc=desc, unit="example", file=sys.stderr,
              dynamic_ncols=True, mininterval=0.2) as bar:
        for start in range(0, len(items), size):
            batch = items[start:start + size]
            out.extend(fn(batch))
            bar.update(len(batch))
    return out
