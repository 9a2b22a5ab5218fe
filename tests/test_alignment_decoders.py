"""Alignment decoders against exhaustive search: every alignment of short random pairs
scored by an independent reference (the match scores and gap runs written out here),
plain and loss-augmented, global and local, with and without context channels."""
import itertools

import numpy as np
import pytest

from structsvm.structures import AlignmentPotentials
from structsvm.structures import get_decoder
from structsvm.structures.alignment.needleman_wunsch import needleman_wunsch, smith_waterman
from structsvm.structures.alignment import AlignmentLoss


def all_alignments(n, m):
    for k in range(min(n, m) + 1):
        for I in itertools.combinations(range(n), k):
            for J in itertools.combinations(range(m), k):
                yield list(zip(I, J))


def runs(y, n, m):
    """(internal runs, end runs) as lists of run lengths, walked pair by pair."""
    internal, end = [], []
    points = [(-1, -1)] + list(y) + [(n, m)]
    for r in range(len(points) - 1):
        (i0, j0), (i1, j1) = points[r], points[r + 1]
        is_end = r == 0 or r == len(points) - 2
        for L in (i1 - i0 - 1, j1 - j0 - 1):
            if L > 0:
                (end if is_end else internal).append(L)
    return internal, end


def reference_score(S, gaps, y, local=False):
    go, ge, eo, ee = gaps
    n, m = S.shape
    internal, end = runs(y, n, m)
    score = sum(S[i, j] for i, j in y)
    score += sum(go + (L - 1) * ge for L in internal)
    if not local:
        score += sum(eo + (L - 1) * ee for L in end)
    return score


def random_pair(rng, context, Q=3):
    n, m = int(rng.integers(0, 6)), int(rng.integers(0, 6))
    C = 1 + 2 * context
    s = rng.integers(0, Q, size=(C, n))
    t = rng.integers(0, Q, size=(C, m))
    tables = rng.normal(size=(C, Q, Q))
    gaps = rng.normal(size=4)
    S = np.zeros((n, m))
    for c in range(C):
        for i in range(n):
            for j in range(m):
                S[i, j] += tables[c, s[c, i], t[c, j]]
    return s, t, tables, gaps, S


@pytest.mark.parametrize("context", [0, 1])
@pytest.mark.parametrize("local", [False, True])
def test_decoder_equals_enumeration(context, local):
    rng = np.random.default_rng(context + 10 * local)
    decode = smith_waterman if local else needleman_wunsch
    for _ in range(150):
        s, t, tables, gaps, S = random_pair(rng, context)
        if local:
            gaps[2:] = 0.0
        p = AlignmentPotentials(s, [0, s.shape[1]], t, [0, t.shape[1]], tables, gaps,
                                free_ends=local)
        y = decode(p)[0]
        n, m = S.shape
        best = max(reference_score(S, gaps, a, local) for a in all_alignments(n, m))
        got = reference_score(S, gaps, [tuple(r) for r in y.tolist()], local)
        assert got == pytest.approx(best, abs=1e-9)
        assert p.score(y) == pytest.approx(got, abs=1e-9)


@pytest.mark.parametrize("context", [0, 1])
@pytest.mark.parametrize("local", [False, True])
def test_loss_augmented_decoding_equals_enumeration(context, local):
    rng = np.random.default_rng(100 + context + 10 * local)
    decode = smith_waterman if local else needleman_wunsch
    loss = AlignmentLoss()
    for _ in range(150):
        s, t, tables, gaps, S = random_pair(rng, context)
        if local:
            gaps[2:] = 0.0
        n, m = S.shape
        cands = list(all_alignments(n, m))
        gold = cands[int(rng.integers(len(cands)))]
        p = AlignmentPotentials(s, [0, n], t, [0, m], tables, gaps, free_ends=local)
        gold_arr = np.array(gold, dtype=np.int64).reshape(-1, 2)
        aug = p.augment([gold_arr], loss)
        y = decode(aug)[0]

        def value(a):
            return reference_score(S, gaps, a, local) + loss(gold_arr, a)

        best = max(value(a) for a in cands)
        assert value([tuple(r) for r in y.tolist()]) == pytest.approx(best, abs=1e-9)
        assert aug.score(y) == pytest.approx(best, abs=1e-9)


def test_a_batch_decodes_as_its_pairs_one_by_one():
    rng = np.random.default_rng(7)
    pairs = [random_pair(rng, 1) for _ in range(30)]
    tables, gaps = pairs[0][2], pairs[0][3]
    s = np.concatenate([q[0] for q in pairs], axis=1)
    t = np.concatenate([q[1] for q in pairs], axis=1)
    s_off = np.concatenate([[0], np.cumsum([q[0].shape[1] for q in pairs])])
    t_off = np.concatenate([[0], np.cumsum([q[1].shape[1] for q in pairs])])
    batch = AlignmentPotentials(s, s_off, t, t_off, tables, gaps)
    together = needleman_wunsch(batch)
    for p, y in enumerate(together):
        np.testing.assert_array_equal(y, needleman_wunsch(batch[p])[0])
    assert get_decoder("needleman_wunsch").structure == "alignment"


def test_known_answer_by_hand():
    # s = ABA, t = AA; match +2, mismatch -1; gap open -3, extend -1.
    # Scores of the candidates, end-gap open eo and extend ee:
    #   {(0,0),(2,1)}: 2 + 2 - 3 (B against a gap)            = 1
    #   {(0,0),(1,1)}: 2 - 1 + eo (trailing A of s)            = 1 + eo
    #   {(0,0)}:       2 + (eo + ee) (BA of s) + eo (A of t)    = 2 + 2 eo + ee
    #   {}:            (eo + 2 ee) + (eo + ee)                  = 2 eo + 3 ee
    S = np.array([[2., -1.], [-1., 2.]])
    ABA, AA = [[0, 1, 0]], [[0, 0]]
    # eo = -2, ee = -1: 1, -1, -3, -7: the internal gap wins
    p = AlignmentPotentials(ABA, [0, 3], AA, [0, 2], S[None], gaps=[-3., -1., -2., -1.])
    assert needleman_wunsch(p)[0].tolist() == [[0, 0], [2, 1]]
    assert p.score(np.array([[0, 0], [2, 1]])) == pytest.approx(1.0)
    assert p.score(np.array([[0, 0], [1, 1]])) == pytest.approx(-1.0)
    assert p.score(np.zeros((0, 2), dtype=int)) == pytest.approx(-7.0)
    # free end gaps: one pair A-A scores 2; four single pairs tie and the first cell
    # of the table, (0, 0), is kept; local alignment finds the same
    p = AlignmentPotentials(ABA, [0, 3], AA, [0, 2], S[None], gaps=[-3., -1., 0., 0.],
                            free_ends=True)
    assert needleman_wunsch(p)[0].tolist() == [[0, 0]]
    assert smith_waterman(p)[0].tolist() == [[0, 0]]
    assert p.score(np.array([[0, 0]])) == pytest.approx(2.0)


def test_decoders_refuse_bad_input():
    S = np.zeros((1, 2, 2))
    p = AlignmentPotentials([[0, 1]], [0, 2], [[0]], [0, 1], S, [0., 0., -1., 0.])
    with pytest.raises(ValueError, match="end gaps"):
        smith_waterman(p)
    with pytest.raises(ValueError, match="exclude"):
        needleman_wunsch(p, exclude=[np.zeros((0, 2))])
    bad = AlignmentPotentials([[0, 2]], [0, 2], [[0]], [0, 1], S, [0., 0., 0., 0.])
    with pytest.raises(ValueError, match="s_codes"):
        needleman_wunsch(bad)
    nan = AlignmentPotentials([[0, 1]], [0, 2], [[0]], [0, 1], S * np.nan, [0.] * 4)
    with pytest.raises(ValueError, match="NaN"):
        needleman_wunsch(nan)
    with pytest.raises(TypeError, match="alignment potentials"):
        needleman_wunsch(object())
