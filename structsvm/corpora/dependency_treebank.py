"""The NLTK sample of the Penn Treebank (WSJ) converted to dependencies.

NLTK's package ``dependency_treebank`` holds the same 199 files as the treebank
sample (``wsj_0001.dp`` ... ``wsj_0199.dp``), one token a line: word, POS tag and the
1-based index of the token's head (0 for the root), tab-separated, a blank line
between sentences; 3,914 sentences, 94,084 tokens.
"""
from __future__ import annotations

from ._lines import quote, source_name
from ._paths import DataNotFoundError, fetch_command, find_data
from .conll import read_conll

__all__ = ["read_dependency_file", "dependency_treebank_sents", "load_dependency_treebank"]

_HINT = ("The dependency version of the treebank sample is NLTK's package "
         "'dependency_treebank' (Penn Treebank, LDC 1995; non-commercial use only).")


def read_dependency_file(source):
    """Sentences of one ``.dp`` file: ``(words_and_tags, heads)`` per sentence.

    Parameters
    ----------
    source : str, path-like or file object

    Returns
    -------
    list of (list of (str, str), list of int)
        Per sentence the ``(word, tag)`` pairs and each token's head (0 = root,
        otherwise the 1-based position of the head token).

    Raises
    ------
    ValueError
        Naming the file, the sentence and the token: a line without exactly three
        columns, a head that is not an integer in ``0 .. n_tokens`` or that points at
        its own token.
    """
    sents = read_conll(source, n_columns=3)
    name = source_name(source)
    out = []
    for s_index, sent in enumerate(sents):
        heads = []
        for t_index, (_, _, head) in enumerate(sent, start=1):
            if not head.isdigit() or int(head) > len(sent) or int(head) == t_index:
                raise ValueError(
                    f"{name}: sentence {s_index}, token {t_index}: head {quote(head)} is "
                    f"not 0 (the root) or the position of another of its {len(sent)} "
                    "tokens")
            heads.append(int(head))
        out.append(([(w, t) for w, t, _ in sent], heads))
    return out


def _files(path):
    root = find_data("dependency_treebank", path=path,
                     nltk_subdir="corpora/dependency_treebank", hint=_HINT)
    files = sorted(root.glob("wsj_*.dp"))
    if not files:
        raise DataNotFoundError(
            f"{root} holds no wsj_*.dp files. Get the corpus with: "
            f"{fetch_command('dependency_treebank', 'dependency_treebank')}.")
    return files


def dependency_treebank_sents(path=None):
    """All sentences of the dependency treebank sample, in file order.

    Parameters
    ----------
    path : str or path-like, optional
        The ``dependency_treebank`` folder. By default ``$STRUCTSVM_DATA``, the
        corpora folder, then NLTK's search path (``$NLTK_DATA``) are searched (see
        :func:`structsvm.corpora.find_data`).

    Returns
    -------
    list of (list of (str, str), list of int)
        See :func:`read_dependency_file`.

    Raises
    ------
    structsvm.corpora.DataNotFoundError
        When the corpus is absent; the message says how to get it.
    """
    sents = []
    for f in _files(path):
        sents.extend(read_dependency_file(f))
    return sents


def load_dependency_treebank(path=None, *, n_train=3000, split="sentences",
                             train_fraction=0.8):
    """A parsing split: by sentences (the first ``n_train`` train) or by files (the
    first ``train_fraction`` of the 199 files train).

    ``split="sentences"`` is the same split as
    :func:`structsvm.corpora.load_treebank`'s (the two corpora hold the same
    sentences in the same order). ``split="files"`` keeps every article on one
    side: with the default fraction the first 159 files (``wsj_0001`` ..
    ``wsj_0159``, 3,396 sentences) train and the last 40 (518 sentences) test, the
    split of the dependency benchmark.

    Parameters
    ----------
    path : str or path-like, optional
        See :func:`dependency_treebank_sents`.
    n_train : int, default=3000
        Training sentences of the sentence split.
    split : {"sentences", "files"}, default="sentences"
    train_fraction : float, default=0.8
        Of the file split: the first ``int(train_fraction * n_files)`` files train.

    Returns
    -------
    X_train, Y_train, X_test, Y_test
        ``X`` are sentences as lists of ``(word, tag)`` pairs, ``Y`` lists of heads
        (0 = root, otherwise the 1-based position of the head).

    Raises
    ------
    ValueError
        An unknown ``split``, or a fraction that leaves either side without files.

    Examples
    --------
    >>> X_tr, Y_tr, X_te, Y_te = load_dependency_treebank()  # doctest: +SKIP
    >>> len(X_tr), len(X_te), sum(map(len, X_tr + X_te))  # doctest: +SKIP
    (3000, 914, 94084)
    >>> X_tr, Y_tr, X_te, Y_te = load_dependency_treebank(split="files")  # doctest: +SKIP
    >>> len(X_tr), len(X_te)  # doctest: +SKIP
    (3396, 518)
    """
    if split == "sentences":
        sents = dependency_treebank_sents(path)
        X = [s for s, _ in sents]
        Y = [h for _, h in sents]
        return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    if split != "files":
        raise ValueError(f"split must be 'sentences' or 'files', got {split!r}")
    files = _files(path)
    k = int(float(train_fraction) * len(files))
    if not 0 < k < len(files):
        raise ValueError(f"train_fraction={train_fraction!r} leaves {k} of "
                         f"{len(files)} files for training; both sides need files")
    parts = [[], []]
    for i, f in enumerate(files):
        parts[i >= k].extend(read_dependency_file(f))
    (train, test) = parts
    return ([s for s, _ in train], [h for _, h in train],
            [s for s, _ in test], [h for _, h in test])
