"""Universal Dependencies English Web Treebank (EWT), CoNLL-U.

Three files, ``en_ewt-ud-train.conllu``, ``en_ewt-ud-dev.conllu`` and
``en_ewt-ud-test.conllu``: 12,544 / 2,001 / 2,077 sentences of web text (weblogs,
newsgroups, e-mails, reviews, Yahoo! answers) with lemmas, UPOS and XPOS tags,
morphological features, heads and relations (51 relations in train). Multiword-token
lines and empty nodes are no words of the basic tree; the reader leaves them out.
"""
from __future__ import annotations

from ._paths import find_data

__all__ = ["UD_ENGLISH_EWT_SPLITS", "load_ud_english_ewt"]

#: split name -> file name
UD_ENGLISH_EWT_SPLITS = {"train": "en_ewt-ud-train.conllu",
                         "dev": "en_ewt-ud-dev.conllu",
                         "test": "en_ewt-ud-test.conllu"}

_HINT = ("UD English EWT is release 2.x of UniversalDependencies/UD_English-EWT "
         "(CC BY-SA 4.0; Silveira et al. 2014).")


def load_ud_english_ewt(path=None, *, split="train"):
    """UD English EWT: sentences (token dicts), heads and relations of one split.

    Parameters
    ----------
    path : str or path-like, optional
        Folder holding the three ``.conllu`` files. By default ``$STRUCTSVM_DATA``
        and then the corpora folder (``ud_english_ewt/``); see
        :func:`structsvm.corpora.find_data`.
    split : {"train", "dev", "test"}, default="train"

    Returns
    -------
    structsvm.structures.dependency.DependencyData
        ``(sentences, heads, relations)``: per sentence its words as dicts with
        ``form``, ``lemma``, ``upos``, ``xpos``, ``feats`` and ``misc``, each word's
        head (0 = root, otherwise the 1-based position of the head word) and its
        relation. ``train`` has 12,544 sentences (204,577 words), ``dev`` 2,001
        (25,147), ``test`` 2,077 (25,094).

    Raises
    ------
    ValueError
        For an unknown ``split``, or (naming the file and sentence) a malformed line.
    structsvm.corpora.DataNotFoundError
        When the files cannot be found (the message names the command that gets them).

    References
    ----------
    N. Silveira et al. A gold standard dependency corpus for English. LREC 2014.

    Examples
    --------
    >>> data = load_ud_english_ewt(split="dev")  # doctest: +SKIP
    >>> len(data.sentences), data.relations[0][:3]  # doctest: +SKIP
    (2001, ['root', 'punct', 'flat'])
    """
    if split not in UD_ENGLISH_EWT_SPLITS:
        raise ValueError(f"split must be one of {sorted(UD_ENGLISH_EWT_SPLITS)}, "
                         f"got {split!r}")
    from ..structures.dependency.conll import read_conllu

    fname = UD_ENGLISH_EWT_SPLITS[split]
    root = find_data("ud_english_ewt", path=path, must_contain=(fname,), hint=_HINT)
    return read_conllu(root / fname)
