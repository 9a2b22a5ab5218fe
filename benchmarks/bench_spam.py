"""Flat SVMs: Pegasos with the hinge, exponential and logistic losses against
LinearSVC and SGDClassifier on the lecture's spam data, as examples/spam_pegasos.py
runs them, written as a results table.

4,000 training and 1,000 test e-mails, 1,899 binary word features; C = 0.1,
λ = 1/(nC). Seconds are of training only: the loops are compiled or loaded before
the clock starts.

Usage::

    python benchmarks/bench_spam.py [--n-iter 20] [--write]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, load_example, write_results  # noqa: E402

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-iter", type=int, default=20, help="Pegasos epochs")
    ap.add_argument("--n-iter-objective", type=int, default=500)
    ap.add_argument("--n-train", type=int, default=None)
    add_output_options(ap, "spam")
    args = ap.parse_args(argv)
    example_args = ["--n-iter", str(args.n_iter),
                    "--n-iter-objective", str(args.n_iter_objective)]
    if args.n_train:
        example_args += ["--n-train", str(args.n_train)]
    out = load_example("spam_pegasos").main(example_args)
    table = [f"{args.n_iter} Pegasos epochs; SGDClassifier with α = λ and as many "
             "epochs.", "", "| model | test accuracy | train (s) | objective |",
             "| --- | --- | --- | --- |"]
    for name, acc, sec, obj in out["rows"]:
        table.append(f"| {name} | {100 * acc:.1f}% | {sec:.3f} | {obj:.3f} |")
    summary = (f"Without a bias, Pegasos' objective after {args.n_iter_objective} epochs "
               f"is {out['objective_ratio']:.4f} times LinearSVC's optimum.")
    print("\n".join(table) + "\n\n" + summary)
    if args.write:
        write_results(args.write, "\n".join(table) + "\n\n" + summary, __file__, argv)
    return out


if __name__ == "__main__":
    main()
