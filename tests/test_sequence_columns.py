"""The vocabulary's column lookup of the built-in string features (``ColumnLookup``):
it remembers the rows of known words as calls meet them, which must never change the
columns a call gets."""
import copy

import numpy as np

from structsvm.structures import SequenceFeatures
from structsvm.structures.sequence._observations import TokenFeaturizer

TRAIN = [["The", "old", "man", "the", "boats", "."], ["Dogs", "run", "fast", "."],
         ["A", "well-known", "man", "ran", "2", "miles", "."]]
TAGS = [["D", "J", "N", "D", "N", "."], ["N", "V", "R", "."],
        ["D", "J", "N", "V", "C", "N", "."]]
BATCHES = [[["the", "man", "runs", "."]],                       # known and new words
           [["Unseen", "words", "only"], ["boats", "ran"]],     # more of both
           [["The", "old", "man", "the", "boats", "."]] + TRAIN]  # known ones again


def _rows(fm, sents):
    X = fm.encode_inputs(sents).X
    return [np.asarray(a) for a in (X.indptr, X.indices, X.data)]


def test_remembered_rows_give_the_columns_of_a_fresh_lookup():
    fm = SequenceFeatures().fit(TRAIN, TAGS)
    pristine = copy.deepcopy(fm)
    for batch in BATCHES:
        fresh = copy.deepcopy(pristine)  # nothing remembered yet
        for a, b in zip(_rows(fm, batch), _rows(fresh, batch)):
            np.testing.assert_array_equal(a, b)


def test_known_word_columns_are_the_vocabulary_strings():
    """The current token's whole-word and lower-case columns of a known word are the
    vocabulary's ``+0|w=`` and ``+0|l=`` strings (hand-written names)."""
    fm = SequenceFeatures().fit(TRAIN, TAGS)
    vocab = next(v.vocabulary for v in vars(fm).values()
                 if isinstance(v, TokenFeaturizer))
    for _ in range(2):  # the second call reads the remembered rows
        indptr, indices, _ = _rows(fm, [["man", "The"]])
        cols = set(indices[indptr[0]:indptr[1]])
        assert {vocab["+0|w=man"], vocab["+0|l=man"]} <= cols
        cols = set(indices[indptr[1]:indptr[2]])
        assert {vocab["+0|w=The"], vocab["+0|l=the"]} <= cols
