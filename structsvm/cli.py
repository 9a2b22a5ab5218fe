"""Command line: ``structsvm learn`` and ``structsvm classify`` (svm_struct style).

File formats are those of Joachims' tools, so their users bring their data as is:

- ``--task multiclass``: svm_light / svm_multiclass lines ``label i:v ...``;
- ``--task sequence``: svm_hmm lines ``tag qid:N i:v ... # comment``;
- ``--task ranking``: svm_rank / LETOR lines ``rel qid:N i:v ...``.

C is structsvm's (objective ½‖w‖² + C Σ_i ξ_i); svm_struct's ``-c`` equals n × C,
so ``--svmstruct-c`` converts one into the other for you.

Examples::

    structsvm learn --task sequence -C 0.1 train.dat model.npz
    structsvm classify model.npz test.dat predictions.txt
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.sparse as sp

__all__ = ["main"]


def _read(task, path, n_features=None):
    """(X, Y, extra) for a task; X rows padded to ``n_features`` when given."""
    if task == "multiclass":
        from sklearn.datasets import load_svmlight_file

        Xm, y = load_svmlight_file(str(path), n_features=n_features, zero_based=False)
        labels = [int(v) if float(v).is_integer() else float(v) for v in y]
        return [Xm[i] for i in range(Xm.shape[0])], labels, None
    if task == "sequence":
        from .corpora import read_svm_hmm

        X, Y = read_svm_hmm(path)
        return X, Y, None
    from .corpora import read_svm_rank

    data = read_svm_rank(path)
    return data.X, data.Y, data.qids


def _fit_width(X, width, what):
    """Pad (zeros) or cut the feature columns of test inputs to the model's width.

    Columns beyond the training width have weight 0 in the model, so cutting them
    does not change any score; the caller reports how many there were.
    """
    out, cut = [], 0
    for x in X:
        x = sp.csr_matrix(x)
        if x.shape[1] > width:
            cut += int(x[:, width:].nnz)
            x = x[:, :width]
        elif x.shape[1] < width:
            x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], width))
        out.append(x)
    return out, cut


def _learn(args):
    import structsvm
    from .features import MulticlassFeatures, RankingFeatures, SequenceFeatures
    from .learners import LEARNERS

    X, Y, _ = _read(args.task, args.train)
    fm = {"multiclass": MulticlassFeatures, "sequence": SequenceFeatures,
          "ranking": RankingFeatures}[args.task]()
    C = args.C
    if args.svmstruct_c is not None:
        C = args.svmstruct_c / len(X)
    # no --learner: the estimator's default for the task's structure
    learner = None if args.learner is None else LEARNERS[args.learner]()
    if args.solver is not None:
        if learner is None:
            learner = LEARNERS["one_slack"]()
        learner.set_params(solver=args.solver)
    t0 = time.perf_counter()
    model = structsvm.fit(X, Y, feature_map=fm, C=C, tol=args.tol, max_iter=args.max_iter,
                          learner=learner, n_jobs=args.n_jobs, verbose=args.verbose)
    model.save(args.model)
    print(f"trained on {len(X)} examples in {time.perf_counter() - t0:.2f} s: "
          f"{model.n_iter_} iterations, objective {model.objective_:.6g}, "
          f"duality gap {model.duality_gap_:.3g}; model written to {args.model}")
    return 0


def _classify(args):
    import structsvm
    from . import metrics

    model = structsvm.load(args.model)
    fm = model.feature_map_
    task = {"multiclass": "multiclass", "chain": "sequence", "ranking": "ranking"}.get(
        type(fm).structure)
    if task is None:
        print(f"error: the command line classifies multiclass, sequence and ranking "
              f"models, not {type(fm).structure!r}", file=sys.stderr)
        return 2
    X, Y, _ = _read(task, args.test)
    width = fm.n_features_ if task == "ranking" else fm.n_input_features_ - (
        1 if task == "multiclass" and fm.bias > 0 else 0)
    X, cut = _fit_width(X, width, "test")
    if cut:
        print(f"note: {cut} feature values beyond the model's {width} features (weight 0 "
              "in the model) were ignored", file=sys.stderr)
    t0 = time.perf_counter()
    lines = []
    if task == "ranking":
        w = model.coef_
        scores = [np.asarray(x @ w).ravel() for x in X]
        lines = [f"{s:.8g}" for q in scores for s in q]
        ndcg = metrics.ndcg_at_k(Y, [np.argsort(-s, kind="stable") for s in scores], k=10)
        summary = f"NDCG@10 {ndcg:.4f}"
    else:
        pred = model.predict(X)
        if task == "sequence":
            lines = [str(t) for p in pred for t in p]
            summary = f"token accuracy {100 * metrics.token_accuracy(Y, pred):.2f}%"
        else:
            lines = [str(p) for p in pred]
            summary = f"accuracy {100 * np.mean([a == b for a, b in zip(Y, pred)]):.2f}%"
    elapsed = time.perf_counter() - t0
    if args.output:
        with open(args.output, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))
    print(f"{summary} on {len(X)} examples ({elapsed:.2f} s)", file=sys.stderr)
    return 0


def build_parser():
    ap = argparse.ArgumentParser(prog="structsvm", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    learn = sub.add_parser("learn", help="train a model and write it to a file")
    learn.add_argument("--task", choices=["multiclass", "sequence", "ranking"],
                       required=True)
    learn.add_argument("-C", type=float, default=None,
                       help="C of ½‖w‖² + C Σ ξ_i (default: the task's)")
    learn.add_argument("--svmstruct-c", type=float, default=None,
                       help="svm_struct's -c instead (C = c / n)")
    learn.add_argument("--learner", default=None,
                       choices=["dual_cd", "one_slack", "n_slack", "frank_wolfe", "pegasos",
                                "perceptron"],
                       help="default: the one chosen for the task's structure")
    learn.add_argument("--solver", default=None,
                       help="QP solver of the cutting plane (implies one_slack if no "
                            "--learner)")
    learn.add_argument("--tol", type=float, default=None)
    learn.add_argument("--max-iter", type=int, default=None)
    learn.add_argument("--n-jobs", type=int, default=None)
    learn.add_argument("-v", "--verbose", action="count", default=0)
    learn.add_argument("train")
    learn.add_argument("model")
    classify = sub.add_parser("classify", help="predict with a saved model")
    classify.add_argument("model")
    classify.add_argument("test")
    classify.add_argument("output", nargs="?", default=None,
                          help="predictions file (default: standard output)")
    return ap


def main(argv=None):
    """Entry point of the ``structsvm`` command."""
    args = build_parser().parse_args(argv)
    try:
        return _learn(args) if args.command == "learn" else _classify(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
