"""CoNLL-style column files, and the CoNLL-2000 chunking shared task."""
from __future__ import annotations

from ._lines import read_lines, source_name
from ._paths import find_data

__all__ = ["read_conll", "load_conll2000", "CONLL2000_CHUNK_TYPES"]

#: the 11 chunk types of CoNLL-2000
CONLL2000_CHUNK_TYPES = ("ADJP", "ADVP", "CONJP", "INTJ", "LST", "NP", "PP", "PRT",
                         "SBAR", "UCP", "VP")

_HINT = "CoNLL-2000 is distributed with NLTK as package 'conll2000'."


def read_conll(source, n_columns=None):
    """Sentences of a whitespace-separated column file (blank lines between sentences).

    Parameters
    ----------
    source : str, path-like or file object
    n_columns : int, optional
        Expected number of columns per token line; by default every token line must
        have as many as the first one.

    Returns
    -------
    list of list of tuple of str
        One tuple of columns per token.

    Raises
    ------
    ValueError
        Naming the file and the line: a token line with another number of columns,
        or bytes that are not UTF-8.
    """
    name = source_name(source)
    sents, cur, first = [], [], None
    for lineno, line in read_lines(source):
        parts = line.split()
        if not parts:
            if cur:
                sents.append(cur)
            cur = []
            continue
        expected = n_columns if n_columns is not None else first
        if expected is not None and len(parts) != expected:
            how = "expected" if n_columns is not None else \
                f"earlier lines have {expected} columns, so expected"
            raise ValueError(f"{name}, line {lineno}: {how} {expected} columns, "
                             f"got {len(parts)}: {line.rstrip()[:80]!r}")
        first = len(parts) if first is None else first
        cur.append(tuple(parts))
    if cur:
        sents.append(cur)
    return sents


def load_conll2000(path=None, *, chunk_types=None):
    """CoNLL-2000 chunking: ((word, POS) token lists, IOB2 chunk tags) for train and test.

    Unlike ``nltk.corpus.conll2000.chunked_sents`` (which keeps NP, VP and PP only
    unless ``chunk_types`` is passed), all 11 chunk types are kept by default, as in
    the shared task.

    Parameters
    ----------
    path : str or path-like, optional
        Folder holding ``train.txt`` and ``test.txt``; by default
        ``$STRUCTSVM_DATA``, the corpora folder, then NLTK's search path (see
        :func:`structsvm.corpora.find_data`).
    chunk_types : sequence of str, optional
        Keep only these chunk types (others become ``O``).

    Returns
    -------
    X_train, Y_train, X_test, Y_test
        ``X`` are lists of sentences of ``(word, pos_tag)`` pairs, ``Y`` lists of
        chunk-tag lists (``B-NP``, ``I-NP``, ``O``, ...).

    References
    ----------
    E. F. Tjong Kim Sang, S. Buchholz. Introduction to the CoNLL-2000 shared task:
    chunking. CoNLL 2000.
    """
    root = find_data("conll2000", path=path, nltk_subdir="corpora/conll2000",
                     must_contain=("train.txt", "test.txt"), hint=_HINT)
    keep = None if chunk_types is None else set(chunk_types)
    out = []
    for name in ("train.txt", "test.txt"):
        sents = read_conll(root / name, n_columns=3)
        X = [[(w, p) for w, p, _ in s] for s in sents]
        Y = [[c if keep is None or c == "O" or c[2:] in keep else "O" for _, _, c in s]
             for s in sents]
        out += [X, Y]
    return tuple(out)
