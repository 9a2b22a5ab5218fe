"""Parsing the NLTK treebank: structsvm (span features + CKY) vs NLTK's PCFG + Viterbi.

Split (``load_treebank_trees``): the first 3000 trees train (those of <= 25 words,
1778 trees), the remaining ones test (those of <= 15 words, 198 trees); traces and
function tags removed. Both systems get the gold part-of-speech tags:

- structsvm: ``structsvm.fit(X, Y, feature_map=GrammarFeatures(), decoder="cky")``
  (the default call; X are (word, tag) pairs) -- ``--learner``/``--C``/``--max-iter``
  override the defaults;
- NLTK: ``nltk.induce_pcfg`` on the same training trees, ROOT-wrapped, unary chains
  collapsed and right-factored into Chomsky normal form (``horzMarkov=--markov``),
  with the POS tags as terminals (the same input the structsvm parser gets; with
  ``--words`` the terminals are words instead, words seen once in training replaced
  by ``<UNK>`` -- and structsvm gets words only too); parsed by
  ``nltk.parse.ViterbiParser`` and un-binarised. A sentence it cannot parse
  counts as a flat tree (reported).

NLTK's parser is slow, so it parses the first ``--nltk-n`` test sentences (all by
default); structsvm's F1 is reported on the same sentences and on all of them.
Labelled-bracket F1 from ``structsvm.structures.grammar.bracket_scores`` (evalb-style; the
root bracket is not counted). Everything runs in this one process, one after the
other.

Usage::

    NLTK_DATA=.../nltk_data python benchmarks/bench_parsing.py [--nltk-n 60] [--markdown]
"""
import argparse
import os
import sys
import time
from collections import Counter

import numpy as np
from nltk import Nonterminal, Tree, induce_pcfg
from nltk.parse import ViterbiParser

import structsvm
from structsvm.corpora.treebank import load_treebank_trees
from structsvm.structures import GrammarFeatures
from structsvm.structures.grammar import bracket_scores

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, write_results  # noqa: E402


def run_structsvm(X_tr, Y_tr, X_te, Y_te, **params):
    t0 = time.perf_counter()
    model = structsvm.fit(X_tr, Y_tr, feature_map=GrammarFeatures(), decoder="cky",
                          **params)
    train = time.perf_counter() - t0
    model.predict(X_te[:2])  # compile outside the timing
    t0 = time.perf_counter()
    pred = model.predict(X_te)
    parse = time.perf_counter() - t0
    return model, pred, train, parse


def nltk_grammar(Y_tr, words, markov):
    """PCFG induced from ROOT-wrapped CNF training trees (terminals: tags or words)."""
    counts = Counter(w for t in Y_tr for w in t.leaves())
    prods = []
    for t in Y_tr:
        t = t.copy(deep=True)
        for pos, (w, tag) in zip(t.treepositions("leaves"), t.pos()):
            t[pos] = (w if counts[w] > 1 else "<UNK>") if words else tag
        root = Tree("ROOT", [t])
        root.collapse_unary(collapsePOS=True, collapseRoot=False)
        root.chomsky_normal_form(factor="right", horzMarkov=markov)
        prods.extend(root.productions())
    return induce_pcfg(Nonterminal("ROOT"), prods), counts


def run_nltk(X_tr, Y_tr, X_te, words, markov):
    t0 = time.perf_counter()
    grammar, counts = nltk_grammar(Y_tr, words, markov)
    train = time.perf_counter() - t0
    parser = ViterbiParser(grammar, max_time=None)
    lexicon = {p.rhs()[0] for p in grammar.productions() if p.is_lexical()}
    pred, failed = [], 0
    t0 = time.perf_counter()
    for x in X_te:
        toks = [(w if counts[w] > 1 else "<UNK>") if words else tag for w, tag in x]
        toks = [t if t in lexicon else "<UNK>" for t in toks]
        tree = None
        try:
            tree = next(iter(parser.parse(toks)), None)
        except ValueError:  # a terminal the grammar lacks
            tree = None
        if tree is None:
            failed += 1
            pred.append(Tree("S", [Tree(tag, [w]) for w, tag in x]))
            continue
        tree = tree.copy(deep=True)
        tree.un_chomsky_normal_form()
        tree = tree[0]
        for pos, (w, _) in zip(tree.treepositions("leaves"), x):
            tree[pos] = w
        pred.append(tree)
    parse = time.perf_counter() - t0
    return pred, train, parse, failed, len(grammar.productions())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nltk-n", type=int, default=0, help="test sentences NLTK parses "
                    "(the first N; 0: all)")
    ap.add_argument("--skip-nltk", action="store_true")
    ap.add_argument("--words", action="store_true", help="words only, no POS tags")
    ap.add_argument("--markov", type=int, default=0, help="NLTK grammar's horizontal "
                    "Markov order")
    ap.add_argument("--learner", default=None)
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--tol", type=float, default=None)
    ap.add_argument("--n-train", type=int, default=0)
    ap.add_argument("--compare-exact", action="store_true", help="also decode the test "
                    "set with exact CKY (decoder='cky_exact')")
    add_output_options(ap, "parsing")
    args = ap.parse_args(argv)

    X_tr, Y_tr, X_te, Y_te = load_treebank_trees()
    if args.n_train:
        X_tr, Y_tr = X_tr[:args.n_train], Y_tr[:args.n_train]
    Xs_tr = [[w for w, _ in x] for x in X_tr] if args.words else X_tr
    Xs_te = [[w for w, _ in x] for x in X_te] if args.words else X_te
    params = {k: v for k, v in (("learner", args.learner), ("C", args.C),
                                ("max_iter", args.max_iter), ("tol", args.tol))
              if v is not None}
    print(f"train {len(X_tr)} trees, test {len(X_te)} trees ({sum(map(len, X_te))} words); "
          f"input: {'words' if args.words else 'gold POS tags'}")
    model, pred, train, parse = run_structsvm(Xs_tr, Y_tr, Xs_te, Y_te, **params)
    g = model.feature_map_.grammar_
    f_all = bracket_scores(Y_te, pred)
    print(f"structsvm {model.learner_.name}: train {train:.1f}s ({model.n_iter_} rounds, "
          f"C={model.C_}, {g.n_symbols} symbols, {g.n_rules} rules, "
          f"{model.feature_map_.n_features_} features); test F1 {f_all.f1:.4f} "
          f"(P {f_all.precision:.4f} R {f_all.recall:.4f}); "
          f"{len(X_te) / parse:.1f} sentences/s")
    if args.compare_exact:
        from structsvm.structures import get_decoder

        model.decoder_ = get_decoder("cky_exact")
        t0 = time.perf_counter()
        f_ex = bracket_scores(Y_te, model.predict(Xs_te))
        dt = time.perf_counter() - t0
        print(f"exact CKY: test F1 {f_ex.f1:.4f} (P {f_ex.precision:.4f} R "
              f"{f_ex.recall:.4f}); {len(X_te) / dt:.1f} sentences/s")
        model.decoder_ = get_decoder("cky")
    if args.skip_nltk:
        return
    n = args.nltk_n or len(X_te)
    pred_n, train_n, parse_n, failed, n_prods = run_nltk(X_tr, Y_tr, X_te[:n], args.words,
                                                         args.markov)
    f_n = bracket_scores(Y_te[:n], pred_n)
    f_same = bracket_scores(Y_te[:n], pred[:n])
    per_s = parse / len(X_te)
    per_n = parse_n / n
    print(f"nltk PCFG + ViterbiParser: grammar {n_prods} productions in {train_n:.1f}s; "
          f"{n} sentences, F1 {f_n.f1:.4f} (P {f_n.precision:.4f} R {f_n.recall:.4f}), "
          f"{failed} without a parse; {1 / per_n:.3f} sentences/s")
    print(f"same {n} sentences: structsvm F1 {f_same.f1:.4f} vs nltk {f_n.f1:.4f} "
          f"(+{f_same.f1 - f_n.f1:.4f}); structsvm {per_n / per_s:.0f}x faster per sentence")
    table = ["| system | train | test F1 (same sentences) | sentences/s |",
             "| --- | --- | --- | --- |",
             f"| structsvm {model.learner_.name} | {train:.0f}s | {f_same.f1:.4f} | "
             f"{1 / per_s:.0f} |",
             f"| nltk PCFG + ViterbiParser | {train_n:.1f}s | {f_n.f1:.4f} | "
             f"{1 / per_n:.3f} |"]
    summary = (f"Train {len(X_tr)} trees, test {len(X_te)} "
               f"({'words' if args.words else 'gold POS tags'} as input); NLTK parsed the "
               f"first {n} test sentences ({failed} without a parse). structsvm: "
               f"{model.n_iter_} rounds of {model.learner_.name}, {g.n_symbols} symbols, "
               f"{g.n_rules} rules, {model.feature_map_.n_features_} features; F1 "
               f"{f_all.f1:.4f} on all {len(X_te)} test sentences; "
               f"{per_n / per_s:.0f}x NLTK's parsing speed.")
    if args.markdown or args.write:
        print("\n" + "\n".join(table) + "\n\n" + summary)
    if args.write:
        write_results(args.write, "\n".join(table) + "\n\n" + summary, __file__, argv)
    return np.array([f_same.f1, f_n.f1])


if __name__ == "__main__":
    main()
