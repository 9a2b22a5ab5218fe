"""Which learner when: every learner on every built-in structure, in one run.

For each structure a reference data set of moderate size, and each learner that
can train it, run as the default call but for ``learner=`` (the structure's C and
tol; ``max_iter`` the learner's own), each in a fresh Python process with a wall
clock limit (``--budget``), so that its time includes loading the compiled loops
and a learner that does not finish in the budget is reported as such:

- multiclass: digits (pixels / 16, 1,347 training and 450 test images), C = 0.1;
- taxonomy: UIUC QC (TF-IDF of words and bigrams), the first 2,000 training
  questions, the 500 test questions;
- sequence: treebank POS, the first 1,000 training sentences, the 914 test ones;
- ranking: LETOR MQ2008 fold 1, C = 0.1;
- grammar: the treebank's trees, the first 300 training trees, 100 test trees;
- graph: planted partitions (examples/collective.py), 10 training and 10 test graphs;
- alignment: 300 simulated protein pairs (seed 0), 200 test pairs.

The objective column is relative to the smallest objective of the run's certified
learners on that structure (0 for the best; the certified ones are within their
tol). Pegasos and the perceptron certify nothing: their objective says how far
their answer is from the optimum.

Usage::

    NLTK_DATA=.../nltk_data STRUCTSVM_DATA=... python benchmarks/bench_learners.py
        [--structures multiclass sequence ...] [--budget 300] [--write]
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, peak_rss_mb, write_results  # noqa: E402

LEARNERS = ("multiclass_cd", "dual_cd", "one_slack", "n_slack", "frank_wolfe",
            "pegasos", "perceptron")


# ----------------------------------------------------------------------- data sets
def _digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from structsvm.structures import MulticlassFeatures

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, random_state=0)
    return dict(X=list(Xtr), Y=list(ytr), X_te=list(Xte), Y_te=list(yte),
                params=dict(feature_map=MulticlassFeatures(), C=0.1),
                score=("accuracy", _accuracy))


def _taxonomy():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from structsvm.corpora import load_qc
    from structsvm.structures import TaxonomyFeatures

    data = load_qc()
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    Xtr = vec.fit_transform(data.train_questions[:2000])
    Xte = vec.transform(data.test_questions)
    return dict(X=Xtr, Y=list(data.train_labels[:2000]), X_te=Xte,
                Y_te=list(data.test_labels), params=dict(feature_map=TaxonomyFeatures()),
                score=("accuracy", _accuracy))


def _sequence():
    from structsvm.corpora import load_treebank
    from structsvm.structures import SequenceFeatures
    from structsvm.structures.sequence import token_accuracy

    X, Y, X_te, Y_te = load_treebank()
    return dict(X=X[:1000], Y=Y[:1000], X_te=X_te, Y_te=Y_te,
                params=dict(feature_map=SequenceFeatures()),
                score=("token accuracy", token_accuracy))


def _ranking():
    from structsvm.corpora import load_mq2008
    from structsvm.structures import RankingFeatures
    from structsvm.structures.ranking import ndcg_at_k

    fold = load_mq2008(1)

    def ndcg(Y_te, pred):
        return ndcg_at_k(Y_te, pred, k=10)
    return dict(X=fold.train.X, Y=fold.train.Y, X_te=fold.test.X, Y_te=fold.test.Y,
                params=dict(feature_map=RankingFeatures(), C=0.1),
                score=("NDCG@10", ndcg))


def _grammar():
    from structsvm.corpora.treebank import load_treebank_trees
    from structsvm.structures import GrammarFeatures
    from structsvm.structures.grammar import bracket_scores

    X, Y, X_te, Y_te = load_treebank_trees()

    def f1(Y_te, pred):
        return bracket_scores(Y_te, pred).f1
    return dict(X=X[:300], Y=Y[:300], X_te=X_te[:100], Y_te=Y_te[:100],
                params=dict(feature_map=GrammarFeatures()), score=("bracket F1", f1))


def _graph():
    import importlib.util
    from pathlib import Path

    from structsvm.structures import GraphFeatures

    path = Path(__file__).resolve().parents[1] / "examples" / "collective.py"
    spec = importlib.util.spec_from_file_location("collective", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    X, Y = ex.planted_partition(10, seed=0)
    X_te, Y_te = ex.planted_partition(10, seed=10_000)

    def node_accuracy(Y_te, pred):
        return float(np.mean(np.concatenate([np.asarray(a) == np.asarray(b)
                                             for a, b in zip(Y_te, pred)])))
    return dict(X=X, Y=Y, X_te=X_te, Y_te=Y_te, params=dict(feature_map=GraphFeatures()),
                score=("node accuracy", node_accuracy))


def _alignment():
    from structsvm.corpora import simulate_alignment_pairs
    from structsvm.structures import AlignmentFeatures
    from structsvm.structures.alignment import alignment_scores

    X, Y = simulate_alignment_pairs(500, random_state=0)

    def q(Y_te, pred):
        return alignment_scores(Y_te, pred)["Q"]
    return dict(X=X[:300], Y=Y[:300], X_te=X[300:], Y_te=Y[300:],
                params=dict(feature_map=AlignmentFeatures()), score=("Q", q))


def _accuracy(Y_te, pred):
    return float(np.mean([a == b for a, b in zip(Y_te, pred)]))


STRUCTURES = {"multiclass": _digits, "taxonomy": _taxonomy, "sequence": _sequence,
              "ranking": _ranking, "grammar": _grammar, "graph": _graph,
              "alignment": _alignment}


# ----------------------------------------------------------------------- one fit
def run_one(structure, learner):
    """Child: fit ``structure`` with ``learner`` (or the default, "default"); a row."""
    import structsvm
    from sklearn.exceptions import ConvergenceWarning

    data = STRUCTURES[structure]()
    params = dict(data["params"])
    if learner != "default":
        params["learner"] = learner
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = structsvm.fit(data["X"], data["Y"], **params)
    seconds = time.perf_counter() - t0
    score = data["score"][1](data["Y_te"], model.predict(data["X_te"]))
    gap = model.duality_gap_ / model.objective_ if np.isfinite(model.duality_gap_) \
        else float("nan")
    return dict(structure=structure, learner=model.learner_.name, seconds=seconds,
                objective=model.objective_, gap=gap, iters=model.n_iter_,
                converged=bool(model.converged_), score=score,
                score_name=data["score"][0], tol=model.tol_, C=model.C_,
                peak_mb=peak_rss_mb())


def _refuses(structure, learner):
    """The learner's refusal of the structure's default problem, or None."""
    try:
        run = subprocess.run([sys.executable, __file__, "--check", structure, learner],
                             capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None
    return run.stdout.strip() or None


def _check(structure, learner):
    """Child: print why ``learner`` cannot train ``structure`` (nothing if it can)."""
    from structsvm.learners import get_learner
    from structsvm.registry import lookup

    data = STRUCTURES[structure]()
    fm = data["params"]["feature_map"]
    refusal = getattr(get_learner(learner), "refusal", None)
    if refusal is None:
        return
    fm = fm.fit(data["X"][:50] if not hasattr(data["X"], "shape") else data["X"][:50],
                data["Y"][:50])
    decoder = lookup("decoder", type(fm).default_decoder)
    loss = lookup("loss", type(fm).default_loss)()
    why = refusal(fm, decoder, loss, "margin")
    if why:
        print(str(why).splitlines()[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--structures", nargs="+", default=list(STRUCTURES),
                    choices=list(STRUCTURES))
    ap.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=LEARNERS)
    ap.add_argument("--budget", type=float, default=300.0,
                    help="seconds a fit may take (its process is stopped after)")
    add_output_options(ap, "learners")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--check", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(*args.child)))
        return None
    if args.check:
        _check(*args.check)
        return None
    rows = []
    for structure in args.structures:
        default = None
        for learner in ("default",) + tuple(args.learners):
            if learner != "default":
                if learner == default:
                    continue
                why = _refuses(structure, learner)
                if why:
                    rows.append(dict(structure=structure, learner=learner, refused=why))
                    print(rows[-1], flush=True)
                    continue
            cmd = [sys.executable, __file__, "--child", structure, learner]
            try:
                run = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=args.budget, check=True)
                row = json.loads(run.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                row = dict(structure=structure, learner=learner, over=args.budget)
            except subprocess.CalledProcessError as exc:
                row = dict(structure=structure, learner=learner,
                           failed=exc.stderr.strip().splitlines()[-1])
            row["default"] = learner == "default"
            if learner == "default":
                default = row.get("learner")
            rows.append(row)
            print(rows[-1], flush=True)
    table = _table(rows, args.budget)
    print("\n" + table)
    if args.write:
        write_results(args.write, table, __file__, argv)
    return rows


def _table(rows, budget):
    lines = ["| structure | learner | train (s) | x default's time | passes | "
             "objective − best | certified gap | test score |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for structure in dict.fromkeys(r["structure"] for r in rows):
        mine = [r for r in rows if r["structure"] == structure]
        done = [r for r in mine if "seconds" in r]
        certified = [r["objective"] for r in done if np.isfinite(r["gap"])]
        best = min(certified) if certified else min((r["objective"] for r in done),
                                                    default=float("nan"))
        base = next((r["seconds"] for r in mine if r.get("default") and "seconds" in r),
                    float("nan"))
        for r in mine:
            name = f"**{r['learner']}** (default)" if r.get("default") else r["learner"]
            if "refused" in r:
                continue
            if "over" in r:
                lines.append(f"| {structure} | {name} | > {budget:.0f} | | | | | |")
            elif "failed" in r:
                lines.append(f"| {structure} | {name} | failed: {r['failed']} | | | | | |")
            else:
                rel = (r["objective"] - best) / abs(best) if best else float("nan")
                gap = f"{r['gap']:.3g}" if np.isfinite(r["gap"]) else "none"
                lines.append(f"| {structure} | {name} | {r['seconds']:.1f} | "
                             f"{r['seconds'] / base:.2f}x | {r['iters']} | {rel:+.2e} | "
                             f"{gap} | {r['score_name']} {r['score']:.4f} |")
    refused = {}
    for r in rows:
        if "refused" in r:
            refused.setdefault((r["learner"], r["refused"]), []).append(r["structure"])
    notes = [f"{learner} refuses {', '.join(structures)} ({why})."
             for (learner, why), structures in refused.items()]
    return "\n".join(lines) + ("\n\nNot run: " + " ".join(notes) if notes else "")


if __name__ == "__main__":
    main()
