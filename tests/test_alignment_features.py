"""AlignmentFeatures: the structure contract, Φ against the potentials, decoding over
the map against enumeration of w·Φ, input checks, model files, n_jobs, learning."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.structures import AlignmentFeatures
from structsvm.structures import get_decoder
from structsvm.structures.alignment import AlignmentLoss
from structsvm.structures.alignment import alignment_scores
from structsvm.testing import check_structure

from alignment_pairs import evolved_pairs

VARIANTS = [dict(), dict(context=1), dict(symmetric=False),
            dict(end_gaps="internal"), dict(end_gaps="free", context=2)]


def _ids(kw):
    return ",".join(f"{k}={v}" for k, v in kw.items()) or "default"


def random_alignment(rng, n, m):
    k = int(rng.integers(0, min(n, m) + 1))
    i = np.sort(rng.choice(n, size=k, replace=False))
    j = np.sort(rng.choice(m, size=k, replace=False))
    return np.column_stack([i, j]).astype(np.int64).reshape(-1, 2)


@pytest.mark.parametrize("kw", VARIANTS, ids=_ids)
def test_check_structure(kw):
    X, Y = evolved_pairs(4, random_state=1, length=(3, 4))
    check_structure(AlignmentFeatures(**kw), X, Y, n_weights=2)


@pytest.mark.parametrize("kw", VARIANTS, ids=_ids)
def test_w_phi_equals_potentials_score(kw):
    rng = np.random.default_rng(2)
    X, Y = evolved_pairs(20, random_state=2, length=(5, 25))
    fm = AlignmentFeatures(**kw).fit(X, Y)
    Xe = fm.encode_inputs(X)
    for _ in range(3):
        w = rng.normal(size=fm.n_features_)
        batch = fm.batch_potentials(Xe, w)
        Yr = [random_alignment(rng, len(s), len(t)) for s, t in X]
        Phi = fm.joint_features(Xe, Yr)
        np.testing.assert_allclose(Phi @ w, batch.score(Yr), rtol=1e-10, atol=1e-10)
        for p in (0, 7):
            assert fm.joint_feature(X[p], Yr[p]) @ w == \
                pytest.approx(fm.potentials(X[p], w).score(Yr[p]), abs=1e-10)


@pytest.mark.parametrize("kw", VARIANTS, ids=_ids)
def test_map_decoding_equals_enumeration_of_w_phi(kw):
    """Plain and loss-augmented decoding over the map's own potentials against the
    best w·Φ(x, y) (+ Δ) over every alignment, Φ built row by row."""
    rng = np.random.default_rng(3)
    X, Y = evolved_pairs(12, random_state=3, length=(2, 5))
    fm = AlignmentFeatures(**kw).fit(X, Y)
    decoders = ["needleman_wunsch"] + (["smith_waterman"] if kw.get("end_gaps") == "free"
                                       else [])
    loss = AlignmentLoss()
    for name in decoders:
        decode = get_decoder(name)
        for x, y in zip(X, Y):
            w = rng.normal(size=fm.n_features_)
            pot = fm.potentials(x, w)
            cands = list(pot.enumerate())
            assert len(cands) == pot.output_space_sizes()[0]
            Xe = fm.encode_inputs([x])  # one row Φ(x, c) per candidate c
            scores = fm.joint_features(Xe, cands, idx=np.zeros(len(cands), int)) @ w
            got = decode(pot)[0]
            assert fm.joint_feature(x, got) @ w == pytest.approx(scores.max(), abs=1e-9)
            aug = scores + np.array([loss(y, c) for c in cands])
            got = decode(pot.augment([y], loss))[0]
            assert fm.joint_feature(x, got) @ w + loss(y, got) == \
                pytest.approx(aug.max(), abs=1e-9)


def test_unknown_symbols_and_lists_of_symbols():
    X = [(["ala", "gly", "ser"], ["ala", "ser"])]
    fm = AlignmentFeatures().fit(X, [[(0, 0), (2, 1)]])
    assert fm.alphabet_.tolist() == ["ala", "gly", "ser"]
    phi = fm.joint_feature((["ala", "trp"], ["trp"]), [(1, 0)])
    assert phi[fm.feature_index("sub:<UNK>-<UNK>")].tolist() == [1.0]
    assert phi[fm.feature_index("end_gap:open")].tolist() == [1.0]
    fm = AlignmentFeatures(context=1).fit([("AB", "AB")], [[(0, 0), (1, 1)]])
    phi = fm.joint_feature(("AB", "AB"), [(0, 0), (1, 1)])
    assert phi[fm.feature_index("ctx1:<END>-<END>")].tolist() == [2.0]
    assert phi[fm.feature_index("ctx1:A-A")].tolist() == [1.0]


@pytest.mark.parametrize("y, match", [
    ([(0, 0), (0, 1)], "increase strictly"),
    ([(1, 1), (0, 2)], "increase strictly"),
    ([(0, 0), (3, 1)], "out of range"),
    ([(0, -1)], "out of range"),
    ([[0, 1, 2]], "shape"),
    ([(0.5, 1)], "integers"), ([(True, False)], "integers"),
])
def test_bad_alignments_are_refused_naming_the_sample(y, match):
    X = [("ACD", "ACD"), ("AC", "ACD")]
    with pytest.raises((ValueError, TypeError), match=f"Sample 1: .*{match}"):
        AlignmentFeatures().fit(X, [[(0, 0)], y])


@pytest.mark.parametrize("x, match", [
    ("ACD", "pair"), (("A", "C", "D"), "pair"), ((3, "AC"), "sequence s"),
    ((np.zeros((2, 2)), "AC"), "1-D"), ((["A", ["B"]], "AC"), "hashable"),
])
def test_bad_inputs_are_refused_naming_the_sample(x, match):
    with pytest.raises((ValueError, TypeError), match=f"Sample 1: .*{match}"):
        AlignmentFeatures().fit([("A", "A"), x], [[(0, 0)], []])


def test_bad_parameters():
    X, Y = [("A", "A")], [[(0, 0)]]
    for kw, match in ((dict(context=-1), "context"), (dict(symmetric="yes"), "symmetric"),
                      (dict(end_gaps="both"), "end_gaps")):
        with pytest.raises(ValueError, match=match):
            AlignmentFeatures(**kw).fit(X, Y)


def _fit(X, Y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return structsvm.fit(X, Y, feature_map=AlignmentFeatures(**kw.pop("fm", {})), **kw)


def test_local_decoding_needs_free_end_gaps():
    X, Y = evolved_pairs(20, random_state=9, length=(8, 12))
    with pytest.raises(ValueError, match="end_gaps='free'"):
        _fit(X, Y, decoder="smith_waterman", max_iter=2)
    local = _fit(X, Y, fm=dict(end_gaps="free"), decoder="smith_waterman", max_iter=5)
    fm, w = local.feature_map_, local.coef_
    batch = fm.batch_potentials(fm.encode_inputs(X), w)
    found = get_decoder("smith_waterman")(batch)
    for a, b in zip(local.predict(X), found):
        np.testing.assert_array_equal(a, b)
    # free end gaps: the local and the global program find alignments of equal score
    np.testing.assert_allclose(batch.score(found),
                               batch.score(get_decoder("needleman_wunsch")(batch)))


def test_save_load_round_trip_predicts_the_same(tmp_path):
    X, Y = evolved_pairs(40, random_state=4, length=(10, 20))
    X_new, _ = evolved_pairs(10, random_state=5, length=(10, 20), alphabet="ACDEFGHIKLMN")
    model = _fit(X, Y, fm=dict(context=1, end_gaps="internal"), max_iter=10)
    path = model.save(tmp_path / "model.npz")
    back = structsvm.load(path)
    np.testing.assert_array_equal(back.coef_, model.coef_)
    assert back.feature_map_.get_params() == model.feature_map_.get_params()
    for data in (X, X_new):  # X_new has symbols never seen in training
        for a, b in zip(model.predict(data), back.predict(data)):
            np.testing.assert_array_equal(a, b)


def test_two_jobs_fit_the_same_model_as_one(monkeypatch):
    X, Y = evolved_pairs(64, random_state=6, length=(10, 20))
    monkeypatch.setattr("structsvm.learners.problem.MIN_CHUNK", 8)
    monkeypatch.setattr("structsvm.learners.problem.MIN_REMOTE", 0)
    params = dict(C=1.0, max_iter=8, random_state=0)
    one = _fit(X, Y, n_jobs=1, **params)
    two = _fit(X, Y, n_jobs=2, **params)
    np.testing.assert_allclose(two.coef_, one.coef_, rtol=1e-9, atol=1e-12)
    assert two.n_iter_ == one.n_iter_
    for a, b in zip(one.predict(X), two.predict(X)):
        np.testing.assert_array_equal(a, b)


def test_fit_learns_better_than_a_fixed_scoring():
    """On pairs whose substitutions stay mostly within symbol groups, a learnt model
    recovers more gold pairs of held-out pairs than identity scoring (+1 match,
    −1 mismatch, gaps −2 / −0.5) and than an untrained w = 0."""
    X, Y = evolved_pairs(150, random_state=7, length=(20, 40), p_sub=0.5)
    Xt, Yt = evolved_pairs(100, random_state=8, length=(20, 40), p_sub=0.5)
    model = _fit(X, Y)
    learnt = alignment_scores(Yt, model.predict(Xt))
    fm = model.feature_map_
    w = np.zeros(fm.n_features_)
    for k, a in enumerate(fm.alphabet_):
        for b in fm.alphabet_[k:]:  # symmetric pairs are named in alphabet order
            w[fm.feature_index(f"sub:{a}-{b}")] = 1.0 if a == b else -1.0
    w[fm.feature_index(["gap:open", "end_gap:open"])] = -2.0
    w[fm.feature_index(["gap:extend", "end_gap:extend"])] = -0.5
    decode = get_decoder("needleman_wunsch")
    fixed = alignment_scores(Yt, decode(fm.batch_potentials(fm.encode_inputs(Xt), w)))
    assert learnt["Q"] > fixed["Q"] + 0.03, (learnt, fixed)
    assert learnt["Q"] > 0.75 and learnt["precision"] > 0.65, learnt
    assert model.score(Xt, Yt) == pytest.approx(1 - np.mean(
        [AlignmentLoss()(a, b) for a, b in zip(Yt, model.predict(Xt))]), abs=0.02)
