"""Learning a ranking from simulated clickthrough (the lecture's click > skip above).

Simulated users query, look at the top 10 of a result list and click (cascade
model with position bias and noisy users). Every click on result i while results
above it were skipped gives preference pairs "i above each skipped one"; a ranking
SVM learns from the pooled pairs after every round of sessions.

Which lists users see matters: "click > skip above" only ever prefers a lower
result to a higher one, so pairs logged on the learner's own ranking argue against
that ranking (Joachims et al. 2005). By default every round shows freshly shuffled
lists (randomised presentation, as in Radlinski & Joachims' FairPairs);
``--exploit`` shows the learned ranking instead and exhibits the bias.
NDCG@10 is measured on held-out queries against the true grades the learner never
sees.

Data: LETOR 4.0 MQ2008 fold 1 (grades 0/1/2; train on S1-S3's queries, evaluate on
S5) when available, else synthetic queries.

Run: ``python examples/clickthrough_ranking.py``
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.corpora.clicks import click_preferences, make_ranking_problem, simulate_clicks
from structsvm.structures import RankingFeatures
from structsvm.structures.ranking import ndcg_at_k


def load(synthetic, random_state=0):
    if not synthetic:
        try:
            from structsvm.corpora import load_mq2008

            fold = load_mq2008(1)
            return fold.train.X, fold.train.Y, fold.test.X, fold.test.Y, "MQ2008 fold 1"
        except structsvm.corpora.DataNotFoundError:
            pass
    X, Y, _ = make_ranking_problem(300, 20, 15, random_state=random_state)
    return X[:200], Y[:200], X[200:], Y[200:], "synthetic queries"


def run(X, Y, X_test, Y_test, *, rounds=3, sessions=5, C=0.1, rule="skip_above",
        noise=0.1, exploit=False, random_state=0):
    """Rounds of show → click → learn; returns the test NDCG@10 after each round
    (entry 0: the initial ranking, random order)."""
    rng = np.random.default_rng(random_state)
    shown = [rng.permutation(len(y)) for y in Y]
    test_rank = [rng.permutation(len(y)) for y in Y_test]
    curve = [ndcg_at_k(Y_test, test_rank, k=10)]
    logs = []
    for r in range(rounds):
        logs += simulate_clicks(shown, Y, n_sessions=sessions, noise=noise,
                                random_state=random_state + r)
        pairs = click_preferences(logs, len(X), rule)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = structsvm.fit(X, pairs, feature_map=RankingFeatures(), decoder="sort",
                                  C=C, tol=1e-2)
        shown = model.predict(X) if exploit else [rng.permutation(len(y)) for y in Y]
        curve.append(ndcg_at_k(Y_test, model.predict(X_test), k=10))
    return curve, sum(len(p) for p in pairs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=5)
    ap.add_argument("--C", type=float, default=0.1)
    ap.add_argument("--exploit", action="store_true",
                    help="show the learned ranking (biased pairs) instead of shuffled lists")
    args = ap.parse_args(argv)
    X, Y, Xt, Yt, name = load(args.synthetic)
    curve, n_pairs = run(X, Y, Xt, Yt, rounds=args.rounds, sessions=args.sessions, C=args.C,
                         exploit=args.exploit)
    print(f"{name}: {len(X)} training queries, {args.sessions} simulated users per query "
          f"and round, {n_pairs} click pairs in the end")
    print(f"  test NDCG@10 of the initial (random) ranking: {curve[0]:.4f}")
    for r, v in enumerate(curve[1:], 1):
        print(f"  after round {r} (learned from clicks): {v:.4f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        full = structsvm.fit(X, Y, feature_map=RankingFeatures(), decoder="sort", C=args.C,
                             tol=1e-2)
    print(f"  for reference, trained on the true grades: "
          f"{ndcg_at_k(Yt, full.predict(Xt), k=10):.4f}")
    return curve


if __name__ == "__main__":
    main()
