"""The ``structsvm`` command: ``learn``, ``classify``, ``info`` and ``data``.

File formats are those of Joachims' tools, so their users bring their data as is:

- ``--task multiclass``: svm_light / svm_multiclass lines ``label i:v ...``;
- ``--task sequence``: svm_hmm lines ``tag qid:N i:v ... # comment``;
- ``--task ranking``: svm_rank / LETOR lines ``rel qid:N i:v ...``;
- ``--task alignment``: pairs of sequences as blocks of two gapped rows (``ACD-EF`` over
  ``A-DGEF``), the format of :mod:`structsvm.corpora.alignment`.

C is structsvm's (objective ½‖w‖² + C Σ_i ξ_i); svm_struct's ``-c`` equals n × C,
so ``--svmstruct-c`` converts one into the other for you.

An output that is the same file as an input (the model and the training data, the
predictions and the test data or the model, ...) is refused before anything is read;
predictions are written to a temporary file and renamed into place. Only regular files
are read as data.

``structsvm data list|verify|fetch`` manages the corpora of ``corpora/manifest.json``:
where each is found, whether its files match their SHA-256 sums, and a verified copy
into the corpora folder (``$STRUCTSVM_CORPORA`` or the checkout's ``corpora/``).

Examples::

    structsvm learn --task sequence -C 0.1 train.dat model.npz
    structsvm classify model.npz test.dat predictions.txt
    structsvm data list
    structsvm data fetch treebank --from /path/to/data
    structsvm data verify
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from functools import partial

import numpy as np
import scipy.sparse as sp

from . import _alignment as _cli_alignment
from .. import _progress
from ._files import check_regular, check_writable, refuse_overwrite, write_predictions

__all__ = ["main"]

_BATCH = 1000  # examples per prediction call under the classify progress bar


def _read(task, path, n_features=None, training=False):
    """(X, Y, extra) for a task; X rows padded to ``n_features`` when given."""
    if task == "multiclass":
        from ..corpora.svmlight import read_svm_light

        Xm, y, _ = read_svm_light(path, n_features=n_features)
        labels = [int(v) if float(v).is_integer() else float(v) for v in y]
        return [Xm[i] for i in range(Xm.shape[0])], labels, None
    if task == "sequence":
        from ..corpora import read_svm_hmm

        X, Y = read_svm_hmm(path)
        return X, Y, None
    if task == "alignment":
        X, Y = _cli_alignment.read_pairs(path, training=training)
        return X, Y, None
    from ..corpora import read_svm_rank

    data = read_svm_rank(path)
    return data.X, data.Y, data.qids


def _fit_width(X, width, what):
    """Pad (zeros) or cut the feature columns of test inputs to the model's width.

    Columns beyond the training width have weight 0 in the model, so cutting them
    does not change any score; the caller reports how many there were.
    """
    out, cut = [], 0
    for x in X:
        x = sp.csr_matrix(x)
        if x.shape[1] > width:
            cut += int(x[:, width:].nnz)
            x = x[:, :width]
        elif x.shape[1] < width:
            x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], width))
        out.append(x)
    return out, cut


def _learn(args):
    import structsvm
    from ..learners import get_learner
    from ..limits import MemoryLimitError

    # the checkpoint may be the file resumed from (it is then written over as training
    # goes on); no other output may be an input or another output
    refuse_overwrite({"the model": args.model},
                      {"the training data": args.train, "the checkpoint": args.checkpoint,
                       "the checkpoint to resume": args.resume})
    refuse_overwrite({"the checkpoint": args.checkpoint},
                      {"the training data": args.train})
    if args.resume is not None:
        check_regular(args.resume, "the checkpoint to resume")
    check_writable(args.model, "the model")  # fail now, not after hours of training
    if args.checkpoint is not None:
        check_writable(args.checkpoint, "the checkpoint")
    # no --learner: the estimator's default for the task's structure
    learner = None if args.learner is None else get_learner(args.learner)
    if args.solver is not None and learner is not None \
            and "solver" not in learner.get_params():
        raise ValueError(f"--solver {args.solver} sets the QP solver of the "
                         "cutting-plane learners (one_slack, n_slack); --learner "
                         f"{args.learner} has none")
    if args.solver is not None:
        if learner is None:
            learner = get_learner("one_slack")
        learner.set_params(solver=args.solver)
    X, Y, _ = _read(args.task, args.train, training=True)
    if len(X) == 0:  # before anything divides by the number of examples
        raise ValueError(f"{args.train} holds no examples")
    fm = _task_map_class(args.task)()
    C = args.C
    if args.svmstruct_c is not None:
        C = args.svmstruct_c / len(X)
    if args.verbose:
        import logging

        logging.basicConfig(format="[structsvm] %(message)s", stream=sys.stderr)
        logging.getLogger("structsvm").setLevel(logging.INFO)
    # on a terminal a progress bar shows the rounds even without -v
    verbose = max(args.verbose, 1) if _progress.on_terminal() else args.verbose
    t0 = time.perf_counter()
    try:
        model = structsvm.StructuredSVM(
            feature_map=fm, C=C, tol=args.tol, max_iter=args.max_iter, learner=learner,
            n_jobs=args.n_jobs, verbose=verbose).fit(
                X, Y, checkpoint=args.checkpoint, resume=args.resume,
                checkpoint_every=args.checkpoint_every)
    except MemoryLimitError as exc:
        raise MemoryLimitError(f"{args.train}: {exc}") from None
    model.set_params(verbose=args.verbose)  # the saved model as asked for
    model.save(args.model)
    gap = f", duality gap {model.duality_gap_:.3g}" if np.isfinite(model.duality_gap_) \
        else ""
    if model.interrupted_:
        elapsed = time.perf_counter() - t0
        print(f"interrupted after {model.n_iter_} iterations ({elapsed:.2f} s): the best "
              f"weights so far (objective {model.objective_:.6g}) were written to "
              f"{args.model}", file=sys.stderr)
        return 130
    print(f"trained on {len(X)} examples in {time.perf_counter() - t0:.2f} s: "
          f"{model.n_iter_} iterations, objective {model.objective_:.6g}{gap}; model "
          f"written to {args.model}")
    return 0


def _classify(args):
    import structsvm
    from ..structures.ranking.metrics import ndcg_at_k
    from ..structures.sequence.metrics import token_accuracy

    refuse_overwrite({"the predictions": args.output},
                      {"the model": args.model, "the test data": args.test})
    if args.output is not None:
        check_writable(args.output, "the predictions")
    check_regular(args.model, "the model")
    model = structsvm.load(args.model)
    fm = model.feature_map_
    task = type(fm).structure
    if task not in ("multiclass", "sequence", "ranking", "alignment"):
        print(f"error: the command line classifies multiclass, sequence, ranking and "
              f"alignment models, not {type(fm).structure!r}", file=sys.stderr)
        return 2
    X, Y, _ = _read(task, args.test)
    if len(X) == 0:
        print(f"error: {args.test} holds no examples", file=sys.stderr)
        return 2
    if task == "alignment":
        return _classify_alignment(model, X, Y, args)
    width = int(fm.n_features_in_)  # the largest feature number of its training file
    X, cut = _fit_width(X, width, "test")
    if cut:
        print(f"note: {cut} feature values beyond the model's {width} features (weight 0 "
              "in the model) were ignored", file=sys.stderr)
    t0 = time.perf_counter()
    lines = []
    if task == "ranking":
        Xe = fm.encode_inputs(X)  # the columns the weights cover
        scores = np.split(fm.batch_potentials(Xe, model.coef_).scores, Xe.offsets[1:-1])
        lines = [f"{s:.8g}" for q in scores for s in q]
        ndcg = ndcg_at_k(Y, [np.argsort(-s, kind="stable") for s in scores], k=10)
        summary = f"NDCG@10 {ndcg:.4f}"
    else:
        # a bar over batches of examples on a terminal
        pred = _progress.in_batches(model.predict, X, _BATCH, "classify")
        if task == "sequence":
            lines = [str(t) for p in pred for t in p]
            summary = f"token accuracy {100 * token_accuracy(Y, pred):.2f}%"
        else:
            lines = [str(p) for p in pred]
            summary = f"accuracy {100 * np.mean([a == b for a, b in zip(Y, pred)]):.2f}%"
    elapsed = time.perf_counter() - t0
    if args.output:
        write_predictions(args.output, lines)
    else:
        print("\n".join(lines))
    print(f"{summary} on {len(X)} examples ({elapsed:.2f} s)", file=sys.stderr)
    return 0


def _classify_alignment(model, X, Y, args):
    t0 = time.perf_counter()
    predict = partial(_progress.in_batches, model.predict, size=_BATCH, desc="classify")
    lines, summary = _cli_alignment.predict_lines(predict, X, Y)
    elapsed = time.perf_counter() - t0
    if args.output:
        write_predictions(args.output, lines)
    else:
        print("\n".join(lines))
    print(f"{summary} on {len(X)} pairs ({elapsed:.2f} s)", file=sys.stderr)
    return 0


def _show_info(args):
    from ._info import info_lines

    print("\n".join(info_lines()))
    return 0


def _unknown(names):
    """Error text for corpus names the manifest does not list, or None."""
    from ..corpora import manifest as mf

    known = mf.corpus_names()
    bad = [n for n in names if n not in known]
    if not bad:
        return None
    return f"unknown corpus {', '.join(map(repr, bad))}; known: {', '.join(known)}"


def _data_list(args):
    from ..corpora import manifest as mf
    from ..corpora import corpora_dir, nltk_search_path

    infos = mf.load_manifest()
    corpora = corpora_dir()
    if args.root is not None:
        print(f"looking only in {args.root}")
    else:
        print("search order: path=, $STRUCTSVM_DATA ("
              f"{os.environ.get('STRUCTSVM_DATA') or 'not set'}), corpora folder "
              f"({corpora or 'none: set $STRUCTSVM_CORPORA'}), NLTK data path "
              f"({os.pathsep.join(str(p) for _, p in nltk_search_path()) or 'empty'})")
    width = max(map(len, infos))
    n_found = 0
    for name, info in infos.items():
        where, origin = mf.locate_corpus(name, root=args.root)
        if where is None:
            print(f"{name:<{width}}  missing  get it with: {info.command}")
            continue
        n_found += 1
        n_missing = sum(not (where / rel).is_file() for rel in info.files)
        status = "found  " if not n_missing else "partial"
        extra = f", {n_missing} of {len(info.files)} files missing" if n_missing else ""
        print(f"{name:<{width}}  {status}  {where} ({origin}{extra})")
    print(f"{n_found} of {len(infos)} corpora found; `structsvm data verify` checks "
          "their SHA-256 sums")
    return 0


def _data_verify(args):
    from ..corpora import manifest as mf

    names = args.names or mf.corpus_names()
    if _unknown(names):
        print(f"error: {_unknown(names)}", file=sys.stderr)
        return 2
    failed = 0
    for name in names:
        res = mf.verify_corpus(name, root=args.root)
        if res.ok:
            print(f"{name}: OK, {res.n_files} files at {res.location}")
            continue
        failed += 1
        if res.location is None:
            print(f"{name}: MISSING (get it with: {mf.corpus_info(name).command})")
            continue
        print(f"{name}: FAILED at {res.location}, {len(res.problems)} of {res.n_files} "
              "files bad:")
        for rel, what in res.problems:
            print(f"  {rel}: {what}")
    if failed:
        print(f"{failed} of {len(names)} corpora failed verification", file=sys.stderr)
    return 1 if failed else 0


def _data_fetch(args):
    from ..corpora import manifest as mf
    from ..corpora.fetch import fetch_corpus

    if _unknown(args.names):
        print(f"error: {_unknown(args.names)}", file=sys.stderr)
        return 2
    failed = 0
    for name in args.names:
        try:
            target, copied = fetch_corpus(name, source=args.root, force=args.force)
        except (mf.ChecksumError, OSError) as exc:  # DataNotFoundError is an OSError
            print(f"error: {name}: {exc}", file=sys.stderr)
            failed += 1
            continue
        info = mf.corpus_info(name)
        if copied:
            print(f"{name}: {info.size} verified and installed in {target}")
        else:
            print(f"{name}: already in {target} and verified (--force replaces it)")
        print(f"  terms: {info.terms}")
    return 1 if failed else 0


_TASKS = {
    "multiclass": ("multiclass.features", "MulticlassFeatures",
                   "svm_light / svm_multiclass lines 'label index:value ...'"),
    "sequence": ("sequence.features", "SequenceFeatures",
                 "svm_hmm lines 'tag qid:N index:value ... # comment', one per token"),
    "ranking": ("ranking.features", "RankingFeatures",
                "svm_rank / LETOR lines 'relevance qid:N index:value ...'"),
    "alignment": ("alignment.features", "AlignmentFeatures",
                  "blocks of two gapped rows, such as ACD-EF over A-DGEF"),
}


def _task_map_class(task):
    """The feature map class ``--task`` trains."""
    from importlib import import_module

    module, name, _ = _TASKS[task]
    return getattr(import_module(f"..structures.{module}", __package__), name)


def _task_defaults():
    """Help text: per task, the C, tol and learner a fit uses when none is given.

    Read from the feature maps' class attributes when help is shown (importing the
    maps for every command would slow down the ones that do not need them).
    """
    rows = [("task", "C", "tol", "learner (the first that applies)")]
    for task in _TASKS:
        cls = _task_map_class(task)
        rows.append((task, f"{cls.default_C:g}", f"{cls.default_tol:g}",
                     " or ".join(name for name, _ in cls.default_learners)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in rows]
    formats = [f"  {task:<10}  {fmt}" for task, (_, _, fmt) in _TASKS.items()]
    return ("file formats (TRAIN, and TEST of classify):\n" + "\n".join(formats)
            + "\n\ndefaults when -C, --tol or --learner is not given:\n"
            + "\n".join(lines)
            + "\n\n--max-iter's default is the learner's own cap; the Defaults page "
              "of the documentation lists them.\n\nexample:\n"
              "  structsvm learn --task sequence -C 0.1 train.dat model.npz")


def _para(text):
    """A paragraph of help text wrapped to the width of a terminal."""
    return textwrap.fill(text, width=79)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose epilog may be computed when help is shown."""

    def __init__(self, *args, epilog_from=None, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._epilog_from = epilog_from

    def format_help(self):
        if self._epilog_from is not None:
            self.epilog = self._epilog_from()
        return super().format_help()


_DESCRIPTION = """\
Train structural SVMs and predict with them from files in the formats of Joachims'
svm_light, svm_hmm and svm_rank, and manage the corpora structsvm's examples use.

examples:
  structsvm learn --task sequence -C 0.1 train.dat model.npz
  structsvm classify model.npz test.dat predictions.txt
  structsvm data list
  structsvm data fetch treebank --from /path/to/data
  structsvm info

'structsvm COMMAND --help' describes each command."""


def build_parser():
    """The ``structsvm`` argument parser: ``learn``, ``classify`` and ``data``."""
    from ..learners import QP_SOLVERS as SOLVERS
    from ..registry import registered
    from .._version import __version__

    ap = _Parser(prog="structsvm", description=_DESCRIPTION)
    ap.add_argument("--version", action="version", version=f"structsvm {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    learn = sub.add_parser(
        "learn", help="train a model on a file and write the model to a file",
        description=_para("Train a structural SVM on TRAIN and write the fitted model "
                          "to MODEL. It minimises 1/2 |w|^2 + C sum_i xi_i, the slack "
                          "xi_i being example i's loss-augmented margin violation."),
        epilog_from=_task_defaults)
    learn.add_argument("--task", required=True, choices=list(_TASKS),
                       help="the structure to learn; it also sets the format of TRAIN "
                            "(listed below)")
    c_given = learn.add_mutually_exclusive_group()
    c_given.add_argument("-C", type=float, default=None, metavar="C",
                         help="weight of the training loss against the weights' norm: "
                              "larger fits the training data more closely (default: "
                              "the task's, below)")
    c_given.add_argument("--svmstruct-c", type=float, default=None, metavar="c",
                         help="give C as svm_struct's -c, which sums over the examples "
                              "instead of averaging: C = c / n for n training examples")
    learn.add_argument("--learner", default=None, choices=sorted(registered("learner")),
                       help="the training algorithm (default: the task's, below; "
                            "one_slack when --solver is given)")
    solvers = [s.lower() for s in SOLVERS]
    learn.add_argument("--solver", default=None, choices=solvers,
                       help="QP solver of the cutting-plane learners one_slack and "
                            "n_slack: auto or smo (structsvm's own SMO, clarabel taking "
                            "over where it does not converge), or clarabel, osqp, scs "
                            "(that cvxpy back-end first); default auto")
    learn.add_argument("--tol", type=float, default=None,
                       help="stopping tolerance: the duality gap relative to the "
                            "objective for the cutting-plane, dual_cd and frank_wolfe "
                            "learners, the relative change of the objective for pegasos "
                            "and perceptron (default: the task's, below)")
    learn.add_argument("--max-iter", type=int, default=None, metavar="N",
                       help="at most N rounds (cutting plane), passes (dual_cd, "
                            "frank_wolfe, multiclass_cd) or epochs (pegasos, perceptron) "
                            "(default: the learner's own cap)")
    learn.add_argument("--n-jobs", type=int, default=None, metavar="N",
                       help="decode the training examples in N threads (-1: one per "
                            "core); the model does not depend on it (default 1)")
    learn.add_argument("-v", "--verbose", action="count", default=0,
                       help="report each round on standard error (round, objective, "
                            "duality gap, time); on a terminal a progress bar shows the "
                            "rounds anyway")
    learn.add_argument("--checkpoint", default=None, metavar="PATH",
                       help="write the training state to PATH every --checkpoint-every "
                            "seconds (a model file; continue with --resume PATH)")
    learn.add_argument("--checkpoint-every", type=float, default=60.0, metavar="SECONDS",
                       help="seconds between checkpoints (default 60)")
    learn.add_argument("--resume", default=None, metavar="PATH",
                       help="continue training from the checkpoint at PATH (same data "
                            "and parameters)")
    learn.add_argument("train", metavar="TRAIN", help="the training data file")
    learn.add_argument("model", metavar="MODEL",
                       help="where to write the model (.npz; refused if it is TRAIN or "
                            "a checkpoint)")

    classify = sub.add_parser(
        "classify", help="predict with a saved model and score the predictions",
        description=_para("Predict the outputs of the examples in TEST with the model "
                          "in MODEL; the task and file format are the model's. The "
                          "score against TEST's own labels (accuracy, token accuracy, "
                          "NDCG@10 or alignment accuracy) is printed on standard "
                          "error."))
    classify.add_argument("model", metavar="MODEL",
                          help="a model file written by 'structsvm learn'")
    classify.add_argument("test", metavar="TEST",
                          help="the examples to predict, in the task's training format")
    classify.add_argument("output", nargs="?", default=None, metavar="OUTPUT",
                          help="where to write the predictions, one per line (per "
                               "token for sequences, per document for rankings: its "
                               "score); default: standard output")

    sub.add_parser(
        "info", help="versions, compiled loops and data paths, for a bug report",
        description=_para("Print structsvm's version and where it is installed, the "
                          "versions of the libraries it builds on, whether the loops "
                          "compiled at installation are in use (and if not why), "
                          "numba's cache folder, the memory limit and where corpora "
                          "are looked for."))

    data = sub.add_parser(
        "data", help="list, verify and fetch the corpora",
        description=_para("The corpora of the manifest: where each is found, whether "
                          "its files match their SHA-256 sums, and a verified copy into "
                          "the corpora folder ($STRUCTSVM_CORPORA, or the checkout's "
                          "corpora/)."))
    dsub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    dlist = dsub.add_parser(
        "list", help="each corpus: found or missing, and where",
        description=_para("Each corpus of the manifest: found, partial or missing, "
                          "where, and how to get a missing one."))
    dverify = dsub.add_parser(
        "verify", help="check every file's SHA-256 sum",
        description=_para("Check the SHA-256 sum of every file of the named corpora; "
                          "the exit status is 1 when a file is bad or missing."))
    dverify.add_argument("names", nargs="*", metavar="NAME",
                         help="corpora to check (default: all)")
    dfetch = dsub.add_parser(
        "fetch", help="copy a verified corpus into the corpora folder",
        description=_para("Copy corpora into the corpora folder after checking their "
                          "SHA-256 sums."))
    dfetch.add_argument("names", nargs="+", metavar="NAME", help="corpora to fetch")
    dfetch.add_argument("--force", action="store_true",
                        help="replace a copy already in place")
    fetch_from = ("copy from DIR (a folder holding the corpora's files); without it "
                  "NLTK corpora are downloaded with nltk.download")
    for p, what in ((dlist, "look only in DIR"), (dverify, "check the copy in DIR"),
                    (dfetch, fetch_from)):
        p.add_argument("--from", dest="root", metavar="DIR", default=None, help=what)
    return ap


def main(argv=None):
    """Entry point of the ``structsvm`` command."""
    args = build_parser().parse_args(argv)
    run = {"learn": _learn, "classify": _classify, "info": _show_info}.get(args.command)
    if run is None:
        run = {"list": _data_list, "verify": _data_verify,
               "fetch": _data_fetch}[args.data_command]
    try:
        return run(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        from ..limits import describe_limit

        where = vars(args).get("train") or vars(args).get("test")
        print(f"error: {where + ': ' if where else ''}out of memory: the input asks for "
              f"more memory than this machine could give (the estimates structsvm checks "
              f"were within {describe_limit()}; STRUCTSVM_MAX_MEMORY sets that limit)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
