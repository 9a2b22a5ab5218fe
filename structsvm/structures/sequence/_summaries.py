"""The sequence map fitted from partitions of the training data: each partition's
summary (its tags, and the observation strings with their counts, or the columns
its matrices use), computed where the partition lives, and the fitted map from the
summaries, equal to the map fitted on all partitions at once up to the order of the
vocabulary's columns (the first partition's strings first, in the order a fit meets
them, then each next partition's new ones)."""
from __future__ import annotations

from itertools import chain

import numpy as np

from .._input_columns import kept_columns
from ._inputs import check_pairs, check_params, check_sentences, stack_matrices
from ._observations import TokenFeaturizer

__all__ = ["summarize", "merge_summaries"]


def summarize(features, min_count, n_hash, X, Y):
    """A partition's summary (a dict of lists and arrays, cheap to send).

    Raises the errors ``fit`` raises for the same sentences (numbered within the
    partition)."""
    check_params(features, min_count, n_hash)
    X, kind = check_sentences(X)
    Y = check_pairs(X, Y)
    tags = list(dict.fromkeys(t for y in Y for t in y))
    out = {"kind": kind, "tags": tags}
    if kind == "matrix":
        widths = {x.shape[1] for x in X}
        if len(widths) != 1:
            raise ValueError(f"sentences have different feature widths {sorted(widths)}")
        width = widths.pop()
        M, _ = stack_matrices(X, width)
        out.update(width=width, columns=kept_columns(M) if any(
            not isinstance(x, np.ndarray) for x in X) else np.arange(width))
        return out
    if n_hash is None:
        grow = {}
        cols, _ = TokenFeaturizer(features)._gather(X, grow)
        out["strings"] = list(grow)
        out["counts"] = np.bincount(cols[cols >= 0], minlength=len(grow))
    return out


def merge_summaries(summaries, min_count):
    """``(kind, tags, vocabulary, width, columns)`` of the map fitted on every
    partition: the tags of all, the strings seen at least ``min_count`` times in all
    (None when hashing), and for matrices their width and the columns any partition
    uses (None: all)."""
    summaries = [s for s in summaries if s is not None]
    if not summaries:
        raise ValueError("every partition of the training data is empty")
    kinds = {s["kind"] for s in summaries}
    if len(kinds) != 1:
        raise TypeError(f"the partitions hold different kinds of sentences: "
                        f"{sorted(kinds)} (token lists in some, matrices in others)")
    kind = kinds.pop()
    tags = list(dict.fromkeys(t for s in summaries for t in s["tags"]))
    if kind == "matrix":
        widths = {s["width"] for s in summaries}
        if len(widths) != 1:
            raise ValueError(f"the partitions' sentences have different feature widths "
                             f"{sorted(widths)}")
        width = widths.pop()
        cols = np.unique(np.concatenate([np.arange(width) if s["columns"] is None else
                                         s["columns"] for s in summaries]))
        return kind, tags, None, width, None if cols.size == width else cols
    if "strings" not in summaries[0]:
        return kind, tags, None, None, None
    # the union in order of first sight (dict.fromkeys runs in C), then each
    # partition's counts added at its strings' places in the union
    union = dict.fromkeys(chain.from_iterable(s["strings"] for s in summaries))
    index = dict(zip(union, range(len(union))))
    counts = np.zeros(len(index), dtype=np.int64)
    for s in summaries:
        at = np.fromiter(map(index.__getitem__, s["strings"]), dtype=np.int64,
                         count=len(s["strings"]))
        counts[at] += s["counts"]  # a partition's strings are distinct
    keep = counts >= max(1, min_count)
    strings = [s for s, k in zip(index, keep.tolist()) if k]
    return kind, tags, dict(zip(strings, range(len(strings)))), None, None
