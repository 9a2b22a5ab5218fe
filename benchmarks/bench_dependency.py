"""Dependency parsing: structsvm (first order unlabelled and labelled, second order)
vs UDPipe 1 on UD English EWT, and on the treebank sample's dependency split also vs
NLTK's ProbabilisticProjectiveDependencyParser, in one run.

UD English EWT (``load_ud_english_ewt``): train on ``train`` (12,544 sentences),
test on ``test`` (2,077), every system given the gold UPOS, XPOS, lemmas and
morphological features:

- structsvm: ``structsvm.fit(X, Y, feature_map=DependencyFeatures(...),
  decoder="eisner_one_root")`` (UD trees have one root word), X the token dicts;
  first order with heads only (Y head lists), first order labelled (Y (head,
  relation) pairs), and second order labelled (``siblings=True,
  grandparents=True``); the other parameters are the defaults (``--C``/``--tol``
  override them);
- UDPipe 1 (``ufal.udpipe``, its transition-based neural parser Parsito): trained
  with ``Trainer.train("morphodita_parsito", ...)`` on the training file as it is,
  tokenizer and tagger off, the parser with UDPipe's default options
  (``--udpipe-parser`` passes others); it parses the test file with its HEAD,
  DEPREL and DEPS columns blanked.

Scores: unlabelled and labelled attachment (UAS, LAS; the whole DEPREL with its
subtype) over every word (UD's evaluation counts punctuation) and without the words
made of punctuation characters only (the CoNLL ``eval.pl`` rule).

The treebank sample's dependency version (``load_dependency_treebank(split=
"files")``): the first 80 % of the 199 files train (3,396 sentences), the last 40
files test (518 sentences), gold part-of-speech tags, heads only: structsvm's default
call and its second order (``siblings=True, grandparents=True``), UDPipe 1 trained on
the same sentences as CoNLL-U (the tag in UPOS and XPOS, relation ``root`` or
``dep``), and NLTK's ``ProbabilisticProjectiveDependencyParser`` (Eisner's model C)
trained on the same trees as ``DependencyGraph`` objects whose tokens are the tags;
its chart keeps every analysis, so it parses only the first ``--nltk-n`` test
sentences of at most ``--nltk-max-len`` words, on which the others are scored too.

Times: wall clock in this one process; structsvm's training includes compiling any
loop not compiled at installation; parsing speed is the median of ``--repeats``
parses of the test set.

Usage::

    STRUCTSVM_DATA=.../data NLTK_DATA=.../nltk_data python benchmarks/bench_dependency.py [--markdown]
"""
import argparse
import datetime
import hashlib
import io
import json
import os
import sys
import tempfile
import time

import numpy as np

import structsvm
from structsvm.corpora import load_dependency_treebank, load_ud_english_ewt
from structsvm.structures.dependency import (DependencyFeatures, attachment_scores,
                                             read_conllu, to_dependency_graphs,
                                             write_conllu)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import RESULTS_DIR, add_output_options, machine, write_results  # noqa: E402

SECOND_ORDER = {"siblings": True, "grandparents": True}
#: Where UDPipe's rows are kept between runs (see :func:`udpipe_cached`).
UDPIPE_CACHE = str(RESULTS_DIR / "dependency-udpipe.json")


def scores(gold, pred, X):
    """UAS and LAS, with punctuation and without (LAS nan without relations)."""
    every = attachment_scores(gold, pred)
    no_punct = attachment_scores(gold, pred, X, exclude_punctuation=True)
    return dict(uas=every.uas, las=every.las, uas_np=no_punct.uas, las_np=no_punct.las)


def run_structsvm(X_tr, Y_tr, X_te, repeats, fm_params, **params):
    t0, c0 = time.perf_counter(), time.process_time()
    model = structsvm.fit(X_tr, Y_tr, feature_map=DependencyFeatures(**fm_params),
                          **params)
    train, cpu = time.perf_counter() - t0, time.process_time() - c0
    times = []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        pred = model.predict(X_te)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return model, pred, (train, cpu), tuple(np.median(times, axis=0))


# ------------------------------------------------------------------ UDPipe 1
def _conllu(X, Y=None):
    """CoNLL-U of (word, tag) sentences (the tag in UPOS and XPOS)."""
    lines = []
    for i, x in enumerate(X):
        for d, (w, t) in enumerate(x, start=1):
            head = "_" if Y is None else str(Y[i][d - 1])
            rel = "_" if Y is None else ("root" if Y[i][d - 1] == 0 else "dep")
            lines.append(f"{d}\t{w}\t_\t{t}\t{t}\t_\t{head}\t{rel}\t_\t_")
        lines.append("")
    return "\n".join(lines) + "\n"


def _blank_trees(text):
    """CoNLL-U text with HEAD, DEPREL and DEPS blanked on every word line."""
    out = []
    for line in text.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6] = cols[7] = cols[8] = "_"
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out)


def run_udpipe(train_text, test_text, parser_options, repeats):
    """Train UDPipe's parser on CoNLL-U text, parse the test text (its trees blanked);
    the parses as (head, relation) pairs."""
    import ufal.udpipe as udpipe

    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(train_text)
    train, sent, err = udpipe.Sentences(), udpipe.Sentence(), udpipe.ProcessingError()
    while reader.nextSentence(sent, err):
        train.push_back(sent)
        sent = udpipe.Sentence()
    if err.occurred():
        raise RuntimeError(f"UDPipe cannot read the training data: {err.message}")
    t0, c0 = time.perf_counter(), time.process_time()
    blob = udpipe.Trainer.train("morphodita_parsito", train, udpipe.Sentences(), "none",
                                "none", parser_options, err)
    train_time, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    if err.occurred():
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "udpipe.model")
        with open(path, "wb") as fh:
            fh.write(blob if isinstance(blob, bytes) else blob.encode("latin-1"))
        model = udpipe.Model.load(path)
    pipeline = udpipe.Pipeline(model, "conllu", udpipe.Pipeline.NONE,
                               udpipe.Pipeline.DEFAULT, "conllu")
    text = _blank_trees(test_text)
    times = []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = pipeline.process(text, err)
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    if err.occurred():
        raise RuntimeError(f"UDPipe parsing failed: {err.message}")
    parsed = read_conllu(io.StringIO(out))
    pred = [list(zip(h, r)) for h, r in zip(parsed.heads, parsed.relations)]
    return pred, (train_time, train_cpu), tuple(np.median(times, axis=0))


def udpipe_cached(corpus, train_text, test_text, parser_options, repeats, score,
                  cache=None, refresh=False, wait=0.0):
    """UDPipe's row for this training and test text: its training time, its parsing
    time and ``score(predictions)`` (a dict of JSON values).

    UDPipe 1 trains for hours on UD English EWT, so its row is measured once and kept
    in the JSON file ``cache`` (default :data:`UDPIPE_CACHE`) under a key made of the
    corpus, the SHA-256 of both texts, the parser options and the number of timed
    parses: a later run on the same data and options reads the row back (the table
    says when it was measured and under which load) instead of training again;
    ``refresh`` trains anew. With ``wait`` > 0 (seconds, or a function giving them)
    this run does not train UDPipe: it waits up to ``wait`` seconds for another run
    (started with ``--ewt-systems udpipe``, say) to store the row, and returns None
    if it has not by then.
    """
    import ufal.udpipe as udpipe

    cache = UDPIPE_CACHE if cache is None else cache
    digest = hashlib.sha256()
    for text in (train_text, test_text):
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    key = f"{corpus} {digest.hexdigest()[:16]} options={parser_options!r} repeats={repeats}"

    def entries():
        if cache and os.path.exists(cache):
            with open(cache, encoding="utf-8") as fh:
                return json.load(fh)
        return {}

    stored = entries()
    deadline = time.monotonic() + (wait() if callable(wait) else wait)
    wait = deadline - time.monotonic()
    while wait > 0 and key not in stored and time.monotonic() < deadline:
        time.sleep(min(30.0, max(0.0, deadline - time.monotonic())))
        stored = entries()
    if key in stored and not refresh:
        return dict(stored[key], cached=True)
    if wait > 0:
        return None
    load_start = os.getloadavg()[0]
    pred, (train, cpu), (parse, parse_cpu) = run_udpipe(train_text, test_text,
                                                        parser_options, repeats)
    entry = dict(train=train, cpu=cpu, parse=parse, parse_cpu=parse_cpu, **score(pred),
                 load_start=round(load_start, 2),
                 machine=machine(), udpipe=getattr(udpipe, "__version__", "?"),
                 measured=datetime.datetime.now(datetime.timezone.utc).strftime(
                     "%Y-%m-%d %H:%M UTC"))
    if cache:
        stored = entries()  # re-read: another run may have stored another key
        stored[key] = entry
        tmp = cache + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(stored, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, cache)
    return dict(entry, cached=False)


def _udpipe_note(entry):
    if not entry.get("cached"):
        return ""
    return (f" UDPipe's row was measured by an earlier run of this script with the same "
            f"data and options ({entry['measured']}, load {entry['load_start']:.1f} at "
            f"its start; kept in `{os.path.basename(UDPIPE_CACHE)}`), not retrained in "
            "this run.")


# ------------------------------------------------------------------ NLTK
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
    t0, c0 = time.perf_counter(), time.process_time()
    parser = Recording()
    parser.train(to_dependency_graphs(tags, Y_tr))
    train = time.perf_counter() - t0, time.process_time() - c0
    pred, failed = [], 0
    t0, c0 = time.perf_counter(), time.process_time()
    for x in X_sub:
        parser.scored = []
        list(parser.parse([t for _, t in x]))
        if not parser.scored:
            failed += 1
            pred.append([0] * len(x))
            continue
        best = max(parser.scored, key=lambda s: s[0])[1]
        pred.append([best.nodes[d]["head"] for d in range(1, len(x) + 1)])
    return pred, train, (time.perf_counter() - t0, time.process_time() - c0), failed


# ------------------------------------------------------------------ the corpora
def _fmt(v):
    return "-" if v is None or v != v else f"{v:.4f}"


def run_ewt(args, params):
    """Every system on UD English EWT; the rows and the Markdown table."""
    tr, te = load_ud_english_ewt(split="train"), load_ud_english_ewt(split="test")
    if args.max_train:
        tr = type(tr)(*(part[:args.max_train] for part in tr))
    if args.max_test:
        te = type(te)(*(part[:args.max_test] for part in te))
    X_tr, X_te = tr.sentences, te.sentences
    pairs_tr = [list(zip(h, r)) for h, r in zip(tr.heads, tr.relations)]
    gold = [list(zip(h, r)) for h, r in zip(te.heads, te.relations)]
    print(f"UD English EWT: train {len(X_tr)} sentences ({sum(map(len, X_tr))} words), "
          f"test {len(X_te)} ({sum(map(len, X_te))} words); gold UPOS, XPOS, lemmas, "
          "features", flush=True)
    rows, note = {}, ""
    configs = {"first": ("structsvm first order, heads only", tr.heads, {}),
               "labelled": ("structsvm first order, labelled", pairs_tr, {}),
               "second": ("structsvm second order (siblings, grandparents), labelled",
                          pairs_tr, SECOND_ORDER)}
    for key in args.ewt_systems:
        if key == "udpipe":
            continue
        name, Y, fm_params = configs[key]
        model, pred, (train, cpu), (parse, parse_cpu) = run_structsvm(
            X_tr, Y, X_te, args.repeats, fm_params, decoder="eisner_one_root", **params)
        truth = te.heads if Y is tr.heads else gold
        rows[key] = dict(name=name, train=train, cpu=cpu, speed=len(X_te) / parse,
                         speed_cpu=len(X_te) / parse_cpu, passes=
                         model.n_iter_, **scores(truth, pred, X_te))
        print(f"{name}: train {train:.1f}s, {cpu:.1f}s CPU ({model.n_iter_} passes of "
              f"{model.learner_.name}, "
              f"C={model.C_}, tol={model.tol_}); UAS {rows[key]['uas']:.4f} LAS "
              f"{_fmt(rows[key]['las'])} (without punctuation "
              f"{rows[key]['uas_np']:.4f} / {_fmt(rows[key]['las_np'])}); "
              f"{rows[key]['speed']:.0f} sentences/s", flush=True)
    if "udpipe" in args.ewt_systems:
        buf_tr, buf_te = io.StringIO(), io.StringIO()
        write_conllu(buf_tr, tr.sentences, tr.heads, tr.relations, tr.layouts)
        write_conllu(buf_te, te.sentences, te.heads, te.relations, te.layouts)
        entry = udpipe_cached("ewt", buf_tr.getvalue(), buf_te.getvalue(),
                              args.udpipe_parser, args.repeats,
                              lambda pred: scores(gold, pred, X_te),
                              cache=args.udpipe_cache, refresh=args.udpipe_refresh,
                              wait=args.udpipe_wait_left)
    if "udpipe" in args.ewt_systems and entry is None:
        note = (" UDPipe's row is missing: no run of this script had measured it "
                f"within {args.udpipe_wait:.0f} s of this one's start.")
        print(note.strip(), flush=True)
    elif "udpipe" in args.ewt_systems:
        rows["udpipe"] = dict(name="UDPipe 1 (Parsito, default options)",
                              train=entry["train"], cpu=entry["cpu"],
                              speed=len(X_te) / entry["parse"],
                              speed_cpu=len(X_te) / entry.get("parse_cpu", np.nan),
                              **{k: entry[k] for k in ("uas", "las", "uas_np", "las_np")})
        note = _udpipe_note(entry)
        print(f"UDPipe: train {entry['train']:.1f}s, {entry['cpu']:.1f}s CPU; UAS "
              f"{rows['udpipe']['uas']:.4f} LAS "
              f"{rows['udpipe']['las']:.4f} (without punctuation "
              f"{rows['udpipe']['uas_np']:.4f} / {rows['udpipe']['las_np']:.4f}); "
              f"{rows['udpipe']['speed']:.0f} sentences/s.{note}", flush=True)
    lines = [f"UD English EWT: train {len(X_tr)} sentences, test {len(X_te)}; gold "
             "UPOS, XPOS, lemmas and features; LAS over the whole relation (with its "
             "subtype)." + note, "",
             "| system | train (s) | train, CPU (s) | UAS | LAS | UAS, no punctuation | "
             "LAS, no punctuation | sentences/s | sentences per CPU second |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows.values():
        lines.append(f"| {r['name']} | {r['train']:.1f} | {r['cpu']:.1f} | "
                     f"{r['uas']:.4f} | "
                     f"{_fmt(r['las'])} | {r['uas_np']:.4f} | {_fmt(r['las_np'])} | "
                     f"{r['speed']:.3g} | {r['speed_cpu']:.3g} |")
    if "udpipe" in rows:
        u = rows["udpipe"]
        lines += ["", "| structsvm vs UDPipe 1 | UAS | LAS | training time | training "
                      "CPU time | parsing speed | parsing speed per CPU second |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for key in ("labelled", "second"):
            if key in rows:
                r = rows[key]
                lines.append(f"| {r['name']} | {r['uas'] - u['uas']:+.4f} | "
                             f"{r['las'] - u['las']:+.4f} | {r['train'] / u['train']:.3f}x "
                             f"| {r['cpu'] / u['cpu']:.3f}x "
                             f"| {r['speed'] / u['speed']:.1f}x "
                             f"| {r['speed_cpu'] / u['speed_cpu']:.1f}x |")
    if "first" in rows and "second" in rows:
        lines += ["", f"Second order vs first order (heads only): UAS "
                      f"{rows['second']['uas'] - rows['first']['uas']:+.4f}; vs first "
                      f"order labelled: UAS {rows['second']['uas'] - rows['labelled']['uas']:+.4f}"
                      if "labelled" in rows else ""]
    return rows, "\n".join(lines)


def run_treebank(args, params):
    """Every system on the treebank sample's dependency split; rows and table."""
    X_tr, Y_tr, X_te, Y_te = load_dependency_treebank(split="files")
    if args.max_train:
        X_tr, Y_tr = X_tr[:args.max_train], Y_tr[:args.max_train]
    if args.max_test:
        X_te, Y_te = X_te[:args.max_test], Y_te[:args.max_test]
    print(f"Dependency treebank: train {len(X_tr)} sentences ({sum(map(len, X_tr))} "
          f"words), test {len(X_te)} sentences ({sum(map(len, X_te))} words); gold POS "
          "tags", flush=True)
    rows, note = {}, ""
    configs = {"first": ("structsvm default call", {}),
               "second": ("structsvm second order (siblings, grandparents)",
                          SECOND_ORDER)}
    for key in args.treebank_systems:
        if key not in configs:
            continue
        name, fm_params = configs[key]
        model, pred, (train, cpu), (parse, parse_cpu) = run_structsvm(
            X_tr, Y_tr, X_te, args.repeats, fm_params, **params)
        rows[key] = dict(name=f"{name} [{model.learner_.name}, {model.decoder_.name}]",
                         train=train, cpu=cpu, speed=len(X_te) / parse,
                         speed_cpu=len(X_te) / parse_cpu, pred=pred,
                         **scores(Y_te, pred, X_te))
        print(f"{name}: train {train:.1f}s, {cpu:.1f}s CPU ({model.n_iter_} passes, "
              f"C={model.C_}, "
              f"tol={model.tol_}); UAS {rows[key]['uas_np']:.4f} without punctuation "
              f"({rows[key]['uas']:.4f} with it); {rows[key]['speed']:.0f} "
              "sentences/s", flush=True)
    if "udpipe" in args.treebank_systems:
        def score(pred):
            heads = [[h for h, _ in p] for p in pred]
            return dict(pred=heads, **scores(Y_te, heads, X_te))

        entry = udpipe_cached("treebank", _conllu(X_tr, Y_tr), _conllu(X_te, Y_te),
                              args.udpipe_parser, args.repeats, score,
                              cache=args.udpipe_cache, refresh=args.udpipe_refresh,
                              wait=args.udpipe_wait_left)
    if "udpipe" in args.treebank_systems and entry is None:
        note = (" UDPipe's row is missing: no run of this script had measured it "
                f"within {args.udpipe_wait:.0f} s of this one's start.")
        print(note.strip(), flush=True)
    elif "udpipe" in args.treebank_systems:
        rows["udpipe"] = dict(name="UDPipe 1 (Parsito, default options)",
                              train=entry["train"], cpu=entry["cpu"],
                              speed=len(X_te) / entry["parse"],
                              speed_cpu=len(X_te) / entry.get("parse_cpu", np.nan),
                              **{k: entry[k] for k in ("pred", "uas", "las", "uas_np",
                                                       "las_np")})
        note = _udpipe_note(entry)
        print(f"UDPipe: train {entry['train']:.1f}s, {entry['cpu']:.1f}s CPU; UAS "
              f"{rows['udpipe']['uas_np']:.4f} "
              f"without punctuation ({rows['udpipe']['uas']:.4f} with it); "
              f"{rows['udpipe']['speed']:.0f} sentences/s.{note}", flush=True)
    sub = [i for i, x in enumerate(X_te) if len(x) <= args.nltk_max_len][:args.nltk_n]
    if "nltk" in args.treebank_systems and sub:
        X_sub, Y_sub = [X_te[i] for i in sub], [Y_te[i] for i in sub]
        pred, (train, cpu), (parse, parse_cpu), failed = run_nltk(X_tr, Y_tr, X_sub)
        rows["nltk"] = dict(name="NLTK ProbabilisticProjectiveDependencyParser",
                            train=train, cpu=cpu, speed=len(X_sub) / parse,
                            speed_cpu=len(X_sub) / parse_cpu, n=len(sub),
                            failed=failed, **scores(Y_sub, pred, X_sub))
        rows["nltk"]["uas_nltk"] = rows["nltk"]["uas_np"]
        for key in rows:
            if key != "nltk":
                p = [rows[key]["pred"][i] for i in sub]
                rows[key]["uas_nltk"] = scores(Y_sub, p, X_sub)["uas_np"]
        print(f"NLTK: train {train:.1f}s; {len(sub)} sentences of <= {args.nltk_max_len} "
              f"words, UAS {rows['nltk']['uas_np']:.4f}, {failed} without a parse; "
              f"{rows['nltk']['speed']:.3f} sentences/s", flush=True)
    lines = [f"Dependency treebank sample: train {len(X_tr)} sentences, test "
             f"{len(X_te)} (split by file; gold POS tags; heads only)."
             + (f" NLTK parses only the first {len(sub)} test sentences of at most "
                f"{args.nltk_max_len} words, on which the other systems' UAS is in the "
                "last column." if "nltk" in rows else "") + note, "",
             "| system | train (s) | train, CPU (s) | UAS, no punctuation | UAS, all "
             "words | sentences/s | sentences per CPU second | UAS on NLTK's sentences |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows.values():
        lines.append(f"| {r['name']} | {r['train']:.1f} | {r['cpu']:.1f} | "
                     f"{r['uas_np']:.4f} | "
                     f"{r['uas']:.4f} | {r['speed']:.3g} | {r['speed_cpu']:.3g} | "
                     f"{_fmt(r.get('uas_nltk'))} |")
    if "first" in rows and "second" in rows:
        lines += ["", f"Second order vs first order: UAS "
                      f"{rows['second']['uas_np'] - rows['first']['uas_np']:+.4f} without "
                      f"punctuation, {rows['second']['uas'] - rows['first']['uas']:+.4f} "
                      "with it."]
    return rows, "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", nargs="+", default=["ewt", "treebank"],
                    choices=["ewt", "treebank"])
    ap.add_argument("--ewt-systems", nargs="+",
                    default=["first", "labelled", "second", "udpipe"],
                    choices=["first", "labelled", "second", "udpipe"])
    ap.add_argument("--treebank-systems", nargs="+",
                    default=["first", "second", "udpipe", "nltk"],
                    choices=["first", "second", "udpipe", "nltk"])
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
    ap.add_argument("--udpipe-cache", default=UDPIPE_CACHE, help="JSON file keeping "
                    "UDPipe's rows between runs ('' for none; default "
                    "benchmarks/results/dependency-udpipe.json)")
    ap.add_argument("--udpipe-refresh", action="store_true", help="train UDPipe again "
                    "even when the cache holds its row for these data and options")
    ap.add_argument("--udpipe-wait", type=float, default=0.0, help="do not train "
                    "UDPipe: take its rows from the cache, waiting for other runs to "
                    "store them until this many seconds after this run started (0: "
                    "train it when the cache lacks it)")
    ap.add_argument("--nltk-n", type=int, default=20)
    ap.add_argument("--nltk-max-len", type=int, default=8)
    add_output_options(ap, "dependency")
    args = ap.parse_args(argv)
    waited_until = time.monotonic() + args.udpipe_wait  # one deadline, both corpora
    args.udpipe_wait_left = ((lambda: max(1e-3, waited_until - time.monotonic()))
                             if args.udpipe_wait > 0 else 0.0)
    params = {k: v for k, v in (("learner", args.learner), ("C", args.C),
                                ("tol", args.tol)) if v is not None}
    load_start = os.getloadavg()[0]
    rows, tables = {}, []
    if "ewt" in args.corpus:
        rows["ewt"], table = run_ewt(args, params)
        tables.append(table)
    if "treebank" in args.corpus:
        rows["treebank"], table = run_treebank(args, params)
        tables.append(table)
    markdown = "\n\n".join(tables)
    if args.markdown or args.write:
        print("\n" + markdown)
    if args.write:
        write_results(args.write, markdown, __file__, argv,
                      notes=f"Load average (1 min) {load_start:.1f} at the start.")
    return rows


if __name__ == "__main__":
    main()
