"""The default call on four tagging corpora with no memory setting: time, peak memory,
the fit's own estimate, weights and model size.

Each corpus trains ``structsvm.fit(X, Y, feature_map=SequenceFeatures(...),
decoder="viterbi")`` in a fresh Python process with ``STRUCTSVM_MAX_MEMORY`` unset
(the budget is then half of the machine's available memory), ``verbose=1`` so the
estimate the fit states before it starts is recorded. The columns: training time
(the fit call, compiled loops loaded from the installation), the process's peak
resident memory before and after the fit (the difference is what the fit added),
the estimate, the weights (and the share that is non-zero), the model file's size
and test token accuracy.

- ``brown``: a corpus of the size of the Brown corpus's news category (3,698
  training sentences, 206 tags): the first 3,698 parsed sentences of the NLTK
  treebank sample, each word tagged with its part of speech joined to the label of
  the phrase above it (``NN|NP``, ``VBD|VP``) wherever that pair occurs at least 6
  times, else with its part of speech alone: 204 tags, 83,934 observation features
  (the Brown news corpus with the same map has 89,598 and 206); the other 216
  sentences are the test set;
- ``treebank``: POS tagging, the treebank sample's first 3,000 sentences (46 tags);
- ``conll2000``: chunking, CoNLL-2000's 8,936 training sentences
  (``features="chunk"``);
- ``conll2002``: Dutch named entities, CoNLL-2002's 15,806 training sentences
  (``features="chunk"`` over word and POS tag), tested on ``testa``.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_memory.py [--corpora brown treebank]
        [--max-train N] [--markdown]
"""
import argparse
import json
import logging
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np

CORPORA = ("brown", "treebank", "conll2000", "conll2002")
#: a (part of speech, phrase) pair becomes a tag of its own from this many tokens on
PAIR_MIN_COUNT = 6
BROWN_TRAIN = 3698


def brown_sized(path=None):
    """``(X_train, Y_train, X_test, Y_test)``: the treebank sample with a tag set of
    the Brown corpus's size (see the module's docstring)."""
    from structsvm.corpora.treebank import treebank_parsed_sents

    trees = treebank_parsed_sents(path)  # traces and function tags removed
    sents = []
    for t in trees:
        tokens = []
        for pos in t.treepositions("leaves"):
            tag = t[pos[:-1]].label()
            parent = t[pos[:-2]].label() if len(pos) >= 2 else "TOP"
            tokens.append((t[pos], tag, parent))
        sents.append(tokens)
    pairs = Counter((tag, parent) for s in sents for _, tag, parent in s)
    X = [[w for w, _, _ in s] for s in sents]
    Y = [[f"{tag}|{parent}" if pairs[tag, parent] >= PAIR_MIN_COUNT else tag
          for _, tag, parent in s] for s in sents]
    return X[:BROWN_TRAIN], Y[:BROWN_TRAIN], X[BROWN_TRAIN:], Y[BROWN_TRAIN:]


def load(corpus):
    from structsvm.corpora import load_conll2000, load_conll2002, load_treebank

    if corpus == "brown":
        return brown_sized(), "pos"
    if corpus == "treebank":
        return load_treebank(), "pos"
    if corpus == "conll2000":
        return load_conll2000(), "chunk"
    X, Y, _ = load_conll2002(split="train")
    Xt, Yt, _ = load_conll2002(split="testa")
    return (X, Y, Xt, Yt), "chunk"


def run(corpus, max_train):
    """One corpus in this process: its row (a dict)."""
    import structsvm
    from structsvm.structures import SequenceFeatures
    from structsvm.structures.sequence import token_accuracy

    (X, Y, Xt, Yt), features = load(corpus)
    if max_train:
        X, Y = X[:max_train], Y[:max_train]
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("structsvm")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(features=features),
                          decoder="viterbi", verbose=1)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    logger.removeHandler(handler)
    first = lines[0]
    estimate = re.search(r"estimated memory ([\d.]+ \w+)", first).group(1)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.npz")
        model.save(path)
        size = os.path.getsize(path)
    return dict(corpus=corpus, sentences=len(X), tags=len(model.feature_map_.tags_),
                features=int(model.feature_map_.n_input_features_),
                weights=int(model.coef_.size),
                nonzero=float(np.mean(model.coef_ != 0)), seconds=seconds,
                before_mb=before / 2 ** 20, peak_mb=after / 2 ** 20,
                added_mb=(after - before) / 2 ** 20, estimate=estimate,
                estimate_mb=_mib(estimate), model_mb=size / 2 ** 20,
                accuracy=token_accuracy(Yt, model.predict(Xt)),
                learner=model.learner_.name, first_line=first)


def _mib(text):
    value, unit = text.split()
    return float(value) * {"bytes": 2 ** -20, "KiB": 2 ** -10, "MiB": 1,
                           "GiB": 2 ** 10, "TiB": 2 ** 20}[unit]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    ap.add_argument("--max-train", type=int, default=0,
                    help="train on the first N sentences only (0: all)")
    ap.add_argument("--only", choices=CORPORA, help=argparse.SUPPRESS)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.only:  # the child: one corpus, one JSON line
        print(json.dumps(run(args.only, args.max_train)))
        return None
    env = {k: v for k, v in os.environ.items() if k != "STRUCTSVM_MAX_MEMORY"}
    rows = []
    for corpus in args.corpora:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--only", corpus,
                              "--max-train", str(args.max_train)], check=True,
                             capture_output=True, text=True, env=env).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        print(row["first_line"])
        print(f"{corpus}: {row['sentences']} sentences, {row['tags']} tags, "
              f"{row['weights']} weights ({100 * row['nonzero']:.2f} % non-zero), "
              f"{row['seconds']:.1f} s, peak {row['peak_mb']:.0f} MiB (the fit added "
              f"{row['added_mb']:.0f} MiB; estimate {row['estimate']}), model "
              f"{row['model_mb']:.2f} MiB, token accuracy {row['accuracy']:.4f}",
              flush=True)
    if args.markdown:
        print("\n| corpus | sentences | tags | weights (non-zero) | train s | peak MiB | "
              "added MiB | estimate | model MiB | token acc. |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['corpus']} | {r['sentences']:,} | {r['tags']} | "
                  f"{r['weights']:,} ({100 * r['nonzero']:.2f} %) | {r['seconds']:.1f} | "
                  f"{r['peak_mb']:.0f} | {r['added_mb']:.0f} | {r['estimate']} | "
                  f"{r['model_mb']:.2f} | {r['accuracy']:.4f} |")
    return rows


if __name__ == "__main__":
    main()
