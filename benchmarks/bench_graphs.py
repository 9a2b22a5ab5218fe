"""Graphs: collective classification and skip-chain NER, with their peers, in one run.

1. Planted-partition graphs (examples/collective.py: 3 blocks of 60-70 nodes, edge
   probability 0.06 inside a block and 0.006 across, features = class mean + unit
   Gaussian noise): per-node LinearSVC vs the default call
   ``structsvm.fit(X, Y, feature_map=GraphFeatures(), decoder=...)`` with
   ``"max_product"`` and ``"lp"``, over several seeds (mean accuracy and the gain
   over LinearSVC, median training time), plus the LP certificate of each graph
   model's training objective (see ``certificate`` in examples/collective.py).
2. CoNLL-2002 Dutch NER (examples/skip_chain_ner.py): chain vs skip-chain graphs,
   same token features, entity F1 on testb; optionally CRFsuite's linear-chain CRF
   on the same token features (``--crfsuite``) as the peer.

Usage::

    python benchmarks/bench_graphs.py [--seeds 5] [--n-train 10] [--n-test 10]
        [--ner-docs 0] [--ner-max-iter 100] [--skip collective|ner] [--crfsuite]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _runner.py beside
from _runner import add_output_options, load_example, write_results  # noqa: E402

def collective(seeds, n_train, n_test, decoders):
    ex = load_example("collective")
    rows = {}
    for seed in range(seeds):
        X_tr, Y_tr = ex.planted_partition(n_train, seed=seed)
        X_te, Y_te = ex.planted_partition(n_test, seed=10_000 + seed)
        models = {}
        out = ex.compare(X_tr, Y_tr, X_te, Y_te, decoders, models=models)
        base = out["LinearSVC per node"][0]
        for name, (acc, sec, extra) in out.items():
            r = rows.setdefault(name, dict(acc=[], gain=[], sec=[], cert=[], extra=extra))
            r["acc"].append(acc)
            r["gain"].append(acc - base)
            r["sec"].append(sec)
        for dec, model in models.items():  # certify each model's objective by the LP
            c = ex.certificate(model, X_tr, Y_tr)
            rows[f"structsvm, edges, {dec}"]["cert"].append(
                (model.objective_, c["primal_lp"], c["gap"], model.n_iter_))
        print(f"seed {seed}: " + ", ".join(f"{k} {v[0]:.3f}" for k, v in out.items()),
              flush=True)
    table = [f"Planted partition, {seeds} seeds x ({n_train} training, {n_test} test "
             "graphs): mean test accuracy, its gain over LinearSVC (mean and smallest), "
             "median training time; for the graph models the LP certificate of the "
             "training objective (means).", "",
             "| model | test accuracy | gain (min) | train (s) | reported objective | "
             "LP-certified objective | certified gap | passes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in rows.items():
        cert = ["-"] * 4
        if r["cert"]:
            c = np.array(r["cert"])
            cert = [f"{np.mean(c[:, 0]):.2f}", f"{np.mean(c[:, 1]):.2f}",
                    f"{np.mean(c[:, 2]):.1%}", f"{np.mean(c[:, 3]):.0f}"]
        table.append(f"| {name} | {np.mean(r['acc']):.3f} | {np.mean(r['gain']):+.3f} "
                     f"({np.min(r['gain']):+.3f}) | {statistics.median(r['sec']):.2f} | "
                     + " | ".join(cert) + " |")
    print("\n" + "\n".join(table))
    return rows, "\n".join(table)


def ner(n_docs, max_iter, C, crfsuite):
    ex = load_example("skip_chain_ner")
    out = ex.run(n_train_docs=n_docs, n_test_docs=0, test_split="testb",
                 max_iter=max_iter, C=C, verbose=True)
    if crfsuite:
        out["crfsuite chain"] = _crfsuite(ex, n_docs)
        s = out["crfsuite chain"]
        print(f"  {'crfsuite':10s} entity P {s['precision']:.4f} R {s['recall']:.4f} "
              f"F1 {s['f1']:.4f}  ({s['train_seconds']:.1f} s)")
    docs = f"the first {n_docs}" if n_docs else "all"
    table = [f"CoNLL-2002 Dutch NER, {docs} training documents, entity scores on "
             "ned.testb.", "",
             "| model | entity P | entity R | entity F1 | passes | train (s) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, s in out.items():
        passes = s.get("n_iter", "-")
        extra = ""
        if "skip_edges" in s and s["skip_edges"]:
            extra = f" ({s['skip_edges']} skip edges in training)"
        table.append(f"| {name}{extra} | {s['precision']:.4f} | {s['recall']:.4f} | "
                     f"{s['f1']:.4f} | {passes} | {s['train_seconds']:.1f} |")
    print("\n" + "\n".join(table))
    return out, "\n".join(table)


def _crfsuite(ex, n_docs):
    """CRFsuite (L-BFGS, default c1=0, c2=1) on the same token feature strings."""
    import sklearn_crfsuite

    from structsvm.structures import SequenceFeatures
    from structsvm.structures.sequence import chunk_scores

    Xtr, Ytr, dtr = ex.load("train")
    Xte, Yte, _ = ex.load("testb")
    if n_docs:
        keep = dtr < np.unique(dtr)[:n_docs].max() + 1
        Xtr = [x for x, k in zip(Xtr, keep) if k]
        Ytr = [y for y, k in zip(Ytr, keep) if k]
    feats = SequenceFeatures(features="chunk").fit(Xtr, Ytr)
    vocab = np.asarray(feats.vocabulary_, dtype=object)

    def dicts(X):
        E = feats.encode_inputs(X)
        M, off = E.X, E.offsets
        return [[{vocab[j]: v for j, v in zip(M.indices[M.indptr[t]:M.indptr[t + 1]],
                                               M.data[M.indptr[t]:M.indptr[t + 1]])}
                 for t in range(off[i], off[i + 1])] for i in range(len(X))]

    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", max_iterations=100)
    t0 = time.perf_counter()
    crf.fit(dicts(Xtr), Ytr)
    sec = time.perf_counter() - t0
    s = chunk_scores(Yte, crf.predict(dicts(Xte)))
    s["train_seconds"] = sec
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-train", type=int, default=10)
    ap.add_argument("--n-test", type=int, default=10)
    ap.add_argument("--decoders", nargs="+", default=["max_product", "lp"])
    ap.add_argument("--ner-docs", type=int, default=0, help="training documents (0: all)")
    ap.add_argument("--ner-max-iter", type=int, default=None)
    ap.add_argument("--ner-C", type=float, default=None)
    ap.add_argument("--crfsuite", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[], choices=["collective", "ner"])
    add_output_options(ap, "graphs")
    args = ap.parse_args(argv)
    out = {}
    if "collective" not in args.skip:
        out["collective"], table = collective(args.seeds, args.n_train, args.n_test,
                                              args.decoders)
        if args.write:
            write_results(f"{args.write}-collective", table, __file__, argv)
    if "ner" not in args.skip:
        out["ner"], table = ner(args.ner_docs, args.ner_max_iter, args.ner_C,
                                args.crfsuite)
        if args.write:
            write_results(f"{args.write}-ner", table, __file__, argv)
    return out


if __name__ == "__main__":
    main()
