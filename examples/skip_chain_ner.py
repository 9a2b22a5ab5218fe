"""Skip-chain NER on CoNLL-2002 Dutch: chain vs skip-chain graphs, entity F1 of both.

Each document is one graph whose nodes are the tokens of all its sentences. The
*chain* model links neighbouring tokens of a sentence (a first-order chain per
sentence: max-product is exact on it). The *skip-chain* model (Sutton & McCallum
2004) adds "skip" edges between repeated capitalised tokens of the same document
(each occurrence linked to the next one; sentence-initial tokens are left out, their
capital is the sentence's), so that "Floralux" is labelled alike throughout a
document; the graph then has cycles and max-product runs loopy. Both models use the
same node features, the CoNLL token features of ``SequenceFeatures(features="chunk")``
(word, lower case, POS tag, suffixes, shape, ±2 window), and separate weights for
chain (directed) and skip (undirected) label pairs. Entity precision / recall / F1
are conlleval's (``structsvm.structures.sequence.chunk_scores``).

Run::

    python examples/skip_chain_ner.py
    python examples/skip_chain_ner.py --n-train-docs 40 --n-test-docs 20 --max-iter 50

The full run (all 287 training documents, default call) trains for tens of minutes
on a 2-vCPU machine; ``--n-train-docs 40 --n-test-docs 20`` takes about a minute and
a half (figures in docs/tutorials/skip_chain_ner.md).
"""
from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.structures import GraphFeatures, SequenceFeatures
from structsvm.structures.sequence import chunk_scores


# ------------------------------------------------------------------ data
def _read_ned(path):
    """A ned.* file: (sentences of (word, pos), IOB2 tag lists, document id per sentence)."""
    X, Y, doc = [], [], []
    sent, tags, d = [], [], -1
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                if sent:
                    X.append(sent), Y.append(tags), doc.append(d)
                sent, tags = [], []
                continue
            if parts[0] == "-DOCSTART-":
                if sent:
                    X.append(sent), Y.append(tags), doc.append(d)
                sent, tags = [], []
                d += 1
                continue
            sent.append((parts[0], parts[1]))
            tags.append(parts[2])
    if sent:
        X.append(sent), Y.append(tags), doc.append(d)
    return X, Y, np.maximum(np.asarray(doc, dtype=np.int64), 0)


def load(split, path=None):
    """CoNLL-2002 Dutch ``split``: (X, Y, doc), by the package loader where it exists."""
    try:
        from structsvm.corpora import load_conll2002
    except ImportError:
        load_conll2002 = None
    if load_conll2002 is not None:
        data = load_conll2002(path, split=split)
        return list(data.X), list(data.Y), np.asarray(data.doc)
    from structsvm.corpora import find_data

    root = find_data("conll2002", path=path, nltk_subdir="corpora/conll2002",
                     must_contain=(f"ned.{split}",),
                     hint="set NLTK_DATA to a folder with corpora/conll2002/ned.*")
    return _read_ned(Path(root) / f"ned.{split}")


# ------------------------------------------------------------------ graphs
def documents(X, Y, doc):
    """Group sentences by document: list of (sentence indices) in order."""
    groups = defaultdict(list)
    for i, d in enumerate(doc):
        groups[int(d)].append(i)
    return [groups[d] for d in sorted(groups)]


def _skip_edges(words, starts):
    """Each capitalised, not sentence-initial token linked to its next occurrence."""
    last, out = {}, []
    for t, w in enumerate(words):
        if t in starts or not w[:1].isupper() or len(w) < 2:
            continue
        if w in last:
            out.append((last[w], t))
        last[w] = t
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def build_graphs(X, Y, doc, token_rows, skip):
    """Document graphs ``(node_features, {"chain": ..., "skip": ...})`` and node labels.

    ``token_rows`` is the (n_tokens, d) CSR of the sentences' token features in
    sentence order (``SequenceFeatures.encode_inputs(X).X``).
    """
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in X])])
    graphs, labels, sent_of = [], [], []
    for sents in documents(X, Y, doc):
        rows = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in sents])
        lengths = [len(X[i]) for i in sents]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        chain = np.array([(s + t, s + t + 1) for s, n in zip(starts, lengths)
                          for t in range(n - 1)], dtype=np.int64).reshape(-1, 2)
        edges = {"chain": chain}
        if skip:
            words = [w for i in sents for w, _ in X[i]]
            edges["skip"] = _skip_edges(words, set(starts.tolist()))
        graphs.append((token_rows[rows], edges))
        labels.append(np.array([t for i in sents for t in Y[i]], dtype=object))
        sent_of.append(sents)
    return graphs, labels, sent_of


def to_sentences(pred, sent_of, X):
    """Document label arrays back to per-sentence tag lists in corpus order."""
    out = [None] * len(X)
    for p, sents in zip(pred, sent_of):
        pos = 0
        for i in sents:
            out[i] = [str(t) for t in p[pos:pos + len(X[i])]]
            pos += len(X[i])
    return out


# ------------------------------------------------------------------ experiment
def run(n_train_docs=0, n_test_docs=0, test_split="testb", max_iter=None, C=None,
        min_count=1, path=None, verbose=True):
    """Train chain and skip-chain models; return {name: scores dict + timings}."""
    Xtr, Ytr, dtr = load("train", path)
    Xte, Yte, dte = load(test_split, path)
    if n_train_docs:
        keep = dtr < np.unique(dtr)[:n_train_docs].max() + 1
        Xtr, Ytr, dtr = [x for x, k in zip(Xtr, keep) if k], \
            [y for y, k in zip(Ytr, keep) if k], dtr[keep]
    if n_test_docs:
        keep = dte < np.unique(dte)[:n_test_docs].max() + 1
        Xte, Yte, dte = [x for x, k in zip(Xte, keep) if k], \
            [y for y, k in zip(Yte, keep) if k], dte[keep]
    feats = SequenceFeatures(features="chunk", min_count=min_count).fit(Xtr, Ytr)
    rows_tr = feats.encode_inputs(Xtr).X
    rows_te = feats.encode_inputs(Xte).X
    if verbose:
        print(f"CoNLL-2002 Dutch: {len(np.unique(dtr))} training documents "
              f"({len(Xtr)} sentences, {rows_tr.shape[0]} tokens), "
              f"{len(np.unique(dte))} {test_split} documents ({rows_te.shape[0]} tokens), "
              f"{rows_tr.shape[1]} token features")
    out = {}
    for name, skip in (("chain", False), ("skip-chain", True)):
        G_tr, L_tr, _ = build_graphs(Xtr, Ytr, dtr, rows_tr, skip)
        G_te, _, sent_te = build_graphs(Xte, Yte, dte, rows_te, skip)
        n_skip = sum(len(g[1].get("skip", ())) for g in G_tr)
        params = {k: v for k, v in (("max_iter", max_iter), ("C", C)) if v is not None}
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = structsvm.fit(G_tr, L_tr, feature_map=GraphFeatures(
                bias=0.0, directed=("chain",)), decoder="max_product", **params)
        train_s = time.perf_counter() - t0
        fm = model.feature_map_
        t0 = time.perf_counter()
        res = model.decoder_(fm.batch_potentials(fm.encode_inputs(G_te), model.coef_))
        pred = to_sentences(fm.decode_outputs(res), sent_te, Xte)
        test_s = time.perf_counter() - t0
        s = chunk_scores(Yte, pred)
        s.update(train_seconds=train_s, test_seconds=test_s, n_iter=model.n_iter_,
                 skip_edges=n_skip, converged=float(np.mean(res.converged)),
                 exact=res.exact_fraction)
        out[name] = s
        if verbose:
            print(f"  {name:10s} entity P {s['precision']:.4f} R {s['recall']:.4f} "
                  f"F1 {s['f1']:.4f}  ({model.n_iter_} rounds, {train_s:.1f} s; "
                  f"{n_skip} skip edges in training; test graphs: {res.exact_fraction:.0%} "
                  f"exact, loopy converged on {np.mean(res.converged):.0%})")
    if verbose:
        print("per type F1 (chain / skip-chain): " + ", ".join(
            f"{t} {out['chain']['per_type'][t]['f1']:.3f}/"
            f"{out['skip-chain']['per_type'].get(t, {'f1': 0.0})['f1']:.3f}"
            for t in out["chain"]["per_type"]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-train-docs", type=int, default=0, help="first N documents")
    ap.add_argument("--n-test-docs", type=int, default=0)
    ap.add_argument("--test", default="testb", choices=["testa", "testb"])
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--C", type=float, default=None)
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--data", default=None, help="folder holding ned.train, ned.test*")
    args = ap.parse_args(argv)
    return run(args.n_train_docs, args.n_test_docs, args.test, args.max_iter, args.C,
               args.min_count, args.data)


if __name__ == "__main__":
    main()
