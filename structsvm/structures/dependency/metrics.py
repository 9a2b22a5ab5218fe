"""Attachment scores of dependency trees: unlabelled (UAS) and labelled (LAS), with
or without punctuation."""
from __future__ import annotations

import string
import unicodedata
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

__all__ = ["AttachmentScores", "attachment_scores", "is_punctuation"]

_ASCII_PUNCT = frozenset(string.punctuation)


class AttachmentScores(NamedTuple):
    """Attachment scores over the scored words.

    Attributes
    ----------
    uas : float
        Fraction of words with the right head.
    las : float
        Fraction of words with the right head and relation (nan without relations).
    n_words : int
        Words scored.
    """

    uas: float
    las: float
    n_words: int


def is_punctuation(word):
    """Whether a word is punctuation: every character is ASCII punctuation or a
    Unicode punctuation character (category P*), the test of the CoNLL shared
    tasks' ``eval.pl`` (``^[[:punct:]]+$``).

    Examples
    --------
    >>> [is_punctuation(w) for w in (",", "``", "--", "$", "U.S.", "-LRB-")]
    [True, True, True, True, False, False]
    """
    return bool(word) and all(ch in _ASCII_PUNCT or unicodedata.category(ch)[0] == "P"
                              for ch in word)


def _word(tok):
    if isinstance(tok, Mapping):
        return tok.get("form", tok.get("word"))
    if isinstance(tok, (tuple, list)):
        return tok[0]
    return tok


def _tag(tok, tag_key):
    if isinstance(tok, Mapping):
        return tok.get(tag_key)
    if isinstance(tok, (tuple, list)) and len(tok) == 2:
        return tok[1]
    return None


def _split(y, i, what):
    """Heads and relations (or None) of one output: heads, or (head, relation) pairs."""
    if len(y) and isinstance(y[0], (tuple, list)):
        if any(len(p) != 2 for p in y):
            raise ValueError(f"Sample {i}: {what} mixes (head, relation) pairs with "
                             "other values")
        return np.array([int(h) for h, _ in y], dtype=np.int64), [r for _, r in y]
    return np.asarray(y, dtype=np.int64).ravel(), None


def attachment_scores(Y_true, Y_pred, X=None, *, exclude_punctuation=False,
                      punctuation_tags=None, relations_true=None, relations_pred=None,
                      tag_key="xpos"):
    """Unlabelled and labelled attachment scores of predicted trees.

    UAS = |{words d : ŷ_d = y_d}| / |words|; LAS also asks the relations to agree.
    Both are micro-averages over the words of all sentences.

    Parameters
    ----------
    Y_true, Y_pred : list of list of int, or of (head, relation) pairs
        Heads (0 = root) of every word, optionally with their relations.
    X : list of sentences, optional
        The sentences (``(word, tag)`` pairs or token dicts); needed to exclude
        punctuation.
    exclude_punctuation : bool, default=False
        Leave out the words that :func:`is_punctuation` calls punctuation (the
        CoNLL ``eval.pl`` convention), or, with ``punctuation_tags``, the words
        with one of those tags.
    punctuation_tags : collection of str, optional
        With ``exclude_punctuation``, the tags of punctuation instead of the word
        test (e.g. ``{"``", "''", ":", ",", "."}``, the Penn Treebank convention of
        Yamada & Matsumoto 2003).
    relations_true, relations_pred : list of list of str, optional
        Relations of every word (instead of pairs in ``Y_true`` / ``Y_pred``).
    tag_key : str, default="xpos"
        Where a token dict holds the tag ``punctuation_tags`` is compared with.

    Returns
    -------
    AttachmentScores
        ``uas``, ``las`` (nan when either side has no relations) and ``n_words``.

    Raises
    ------
    ValueError
        Lists of other lengths (naming the sample), punctuation excluded without
        ``X``, or no word left to score.

    Examples
    --------
    >>> X = [[("John", "NNP"), ("sleeps", "VBZ"), (".", ".")]]
    >>> attachment_scores([[2, 0, 2]], [[2, 0, 1]], X)
    AttachmentScores(uas=0.6666666666666666, las=nan, n_words=3)
    >>> attachment_scores([[2, 0, 2]], [[2, 0, 1]], X, exclude_punctuation=True).uas
    1.0
    >>> attachment_scores([[(2, "nsubj"), (0, "root")]], [[(2, "obj"), (0, "root")]]).las
    0.5
    """
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"{len(Y_true)} true and {len(Y_pred)} predicted trees")
    if exclude_punctuation and X is None:
        raise ValueError("exclude_punctuation=True needs the sentences X (their words "
                         "or tags tell the punctuation)")
    if X is not None and len(X) != len(Y_true):
        raise ValueError(f"{len(X)} sentences but {len(Y_true)} trees")
    for name, rel in (("relations_true", relations_true),
                      ("relations_pred", relations_pred)):
        if rel is not None and len(rel) != len(Y_true):
            raise ValueError(f"{name} has {len(rel)} lists for {len(Y_true)} trees")
    tags = None if punctuation_tags is None else frozenset(punctuation_tags)
    heads_ok = labels_ok = total = 0
    labelled = True
    for i, (yt, yp) in enumerate(zip(Y_true, Y_pred)):
        ht, rt = _split(yt, i, "Y_true")
        hp, rp = _split(yp, i, "Y_pred")
        rt = rt if relations_true is None else list(relations_true[i])
        rp = rp if relations_pred is None else list(relations_pred[i])
        if hp.size != ht.size:
            raise ValueError(f"Sample {i}: {ht.size} true and {hp.size} predicted heads")
        keep = np.ones(ht.size, dtype=bool)
        if exclude_punctuation:
            if len(X[i]) != ht.size:
                raise ValueError(f"Sample {i}: {len(X[i])} words and {ht.size} heads")
            if tags is None:
                keep = np.array([not is_punctuation(_word(t)) for t in X[i]], dtype=bool)
            else:
                keep = np.array([_tag(t, tag_key) not in tags for t in X[i]], dtype=bool)
        right = (ht == hp) & keep
        heads_ok += int(right.sum())
        total += int(keep.sum())
        if rt is None or rp is None:
            labelled = False
            continue
        if len(rt) != ht.size or len(rp) != ht.size:
            raise ValueError(f"Sample {i}: {ht.size} heads but {len(rt)} true and "
                             f"{len(rp)} predicted relations")
        labels_ok += sum(1 for k in np.flatnonzero(right) if rt[k] == rp[k])
    if total == 0:
        raise ValueError("no word to score")
    las = labels_ok / total if labelled else float("nan")
    return AttachmentScores(heads_ok / total, las, total)
