"""Output spaces that cannot be enumerated say so, up front.

Slack rescaling, losses that do not decompose and the exhaustive decoder enumerate
every output of an example. Chains have K^T outputs: these used to hang (issue 10);
they must now raise an EnumerationError naming the alternative, before any work.
"""
import signal

import numpy as np
import pytest

import structsvm
from structsvm.structures import (ChainPotentials,
    MulticlassFeatures,
    SequenceFeatures,
    TaxonomyFeatures)
from structsvm.structures import get_decoder
from structsvm.protocols import (MAX_ENUMERATED_OUTPUTS, EnumerationError,
                                 StructureMismatchError, check_enumerable)


@pytest.fixture
def deadline():
    """Fail (instead of hanging) when the test body runs longer than 30 s."""
    def _alarm(signum, frame):
        raise TimeoutError("did not return within 30 s: enumeration was not refused")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _tagged(n=8, T=14, K=6):
    X = [[f"w{(i * 7 + t) % 13}" for t in range(T)] for i in range(n)]
    Y = [["ABCDEFGH"[(i + t) % K] for t in range(T)] for i in range(n)]
    return X, Y


def _loss(a, b):
    return float(sum(u != v for u, v in zip(a, b)))


def test_slack_rescaling_on_chains_is_refused(deadline):
    X, Y = _tagged()
    with pytest.raises(EnumerationError, match=r"rescaling='slack' .* sample 0 has "
                                               r"\d+ outputs .*Use rescaling='margin'"):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), rescaling="slack")


@pytest.mark.parametrize("learner", ["one_slack", "n_slack", "pegasos", "frank_wolfe",
                                     "perceptron"])
def test_callable_loss_on_chains_is_refused(deadline, learner):
    X, Y = _tagged()
    with pytest.raises(EnumerationError, match="does not decompose.*Use a loss its "
                                               "potentials add \\(e.g. 'hamming'\\)"):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), loss=_loss, learner=learner)


def test_exhaustive_decoder_on_chains_is_refused_in_fit_and_predict(deadline):
    X, Y = _tagged()
    with pytest.raises(EnumerationError, match="decoder='exhaustive'.*Use "
                                               "decoder='viterbi'"):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder="exhaustive")
    # short training chains are small enough; a long test sentence is not
    Xs, Ys = _tagged(T=3, K=3)
    model = structsvm.fit(Xs, Ys, feature_map=SequenceFeatures(), decoder="exhaustive",
                          max_iter=3)
    with pytest.raises(EnumerationError, match="sample 0 has .* outputs.*'viterbi'"):
        model.predict([["w1"] * 40])


def test_exhaustive_on_rankings_names_sort(deadline):
    from structsvm.structures import RankingPotentials

    batch = RankingPotentials(np.arange(4.0), [0, 4])
    with pytest.raises(EnumerationError, match="cannot enumerate its outputs.*'sort'"):
        get_decoder("exhaustive")(batch)
    assert issubclass(EnumerationError, StructureMismatchError)


def _random_chain(rng, lengths, K):
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return ChainPotentials(rng.normal(size=(offsets[-1], K)), offsets,
                           rng.normal(size=(K, K)), rng.normal(size=K), rng.normal(size=K))


@pytest.mark.parametrize("seed", range(5))
def test_output_space_sizes_count_the_enumeration(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    lengths = rng.integers(0, 5, size=3)
    batch = _random_chain(rng, lengths, K)
    assert batch.output_space_sizes() == [sum(1 for _ in batch[i].enumerate())
                                          for i in range(len(batch))]
    fm = MulticlassFeatures().fit([np.ones(2)] * 3, ["a", "b", "c"])
    mc = fm.batch_potentials(fm.encode_inputs([np.ones(2)] * 2), rng.normal(size=6))
    assert mc.output_space_sizes() == [sum(1 for _ in mc[i].enumerate()) for i in range(2)]
    tx = TaxonomyFeatures()
    Yt = [("a", "x"), ("a", "y"), ("b", "z")]
    tx.fit([np.ones(2)] * 3, Yt)
    w = rng.normal(size=tx.n_features_)
    tb = tx.batch_potentials(tx.encode_inputs([np.ones(2)]), w)
    assert tb.output_space_sizes() == [sum(1 for _ in tb[0].enumerate())] == [3]


def test_the_limit_is_inclusive_and_exact_for_huge_spaces():
    rng = np.random.default_rng(0)
    batch = _random_chain(rng, [2, 3], 10)        # 100 and 1000 paths
    check_enumerable(batch, "x", "y", limit=1000)
    with pytest.raises(EnumerationError, match="sample 1 has 1000 outputs .*= 999"):
        check_enumerable(batch, "x", "y", limit=999)
    huge = _random_chain(rng, [400], 50)           # 50^400: no overflow, no float
    with pytest.raises(EnumerationError, match="about 10\\^679 outputs"):
        check_enumerable(huge, "x", "y")
    assert MAX_ENUMERATED_OUTPUTS == 100_000


def test_small_chains_still_enumerate_exactly():
    """Under the limit the exhaustive decoder and slack rescaling still work."""
    rng = np.random.default_rng(3)
    batch = _random_chain(rng, [4, 1, 5], 3)
    assert [list(p) for p in get_decoder("exhaustive")(batch)] == \
        [list(p) for p in get_decoder("viterbi")(batch)]
    X, Y = _tagged(n=6, T=4, K=2)
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(), rescaling="slack",
                          learner="n_slack", C=1.0, max_iter=50)
    assert model.score(X, Y) == 1.0


def test_limit_can_be_raised_and_plugins_must_declare_sizes(monkeypatch):
    import structsvm.protocols as protocols

    rng = np.random.default_rng(5)
    batch = _random_chain(rng, [9], 4)              # 4^9 = 262,144 paths
    with pytest.raises(EnumerationError, match="262144 outputs"):
        get_decoder("exhaustive")(batch)
    monkeypatch.setattr(protocols, "MAX_ENUMERATED_OUTPUTS", 300_000)
    check_enumerable(batch, "x", "y")

    class Opaque:
        structure, enumerable = "chain", True

    with pytest.raises(TypeError, match="Opaque sets enumerable = True but has no "
                                        "output_space_sizes"):
        check_enumerable(Opaque(), "x", "y")
