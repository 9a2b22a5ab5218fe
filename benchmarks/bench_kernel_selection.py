"""Choosing C and σ of kernel Pegasos: grid, golden-section line and subset search, as
examples/kernel_selection.py runs them, written as a results table.

Two spirals (or a sum of Gaussians), 400 training and 2,000 test points, 5-fold
cross-validation, RBF kernel Pegasos with 10 epochs per fit.

Usage::

    python benchmarks/bench_kernel_selection.py [--data spirals|gaussians] [--write]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, load_example, write_results  # noqa: E402

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", choices=["spirals", "gaussians"], default="spirals")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--grid-size", type=int, default=13)
    add_output_options(ap, "kernel_selection")
    args = ap.parse_args(argv)
    out = load_example("kernel_selection").main(
        ["--data", args.data, "--n", str(args.n), "--grid-size", str(args.grid_size)])
    grid_seconds = out["grid"][0].seconds
    table = [f"{args.data}, N = {args.n}, a {args.grid_size} x {args.grid_size} grid.", "",
             "| search | C | σ | CV error | test error | fits | share of the grid's time |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, (res, test_err) in out.items():
        table.append(f"| {name} | {res.best_params['C']:.3g} | "
                     f"{res.best_params['sigma']:.3g} | {100 * res.best_error:.2f}% | "
                     f"{100 * test_err:.2f}% | {res.n_fits} | "
                     f"{res.seconds / grid_seconds:.2f} |")
    print("\n".join(table))
    if args.write:
        write_results(f"{args.write}-{args.data}", "\n".join(table), __file__, argv)
    return out


if __name__ == "__main__":
    main()
