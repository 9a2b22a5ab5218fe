"""Training data in partitions that the workers read where they live: files (one
partition each) or the partitions of a Dask bag.

``structsvm.fit(Files([...], format="conll"), None, feature_map=..., n_jobs=2)``
trains on worker processes (or, inside ``joblib.parallel_config(backend="dask")``,
on the workers of a Dask cluster) whose every worker opens its own files; the
fitting process never reads them. Formats and what a partition gives as X and Y:

- ``"conll"``: whitespace-separated token lines, a blank line between sentences;
  Y the last column, X the tokens: the other columns as a tuple (CoNLL-2000:
  ``(word, pos)`` pairs, what ``SequenceFeatures(features="chunk")`` takes), or
  the word alone when there is one other column (the ``"pos"`` features).
- ``"svm_hmm"``: :func:`~structsvm.corpora.read_svm_hmm` (per-sentence sparse
  matrices and integer tags; give ``n_features`` so that every file has the same
  width).
- ``"svm_rank"``: :func:`~structsvm.corpora.read_svm_rank` (queries and grades, for
  ``RankingFeatures``; give ``n_features``).
- ``"conllu"``, ``"conllx"``: dependency trees (sentences of token dicts and their
  heads, for ``DependencyFeatures``).

Click logs in JSON Lines parts are summed on the workers by
:func:`~structsvm.corpora.click_totals_in_parts`.
"""
from __future__ import annotations

import os

from ..protocols import DaskPart, Partitioned

__all__ = ["Files", "DaskBag", "FORMATS", "click_totals_in_parts"]


def _read_conll(path, **options):
    from .conll import read_conll

    sents = read_conll(path, **options)
    X, Y = [], []
    for i, sent in enumerate(sents):
        if len(sent[0]) < 2:
            raise ValueError(f"{os.fspath(path)}: sentence {i} has one column; a "
                             "partition in format 'conll' needs the tag in the last "
                             "column and the token before it")
        X.append([t[0] if len(t) == 2 else t[:-1] for t in sent])
        Y.append([t[-1] for t in sent])
    return X, Y


def _read_svm_hmm(path, **options):
    from .svm_hmm import read_svm_hmm

    return read_svm_hmm(path, **options)


def _read_svm_rank(path, **options):
    from .svmlight import read_svm_rank

    data = read_svm_rank(path, **options)
    return list(data.X), list(data.Y)


def _read_conllu(path, **options):
    from ..structures.dependency.conll import read_conllu

    data = read_conllu(path, **options)
    return data.sentences, data.heads


def _read_conllx(path, **options):
    from ..structures.dependency.conll import read_conllx

    data = read_conllx(path, **options)
    return data.sentences, data.heads


#: format name -> reader of one file, returning (X, Y)
FORMATS = {"conll": _read_conll, "svm_hmm": _read_svm_hmm, "svm_rank": _read_svm_rank,
           "conllu": _read_conllu, "conllx": _read_conllx}


class FilePart:
    """One file of a :class:`Files` data set (read in a worker)."""

    def __init__(self, path, format, options):
        self.path, self.format, self.options = os.fspath(path), format, dict(options)

    def read(self):
        """``(X, Y)`` of the file (run in the worker that holds it)."""
        return FORMATS[self.format](self.path, **self.options)

    def describe(self):
        """The file and its format, for messages."""
        return f"{self.path} ({self.format})"

    def __repr__(self):
        return f"FilePart({self.path!r}, {self.format!r})"


class Files(Partitioned):
    """A data set in files, each file a partition its worker reads.

    Parameters
    ----------
    paths : sequence of str or path-like
        The files; a worker holds one or more of them. The fitting process does not
        open them (a worker that cannot read one fails the fit with the reader's
        message, which names the file and line).
    format : {"conll", "svm_hmm", "svm_rank", "conllu", "conllx"}
        See the module.
    **options
        Passed to the format's reader (e.g. ``n_features`` for ``svm_hmm``).

    Examples
    --------
    >>> data = Files(["train-00.txt", "train-01.txt"], format="conll")
    >>> len(data.partitions()), data.partitions()[0].describe()
    (2, 'train-00.txt (conll)')
    """

    def __init__(self, paths, format, **options):
        if isinstance(paths, (str, bytes, os.PathLike)):
            raise TypeError("paths must be a sequence of files, not one file name")
        self.paths = [os.fspath(p) for p in paths]
        if not self.paths:
            raise ValueError("Files needs at least one file")
        if format not in FORMATS:
            raise ValueError(f"format must be one of {sorted(FORMATS)}, got {format!r}")
        self.format = format
        self.options = options

    def partitions(self):
        """One :class:`FilePart` per file."""
        return [FilePart(p, self.format, self.options) for p in self.paths]

    def __repr__(self):
        return f"Files({len(self.paths)} files, format={self.format!r})"


class DaskBag(Partitioned):
    """A Dask bag of ``(x, y)`` pairs as a partitioned data set (trains on the workers
    of the bag's Dask cluster: inside ``joblib.parallel_config(backend="dask")``).

    Parameters
    ----------
    bag : dask.bag.Bag
        Items ``(x, y)``: an input and its output.
    """

    def __init__(self, bag):
        self.bag = bag

    def partitions(self):
        """One :class:`~structsvm.protocols.DaskPart` per partition of the bag."""
        return [DaskPart(d, f"partition {k} of a Dask bag")
                for k, d in enumerate(self.bag.to_delayed())]

    def __repr__(self):
        return f"DaskBag({self.bag.npartitions} partitions)"


class _PartTotals:
    """The click totals of one click-log part (a task run by a worker)."""

    def __init__(self, n_docs, query_ids, document_ids, propensities, clip):
        self.n_docs, self.query_ids, self.document_ids = n_docs, query_ids, document_ids
        self.propensities, self.clip = propensities, clip

    def __call__(self, path):
        import numpy as np

        from ..structures.ranking.clicks import click_totals
        from .clicks import read_click_log

        logs = read_click_log(path, query_ids=self.query_ids,
                              document_ids=self.document_ids)
        totals = click_totals(logs, self.n_docs, propensities=self.propensities,
                              clip=self.clip)
        return np.concatenate(totals) if totals else np.zeros(0), len(logs)


def click_totals_in_parts(paths, n_docs, *, query_ids, document_ids, propensities=None,
                          clip=None, n_jobs=None):
    """The click totals of a log in JSON Lines parts, each part read and summed by a
    worker: what Propensity SVM-Rank trains on (see
    :func:`~structsvm.structures.ranking.click_totals`).

    Totals add up over the sessions, so every part is read
    (:func:`~structsvm.corpora.read_click_log`) and summed where it lives, and this
    process adds the parts' totals, in the order of ``paths``: the result is the
    same, to the bit, whatever runs the parts (``n_jobs=1``: this process, one part
    after the other). Inside ``joblib.parallel_config(backend="dask")`` the parts go
    to the workers of the Dask cluster, else to ``n_jobs`` worker processes.

    Parameters
    ----------
    paths : sequence of str or path-like
        The parts of the log.
    n_docs : sequence of int
        The number of documents of each query.
    query_ids, document_ids
        The labels of the queries and of each query's documents in index order (as
        :func:`~structsvm.corpora.read_click_log` takes them): every part must map
        labels to the same indices.
    propensities, clip
        As :func:`~structsvm.structures.ranking.click_weights` takes them ("logged"
        reads each session's own).
    n_jobs : int, optional
        Worker processes (None: 1 unless an enclosing ``joblib.parallel_config``
        says otherwise; -1: every core).

    Returns
    -------
    totals : list of ndarray
        One array of shape (n_docs[q],) per query.
    n_sessions : int
        Sessions of all parts (``preferences_from_totals(totals, scale=len(totals) /
        n_sessions)`` gives ``propensity_preferences``'s normalised targets).

    Raises
    ------
    ValueError
        As the reader raises, naming the part and its line.
    """
    import numpy as np

    from ..learners.engines import engine

    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("paths must be a sequence of files, not one file name")
    paths = [os.fspath(p) for p in paths]
    n_docs = np.asarray(n_docs, dtype=np.int64).ravel()
    task = _PartTotals(n_docs, list(query_ids), [list(d) for d in document_ids],
                       propensities, clip)
    runner = engine(n_jobs, len(paths))
    try:
        parts = [task(p) for p in paths] if runner is None else runner.map(task, paths)
    finally:
        if runner is not None:
            runner.close()
    total = np.zeros(int(n_docs.sum()))
    sessions = 0
    for t, s in parts:
        total += t
        sessions += int(s)
    starts = np.concatenate([[0], np.cumsum(n_docs)])
    return [total[starts[q]:starts[q + 1]] for q in range(n_docs.size)], sessions
