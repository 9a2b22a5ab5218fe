"""The 1-slack constraint cache: oracle calls, QP rounds and time with and without it.

Runs the 1-slack cutting plane (``OneSlackCuttingPlane(cache_size=k)``) on digits
(multiclass), a treebank POS slice and a CoNLL-2000 chunking slice, at each data set's
default C and tol (or ``--tol``), for every k given, and prints oracle calls, cache
rounds, QP solves, the final objective and the time (the figures in
docs/learners_cutting_plane.md, the sequence slices with ``--tol 0.25``)::

    python examples/cutting_plane_cache.py
    python examples/cutting_plane_cache.py --sizes 0 5 --n-pos 300 --n-chunk 300
    python examples/cutting_plane_cache.py --sizes 10 0 --only pos --n-pos 3000

(the last: the full POS task, test token accuracy on the 914 held-out sentences).

Timings are noisy on a shared machine: the runs of one data set follow each other in
one process; compare oracle calls first, time second.
"""
import argparse
import os
import time

import numpy as np

from structsvm.estimator import StructuredSVM
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.learners import OneSlackCuttingPlane


def data_sets(n_pos, n_chunk):
    from sklearn.datasets import load_digits

    from structsvm.corpora import DataNotFoundError, load_conll2000, load_treebank

    X, y = load_digits(return_X_y=True)
    yield ("digits", "digits (1797 x 64, 10 classes)", list(X / 16.0), list(y),
           MulticlassFeatures(), None)
    try:
        Xp, Yp, Xt, Yt = load_treebank()
        yield ("pos", f"POS treebank, first {n_pos} sentences", Xp[:n_pos], Yp[:n_pos],
               SequenceFeatures(), (Xt, Yt))
    except DataNotFoundError as exc:
        print(f"(treebank skipped: {str(exc)[:80]}...)")
    try:
        Xc, Yc, _, _ = load_conll2000()
        yield ("chunk", f"CoNLL-2000 chunking, first {n_chunk} sentences", Xc[:n_chunk],
               Yc[:n_chunk], SequenceFeatures(features="chunk"), None)
    except DataNotFoundError as exc:
        print(f"(CoNLL-2000 skipped: {str(exc)[:80]}...)")


def run(X, Y, fm, cache_size, params, test=None):
    model = StructuredSVM(feature_map=fm, learner=OneSlackCuttingPlane(cache_size=cache_size),
                          **params)
    t0 = time.perf_counter()
    model.fit(X, Y)
    sec = time.perf_counter() - t0
    state = model.learner_state_
    acc = float("nan")
    if test is not None:
        from structsvm.structures.sequence import token_accuracy

        acc = token_accuracy(test[1], model.predict(test[0]))
    return dict(oracle=model.n_iter_, cached=state["n_cached_rounds"], qp=state["n_qp"],
                objective=model.objective_, gap=model.duality_gap_, sec=sec, acc=acc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[0, 3, 10])
    ap.add_argument("--n-pos", type=int, default=1000)
    ap.add_argument("--n-chunk", type=int, default=1000)
    ap.add_argument("--tol", type=float, default=None, help="default: the map's default_tol")
    ap.add_argument("--only", nargs="+", choices=["digits", "pos", "chunk"],
                    default=["digits", "pos", "chunk"])
    args = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()}")
    rows = []
    for key, name, X, Y, fm, test in data_sets(args.n_pos, args.n_chunk):
        if key not in args.only:
            continue
        params = {} if args.tol is None else dict(tol=args.tol)
        run(X[:50], Y[:50], fm, 0, dict(params, max_iter=2))  # compile the kernels once
        print(f"\n{name}")
        print(f"{'cache':>5} {'oracle':>6} {'cached':>6} {'QP':>5} {'objective':>12} "
              f"{'gap/obj':>8} {'test acc':>8} {'time s':>7}")
        for k in args.sizes:
            r = run(X, Y, fm, k, params, test if key == "pos" else None)
            rows.append((name, k, r))
            print(f"{k:5d} {r['oracle']:6d} {r['cached']:6d} {r['qp']:5d} "
                  f"{r['objective']:12.6g} {r['gap'] / r['objective']:8.2e} "
                  f"{r['acc']:8.4f} {r['sec']:7.2f}")
    return rows


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
