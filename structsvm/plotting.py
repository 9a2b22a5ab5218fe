"""Plots (need the ``plot`` extra: matplotlib).

* :func:`plot_objective_curves`: objective every k steps, one line per model.
* :func:`plot_error_surface`: CV error contour over (log C, log σ) from
  :func:`structsvm.model_selection.grid_search`, with search paths drawn on it.
* :func:`plot_reliability_diagram`: accuracy against confidence, one curve per set
  of probabilities (before and after calibration, say).

Every function draws on ``ax`` (a new figure when None) and returns the axes; none
calls ``show`` or saves files.
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_objective_curves", "plot_error_surface", "plot_reliability_diagram"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("structsvm.plotting needs matplotlib: pip install "
                          "'structsvm[plot]'") from exc
    return plt


def plot_objective_curves(curves, every=1, *, ax=None, log=True, title=None):
    """Objective value against the step number.

    Parameters
    ----------
    curves : dict of str to array-like
        Label → objective values (e.g. ``objective_curve_`` of fitted models).
    every : int or dict of str to int, default=1
        Steps between two records (``objective_every``), per curve or for all.
    ax : matplotlib Axes, optional
    log : bool, default=True
        Logarithmic objective axis.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_objective_curves({"hinge": [3.0, 2.0, 1.5]}, every=100)
    >>> ax.get_xlabel()
    'step t'
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    for label, values in curves.items():
        values = np.asarray(values, dtype=float)
        k = every[label] if isinstance(every, dict) else every
        ax.plot(k * np.arange(1, len(values) + 1), values, label=str(label))
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("step t")
    ax.set_ylabel("objective ½‖w‖² + C Σ loss")
    if title:
        ax.set_title(title)
    if curves:
        ax.legend()
    return ax


def plot_error_surface(result, x="C", y="sigma", *, paths=None, ax=None, levels=12,
                       percent=True):
    """Contour of the CV error over (log10 x, log10 y), with search paths on top.

    Parameters
    ----------
    result : SearchResult
        A two-parameter :func:`~structsvm.model_selection.grid_search` result.
    x, y : str, default="C", "sigma"
        Parameters on the horizontal and vertical axes.
    paths : dict of str to SearchResult or list of dict, optional
        Searches to draw (e.g. ``{"line search": line_result}``): their ``path``
        (points after each line) as a polyline and their evaluations as dots.
    ax : matplotlib Axes, optional
    levels : int, default=12
    percent : bool, default=True
        Show the error in percent.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from structsvm.model_selection import SearchResult
    >>> res = SearchResult({"C": 1.0, "sigma": 1.0}, 0.1, grid={"C": np.array([0.1, 1, 10]),
    ...                    "sigma": np.array([0.1, 1, 10])}, errors=np.eye(3)[::-1] * 0.5)
    >>> plot_error_surface(res).get_xlabel()
    'log10 C'
    """
    plt = _pyplot()
    if result.grid is None or result.errors is None:
        raise ValueError("plot_error_surface needs a grid_search result (grid and errors)")
    names = list(result.grid)
    if sorted(names) != sorted([x, y]):
        raise ValueError(f"the grid has parameters {names}, expected {x!r} and {y!r}")
    E = np.asarray(result.errors, dtype=float)
    if names[0] != x:
        E = E.T
    E = E * (100.0 if percent else 1.0)
    gx = np.log10(np.asarray(result.grid[x], dtype=float))
    gy = np.log10(np.asarray(result.grid[y], dtype=float))
    if ax is None:
        _, ax = plt.subplots()
    cs = ax.contourf(gx, gy, E.T, levels=levels, cmap="viridis")
    ax.figure.colorbar(cs, ax=ax, label="CV error" + (" (%)" if percent else ""))
    bx = np.log10(result.best_params[x])
    by = np.log10(result.best_params[y])
    ax.plot([bx], [by], marker="*", color="white", markersize=14, linestyle="none",
            label="grid best")
    markers = iter(["o-", "s-", "^-", "d-"])
    for label, path in (paths or {}).items():
        points = path.path if hasattr(path, "path") else path
        evals = path.evaluations if hasattr(path, "evaluations") else []
        style = next(markers, "o-")
        if evals:
            ex = [np.log10(p[x]) for p, _ in evals if x in p and y in p]
            ey = [np.log10(p[y]) for p, _ in evals if x in p and y in p]
            ax.plot(ex, ey, ".", color="0.85", markersize=4)
        px = [np.log10(p[x]) for p in points]
        py = [np.log10(p[y]) for p in points]
        ax.plot(px, py, style, label=str(label), linewidth=1.5, markersize=5)
    ax.set_xlabel(f"log10 {x}")
    ax.set_ylabel(f"log10 {y}")
    ax.legend(loc="best", fontsize="small")
    return ax


def plot_reliability_diagram(curves, *, n_bins=None, ax=None, title=None):
    """Reliability diagram: the fraction right against the mean confidence in
    equal-width confidence bins, one curve per set of probabilities, with the
    diagonal of perfect calibration; the legend gives each curve's expected
    calibration error.

    Parameters
    ----------
    curves : dict of str to (probabilities, correct)
        Label → predicted probabilities of being right and whether each was.
    n_bins : int, optional
        Default :data:`structsvm.estimator.calibration.N_BINS`.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_reliability_diagram({"model": ([0.2, 0.8, 0.9], [0, 1, 1])})
    >>> ax.get_xlabel()
    'confidence (mean predicted probability in the bin)'
    """
    from .estimator.calibration import (N_BINS, expected_calibration_error,
                                        reliability_curve)

    plt = _pyplot()
    n_bins = N_BINS if n_bins is None else n_bins
    if ax is None:
        _, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], linestyle=":", color="0.5", label="perfectly calibrated")
    for label, (prob, right) in curves.items():
        conf, acc, counts = reliability_curve(prob, right, n_bins)
        ece = expected_calibration_error(prob, right, n_bins)
        full = counts > 0
        ax.plot(conf[full], acc[full], "o-", markersize=4,
                label=f"{label} (ECE {ece:.3f})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (mean predicted probability in the bin)")
    ax.set_ylabel("fraction right")
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small")
    return ax
