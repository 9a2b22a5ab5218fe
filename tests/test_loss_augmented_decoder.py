"""A decoder that decodes loss-augmented itself, for a loss that does not decompose
over the parts of its potentials: the oracle asks it first, then the potentials'
augment, then enumeration."""
import numpy as np
import pytest

import structsvm
from structsvm.learners.problem import Problem
from structsvm.protocols import Decoder
from structsvm.registry import register, unregister
from structsvm.structures import BaseLoss, SequenceFeatures, get_decoder


class SequenceZeroOne(BaseLoss):
    """1 when any token differs: does not decompose over a chain's tokens."""

    name = "sequence_zero_one"
    decomposition = "whole"

    def __call__(self, y_true, y_pred):
        return float(not np.array_equal(y_true, y_pred))

    def max_loss(self, y_true):
        return 1.0


CALLS = []


def zero_one_augmented(batch, Y, loss):
    """argmax_y Δ01(y_i, y) + score_i(y): y_i itself, or the best other path (+1)."""
    if not isinstance(loss, SequenceZeroOne):
        return None
    CALLS.append(len(Y))
    viterbi = get_decoder("viterbi")
    other = viterbi(batch, exclude=list(Y))
    s_true = np.asarray(batch.score(list(Y)), dtype=float)
    s_other = np.asarray(batch.score(other), dtype=float)
    return [o if so + 1.0 > st else y for o, so, st, y in zip(other, s_other, s_true, Y)]


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        T = int(rng.integers(2, 5))
        y = rng.integers(0, 3, size=T)
        X.append([f"w{int(s)}" if rng.random() < 0.7 else f"n{int(rng.integers(4))}"
                  for s in y])
        Y.append([str(int(s)) for s in y])
    return X, Y


def _problem(decoder, loss):
    X, Y = _data()
    fm = SequenceFeatures().fit(X, Y)
    return Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y, X), feature_map=fm,
                   decoder=decoder, loss=loss, C=1.0)


def test_the_oracle_asks_the_decoder_first_and_agrees_with_enumeration():
    own = Decoder("viterbi_zero_one", "sequence", get_decoder("viterbi").func,
                  augmented=zero_one_augmented)
    mine = _problem(own, SequenceZeroOne())
    enumerated = _problem(get_decoder("viterbi"), SequenceZeroOne())
    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.normal(size=mine.n_features)
        CALLS.clear()
        a, b = mine.oracle(w), enumerated.oracle(w)
        assert CALLS, "the decoder's own loss-augmented decoding was not used"
        np.testing.assert_allclose(a.slack, b.slack, atol=1e-12)
        np.testing.assert_allclose(a.loss, b.loss)
        assert a.slack.sum() > 0


def test_a_decoder_that_declines_falls_back():
    def declines(batch, Y, loss):
        return NotImplemented

    own = Decoder("viterbi_declines", "sequence", get_decoder("viterbi").func,
                  augmented=declines)
    w = np.random.default_rng(2).normal(size=_problem(own, SequenceZeroOne()).n_features)
    for loss in (SequenceZeroOne(), structsvm.structures.get_loss("hamming")):
        a = _problem(own, loss).oracle(w)
        b = _problem(get_decoder("viterbi"), loss).oracle(w)
        np.testing.assert_allclose(a.slack, b.slack, atol=1e-12)


def test_a_registered_decoder_trains_without_enumeration(monkeypatch):
    register("decoder", "viterbi_zero_one",
             Decoder("viterbi_zero_one", "sequence", get_decoder("viterbi").func,
                     augmented=zero_one_augmented))
    try:
        # enumeration is refused outright: only the decoder's own decoding can run
        monkeypatch.setattr(structsvm.protocols, "MAX_ENUMERATED_OUTPUTS", 1)
        X, Y = _data()
        model = structsvm.fit(X, Y, feature_map=SequenceFeatures(),
                              decoder="viterbi_zero_one", loss=SequenceZeroOne(),
                              learner="one_slack", C=1.0, tol=1e-3)
        assert model.converged_ and model.score(X, Y) > 0.5
    finally:
        unregister("decoder", "viterbi_zero_one")
    with pytest.raises(structsvm.protocols.EnumerationError):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), loss=SequenceZeroOne(),
                      learner="one_slack")
