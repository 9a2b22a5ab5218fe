"""Chains of order k: structsvm's orders 1, 2 and 3 against svm_hmm ``--t 2`` (built
from its sources) and sklearn-crfsuite (first order), on five tagging tasks.

Tasks (train / test):

- ``pos``: NLTK treebank POS, first 3000 tagged sentences / the other 914 (46 tags),
  ``features="pos"``;
- ``chunk``: CoNLL-2000 chunking, train / test (23 tags), ``features="chunk"``,
  chunk F1;
- ``ner``: CoNLL-2002 Dutch named entities, ``ned.train`` / ``ned.testb`` (9 tags),
  ``features="chunk"`` on the (word, POS) pairs, entity F1;
- ``ewt``: UD English EWT, XPOS tags, train / test (49 tags), ``features="pos"`` on
  the word forms;
- ``ewt_morph``: UD English EWT, UPOS conjoined with the morphological features
  (``NOUN|Number=Sing``: 321 tags in train), ``features="pos"``.

Systems (each in a fresh Python process with ``--isolate``: its time includes
numba's start-up; a structsvm row's time is the whole ``structsvm.fit`` call):

- ``o1``: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(features=...))``, every
  other parameter at its default (first order);
- ``o2``, ``o3``: the same with ``order=2`` / ``order=3`` and ``beam`` (``--beam``,
  per task): training decodes with at most that many tags per position, and the
  column "uncertified" gives the share of training decodes the decoder could not
  certify exact (``n_uncertified_decodes_ / n_decodes_``); prediction decodes with
  the same beam;
- ``svm_hmm2``: Joachims' svm_hmm ``--t 2`` (exact second-order Viterbi), on the
  very observation features of ``o1`` (its vocabulary columns, written with
  ``write_svm_hmm``), ``-c`` = C·n (structsvm's C = 0.1 on the sum of slacks of n
  sentences) and ``-e 0.5`` (svm_hmm's documented example), run from the folder
  given by ``--svm-hmm`` (svm_hmm_learn and svm_hmm_classify, built from the
  sources; never part of this repository);
- ``crfsuite``: sklearn-crfsuite L-BFGS, c1 = c2 = 0.1, 100 iterations, on the same
  observation strings (built before its clock starts).

Usage::

    python benchmarks/bench_order.py --isolate --svm-hmm /path/to/svm_hmm [--write]
        [--tasks pos chunk ...] [--systems o1 o2 ...] [--max-train N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import structsvm
from structsvm.corpora import (load_conll2000, load_conll2002, load_treebank,
                               load_ud_english_ewt, write_svm_hmm)
from structsvm.structures import SequenceFeatures
from structsvm.structures.sequence import chunk_f1, token_accuracy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, peak_rss_mb, write_results  # noqa: E402

#: task -> (feature set, metric, beam of order 2, beam of order 3 or None: not run)
TASKS = {
    "pos": ("pos", "acc", 4, 3),
    "chunk": ("chunk", "f1", 4, 3),
    "ner": ("chunk", "f1", 4, 3),
    "ewt": ("pos", "acc", 4, None),
    "ewt_morph": ("pos", "acc", 4, None),
}
SYSTEMS = ("o1", "o2", "o3", "svm_hmm2", "crfsuite")
ARGS = None


# ----------------------------------------------------------------------- data
def _ewt(split, morph):
    sents = load_ud_english_ewt(split=split)[0]
    X = [[tok["form"] for tok in s] for s in sents]
    if not morph:
        return X, [[tok["xpos"] for tok in s] for s in sents]
    Y = [[tok["upos"] + "".join(f"|{k}={v}" for k, v in sorted((tok["feats"] or {})
                                                                 .items()))
          for tok in s] for s in sents]
    return X, Y


def load(task):
    """(X_train, Y_train, X_test, Y_test) of a task."""
    if task == "pos":
        data = load_treebank()
    elif task == "chunk":
        data = load_conll2000()
    elif task == "ner":
        tr, te = load_conll2002(split="train"), load_conll2002(split="testb")
        data = (tr[0], tr[1], te[0], te[1])
    else:
        data = _ewt("train", task == "ewt_morph") + _ewt("test", task == "ewt_morph")
    data = tuple(list(d) for d in data)
    if ARGS is not None and ARGS.max_train:
        data = (data[0][:ARGS.max_train], data[1][:ARGS.max_train],
                data[2][:ARGS.max_train], data[3][:ARGS.max_train])
    return data


def score(task, Y_true, Y_pred):
    return chunk_f1(Y_true, Y_pred) if TASKS[task][1] == "f1" else \
        token_accuracy(Y_true, Y_pred)


# ----------------------------------------------------------------------- systems
def run_structsvm(task, data, order):
    features, _, beam2, beam3 = TASKS[task]
    beam = None if order == 1 else (ARGS.beam or (beam2 if order == 2 else beam3))
    X_tr, Y_tr, X_te, Y_te = data
    params = {} if order == 1 else dict(order=order, beam=beam)
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=SequenceFeatures(features=features,
                                                                   **params))
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    tag = time.perf_counter() - t0
    fm = model.feature_map_
    gap = model.duality_gap_ / model.objective_ if np.isfinite(model.duality_gap_) \
        else float("nan")
    row = dict(system=f"structsvm order {order}" + (f", beam {beam}" if beam else ""),
               score=score(task, Y_te, pred), train=train, tag=tag,
               note=f"{model.learner_.name}, {model.n_iter_} passes, objective "
                    f"{model.objective_:.4g}, rel. gap {gap:.3g}, {fm.n_features_:,} "
                    "weights")
    if order > 1:
        row["uncertified"] = fm.n_uncertified_decodes_ / max(fm.n_decodes_, 1)
    return row


def feature_strings(fm, X):
    """Per-token lists of observation strings: what crfsuite gets (same features)."""
    E = fm.encode_inputs(X)
    vocab, M = fm.vocabulary_, E.X
    rows = [vocab[M.indices[M.indptr[t]:M.indptr[t + 1]]].tolist()
            for t in range(M.shape[0])]
    return [rows[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]


def run_crfsuite(task, data):
    import sklearn_crfsuite

    X_tr, Y_tr, X_te, Y_te = data
    fm = SequenceFeatures(features=TASKS[task][0]).fit(X_tr, Y_tr)
    F_tr, F_te = feature_strings(fm, X_tr), feature_strings(fm, X_te)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100)
    t0 = time.perf_counter()
    crf.fit(F_tr, Y_tr)
    train = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = crf.predict(F_te)
    tag = time.perf_counter() - t0
    return dict(system="sklearn-crfsuite (first order)", score=score(task, Y_te, pred),
                train=train, tag=tag, note="L-BFGS, c1=c2=0.1, 100 iterations")


def run_svm_hmm(task, data, order=2):
    X_tr, Y_tr, X_te, Y_te = data
    folder = ARGS.svm_hmm
    learn, classify = (os.path.join(folder, f"svm_hmm_{p}") for p in ("learn", "classify"))
    fm = SequenceFeatures(features=TASKS[task][0]).fit(X_tr, Y_tr)
    number = {t: i + 1 for i, t in enumerate(fm.tags_)}
    C = SequenceFeatures.default_C * len(X_tr)

    def rows(X):
        E = fm.encode_inputs(X)
        return [E.X[E.offsets[i]:E.offsets[i + 1]] for i in range(len(X))]

    with tempfile.TemporaryDirectory() as tmp:
        train_file, test_file = (os.path.join(tmp, f) for f in ("train.dat", "test.dat"))
        model_file, pred_file = (os.path.join(tmp, f) for f in ("model", "pred"))
        write_svm_hmm(train_file, rows(X_tr), [[number[t] for t in y] for y in Y_tr])
        # a test tag unseen in training is written as tag 1 (scored against the truth)
        write_svm_hmm(test_file, rows(X_te), [[number.get(t, 1) for t in y] for y in Y_te])
        t0 = time.perf_counter()
        subprocess.run([learn, "-c", f"{C:g}", "-e", "0.5", "--t", str(order), train_file,
                        model_file], check=True, capture_output=True)
        train = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([classify, test_file, model_file, pred_file], check=True,
                       capture_output=True)
        tag = time.perf_counter() - t0
        with open(pred_file) as f:
            flat = [int(line.split()[0]) for line in f if line.strip()]
    lengths = np.cumsum([0] + [len(y) for y in Y_te])
    pred = [[str(fm.tags_[k - 1]) for k in flat[a:b]] for a, b in zip(lengths[:-1],
                                                                       lengths[1:])]
    return dict(system=f"svm_hmm --t {order}", score=score(task, Y_te, pred),
                train=train, tag=tag, note=f"-c {C:g} -e 0.5 (exact Viterbi)")


def run(task, system, data):
    if system in ("o1", "o2", "o3"):
        return run_structsvm(task, data, int(system[1]))
    if system == "crfsuite":
        return run_crfsuite(task, data)
    return run_svm_hmm(task, data)


def planned(task, system):
    """Whether ``system`` runs on ``task`` (None) or why not."""
    if system == "o3" and TASKS[task][3] is None:
        return "order 3 is not run on this tag set (T^4 windows per token)"
    if system == "svm_hmm2" and task not in ARGS.svm_hmm_tasks:
        return "svm_hmm --t 2 not run on this task (--svm-hmm-tasks)"
    if system == "svm_hmm2" and not ARGS.svm_hmm:
        return "svm_hmm not given (--svm-hmm)"
    if system == "crfsuite" and task not in ARGS.crfsuite_tasks:
        return "crfsuite not run on this task (--crfsuite-tasks)"
    return None


# ----------------------------------------------------------------------- table
def _fmt(task, r, ref, peer):
    metric = f"{100 * r['score']:.2f}%" if TASKS[task][1] == "acc" else f"{r['score']:.4f}"
    ratio = lambda a, b: "-" if b is None else f"{a / b['train']:.2f}"  # noqa: E731
    unc = f"{100 * r['uncertified']:.1f}%" if "uncertified" in r else "-"
    return (f"| {task} | {r['system']} | {metric} | {r['train']:.1f} | "
            f"{ratio(r['train'], ref)} | {ratio(r['train'], peer)} | {unc} | "
            f"{r['tag']:.2f} | {r['peak_mb']:.0f} | {r['note']} |")


def main(argv=None):
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    ap.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--svm-hmm", default=os.environ.get("SVM_HMM_DIR"),
                    help="folder of svm_hmm_learn and svm_hmm_classify")
    ap.add_argument("--svm-hmm-tasks", nargs="*", default=["pos", "ner", "chunk"],
                    choices=list(TASKS))
    ap.add_argument("--crfsuite-tasks", nargs="*", default=["pos", "chunk", "ner", "ewt"],
                    choices=list(TASKS))
    ap.add_argument("--beam", type=int, default=None,
                    help="beam of orders 2 and 3 on every task (default: per task)")
    ap.add_argument("--max-train", type=int, default=None,
                    help="first N sentences of each split only (smoke tests)")
    ap.add_argument("--isolate", action="store_true",
                    help="run every system in a fresh Python process")
    add_output_options(ap, "order")
    ap.add_argument("--only", nargs=2, help=argparse.SUPPRESS)
    args = ARGS = ap.parse_args(argv)
    if args.only:
        task, system = args.only
        row = run(task, system, load(task))
        row["peak_mb"] = peak_rss_mb()
        print(json.dumps(row))
        return row
    passed = [a for a in (argv if argv is not None else sys.argv[1:])
              if a not in ("--isolate", "--markdown") and not a.startswith("--write")]
    if "--write" in passed:
        passed.remove("--write")
    table = ["| task | system | accuracy / F1 | train (s) | train / order 1 | "
             "train / svm_hmm --t 2 | uncertified decodes | tag (s) | peak MB | notes |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    skipped, rows_all = [], {}
    for task in args.tasks:
        data = None if args.isolate else load(task)
        rows = {}
        for system in args.systems:
            why = planned(task, system)
            if why:
                skipped.append(f"{task} / {system}: {why}")
                continue
            if args.isolate:
                cmd = [sys.executable, os.path.abspath(__file__), "--only", task, system,
                       *passed]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True)
                row = json.loads(out.stdout.strip().splitlines()[-1])
            else:
                row = run(task, system, data)
                row["peak_mb"] = peak_rss_mb()
            rows[system] = row
            print(task, {k: (round(v, 4) if isinstance(v, float) else v)
                         for k, v in row.items()}, flush=True)
        rows_all[task] = rows
        for system, r in rows.items():
            table.append(_fmt(task, r, rows.get("o1"), rows.get("svm_hmm2")))
    text = "\n".join(table)
    if skipped:
        text += "\n\nNot run: " + "; ".join(skipped) + "."
    if args.markdown or args.write:
        print("\n" + text)
    if args.write:
        write_results(args.write, text, __file__, argv)
    return rows_all


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
