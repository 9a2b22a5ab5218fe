"""Dependency parsing of the treebank sample: structsvm (arc-factored features + Eisner)
vs UDPipe 1 and NLTK's ProbabilisticProjectiveDependencyParser, on one split, in one run.

Split (``load_dependency_treebank(split="files")``): the first 80 % of the 199 files
train (3,396 sentences), the last 40 files test (518 sentences). Every system gets
the gold part-of-speech tags:

- structsvm: ``structsvm.fit(X, Y, feature_map=DependencyFeatures())``, the default
  call (X are (word, tag) pairs); ``--learner``/``--C``/``--tol`` override the
  defaults;
- UDPipe 1 (``ufal.udpipe``, its transition-based neural parser Parsito): trained
  with ``Trainer.train("morphodita_parsito", ...)`` on the same sentences as
  CoNLL-U (the tag in UPOS and XPOS; relation ``root`` or ``dep``), tokenizer and
  tagger off, the parser with UDPipe's default options (``--udpipe-parser`` passes
  others); it parses the test sentences given as CoNLL-U with their tags;
- NLTK: ``ProbabilisticProjectiveDependencyParser`` (Eisner's model C) trained on
  the same trees as ``DependencyGraph`` objects whose tokens are the tags (so that
  no test token is unknown to its grammar); its chart keeps every analysis, so it
  parses only the first ``--nltk-n`` test sentences of at most ``--nltk-max-len``
  words, and the most probable of its parses is taken.

Scores: unlabelled attachment (UAS) with punctuation excluded (words made of
punctuation characters only, the CoNLL ``eval.pl`` rule) and with it; for NLTK on
its sentences, with structsvm's on the same ones. Times: wall clock in this one
process; structsvm's training includes compiling any loop not compiled at
installation; parsing speed is the median of ``--repeats`` parses of the test set.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_dependency.py [--markdown]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import structsvm
from structsvm.corpora import load_dependency_treebank
from structsvm.structures.dependency import (DependencyFeatures, attachment_scores,
                                             to_dependency_graphs)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402


def uas(Y, pred, X, punct):
    return attachment_scores(Y, pred, X, exclude_punctuation=not punct).uas


def run_structsvm(X_tr, Y_tr, X_te, repeats, **params):
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=DependencyFeatures(), **params)
    train = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        pred = model.predict(X_te)
        times.append(time.perf_counter() - t0)
    return model, pred, train, float(np.median(times))


def _conllu(X, Y=None):
    lines = []
    for i, x in enumerate(X):
        for d, (w, t) in enumerate(x, start=1):
            head = "_" if Y is None else str(Y[i][d - 1])
            rel = "_" if Y is None else ("root" if Y[i][d - 1] == 0 else "dep")
            lines.append(f"{d}\t{w}\t_\t{t}\t{t}\t_\t{head}\t{rel}\t_\t_")
        lines.append("")
    return "\n".join(lines) + "\n"


def run_udpipe(X_tr, Y_tr, X_te, parser_options, repeats):
    import ufal.udpipe as udpipe

    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(_conllu(X_tr, Y_tr))
    train, sent, err = udpipe.Sentences(), udpipe.Sentence(), udpipe.ProcessingError()
    while reader.nextSentence(sent, err):
        train.push_back(sent)
        sent = udpipe.Sentence()
    if err.occurred():
        raise RuntimeError(f"UDPipe cannot read the training data: {err.message}")
    t0 = time.perf_counter()
    blob = udpipe.Trainer.train("morphodita_parsito", train, udpipe.Sentences(), "none",
                                "none", parser_options, err)
    train_time = time.perf_counter() - t0
    if err.occurred():
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "udpipe.model")
        with open(path, "wb") as fh:
            fh.write(blob if isinstance(blob, bytes) else blob.encode("latin-1"))
        model = udpipe.Model.load(path)
    pipeline = udpipe.Pipeline(model, "conllu", udpipe.Pipeline.NONE,
                               udpipe.Pipeline.DEFAULT, "conllu")
    text = _conllu(X_te)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = pipeline.process(text, err)
        times.append(time.perf_counter() - t0)
    if err.occurred():
        raise RuntimeError(f"UDPipe parsing failed: {err.message}")
    pred, heads = [], []
    for line in out.splitlines():
        if not line.strip():
            if heads:
                pred.append(heads)
                heads = []
        elif not line.startswith("#"):
            heads.append(int(line.split("\t")[6]))
    if heads:
        pred.append(heads)
    return pred, train_time, float(np.median(times))


def run_nltk(X_tr, Y_tr, X_sub):
    from nltk.parse.projectivedependencyparser import \
        ProbabilisticProjectiveDependencyParser

    class Recording(ProbabilisticProjectiveDependencyParser):
        """Remembers every parse it scores: its parse() returns trees, not heads."""

        def compute_prob(self, dg):
            p = super().compute_prob(dg)
            self.scored.append((p, dg))
            return p

    tags = [[(t, t) for _, t in x] for x in X_tr]
    t0 = time.perf_counter()
    parser = Recording()
    parser.train(to_dependency_graphs(tags, Y_tr))
    train = time.perf_counter() - t0
    pred, failed = [], 0
    t0 = time.perf_counter()
    for x in X_sub:
        parser.scored = []
        list(parser.parse([t for _, t in x]))
        if not parser.scored:
            failed += 1
            pred.append([0] * len(x))
            continue
        best = max(parser.scored, key=lambda s: s[0])[1]
        pred.append([best.nodes[d]["head"] for d in range(1, len(x) + 1)])
    return pred, train, time.perf_counter() - t0, failed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", nargs="+", default=["structsvm", "udpipe", "nltk"],
                    choices=["structsvm", "udpipe", "nltk"])
    ap.add_argument("--max-train", type=int, default=0, help="train on the first N "
                    "training sentences (0: all)")
    ap.add_argument("--max-test", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5, help="parses of the test set "
                    "timed (median)")
    ap.add_argument("--learner", default=None)
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--tol", type=float, default=None)
    ap.add_argument("--udpipe-parser", default="", help="UDPipe parser options "
                    "(default: UDPipe's defaults)")
    ap.add_argument("--nltk-n", type=int, default=20)
    ap.add_argument("--nltk-max-len", type=int, default=8)
    add_output_options(ap, "dependency")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_dependency_treebank(split="files")
    if args.max_train:
        X_tr, Y_tr = X_tr[:args.max_train], Y_tr[:args.max_train]
    if args.max_test:
        X_te, Y_te = X_te[:args.max_test], Y_te[:args.max_test]
    print(f"train {len(X_tr)} sentences ({sum(map(len, X_tr))} words), test "
          f"{len(X_te)} sentences ({sum(map(len, X_te))} words); gold POS tags",
          flush=True)
    rows = {}
    params = {k: v for k, v in (("learner", args.learner), ("C", args.C),
                                ("tol", args.tol)) if v is not None}
    if "structsvm" in args.systems:
        model, pred, train, parse = run_structsvm(X_tr, Y_tr, X_te, args.repeats,
                                                  **params)
        rows["structsvm"] = dict(
            name=f"structsvm default call [{model.learner_.name}, {model.decoder_.name}]",
            uas=uas(Y_te, pred, X_te, False), uas_punct=uas(Y_te, pred, X_te, True),
            train=train, speed=len(X_te) / parse, pred=pred)
        print(f"structsvm {model.learner_.name}: train {train:.1f}s ({model.n_iter_} "
              f"passes, C={model.C_}, tol={model.tol_}); UAS {rows['structsvm']['uas']:.4f} "
              f"(with punctuation {rows['structsvm']['uas_punct']:.4f}); "
              f"{rows['structsvm']['speed']:.0f} sentences/s", flush=True)
    if "udpipe" in args.systems:
        pred, train, parse = run_udpipe(X_tr, Y_tr, X_te, args.udpipe_parser,
                                        args.repeats)
        rows["udpipe"] = dict(name="UDPipe 1 (Parsito, default options)",
                              uas=uas(Y_te, pred, X_te, False),
                              uas_punct=uas(Y_te, pred, X_te, True), train=train,
                              speed=len(X_te) / parse, pred=pred)
        print(f"UDPipe: train {train:.1f}s; UAS {rows['udpipe']['uas']:.4f} (with "
              f"punctuation {rows['udpipe']['uas_punct']:.4f}); "
              f"{rows['udpipe']['speed']:.0f} sentences/s", flush=True)
    if "structsvm" in rows and "udpipe" in rows:
        a, b = rows["structsvm"], rows["udpipe"]
        print(f"structsvm vs UDPipe: UAS {a['uas'] - b['uas']:+.4f}, training time "
              f"{a['train'] / b['train']:.3f}x, parsing {a['speed'] / b['speed']:.1f}x "
              "as fast")
    sub = [i for i, x in enumerate(X_te) if len(x) <= args.nltk_max_len][:args.nltk_n]
    if "nltk" in args.systems and not sub:
        print(f"NLTK: no test sentence of at most {args.nltk_max_len} words")
    elif "nltk" in args.systems:
        X_sub, Y_sub = [X_te[i] for i in sub], [Y_te[i] for i in sub]
        pred, train, parse, failed = run_nltk(X_tr, Y_tr, X_sub)
        rows["nltk"] = dict(name="NLTK ProbabilisticProjectiveDependencyParser",
                            uas=uas(Y_sub, pred, X_sub, False),
                            uas_punct=uas(Y_sub, pred, X_sub, True), train=train,
                            speed=len(X_sub) / parse, n=len(sub), failed=failed)
        line = (f"NLTK: train {train:.1f}s; {len(sub)} sentences of <= "
                f"{args.nltk_max_len} words, UAS {rows['nltk']['uas']:.4f} (with "
                f"punctuation {rows['nltk']['uas_punct']:.4f}), {failed} without a "
                f"parse; {rows['nltk']['speed']:.3f} sentences/s")
        for key in ("structsvm", "udpipe"):
            if key in rows:
                p = [rows[key]["pred"][i] for i in sub]
                rows[key]["uas_nltk"] = uas(Y_sub, p, X_sub, False)
                line += f"; {key} on them: UAS {rows[key]['uas_nltk']:.4f}"
        print(line, flush=True)
    table = [f"Train {len(X_tr)} sentences, test {len(X_te)} (split by file; gold POS "
             "tags). NLTK parses only the first "
             f"{len(sub)} test sentences of at most {args.nltk_max_len} words"
             + (", on which the other systems' UAS is in the last column." if sub else "."),
             "", "| system | train (s) | UAS, no punctuation | UAS, all words | "
             "sentences/s | UAS on NLTK's sentences |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key, r in rows.items():
        on_nltk = r.get("uas_nltk", r["uas"] if key == "nltk" else None)
        table.append(f"| {r['name']} | {r['train']:.1f} | {r['uas']:.4f} | "
                     f"{r['uas_punct']:.4f} | {r['speed']:.3g} | "
                     + ("-" if on_nltk is None else f"{on_nltk:.4f}") + " |")
    if args.markdown or args.write:
        print("\n" + "\n".join(table))
    if args.write:
        write_results(args.write, "\n".join(table), __file__, argv)
    return rows


if __name__ == "__main__":
    main()
