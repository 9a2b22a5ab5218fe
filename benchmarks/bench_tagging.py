"""Tagging throughput on the NLTK treebank: tokens in, tags out, three taggers side by side.

Split: first 3000 tagged sentences train, remaining 914 test (23,165 tokens, -NONE-
traces included). Every system is trained once, then tags the whole test set end to
end, feature extraction included, from token lists to tag lists:

- ``structsvm predict``: ``structsvm.fit(X, Y, feature_map=SequenceFeatures(),
  decoder="viterbi")`` (the default call), then ``model.predict(X_test)``;
- ``structsvm tag_sents``: the same model behind NLTK's tagger interface,
  ``StructSVMTagger(model).tag_sents(X_test)`` ((token, tag) pairs);
- ``sklearn-crfsuite``: L-BFGS, c1 = c2 = 0.1, ``--crf-iterations`` iterations, on its
  usual per-token Python feature dicts (bias, lower case, suffixes 2-3, case and digit
  flags, and the same of the neighbouring words), which are built inside the clock;
- ``NLTK PerceptronTagger``: trained from scratch (5 iterations), ``tag_sents``.

Timing: one untimed call of each system, then ``--repeats`` rounds in which every
system tags the test set once (interleaved, so a busy machine slows all alike); the
table gives the median wall time per system, tokens per second, and tokens per
second of the process's CPU time (less sensitive to other jobs on a shared machine;
every system tags in one thread). The ratios are of wall-time throughput.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_tagging.py [--repeats 7]
        [--max-train N] [--markdown]
"""
import argparse
import os
import sys
import time

import numpy as np

import structsvm
from structsvm.corpora import load_treebank
from structsvm.structures import SequenceFeatures
from structsvm.structures.sequence import token_accuracy
from structsvm.estimator import StructSVMTagger

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402


def word_features(sent, i):
    """sklearn-crfsuite's customary feature dict of token i."""
    w = sent[i]
    f = {"bias": 1.0, "word.lower()": w.lower(), "word[-3:]": w[-3:], "word[-2:]": w[-2:],
         "word.isupper()": w.isupper(), "word.istitle()": w.istitle(),
         "word.isdigit()": w.isdigit()}
    if i > 0:
        p = sent[i - 1]
        f.update({"-1:word.lower()": p.lower(), "-1:word.istitle()": p.istitle(),
                  "-1:word.isupper()": p.isupper()})
    else:
        f["BOS"] = True
    if i < len(sent) - 1:
        n = sent[i + 1]
        f.update({"+1:word.lower()": n.lower(), "+1:word.istitle()": n.istitle(),
                  "+1:word.isupper()": n.isupper()})
    else:
        f["EOS"] = True
    return f


def sent_features(sent):
    return [word_features(sent, i) for i in range(len(sent))]


def train_all(X, Y, crf_iterations):
    """The three trained systems: name -> (tag function tokens -> tag lists, seconds)."""
    import sklearn_crfsuite
    from nltk.tag.perceptron import PerceptronTagger

    t0 = time.perf_counter()
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder="viterbi")
    t_ssvm = time.perf_counter() - t0
    tagger = StructSVMTagger(model)
    t0 = time.perf_counter()
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1,
                               max_iterations=crf_iterations)
    crf.fit([sent_features(x) for x in X], Y)
    t_crf = time.perf_counter() - t0
    t0 = time.perf_counter()
    perc = PerceptronTagger(load=False)
    perc.train([list(zip(x, y)) for x, y in zip(X, Y)], nr_iter=5)
    t_perc = time.perf_counter() - t0
    return {
        "structsvm predict": (model.predict, t_ssvm),
        "structsvm tag_sents": (lambda S: [[t for _, t in s] for s in tagger.tag_sents(S)],
                                t_ssvm),
        "sklearn-crfsuite": (lambda S: crf.predict([sent_features(s) for s in S]), t_crf),
        "NLTK PerceptronTagger": (lambda S: [[t for _, t in s] for s in perc.tag_sents(S)],
                                  t_perc),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--crf-iterations", type=int, default=100)
    ap.add_argument("--max-train", type=int, default=None,
                    help="train on the first N sentences only (smoke tests)")
    add_output_options(ap, "tagging")
    args = ap.parse_args(argv)
    X, Y, X_te, Y_te = load_treebank()
    if args.max_train:
        X, Y = X[:args.max_train], Y[:args.max_train]
    n_tok = sum(map(len, X_te))
    systems = train_all(X, Y, args.crf_iterations)
    acc = {name: token_accuracy(Y_te, tag(X_te)) for name, (tag, _) in systems.items()}
    times = {name: [] for name in systems}
    cpu = {name: [] for name in systems}
    for _ in range(args.repeats):
        for name, (tag, _) in systems.items():
            t0, c0 = time.perf_counter(), time.process_time()
            tag(X_te)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    rows = []
    for name, (_, train) in systems.items():
        med = float(np.median(times[name]))
        rows.append(dict(name=name, acc=acc[name], train=train, tag=med,
                         speed=n_tok / med, cpu_speed=n_tok / float(np.median(cpu[name]))))
    ref = {r["name"]: r["speed"] for r in rows}
    table = [f"{n_tok:,} test tokens, medians of {args.repeats} interleaved rounds", "",
             "| system | token acc. | train (s) | tag (s) | tokens/s | tokens per CPU "
             "second | vs crfsuite | vs PerceptronTagger |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a = r["speed"] / ref["sklearn-crfsuite"]
        b = r["speed"] / ref["NLTK PerceptronTagger"]
        table.append(f"| {r['name']} | {100 * r['acc']:.2f}% | {r['train']:.1f} | "
                     f"{r['tag']:.3f} | {r['speed']:,.0f} | {r['cpu_speed']:,.0f} | "
                     f"{a:.2f}x | {b:.2f}x |")
        if not (args.markdown or args.write):
            print(f"{r['name']:<24} acc {100 * r['acc']:6.2f}%  train {r['train']:6.1f}s  "
                  f"tag {r['tag']:.3f}s  {r['speed']:>9,.0f} tokens/s  "
                  f"(x{a:.2f} crfsuite, x{b:.2f} perceptron)")
    if args.markdown or args.write:
        print("\n" + "\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return rows


if __name__ == "__main__":
    main()
