"""Training for the measure (PerformanceSVC) vs LinearSVC, on text with rare
positives and on spam.

Data, in one run:

- ``newsgroups``: the 2,000 posts of mini newsgroups, a stratified 70/30 split
  (``train_test_split(test_size=0.3, stratify=labels, random_state=0)``), tf-idf of
  words and word bigrams fitted on the training posts (``TfidfVectorizer(
  sublinear_tf=True, ngram_range=(1, 2))``: about 2.5·10⁵ features); one binary
  problem per group, the group against the 19 others (5 % positives); measures
  averaged over the 20 groups (macro);
- ``spam``: the spam data set, its own split (4,000 training and 1,000 test e-mails,
  1,899 binary word features, 32 % spam).

For each loss (``--losses``) its own measure on the test set: F1 and error rate of
the labels, precision at k (k = half the positives), recall at k (k = twice the
positives), PRBEP and ROC area of the decision values. Systems: LinearSVC at its
defaults (the default threshold 0; ``random_state=0`` for repeatable figures: its
dual coordinate descent shuffles), LinearSVC with ``class_weight="balanced"``,
LinearSVC with its threshold tuned on the training set (the threshold that maximises
the measure on 3-fold cross-validated decision values of the training set; the
measures of a ranking do not depend on a threshold), and ``PerformanceSVC(loss=...)``
at its defaults (each loss's ``default_C``). Times are medians of ``--repeats``
wall-clock fits per binary problem, summed over the problems; the first fit of the
process (numba start-up, where a loop was not compiled at installation) is reported
apart. ``--scaling`` adds the training time of both on 4 training sizes (for the
losses it names; alone, for every loss of ``--losses``). ``--write`` writes the tables
to ``benchmarks/results/performance.md`` with the machine, the date and the command.

Usage::

    STRUCTSVM_DATA=... python benchmarks/bench_performance.py [--data newsgroups spam]
        [--losses f1 roc_auc ...] [--repeats 3] [--scaling [LOSS ...]] [--markdown]
        [--write]

The full run (every data set and loss; the scaling table of F1, ROC area and
precision at k)::

    python benchmarks/bench_performance.py --scaling f1 roc_auc precision_at_k --write
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
from sklearn.model_selection import cross_val_predict
from sklearn.svm import LinearSVC

from structsvm.structures.binary import metrics
from structsvm.svm import PerformanceSVC

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

LOSSES = ("f1", "precision_at_k", "roc_auc", "prbep", "recall_at_k", "error_rate")
#: the measure of each loss on (labels ±1, decision values)
MEASURES = {
    "f1": lambda y, f: metrics.f_beta_score(y, np.where(f > 0, 1, -1)),
    "error_rate": lambda y, f: metrics.error_rate(y, np.where(f > 0, 1, -1)),
    "precision_at_k": metrics.precision_at_k,   # k: half the positives
    "recall_at_k": metrics.recall_at_k,         # k: twice the positives
    "prbep": metrics.prbep,
    "roc_auc": metrics.roc_auc,
}
THRESHOLDED = ("f1", "error_rate")   # the others read the ranking only
#: the better direction of each measure
HIGHER_IS_BETTER = {name: name != "error_rate" for name in LOSSES}


# --------------------------------------------------------------------------- data
def load(name, max_train=None, categories=None):
    """(problems, description): problems are (name, X_train, y_train, X_test,
    y_test) with labels ±1."""
    if name == "spam":
        from structsvm.corpora import load_spam

        d = load_spam()
        Xtr, ytr = d.X_train, np.where(d.y_train > 0, 1, -1)
        if max_train:
            Xtr, ytr = Xtr[:max_train], ytr[:max_train]
        return [("spam", Xtr, ytr, d.X_test, np.where(d.y_test > 0, 1, -1))]
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split

    from structsvm.corpora import load_mini_newsgroups

    d = load_mini_newsgroups()
    labels = np.array(d.labels)
    tr, te = train_test_split(np.arange(len(labels)), test_size=0.3, random_state=0,
                              stratify=labels)
    if max_train:
        tr = tr[:max_train]
    vec = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2))
    Xtr = vec.fit_transform([d.texts[i] for i in tr])
    Xte = vec.transform([d.texts[i] for i in te])
    groups = sorted(set(labels))[:categories] if categories else sorted(set(labels))
    return [(g, Xtr, np.where(labels[tr] == g, 1, -1), Xte,
             np.where(labels[te] == g, 1, -1)) for g in groups]


# --------------------------------------------------------------------------- runs
def timed(make, X, y, repeats):
    """(fitted model, median seconds of ``repeats`` fits, seconds of the first)."""
    times, model = [], None
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        model = make().fit(X, y)
        times.append(time.perf_counter() - t)
    return model, statistics.median(times), times[0]


def tuned_threshold(X, y, measure):
    """The threshold maximising ``measure`` on 3-fold cross-validated LinearSVC
    decision values of the training set (midpoints of consecutive values)."""
    f = cross_val_predict(LinearSVC(random_state=0), X, y, cv=3,
                          method="decision_function")
    s = np.unique(f)
    cands = np.concatenate([[s[0] - 1.0], (s[1:] + s[:-1]) / 2.0, [s[-1] + 1.0]])
    values = [measure(y, f - t) for t in cands]
    return float(cands[int(np.argmax(values))])


def run_problem(problem, losses, repeats):
    """Measures and times of every system on one binary problem."""
    name, X, y, Xt, yt = problem
    svc, t_svc, first_svc = timed(lambda: LinearSVC(random_state=0), X, y, repeats)
    bal = LinearSVC(class_weight="balanced", random_state=0).fit(X, y)
    f_svc, f_bal = svc.decision_function(Xt), bal.decision_function(Xt)
    row = {"problem": name, "n": X.shape[0], "d": X.shape[1], "pos": int((y > 0).sum()),
           "time": {"LinearSVC": t_svc}, "first": {"LinearSVC": first_svc},
           "measure": {}, "rounds": {}}
    for loss in losses:
        measure = MEASURES[loss]
        m = {"LinearSVC": measure(yt, f_svc), "LinearSVC balanced": measure(yt, f_bal)}
        if loss in THRESHOLDED:
            sign = 1.0 if HIGHER_IS_BETTER[loss] else -1.0
            t = tuned_threshold(X, y, lambda a, b: sign * measure(a, b))
            m["LinearSVC tuned threshold"] = measure(yt, f_svc - t)
        else:
            m["LinearSVC tuned threshold"] = m["LinearSVC"]
        ours, t_ours, first = timed(lambda: PerformanceSVC(loss=loss), X, y, repeats)
        m["PerformanceSVC"] = measure(yt, ours.decision_function(Xt))
        row["measure"][loss] = m
        row["time"][loss], row["first"][loss] = t_ours, first
        row["rounds"][loss] = int(ours.n_iter_[0])
    return row


def summarise(rows, losses):
    """Per loss: the mean measure of every system over the problems, and the total
    times."""
    out = {}
    for loss in losses:
        systems = rows[0]["measure"][loss].keys()
        out[loss] = {
            "measure": {s: float(np.mean([r["measure"][loss][s] for r in rows]))
                        for s in systems},
            "time": sum(r["time"][loss] for r in rows),
            "time_svc": sum(r["time"]["LinearSVC"] for r in rows),
            "first": max(r["first"][loss] for r in rows),
            "rounds": float(np.mean([r["rounds"][loss] for r in rows])),
        }
        out[loss]["ratio"] = out[loss]["time"] / out[loss]["time_svc"]
    return out


def scaling(name, losses, repeats, fractions=(0.25, 0.5, 0.75, 1.0), max_train=None,
            categories=None):
    """Training time of LinearSVC and PerformanceSVC (summed over the problems) on
    the first fraction of the training set (a random subset: the split is shuffled),
    for 4 fractions, at a fixed C: LinearSVC's default, and for PerformanceSVC the C
    its default gives on the whole training set (a default may grow with n, as the
    ROC area's does; the time per example is that of one C, Joachims 2006)."""
    full = load(name, max_train, categories)
    fixed = {loss: [PerformanceSVC(loss=loss).fit(X, y).C_ for _, X, y, _, _ in full]
             for loss in losses}
    table = []
    for frac in fractions:
        row = {"fraction": frac, "time": {}, "rounds": {}}
        for loss in ("LinearSVC",) + tuple(losses):
            total, rounds = 0.0, []
            for j, (_, X, y, _, _) in enumerate(full):
                n = int(round(frac * X.shape[0]))
                row["n"] = n
                make = (lambda: LinearSVC(random_state=0)) if loss == "LinearSVC" else (
                    lambda loss=loss, C=fixed[loss][j]: PerformanceSVC(loss=loss, C=C))
                model, seconds, _ = timed(make, X[:n], y[:n], repeats)
                total += seconds
                if loss != "LinearSVC":
                    rounds.append(int(model.n_iter_[0]))
            row["time"][loss] = total
            row["rounds"][loss] = float(np.mean(rounds)) if rounds else float("nan")
        table.append(row)
    return table


# --------------------------------------------------------------------------- output
def print_summary(name, summary, n_problems, markdown):
    """Print the table of each loss's own measure; return it in Markdown."""
    systems = ("LinearSVC", "LinearSVC balanced", "LinearSVC tuned threshold",
               "PerformanceSVC")
    what = f"macro average over {n_problems} groups" if n_problems > 1 else "test set"
    caption = f"{name}: each loss's own measure ({what}); PerformanceSVC at its defaults"
    print(f"\n{caption}\n")
    head = ["trained for (measure)"] + list(systems) + [
        "PerformanceSVC − LinearSVC", "time PerformanceSVC (s)", "time LinearSVC (s)",
        "time ratio", "rounds"]
    md = [caption + ".", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    if markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for loss, s in summary.items():
        m = s["measure"]
        cells = [loss] + [f"{m[k]:.4f}" for k in systems] + [
            f"{m['PerformanceSVC'] - m['LinearSVC']:+.4f}", f"{s['time']:.2f}",
            f"{s['time_svc']:.2f}", f"{s['ratio']:.2f}", f"{s['rounds']:.1f}"]
        print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))
        md.append("| " + " | ".join(cells) + " |")
    return "\n".join(md)


def print_scaling(name, table, losses, markdown):
    """Print the scaling table; return it in Markdown."""
    caption = (f"{name}: training time (s, summed over the problems) by training size, "
               "at a fixed C")
    print(f"\n{caption}\n")
    head = ["n", "LinearSVC", "LinearSVC per 1000"]
    for loss in losses:
        head += [loss, f"{loss} per 1000", f"{loss} rounds"]
    if markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    md = [caption + ".", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table:
        t = row["time"]
        cells = [str(row["n"]), f"{t['LinearSVC']:.3f}",
                 f"{1000 * t['LinearSVC'] / row['n']:.3f}"]
        for loss in losses:
            cells += [f"{t[loss]:.3f}", f"{1000 * t[loss] / row['n']:.3f}",
                      f"{row['rounds'][loss]:.1f}"]
        print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))
        md.append("| " + " | ".join(cells) + " |")
    return "\n".join(md)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="*", default=["newsgroups", "spam"],
                    choices=["newsgroups", "spam"])
    ap.add_argument("--losses", nargs="*", default=list(LOSSES), choices=list(LOSSES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-train", type=int, default=None,
                    help="use only the first N training examples (smoke tests)")
    ap.add_argument("--categories", type=int, default=None,
                    help="only the first N newsgroups (smoke tests)")
    ap.add_argument("--scaling", nargs="*", default=None, choices=list(LOSSES),
                    help="also time these losses on 4 training sizes (alone: every "
                    "loss of --losses)")
    add_output_options(ap, "performance")
    args = ap.parse_args(argv)
    args.markdown = args.markdown or bool(args.write)
    if args.scaling is not None and not args.scaling:
        args.scaling = list(args.losses)
    out, tables = {}, []
    for name in args.data:
        problems = load(name, args.max_train, args.categories)
        rows = [run_problem(p, args.losses, args.repeats) for p in problems]
        summary = summarise(rows, args.losses)
        tables.append(print_summary(name, summary, len(rows), args.markdown))
        out[name] = {"rows": rows, "summary": summary}
        if args.scaling:
            table = scaling(name, args.scaling, args.repeats, max_train=args.max_train,
                            categories=args.categories)
            tables.append(print_scaling(name, table, args.scaling, args.markdown))
            out[name]["scaling"] = table
    if args.write:
        write_results(args.write, "\n\n".join(tables), __file__, argv,
                      notes="Times are medians of the repeats, summed over the binary "
                      "problems.")
    return out


if __name__ == "__main__":
    main()
