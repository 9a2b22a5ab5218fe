"""Choosing C and σ of an RBF-kernel SVM: grid vs line vs subset search.

Data from the notes (kernel-hyperparameters): two interleaved spirals, or the sign
of a sum of 2-D Gaussians. The model is dual (kernel) Pegasos. The grid gives the
CV error surface over (log C, log σ); the alternating golden-section line search
and the subset strategy (tune on N/4 points, C_full = C_sub N_sub / N_full, refine σ
nearby) are drawn on it. Printed: time, fits, CV error and test error of each.

Run::

    python examples/kernel_selection.py --data spirals --plot selection.png
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from structsvm.corpora.synthetic import make_two_spirals
from structsvm.svm.kernels import median_sigma
from structsvm.svm import KernelPegasosClassifier
from structsvm.model_selection import cluster_sigma, grid_search, line_search, subset_search


def two_spirals(n, noise=0.15, seed=0):
    return make_two_spirals(n, noise=noise, random_state=seed)


def sum_of_gaussians(n, n_centers=8, seed=0, label_noise=0.03):
    """y = sign(Σ_i A_i exp(−(x1−c1)²/(2σ1²) − (x2−c2)²/(2σ2²))) on [0, 1]² (the notes' eq. 15)."""
    rng = np.random.RandomState(1000)          # the same function for every sample
    centers = rng.rand(n_centers, 2)
    amps = rng.choice([-1.0, 1.0], n_centers) * (0.5 + rng.rand(n_centers))
    widths = 0.08 + 0.12 * rng.rand(n_centers, 2)
    X = np.random.RandomState(seed).rand(n, 2)
    f = sum(a * np.exp(-np.sum((X - c) ** 2 / (2 * w ** 2), axis=1))
            for a, c, w in zip(amps, centers, widths))
    y = np.where(f >= 0, 1.0, -1.0)
    flip = np.random.RandomState(seed + 1).rand(n) < label_noise
    return X, np.where(flip, -y, y)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", choices=["spirals", "gaussians"], default="spirals")
    p.add_argument("--n", type=int, default=400, help="training points")
    p.add_argument("--n-test", type=int, default=2000)
    p.add_argument("--grid-size", type=int, default=13, help="values per parameter")
    p.add_argument("--cv", type=int, default=5)
    p.add_argument("--n-iter", type=int, default=10, help="Pegasos epochs per fit")
    p.add_argument("--plot", default=None, help="save the error surface to this file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    make = two_spirals if args.data == "spirals" else sum_of_gaussians
    X, y = make(args.n, seed=args.seed)
    Xt, yt = make(args.n_test, seed=args.seed + 100)
    est = KernelPegasosClassifier(max_iter=args.n_iter, random_state=args.seed)
    C_range, s_range = (0.1, 1000.0), (0.01, 2.0)
    print(f"{args.data}: {len(y)} training / {len(yt)} test points, {args.cv}-fold CV")
    ms, cs = median_sigma(X), cluster_sigma(X, y, random_state=args.seed)
    print(f"sigma heuristics: median distance {ms:.3f}; cluster widths "
          f"[{cs['min']:.3f}, {cs['max']:.3f}], mean {cs['mean']:.3f}")

    common = dict(cv=args.cv, random_state=args.seed)
    g = args.grid_size
    grid = grid_search(est, X, y, {
        "C": np.logspace(math.log10(C_range[0]), math.log10(C_range[1]), g),
        "sigma": np.logspace(math.log10(s_range[0]), math.log10(s_range[1]), g)}, **common)
    bounds = {"C": C_range, "sigma": s_range}
    line = line_search(est, X, y, bounds, start={"C": 1.0, "sigma": cs["mean"]}, xtol=0.1,
                       **common)
    subset = subset_search(est, X, y, bounds, n_subset=max(len(y) // 4, 2 * args.cv),
                           start={"C": 1.0, "sigma": cs["mean"]}, xtol=0.1, **common)

    print(f"\n{'search':8s} {'C':>9s} {'sigma':>7s} {'CV err':>7s} {'test err':>8s} "
          f"{'fits':>5s} {'samples':>8s} {'seconds':>8s} {'time/grid':>9s}")
    out = {}
    for name, res in [("grid", grid), ("line", line), ("subset", subset)]:
        model = est.set_params(**res.best_params).fit(X, y)
        test_err = 1.0 - model.score(Xt, yt)
        out[name] = (res, test_err)
        print(f"{name:8s} {res.best_params['C']:9.3g} {res.best_params['sigma']:7.3g} "
              f"{100 * res.best_error:6.2f}% {100 * test_err:7.2f}% {res.n_fits:5d} "
              f"{res.fit_samples:8d} {res.seconds:8.2f} {res.seconds / grid.seconds:9.2f}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        from structsvm.plotting import plot_error_surface

        ax = plot_error_surface(grid, paths={"line search": line, "subset search": subset})
        ax.set_title(f"{args.cv}-fold CV error, {args.data}, N = {len(y)}")
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"error surface saved to {args.plot}")
    return out


if __name__ == "__main__":
    main()
