"""Pegasos on the spam data: hinge, exponential and logistic losses vs scikit-learn.

The lab of the lecture (pegasos-spam-lab): 4000 training and 1000 test e-mails,
1899 binary word features, λ = 1/(nC), the objective recorded every k steps.
Side by side, in the same run: scikit-learn's LinearSVC (liblinear, hinge loss) and
SGDClassifier (hinge, α = λ). The second table compares the objective
½‖w‖² + C Σ hinge without bias with LinearSVC's at the same C.

Run::

    python examples/spam_pegasos.py --plot spam.png
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.svm import LinearSVC

from structsvm.corpora import load_spam
from structsvm.svm import PegasosClassifier


def hinge_objective(X, y, w, b, C):
    return 0.5 * float(w @ w) + C * float(np.maximum(0, 1 - y * (X @ w + b)).sum())


def timed(fit):
    t0 = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None, help="folder of spamTrain.mat (default: "
                   "$STRUCTSVM_DATA/spam_ng_ex6)")
    p.add_argument("--C", type=float, default=0.1)
    p.add_argument("--n-iter", type=int, default=20, help="Pegasos epochs")
    p.add_argument("--n-iter-objective", type=int, default=500,
                   help="epochs for the objective comparison without bias")
    p.add_argument("--n-train", type=int, default=None, help="use the first N e-mails")
    p.add_argument("--every", type=int, default=400, help="record the objective every k steps")
    p.add_argument("--plot", default=None, help="save the objective curves to this file")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    data = load_spam(args.data)
    X, y, Xt, yt = data.X_train, data.y_train, data.X_test, data.y_test
    if args.n_train:
        X, y = X[:args.n_train], y[:args.n_train]
    n, C = X.shape[0], args.C
    print(f"spam: {n} train / {Xt.shape[0]} test e-mails, {X.shape[1]} words; C = {C}, "
          f"lambda = 1/(nC) = {1 / (n * C):.3g}")

    # compile/load the numba kernels once, so that the timings below are of training only
    PegasosClassifier(max_iter=1).fit(X[:20], y[:20])
    rows, curves = [], {}
    for loss in ["hinge", "exp", "log"]:
        # timed without recording (each record is a pass over the data), then recorded
        clf, sec = timed(lambda: PegasosClassifier(
            loss=loss, C=C, max_iter=args.n_iter, objective_every=0,
            random_state=args.seed).fit(X, y))
        curves[f"Pegasos {loss}"] = clf.set_params(objective_every=args.every).fit(
            X, y).objective_curve_
        rows.append((f"Pegasos ({loss})", clf.score(Xt, yt), sec, clf.objective_))
    svc, sec = timed(lambda: LinearSVC(C=C, loss="hinge", max_iter=100000).fit(X, y))
    rows.append(("LinearSVC (hinge)", svc.score(Xt, yt), sec,
                 hinge_objective(X, y, svc.coef_.ravel(), svc.intercept_[0], C)))
    sgd, sec = timed(lambda: SGDClassifier(loss="hinge", alpha=1 / (n * C), max_iter=args.n_iter,
                                           tol=None, random_state=args.seed).fit(X, y))
    rows.append(("SGDClassifier (hinge)", sgd.score(Xt, yt), sec,
                 hinge_objective(X, y, sgd.coef_.ravel(), sgd.intercept_[0], C)))

    print(f"\n{'model':24s} {'test acc':>9s} {'seconds':>8s} {'objective':>11s}")
    for name, acc, sec, obj in rows:
        print(f"{name:24s} {100 * acc:8.1f}% {sec:8.3f} {obj:11.3f}")

    # objective without bias at the same C: Pegasos vs liblinear's optimum
    svc0 = LinearSVC(C=C, loss="hinge", fit_intercept=False, tol=1e-8, max_iter=100000)
    svc0.fit(X, y)
    f_svc = hinge_objective(X, y, svc0.coef_.ravel(), 0.0, C)
    peg0, sec = timed(lambda: PegasosClassifier(
        C=C, max_iter=args.n_iter_objective, fit_intercept=False,
        random_state=args.seed).fit(X, y))
    ratio = peg0.objective_ / f_svc
    print(f"\nno bias, C = {C}: LinearSVC objective {f_svc:.4f}, Pegasos "
          f"({args.n_iter_objective} epochs, {sec:.2f} s) {peg0.objective_:.4f}, "
          f"ratio {ratio:.4f}")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        from structsvm.plotting import plot_objective_curves

        ax = plot_objective_curves(curves, every=args.every,
                                   title=f"Pegasos on spam, C = {C}")
        ax.figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"objective curves saved to {args.plot}")
    return {"rows": rows, "objective_ratio": ratio, "curves": curves}


if __name__ == "__main__":
    main()
