"""A progress bar for long work, shown only where a person watches.

:func:`on_terminal` says whether standard error is an interactive terminal (not a
file, a pipe, a CI log or a ``TERM=dumb`` console); :class:`RoundBar` is the bar a
verbose fit shows there, one step per round or pass, with the objective, the duality
gap against ``tol`` and the elapsed time; :func:`in_batches` runs a prediction over
many examples in batches under a bar. Elsewhere the plain log lines stay.

While a bar is open, :class:`WritesAboveBar` sends log lines (the ``structsvm`` and
the root logger's console handlers) and warnings through ``tqdm.write``: the bar is
cleared, the line written, the bar drawn again below it, so no line lands mid-bar.
"""
from __future__ import annotations

import logging
import math
import os
import sys
import warnings

__all__ = ["on_terminal", "RoundBar", "in_batches", "WritesAboveBar"]


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
        self._above = WritesAboveBar(sys.stderr)
        self._above.__enter__()

    def update(self, rounds, objective, gap=None):
        """Move the bar to ``rounds`` and show the objective and the gap against tol."""
        parts = [f"objective {objective:.6g}"]
        if gap is not None and math.isfinite(gap):
            parts.append(f"gap {gap:.3g} (tol {self.tol:.3g})")
        self._bar.set_postfix_str(", ".join(parts), refresh=False)
        self._bar.update(max(0, int(rounds) - self._bar.n))

    def close(self):
        """End the bar's line (also after an interruption); log lines and warnings
        are written plainly again."""
        try:
            self._above.__exit__(None, None, None)
        finally:
            self._bar.close()


class WritesAboveBar:
    """Context manager: while a tqdm bar on ``stream`` is open, log lines and warnings
    are written above it (``tqdm.write``), never into the middle of its line.

    Parameters
    ----------
    stream : file-like
        The bar's stream (standard error).

    Notes
    -----
    The console handlers (streams to standard error or output) of the ``structsvm``
    and the root logger are swapped for handlers writing with ``tqdm.write`` for the
    duration, with the same stream, level, filters and format (what
    ``tqdm.contrib.logging.logging_redirect_tqdm`` does, without adding a handler to a
    logger that has none).
    ``warnings.showwarning`` is wrapped: the bar is cleared, the warning shown as
    before (or recorded, under ``warnings.catch_warnings(record=True)``) and the bar
    drawn again; the previous hook is back on exit.
    """

    def __init__(self, stream):
        self.stream = stream
        self._swapped = []
        self._show = self._previous = None

    def __enter__(self):
        from tqdm import tqdm

        for log in (logging.getLogger(), logging.getLogger("structsvm")):
            for handler in list(log.handlers):
                if type(handler) is logging.StreamHandler and \
                        handler.stream in (sys.stderr, sys.stdout):
                    above = _WriteAboveHandler(handler)
                    log.addHandler(above)
                    log.removeHandler(handler)
                    self._swapped.append((log, handler, above))
        previous, stream = warnings.showwarning, self.stream

        def show(message, category, filename, lineno, file=None, line=None):
            with tqdm.external_write_mode(file=stream):
                previous(message, category, filename, lineno, file, line)

        self._previous, self._show = previous, show
        warnings.showwarning = show
        return self

    def __exit__(self, *exc):
        if warnings.showwarning is self._show:  # not replaced again meanwhile
            warnings.showwarning = self._previous
        for log, handler, above in reversed(self._swapped):
            log.removeHandler(above)
            log.addHandler(handler)
        self._swapped.clear()
        return False


class _WriteAboveHandler(logging.Handler):
    """Writes what ``handler`` (a console StreamHandler) would, with ``tqdm.write``."""

    def __init__(self, handler):
        super().__init__(handler.level)
        self.stream = handler.stream
        self.setFormatter(handler.formatter)
        self.filters = list(handler.filters)

    def emit(self, record):
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # logging's own policy: report, never raise
            self.handleError(record)


def in_batches(fn, items, size=1000, desc=None):
    """``fn(items)`` as a list, called on batches of ``size`` items under a progress
    bar when standard error is a terminal and there is more than one batch; otherwise
    in one call."""
    if len(items) <= size or not on_terminal():
        return list(fn(items))
    from tqdm import tqdm  # imported only when a bar is shown

    out = []
    with tqdm(total=len(items), desc=desc, unit="example", file=sys.stderr,
              dynamic_ncols=True, mininterval=0.2) as bar, WritesAboveBar(sys.stderr):
        for start in range(0, len(items), size):
            batch = items[start:start + size]
            out.extend(fn(batch))
            bar.update(len(batch))
    return out
