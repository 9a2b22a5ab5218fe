"""Taxonomies: the taxonomy model against a flat multiclass model, as
examples/taxonomy.py compares them, written as a results table.

No peer from another library solves a taxonomy with a structural SVM; the
comparison is with structsvm's flat multiclass model on the same TF-IDF features
(UIUC QC: 50 fine labels under 6 coarse ones; mini newsgroups: 20 groups under
their dotted names), each with its default learner. Times include predicting the
test set.

Usage::

    python benchmarks/bench_taxonomy.py [--C 1.0] [--max-train N] [--write]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, load_example, write_results  # noqa: E402

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N examples only (smoke tests)")
    add_output_options(ap, "taxonomy")
    args = ap.parse_args(argv)
    ex = load_example("taxonomy")
    results = {"UIUC QC, 500 test questions": ex.qc(args.C, args.max_train),
               "mini newsgroups, 70/30 split": ex.newsgroups(args.C, args.max_train)}
    table = [f"C = {args.C:g}, tol 1e-2, each model's default learner.", "",
             "| data | model | accuracy | mean tree distance | train + test (s) |",
             "| --- | --- | --- | --- | --- |"]
    for data, res in results.items():
        for name, (acc, dist, secs) in res.items():
            table.append(f"| {data} | {name} | {acc:.4f} | {dist:.4f} | {secs:.1f} |")
    print("\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return results


if __name__ == "__main__":
    main()
