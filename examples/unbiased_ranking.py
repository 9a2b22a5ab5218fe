"""Unbiased learning to rank from biased clicks: estimate the position bias, train
Propensity SVM-Rank, and evaluate rankers offline from the logs.

Simulated users see the whole result list of a logging ranker (BM25) and examine
position k with probability (1/k)^η; an examined result is clicked with a
probability that grows with its (hidden) grade. The script

1. estimates the examination propensities from randomised top-1/position-k swaps;
2. trains the naive click SVM-Rank (every click "above every other result") and
   Propensity SVM-Rank (each click weighted by 1/p of its position) on a click log
   of the unchanged ranking, and SVM-Rank on the true grades for reference;
3. estimates each model's click DCG from a fresh log by inverse propensity scoring
   and compares it with the true value.

Data: LETOR 4.0 MQ2008 fold 1 (S1-S3 train, S5 test) when available, else
synthetic queries. The full study (three strengths of bias, five folds, logs of
up to 7.7 million sessions) is ``benchmarks/bench_clicks.py``.

Run: ``python examples/unbiased_ranking.py`` (about a minute)
"""
from __future__ import annotations

import argparse
import os
import tempfile
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.corpora.clicks import (click_probabilities, examination_probabilities,
                                      make_ranking_problem, read_click_log,
                                      simulate_click_logs, write_click_log)
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking import (expected_click_metric, ips_estimate, ndcg_at_k,
                                          propensities_from_swaps, propensity_preferences)


def load(synthetic, random_state=0):
    """(X, Y, X_test, Y_test, name, logging column): the logging ranker sorts by one
    feature (BM25 of the whole document on MQ2008)."""
    if not synthetic:
        try:
            from structsvm.corpora import load_mq2008

            fold = load_mq2008(1)
            return (fold.train.X, fold.train.Y, fold.test.X, fold.test.Y,
                    "MQ2008 fold 1", 24)
        except structsvm.corpora.DataNotFoundError:
            pass
    X, Y, _ = make_ranking_problem(300, 20, 15, random_state=random_state)
    return X[:200], Y[:200], X[200:], Y[200:], "synthetic queries", 0


def fit(X, Y, C):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=C,
                             tol=1e-3)


def run(X, Y, X_test, Y_test, column, *, eta=1.0, sessions=1024, interventions=200_000,
        C=0.1, test_sessions=500, plot=None, save_log=None, random_state=0):
    """The three steps; returns a dict of the figures printed."""
    rng = np.random.default_rng(random_state)
    seed = lambda: int(rng.integers(2 ** 31 - 1))
    max_grade = max(float(np.max(y)) for y in Y)
    logger = [np.argsort(-x[:, column], kind="stable") for x in X]
    logger_test = [np.argsort(-x[:, column], kind="stable") for x in X_test]
    out = {"logger": ndcg_at_k(Y_test, logger_test, k=10)}
    print(f"logging ranker (feature {column + 1}): test NDCG@10 {out['logger']:.4f}")

    # 1. position bias from randomised swaps of the top result with position k <= 10
    per_query = max(1, interventions // len(X))
    swaps = simulate_click_logs(logger, Y, n_sessions=per_query, eta=eta, swap=10,
                                max_grade=max_grade, random_state=seed())
    curve = propensities_from_swaps(swaps, 10, random_state=seed())
    truth = examination_probabilities(10, eta)
    out["propensities"], out["truth"] = curve.propensity, truth
    print(f"propensities from {len(swaps):,} swap sessions (true: (1/k)^{eta:g}):")
    for k in range(10):
        print(f"  position {k + 1:2d}: {curve.propensity[k]:.4f} "
              f"[{curve.lower[k]:.4f}, {curve.upper[k]:.4f}]  true {truth[k]:.4f}")
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        curve.plot(truth=truth).figure.savefig(plot, dpi=110)

    # 2. naive and Propensity SVM-Rank on a log of the logging ranker
    logs = simulate_click_logs(logger, Y, n_sessions=sessions, eta=eta,
                               max_grade=max_grade, random_state=seed())
    n_docs = [len(x) for x in X]
    if save_log:  # the JSON Lines format, read back: the same sessions
        part = logs.select(np.arange(min(len(logs), 1000)))
        write_click_log(save_log, part)
        back = read_click_log(save_log, query_ids=range(len(X)),
                              document_ids=[range(n) for n in n_docs])
        assert np.array_equal(back.shown, part.shown)
        assert np.array_equal(back.clicks, part.clicks)
        print(f"wrote and read back {len(part):,} sessions ({save_log})")
    models = {
        "naive click SVM-Rank": fit(X, propensity_preferences(logs, n_docs), C),
        "Propensity SVM-Rank": fit(X, propensity_preferences(logs, n_docs,
                                                             propensities=curve), C),
        "SVM-Rank on the true grades": fit(X, Y, C),
    }
    print(f"{len(logs):,} logged sessions ({sessions} per query), "
          f"{int(logs.clicks.sum()):,} clicks; test NDCG@10:")
    for name, model in models.items():
        out[name] = ndcg_at_k(Y_test, model.predict(X_test), k=10)
        print(f"  {name:30s} {out[name]:.4f}")

    # 3. counterfactual evaluation on a fresh log of the test queries
    test_logs = simulate_click_logs(logger_test, Y_test, n_sessions=test_sessions, eta=eta,
                                    max_grade=max_grade, random_state=seed())
    rho = click_probabilities(Y_test, max_grade=max_grade)
    print(f"click DCG from {len(test_logs):,} test sessions (IPS estimate, 95% interval; "
          "true value):")
    for name, model in models.items():
        pred = model.predict(X_test)
        est = ips_estimate(test_logs, pred, metric="dcg", propensities=curve)
        true = expected_click_metric(pred, rho, metric="dcg")
        out["ips " + name] = (est, true)
        print(f"  {name:30s} {est.value:.4f} [{est.lower:.4f}, {est.upper:.4f}]; "
              f"true {true:.4f}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--eta", type=float, default=1.0, help="strength of position bias")
    ap.add_argument("--sessions", type=int, default=1024, help="logged sessions per query")
    ap.add_argument("--interventions", type=int, default=200_000, help="swap sessions")
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--plot", default=None, help="save the propensity curve here")
    ap.add_argument("--save-log", default=None,
                    help="write 1,000 logged sessions to this JSON Lines file")
    args = ap.parse_args(argv)
    X, Y, Xt, Yt, name, column = load(args.synthetic)
    print(f"{name}: {len(X)} training and {len(Xt)} test queries, η = {args.eta:g}")
    return run(X, Y, Xt, Yt, column, eta=args.eta, sessions=args.sessions,
               interventions=args.interventions, C=args.C, plot=args.plot,
               save_log=args.save_log)


if __name__ == "__main__":
    main()
