"""First call vs second: what a fresh installation costs before numba's cache is filled.

Every measurement runs in a fresh Python process. A repeat makes an empty numba cache
folder (``NUMBA_CACHE_DIR``), runs each job once against it ("first": whatever is
not compiled yet compiles) and then once more ("second": the loops load from the
cache the first run wrote). The numba loops of the default paths are compiled at
installation (``structsvm._compiled._aot``, see setup.py) where a C compiler was
available; the ``_jit`` jobs turn that off (``STRUCTSVM_AOT=0``) to show what numba's
JIT costs without it:

- ``main``: the main job, ``python examples/pos_tagging.py`` (treebank, 3,000
  training sentences, 914 test sentences), whole process wall time;
- ``main_jit``: the same with ``STRUCTSVM_AOT=0``: numba compiles the loops, a
  helper process compiling some of them beside the fit;
- ``main_no_helper``: also with ``STRUCTSVM_JIT_WARMUP=0`` (loops compiled in
  the fitting process only, one after the other, as they are first called);
- ``digits``: ``structsvm.fit`` on scikit-learn's digits (X / 16,
  ``train_test_split(random_state=0)``, C = 0.1, the default multiclass call) and
  ``LinearSVC(C=0.1)`` (its defaults otherwise) in the same process, each after its
  import (``structsvm.fit`` imports the estimator's modules on first access: that
  import is timed apart, as ``digits.import``); the ratio is taken per process, then
  the median; ``digits_jit`` the same with
  ``STRUCTSVM_AOT=0``;
- ``own``: a researcher's own structure, the multi-label example of the guide
  (docs/own_structure.md: a ``structsvm.Structure`` with ``joint_feature``,
  ``argmax``, ``loss`` and ``loss_augmented_argmax``, as tests/structure_examples.py
  holds it; 100 examples, the default learner), ``structsvm.fit`` timed after
  import; the job also records whether the process imported numba at all;
- ``tagging``: ``structsvm.load`` of a model trained beforehand on the main job's
  data, then one ``predict`` of the 914 test sentences;
- ``import``: ``python -c "import structsvm"``;
- ``loops``: where a first run's compile time goes without the extension. In one
  fresh process with an empty cache and ``STRUCTSVM_AOT=0``, after numba's own set-up
  (its first compile of a trivial function, timed apart), a small slice of the main
  job (``--loop-sentences`` training sentences, three passes, then one ``predict``)
  and a digits fit compile the loops the full jobs compile (the types do not depend
  on the data's size); the CPU time of each loop's compilation, the loops it calls
  included, is recorded with numba's event API (``numba.core.event``,
  ``"numba:compile"``), per loop called from Python (``"module:function"``).

The table gives the median over ``--repeats`` of each figure. ``--main-args``
passes arguments to the main job (the tests use a tiny slice).

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_first_call.py [--repeats 3]
        [--jobs main main_jit main_no_helper digits digits_jit own tagging import
        loops] [--markdown]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JOBS = ("main", "main_jit", "main_no_helper", "digits", "digits_jit", "own", "tagging",
        "import", "loops")
# the jobs run without the loops compiled at installation (structsvm._compiled._aot):
# what numba's JIT costs where the extension could not be built
NO_AOT = {"STRUCTSVM_AOT": "0"}

DIGITS = """
import json, time
t0 = time.perf_counter()
import structsvm
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC
from structsvm.structures import MulticlassFeatures
X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, random_state=0)
t0 = time.perf_counter()
fit = structsvm.fit  # imports the estimator's modules, as importing LinearSVC does
t1 = time.perf_counter()
model = fit(Xtr, ytr, feature_map=MulticlassFeatures(), decoder="argmax", C=0.1)
t2 = time.perf_counter()
LinearSVC(C=0.1).fit(Xtr, ytr)
t3 = time.perf_counter()
print(json.dumps({"fit": t2 - t1, "estimator_import": t1 - t0, "linearsvc": t3 - t2,
                  "acc": float((model.predict(Xte) == yte).mean())}))
"""

OWN = """
import json, sys, time
import numpy as np
import structsvm

sys.path.insert(0, "tests")  # the guide's MultiLabel structure, as the tests train it
from structure_examples import MultiLabel

rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4))
X = [rng.normal(size=4) for _ in range(100)]
Y = [tuple(int(v > 0) for v in A @ x) for x in X]
t0 = time.perf_counter()
model = structsvm.fit(X, Y, feature_map=MultiLabel(n_labels=3))
t1 = time.perf_counter()
print(json.dumps({"fit": t1 - t0, "numba": "numba" in sys.modules,
                  "objective": model.objective_}))
"""

TRAIN = """
import sys
import structsvm
from structsvm.corpora import load_treebank
from structsvm.structures import SequenceFeatures
X, Y, _, _ = load_treebank()
n = int(sys.argv[2])
X, Y = (X[:n], Y[:n]) if n else (X, Y)
structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder="viterbi",
              random_state=0).save(sys.argv[1])
"""

TAG = """
import json, sys, time
t0 = time.perf_counter()
import structsvm
from structsvm.corpora import load_treebank
_, _, X, Y = load_treebank()
model = structsvm.load(sys.argv[1])
t1 = time.perf_counter()
pred = model.predict(X)
t2 = time.perf_counter()
n = sum(map(len, X))
ok = sum(a == b for y, p in zip(Y, pred) for a, b in zip(y, p))
print(json.dumps({"tag": t2 - t1, "tokens": n, "acc": ok / n}))
"""


LOOPS = """
import json, sys, time
import numba
import numpy as np
from numba.core import event

times, stack = {}, []


class Compiles(event.Listener):
    def on_start(self, ev):
        stack.append(time.process_time())

    def on_end(self, ev):
        t0 = stack.pop()
        if not stack:  # a loop called from Python (its callees included)
            f = ev.data["dispatcher"].py_func
            key = f.__module__ + ":" + f.__name__
            times[key] = times.get(key, 0.0) + time.process_time() - t0


t0 = time.process_time()
numba.njit(lambda a: a.sum() + np.empty(1)[0] * 0)(np.ones(2))
setup = time.process_time() - t0
event.register("numba:compile", Compiles())
import structsvm
from structsvm.structures import MulticlassFeatures, SequenceFeatures
n = int(sys.argv[1])
if n:  # 0: the digits fit only
    from structsvm.corpora import load_treebank
    X, Y, Xt, _ = load_treebank()
    model = structsvm.fit(X[:n], Y[:n], feature_map=SequenceFeatures(),
                          decoder="viterbi", max_iter=3, tol=1e-12, random_state=0)
    model.predict(Xt[:n])
main = dict(times)
times.clear()
rng = np.random.default_rng(0)
structsvm.fit(rng.random((60, 8)), np.arange(60) % 3, feature_map=MulticlassFeatures(),
              decoder="argmax", C=0.1)
print(json.dumps({"setup": setup, "main": main, "digits": dict(times)}))
"""


def _run(cmd, cache, extra_env=None):
    """Wall time of ``cmd`` in a fresh process with numba's cache at ``cache``, and
    the JSON its last output line holds (if any)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **(extra_env or {}))
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env,
                         cwd=ROOT).stdout
    wall = time.perf_counter() - t0
    last = out.strip().splitlines()[-1] if out.strip() else ""
    return wall, (json.loads(last) if last.startswith("{") else {})


def one_repeat(jobs, main_args, model_path, loop_sentences=30):
    """One figure per job and run for one empty cache folder each."""
    py = sys.executable
    row = {}
    for job in jobs:
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            for run in ("first", "second"):
                if job in ("main", "main_jit", "main_no_helper"):
                    env = {"main": {}, "main_jit": NO_AOT,
                           "main_no_helper": {**NO_AOT, "STRUCTSVM_JIT_WARMUP": "0"}}[job]
                    wall, _ = _run([py, "examples/pos_tagging.py", *main_args], cache, env)
                    row[f"{job}.{run}"] = wall
                elif job in ("digits", "digits_jit"):
                    _, res = _run([py, "-c", DIGITS], cache,
                                  NO_AOT if job == "digits_jit" else {})
                    row[f"{job}.{run}"] = res["fit"]
                    row[f"{job}.import.{run}"] = res["estimator_import"]
                    row[f"{job}.linearsvc.{run}"] = res["linearsvc"]
                elif job == "own":
                    _, res = _run([py, "-c", OWN], cache)
                    row[f"own.{run}"] = res["fit"]
                    row[f"own.{run}_numba"] = float(res["numba"])
                elif job == "tagging":
                    _, res = _run([py, "-c", TAG, model_path], cache)
                    row[f"tagging.{run}"] = res["tag"]
                    row["tagging.tokens"] = res["tokens"]
                elif job == "import":
                    wall, _ = _run([py, "-c", "import structsvm"], cache)
                    row[f"import.{run}"] = wall
                elif job == "loops" and run == "first":
                    _, res = _run([py, "-c", LOOPS, str(loop_sentences)], cache,
                                  {**NO_AOT, "STRUCTSVM_JIT_WARMUP": "0"})
                    row["loops.setup"] = res["setup"]
                    for part in ("main", "digits"):
                        for name, cpu in res[part].items():
                            row[f"loops.{part}.{name}"] = cpu
    return row


def summarise(rows):
    """Medians of every figure over the repeats, with the ratios the docs quote."""
    med = {k: statistics.median(r[k] for r in rows if k in r)
           for k in dict.fromkeys(k for r in rows for k in r)}
    for job in ("main", "main_jit", "main_no_helper", "own", "tagging", "import"):
        if f"{job}.first" in med:
            med[f"{job}.ratio"] = med[f"{job}.first"] / med[f"{job}.second"]
    for job in ("digits", "digits_jit"):
        if f"{job}.first" in med:
            for run in ("first", "second"):
                # the ratio of each repeat (one process times both fits), then the median
                med[f"{job}.{run}_vs_linearsvc"] = statistics.median(
                    r[f"{job}.{run}"] / r[f"{job}.linearsvc.{run}"] for r in rows
                    if f"{job}.{run}" in r)
    return med


def markdown(med):
    lines = ["| job | first run (empty cache) | second run | first / second |",
             "| --- | --- | --- | --- |"]
    names = {"main": "main job, whole process", "main_jit": "main job, loops "
             "compiled by numba (`STRUCTSVM_AOT=0`)", "main_no_helper":
             "main job, numba, helper off", "own": "own structure `fit` (the guide's "
             "multi-label example)", "tagging": "load + first `predict` (914 "
             "sentences): the `predict`", "import": "`import structsvm`"}
    for job, label in names.items():
        if f"{job}.first" in med:
            lines.append(f"| {label} | {med[job + '.first']:.2f} s | "
                         f"{med[job + '.second']:.2f} s | {med[job + '.ratio']:.2f}x |")
    for job, label in (("digits", "digits `fit`"),
                       ("digits_jit", "digits `fit`, numba (`STRUCTSVM_AOT=0`)")):
        if f"{job}.first" in med:
            lines.append(f"| {label} | {med[job + '.first']:.3f} s "
                         f"({med[job + '.first_vs_linearsvc']:.1f}x LinearSVC) | "
                         f"{med[job + '.second']:.3f} s "
                         f"({med[job + '.second_vs_linearsvc']:.1f}x LinearSVC) | "
                         f"{med[job + '.first'] / med[job + '.second']:.2f}x |")
            lines.append(f"| LinearSVC `fit`, same process | "
                         f"{med[job + '.linearsvc.first']:.3f} s | "
                         f"{med[job + '.linearsvc.second']:.3f} s | |")
            lines.append(f"| estimator import before that `fit` (`structsvm.fit`) | "
                         f"{med[job + '.import.first']:.3f} s | "
                         f"{med[job + '.import.second']:.3f} s | |")
    if "loops.setup" in med:
        lines += ["", "| job | loop (with the loops it calls) | compile, CPU s |",
                  "| --- | --- | --- |",
                  f"| any | numba's set-up (first compile in a process) | "
                  f"{med['loops.setup']:.2f} |"]
        for part, label in (("main", "main job"), ("digits", "digits fit")):
            names = [k for k in med if k.startswith(f"loops.{part}.")]
            if not names:
                continue
            for k in sorted(names, key=lambda k: -med[k]):
                lines.append(f"| {label} | `{k.split('.', 2)[2]}` | {med[k]:.2f} |")
            lines.append(f"| {label} | all | {sum(med[k] for k in names):.2f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS))
    ap.add_argument("--main-args", default="", help="arguments of the main job "
                    "(examples/pos_tagging.py), e.g. \"--n-train 30 --max-iter 2\"")
    ap.add_argument("--tag-train", type=int, default=0, help="training sentences of "
                    "the tagging job's model (0: all 3,000)")
    ap.add_argument("--loop-sentences", type=int, default=30, help="training "
                    "sentences of the loops job's main-job slice (0: the digits "
                    "fit only)")
    add_output_options(ap, "first_call")
    args = ap.parse_args(argv)
    main_args = shlex.split(args.main_args)
    rows = []
    aot = subprocess.run([sys.executable, "-c", "from structsvm import _compiled; "
                          "print(_compiled.extension() is not None)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"loops compiled at installation (structsvm._compiled._aot) in use: {aot}")
    with tempfile.TemporaryDirectory(prefix="bench-first-call-") as tmp:
        model_path = str(Path(tmp) / "pos.npz")
        if "tagging" in args.jobs:
            _run([sys.executable, "-c", TRAIN, model_path, str(args.tag_train)],
                 Path(tmp) / "train-cache")
        for _ in range(args.repeats):
            rows.append(one_repeat(args.jobs, main_args, model_path,
                                   args.loop_sentences))
            print({k: round(v, 3) for k, v in rows[-1].items()}, flush=True)
    med = summarise(rows)
    print("medians:", {k: round(v, 3) for k, v in med.items()})
    if args.markdown or args.write:
        print(markdown(med))
    if args.write:
        write_results(args.write, markdown(med) + "\n\nMedians of "
                      f"{args.repeats} repeats; the loops compiled at installation in "
                      f"use: {aot}.", __file__, argv)
    return med


if __name__ == "__main__":
    main()
