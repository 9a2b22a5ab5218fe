"""UIUC question classification (Li & Roth): 6 coarse classes over 50 fine ones.

Each line of ``train.txt`` / ``test.txt`` reads ``COARSE:fine question text``. The
labels form a 2-level taxonomy root → coarse → fine; fine names repeat under
different coarse classes (``other``, ``desc``, ...), so a class is the path
``(coarse, fine)``.
"""
from __future__ import annotations

from typing import NamedTuple

from ._lines import read_lines, source_name
from ._paths import find_data

__all__ = ["QCData", "load_qc", "read_qc"]


class QCData(NamedTuple):
    """Questions and their (coarse, fine) label paths.

    Attributes
    ----------
    train_questions, test_questions : list of str
    train_labels, test_labels : list of tuple of str
        Paths ``(coarse, fine)``, e.g. ``("NUM", "date")``.
    """

    train_questions: list
    train_labels: list
    test_questions: list
    test_labels: list


def read_qc(path):
    """Read one QC file: (questions, label paths).

    The UIUC files are Latin-1 (``train.txt`` has bytes that are not UTF-8), so
    every byte decodes; each non-blank line must read ``COARSE:fine question``.

    Parameters
    ----------
    path : str, path-like or file object

    Returns
    -------
    questions : list of str
    labels : list of tuple of str

    Raises
    ------
    ValueError
        Naming the file and the line of a malformed line.
    """
    questions, labels = [], []
    name = source_name(path)
    for lineno, line in read_lines(path, encoding="latin-1"):
        line = line.strip()
        if not line:
            continue
        label, _, text = line.partition(" ")
        coarse, sep, fine = label.partition(":")
        text = text.strip()
        if not sep or not coarse or not fine or not text or ":" in fine:
            raise ValueError(f"{name}, line {lineno}: expected 'COARSE:fine question', "
                             f"got {line[:60]!r}")
        questions.append(text)
        labels.append((coarse, fine))
    return questions, labels


def load_qc(path=None):
    """Load the UIUC question classification corpus (5,452 train, 500 test).

    Looks in ``path``, ``$STRUCTSVM_DATA/qc``, ``$STRUCTSVM_DATA/nltk_data/corpora/qc``,
    the corpora folder (``corpora/qc``) and NLTK's data path (``corpora/qc``).

    Returns
    -------
    QCData

    References
    ----------
    X. Li, D. Roth. Learning question classifiers. COLING 2002.
    """
    root = find_data("qc", path=path, nltk_subdir="corpora/qc",
                     must_contain=["train.txt", "test.txt"],
                     hint="UIUC question classification is NLTK's package 'qc'.")
    tq, tl = read_qc(root / "train.txt")
    eq, el = read_qc(root / "test.txt")
    return QCData(tq, tl, eq, el)
