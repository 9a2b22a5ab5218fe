"""CoNLL-2002 named-entity recognition, Dutch part (NLTK's ``conll2002`` corpus).

Files ``ned.train``, ``ned.testa`` (development) and ``ned.testb`` (test): one token
a line, ``word POS IOB2-tag``, blank lines between sentences and a
``-DOCSTART- -DOCSTART- O`` line at the start of every newspaper article. The loader
keeps the article boundaries as a document id per sentence, which skip-chain models
need (they link repeated words within one document). The corpus's README notes that
the sentences were shuffled within each article for copyright reasons, so documents
are bags of sentences: order inside a document carries no meaning.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._lines import quote, read_lines, source_name
from ._paths import find_data

__all__ = ["Conll2002Data", "load_conll2002", "read_conll2002",
           "CONLL2002_ENTITY_TYPES", "CONLL2002_SPLITS"]

#: the four entity types of CoNLL-2002
CONLL2002_ENTITY_TYPES = ("LOC", "MISC", "ORG", "PER")

#: split name -> file name (Dutch part)
CONLL2002_SPLITS = {"train": "ned.train", "testa": "ned.testa", "testb": "ned.testb"}

_DOCSTART = "-DOCSTART-"
_HINT = ("CoNLL-2002 (Dutch part) is distributed with NLTK as package 'conll2002'; "
         "only ned.train, ned.testa and ned.testb are read.")


class Conll2002Data(NamedTuple):
    """Sentences of one CoNLL-2002 file with their document ids.

    Attributes
    ----------
    X : list of list of (str, str)
        Each sentence as ``(word, pos_tag)`` pairs.
    Y : list of list of str
        IOB2 entity tags (``B-PER``, ``I-PER``, ``O``, ...), one per token.
    doc : ndarray of shape (n_sentences,)
        Document (article) index of each sentence, 0, 1, 2, ... in file order.
    """

    X: list
    Y: list
    doc: np.ndarray


def read_conll2002(source):
    """Parse one CoNLL-2002 column file with ``-DOCSTART-`` article boundaries.

    Parameters
    ----------
    source : str, path-like or file object
        A file of ``word POS tag`` lines (UTF-8 when a path is given).

    Returns
    -------
    Conll2002Data
        Sentences, tags and document ids. Sentences before the first ``-DOCSTART-``
        (if any) form document 0; an article with no sentences gets no id.

    Raises
    ------
    ValueError
        Naming the file and the line: a token line without exactly three columns
        (quoted up to 80 characters), bytes that are not UTF-8, a path that is not a
        regular file.

    Examples
    --------
    >>> import io
    >>> text = ("-DOCSTART- -DOCSTART- O\\nJan N B-PER\\nloopt V O\\n\\nGent N B-LOC\\n\\n"
    ...         "-DOCSTART- -DOCSTART- O\\nDag Int O\\n")
    >>> data = read_conll2002(io.StringIO(text))
    >>> data.X[0], data.Y[0], data.doc.tolist()
    ([('Jan', 'N'), ('loopt', 'V')], ['B-PER', 'O'], [0, 0, 1])
    """
    name = source_name(source)
    X, Y, doc = [], [], []
    cur_x, cur_y, cur_doc = [], [], 0

    def close():
        if cur_x:
            X.append(list(cur_x))
            Y.append(list(cur_y))
            doc.append(cur_doc)
            cur_x.clear()
            cur_y.clear()

    for lineno, line in read_lines(source):
        parts = line.split()
        if not parts:
            close()
            continue
        if parts[0] == _DOCSTART:
            close()
            if doc and doc[-1] == cur_doc:  # the previous article had sentences
                cur_doc += 1
            continue
        if len(parts) != 3:
            raise ValueError(f"{name}, line {lineno}: expected 3 columns (word POS "
                             f"tag), got {len(parts)}: {quote(line.rstrip())}")
        cur_x.append((parts[0], parts[1]))
        cur_y.append(parts[2])
    close()
    return Conll2002Data(X, Y, np.asarray(doc, dtype=np.intp))


def load_conll2002(path=None, *, split="train"):
    """CoNLL-2002 Dutch named entities: sentences, IOB2 tags and document ids.

    Parameters
    ----------
    path : str or path-like, optional
        Folder holding ``ned.train``, ``ned.testa`` and ``ned.testb``. By default
        ``$STRUCTSVM_DATA``, the corpora folder, then NLTK's search path
        (``corpora/conll2002``); see :func:`structsvm.corpora.find_data`.
    split : {"train", "testa", "testb"}, default="train"
        ``testa`` is the development set, ``testb`` the test set of the shared task.

    Returns
    -------
    Conll2002Data
        ``(X, Y, doc)``: sentences of ``(word, pos_tag)`` pairs, their IOB2 tag lists
        and the article index of each sentence. ``train`` has 15,806 sentences
        (202,644 tokens) in 287 articles, ``testa`` 2,895 (37,687) in 74, ``testb``
        5,195 (68,875) in 119.

    Raises
    ------
    ValueError
        For an unknown ``split``.
    structsvm.corpora.DataNotFoundError
        When the files cannot be found (the message names the command that gets them).

    References
    ----------
    E. F. Tjong Kim Sang. Introduction to the CoNLL-2002 shared task:
    language-independent named entity recognition. CoNLL 2002.

    Examples
    --------
    >>> X, Y, doc = load_conll2002(split="testa")  # doctest: +SKIP
    >>> len(X), doc.max() + 1  # doctest: +SKIP
    (2895, 74)
    """
    if split not in CONLL2002_SPLITS:
        raise ValueError(f"split must be one of {sorted(CONLL2002_SPLITS)}, got {split!r}")
    fname = CONLL2002_SPLITS[split]
    root = find_data("conll2002", path=path, nltk_subdir="corpora/conll2002",
                     must_contain=(fname,), hint=_HINT)
    return read_conll2002(root / fname)
