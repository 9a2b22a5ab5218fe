"""A researcher's own structure: how long each learner takes, and where the time goes.

The structure is written in plain Python as the guide's examples are (a
``structsvm.Structure``: benchmarks/own_parser.py): first-order projective dependency
parsing of the NLTK dependency treebank with 12 hashed arc-feature templates
(2^18 columns) and Eisner's algorithm in numpy; the loss is the number of words with
a wrong head. The first ``--n-train`` sentences of the treebank's 3,000 training
sentences train, the 914 test sentences give the unlabelled attachment score (UAS).

Systems (``--systems``), each on the same data in this process, one after the other:

- ``perceptron``: a plain averaged structured perceptron over the same structure
  (Collins 2002), ``--epochs`` epochs (10) in the order of the data: per example one
  ``argmax`` and, on a mistake, the two joint feature vectors; the time reference;
- ``default``: ``structsvm.fit(X, Y, feature_map=ArcParser())``, every parameter at
  its default (the learner ``learner_`` names);
- ``reference``: the default call with a 10x smaller ``tol``: the objective the
  others are compared with;
- ``jobs2``: the default call with ``n_jobs=2`` (worker processes): its speed-up over
  ``default`` and whether it is the same model (``coef_`` equal);
- ``one_slack``, ``dual_cd``, ``frank_wolfe``: the default call with that learner
  (its own defaults), for the choice of the default.

Every fit's time is split into the structure's own calls (``joint_feature``,
``argmax``, ``loss_augmented_argmax``, ``loss``: timed around each call) and the rest,
the learner's work (the oracle's bookkeeping, the QPs or coordinate steps, the
certificates). For every learner the table also gives the time at which its reported
objective first came within 1 % of the reference objective ("time to 1 %").

``--data multilabel`` and ``--data alignment`` run the same comparison on the guide's
own-structure examples (docs/own_structure.md, the code blocks written to a
temporary module as they are on the page): multi-label classification (100
examples, as on the page) and the alignment structure (``--n-train`` pairs of the
page's kind, 12 residues).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_own_structure.py [--n-train 600]
        [--repeats 3] [--systems perceptron default reference jobs2 one_slack
        dual_cd frank_wolfe] [--data parser|multilabel|alignment] [--markdown]
        [--write [NAME]]

``--write`` writes the table to ``benchmarks/results/own_structure.md`` (with
``--data multilabel`` or ``alignment``: ``own_structure-multilabel.md`` ...), with the
machine, the date and the command.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import structsvm  # noqa: E402
from own_parser import ArcParser, encode_sentence  # noqa: E402
from _runner import add_output_options, write_results  # noqa: E402

SYSTEMS = ("perceptron", "default", "reference", "jobs2", "one_slack", "dual_cd",
           "frank_wolfe")
METHODS = ("joint_feature", "argmax", "loss_augmented_argmax", "loss")


# --------------------------------------------------------------------------- timing
class Clock:
    """Seconds spent inside a structure's own methods (a method calling another is
    counted once, as the outer call)."""

    seconds = 0.0
    depth = 0


def timed(cls):
    """A subclass of the structure ``cls`` whose methods add their time to Clock."""
    def wrap(name):
        method = getattr(cls, name)

        def call(self, *args):
            Clock.depth += 1
            start = time.perf_counter()
            try:
                return method(self, *args)
            finally:
                Clock.depth -= 1
                if not Clock.depth:
                    Clock.seconds += time.perf_counter() - start
        call.__name__ = name
        return call

    body = {name: wrap(name) for name in METHODS if name in vars(cls)
            or any(name in vars(base) for base in cls.__mro__[1:-1]
                   if base is not structsvm.Structure)}
    return type(f"Timed{cls.__name__}", (cls,), body)


# --------------------------------------------------------------------------- data
def parser_data(n_train, n_test=None):
    from structsvm.corpora import load_dependency_treebank

    X_tr, Y_tr, X_te, Y_te = load_dependency_treebank()
    X_te, Y_te = X_te[:n_test], Y_te[:n_test]
    enc = [encode_sentence(s) for s in X_tr[:n_train] + X_te]
    heads = [np.array(h, dtype=np.int64) for h in Y_tr[:n_train] + Y_te]
    return dict(name="parser", structure=ArcParser, X=enc[:n_train], Y=heads[:n_train],
                X_test=enc[n_train:], Y_test=heads[n_train:], metric="UAS")


def page_modules():
    """The code blocks of docs/own_structure.md marked as files, written to a
    temporary folder put on sys.path (so that worker processes import them too)."""
    text = (HERE.parent / "docs" / "own_structure.md").read_text(encoding="utf-8")
    folder = tempfile.mkdtemp(prefix="structsvm-page-")
    for name, code in re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)^```", text,
                                 re.S | re.M):
        Path(folder, name).write_text(code, encoding="utf-8")
    sys.path.insert(0, folder)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return folder


def multilabel_data(n_train, n_test=None):
    page_modules()
    from multilabel import MultiLabel

    rng = np.random.default_rng(0)  # the page's data
    A = rng.normal(size=(3, 4))
    X = [rng.normal(size=4) for _ in range(n_train + (n_test or 200))]
    Y = [tuple(int(v > 0) for v in A @ x) for x in X]
    return dict(name="multilabel", structure=MultiLabel, X=X[:n_train], Y=Y[:n_train],
                X_test=X[n_train:], Y_test=Y[n_train:], metric="1 - Hamming")


def alignment_data(n_train, n_test=None):
    page_modules()
    from alignment_structure import Alignment

    rng = np.random.default_rng(0)  # the page's simulation
    X, Y = [], []
    for _ in range(n_train + (n_test or 100)):
        s = "".join(rng.choice(list("ACDEFGHIKL"), size=12))
        d, r = rng.choice(11, size=2, replace=False)
        t = s[:d] + s[d + 1:]
        t = t[:r] + "ACDEFGHIKL"[("ACDEFGHIKL".index(t[r]) + 1) % 10] + t[r + 1:]
        X.append((s, t))
        Y.append(np.array([(i, i - (i > d)) for i in range(12) if i != d]))
    return dict(name="alignment", structure=Alignment, X=X[:n_train], Y=Y[:n_train],
                X_test=X[n_train:], Y_test=Y[n_train:], metric="1 - loss")


DATA = {"parser": (parser_data, 600), "multilabel": (multilabel_data, 100),
        "alignment": (alignment_data, 40)}


def quality(structure, model_or_w, data):
    """The data set's score on the test examples: UAS, or 1 − the mean loss."""
    s = structure()
    if hasattr(model_or_w, "predict"):
        pred = model_or_w.predict(data["X_test"])
    else:
        pred = [s.argmax(x, model_or_w) for x in data["X_test"]]
    if data["name"] == "parser":
        return float(np.mean(np.concatenate([p == y for p, y in
                                             zip(pred, data["Y_test"])])))
    return 1.0 - float(np.mean([s.loss(y, p) for y, p in zip(data["Y_test"], pred)]))


# --------------------------------------------------------------------------- systems
def perceptron(data, epochs):
    """Averaged structured perceptron (Collins 2002) over the structure's own
    argmax and joint features; w̄ = w − u / c (the usual O(1) averaging)."""
    s = timed(data["structure"])()
    d = s.n_features or _width(s.joint_feature(data["X"][0], data["Y"][0]))
    w, u, c = np.zeros(d), np.zeros(d), 1
    Clock.seconds = 0.0
    start = time.perf_counter()
    for _ in range(epochs):
        for x, y in zip(data["X"], data["Y"]):
            y_hat = s.argmax(x, w)
            if s.loss(y, y_hat) > 0:  # w += Φ(x, y) − Φ(x, ŷ), sparsely
                for sign, out in ((1.0, y), (-1.0, y_hat)):
                    cols, vals = _row(s.joint_feature(x, out))
                    np.add.at(w, cols, sign * vals)
                    np.add.at(u, cols, sign * c * vals)
            c += 1
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, structure=Clock.seconds, w=w - u / c, epochs=epochs)


def _width(phi):
    return phi.shape[-1]


def _row(phi):
    """(columns, values) of Φ: a 1 × d sparse row or a 1-D array."""
    import scipy.sparse as sp

    if sp.issparse(phi):
        phi = sp.csr_matrix(phi)
        return phi.indices, phi.data
    phi = np.asarray(phi, dtype=float)
    cols = np.flatnonzero(phi)
    return cols, phi[cols]


def fit(data, *, target=None, **params):
    """One structsvm fit of the timed structure; the curve of (seconds, objective)."""
    timed_cls = timed(data["structure"]) if params.get("n_jobs", 1) in (None, 1) \
        else data["structure"]
    curve, start = [], [0.0]

    def record(model_self, info, real):
        curve.append((time.perf_counter() - start[0], float(info["objective"])))
        return real(model_self, info)

    from structsvm.estimator import _training

    real = _training.RoundTracker.__call__
    _training.RoundTracker.__call__ = lambda self, info: record(self, info, real)
    try:
        Clock.seconds = 0.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start[0] = time.perf_counter()
            model = structsvm.fit(data["X"], data["Y"], feature_map=timed_cls(), **params)
            seconds = time.perf_counter() - start[0]
    finally:
        _training.RoundTracker.__call__ = real
    reach = None
    if target is not None:
        reach = next((t for t, obj in curve if obj <= target), None)
    return dict(seconds=seconds, structure=Clock.seconds, model=model, reach=reach,
                warnings=[str(w.message) for w in caught
                          if issubclass(w.category, Warning)])


# --------------------------------------------------------------------------- run
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=sorted(DATA), default="parser")
    ap.add_argument("--n-train", type=int, default=None)
    ap.add_argument("--n-test", type=int, default=None,
                    help="test examples (default: the parser's 914, 200 or 100)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    add_output_options(ap, "own_structure")
    args = ap.parse_args(argv)
    if args.write == "own_structure" and args.data != "parser":
        args.write = f"own_structure-{args.data}"
    load, n_default = DATA[args.data]
    data = load(args.n_train or n_default, args.n_test)
    print(f"# {data['name']}: {len(data['X'])} training examples, "
          f"{len(data['X_test'])} test examples; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    rows, ref_obj, default_tol = {}, None, None
    names = list(args.systems)
    if "reference" in names:  # first: the others' "time to 1 %" needs its objective
        names.remove("reference")
        names.insert(0, "reference")
    for rep in range(args.repeats):
        for name in names:
            target = None if ref_obj is None else 1.01 * ref_obj
            if name == "perceptron":
                r = perceptron(data, args.epochs)
                r["quality"] = quality(data["structure"], r.pop("w"), data)
                r["learner"], r["iterations"] = "averaged perceptron", r.pop("epochs")
            else:
                params = {}
                if name in ("one_slack", "dual_cd", "frank_wolfe"):
                    params["learner"] = name
                if name == "jobs2":
                    params["n_jobs"] = 2
                if name == "reference":
                    from structsvm.structures.user import StructureMap

                    default_tol = StructureMap.default_tol
                    params["tol"] = default_tol / 10
                r = fit(data, target=target, **params)
                m = r.pop("model")
                if name == "reference":
                    ref_obj = m.objective_
                r.update(learner=m.learner_.name, iterations=m.n_iter_,
                         objective=m.objective_, gap=m.duality_gap_ / m.objective_,
                         converged=m.converged_, coef=m.coef_,
                         quality=quality(data["structure"], m, data))
            rows.setdefault(name, []).append(r)
            print(json.dumps({"system": name, "repeat": rep, **{
                k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()
                if k != "coef"}}), flush=True)
    table = summarise(rows, ref_obj)
    if args.markdown or args.write:
        print(markdown(table, data, args))
    if args.write:
        write_results(args.write, markdown(table, data, args), __file__, argv)
    return table


def summarise(rows, ref_obj):
    """Medians over the repeats, and the ratios the page quotes."""
    out = {}
    perc = rows.get("perceptron")
    t_perc = statistics.median(r["seconds"] for r in perc) if perc else None
    for name, rs in rows.items():
        med = {k: statistics.median(r[k] for r in rs)
               for k in ("seconds", "structure")}
        first = rs[0]
        row = dict(name=name, learner=first["learner"], iterations=first["iterations"],
                   quality=first["quality"], seconds=med["seconds"],
                   structure=med["structure"],
                   learner_work=med["seconds"] - med["structure"])
        if "objective" in first:
            row.update(objective=first["objective"], gap=first["gap"],
                       converged=first["converged"], warnings=first["warnings"])
            if ref_obj is not None:
                row["vs_reference"] = first["objective"] / ref_obj - 1.0
            reach = [r["reach"] for r in rs if r.get("reach") is not None]
            row["reach"] = statistics.median(reach) if len(reach) == len(rs) else None
        if t_perc:
            row["vs_perceptron"] = med["seconds"] / t_perc
        out[name] = row
    if "jobs2" in rows and "default" in rows:
        one = [r["seconds"] for r in rows["default"]]
        two = [r["seconds"] for r in rows["jobs2"]]
        out["jobs2"]["speedup"] = statistics.median(a / b for a, b in zip(one, two))
        out["jobs2"]["same_model"] = all(np.array_equal(a["coef"], b["coef"])
                                         for a in rows["default"] for b in rows["jobs2"])
    return out


def markdown(table, data, args):
    lines = ["| system | learner | passes or rounds | objective vs reference | "
             f"test {data['metric']} | time (s) | structure's calls (s) | "
             "learner's work (s) | time to 1 % (s) | time / perceptron |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in table.items():
        vs = r.get("vs_reference")
        vs = "—" if vs is None else f"{vs:+.2%}"
        work = "—" if name == "jobs2" else f"{r['learner_work']:.2f}"
        reach = "—" if r.get("reach") is None else f"{r['reach']:.2f}"
        lines.append(
            f"| {name} | `{r['learner']}` | {r['iterations']} | {vs} | "
            f"{r['quality']:.4f} | {r['seconds']:.2f} | {r['structure']:.2f} | {work} | "
            f"{reach} | {r.get('vs_perceptron', float('nan')):.2f}x |")
    if "jobs2" in table:
        j = table["jobs2"]
        lines += ["", f"n_jobs=2: {j['speedup']:.2f}x the speed of n_jobs=1 "
                      f"(median of the per-repeat ratios), same model: "
                      f"{'yes' if j['same_model'] else 'NO'}"]
    warned = {n: r["warnings"] for n, r in table.items() if r.get("warnings")}
    lines += ["", "warnings: " + (json.dumps(warned) if warned else "none")]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
