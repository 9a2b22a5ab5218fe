"""Inputs that cost far more than their size, or that broke arithmetic or recursion:
each is refused with a clear error before the cost is paid, or now costs what it
holds. Memory is measured as in test_hostile_inputs.py (a child forked after the
imports)."""
import sys
import threading
import warnings

import numpy as np
import pytest
from nltk import Tree
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm import limits
from structsvm.corpora import read_svm_hmm, write_svm_hmm
from structsvm.corpora.svmlight import read_svm_light
from structsvm.estimator import NonFiniteError
from structsvm.learners._parallel import worker_count
from structsvm.protocols import LearnerBase, LearnerResult
from structsvm.structures import AlignmentFeatures, GrammarFeatures
from structsvm.structures.grammar._trees import binarize, clean_tree, unbinarize
from structsvm.structures.grammar.metrics import bracket_scores
from test_hostile_inputs import SLACK, measured  # noqa: F401 (a fixture)


# ------------------------------------------------------------------ labels
def test_svm_light_labels_beyond_2_53_stay_apart_or_are_refused(tmp_path):
    """2^62 and 2^62 + 1 read as one float: the second is refused with its line
    rather than joining the first's class (the model reported 100 % accuracy)."""
    path = tmp_path / "big.dat"
    path.write_text(f"{2 ** 62} 1:1\n{2 ** 62 + 1} 2:1\n")
    with pytest.raises(ValueError, match=r"big.dat, line 2: target '4611686018427387905' "
                                         r"is beyond 2\^53, where a float cannot hold it "
                                         r"exactly \(it would read as 4611686018427387904"):
        read_svm_light(path)
    path.write_text(f"{2 ** 62} 1:1\n3 2:1\n1e18 1:2\n")
    _, y, _ = read_svm_light(path)
    assert [int(v) for v in y] == [2 ** 62, 3, 10 ** 18]  # targets held exactly pass


def test_svm_hmm_tag_2_62_round_trips(tmp_path):
    path = tmp_path / "t.hmm"
    write_svm_hmm(path, [np.eye(2)], [[2 ** 62, 2 ** 62 + 1]])
    assert read_svm_hmm(path)[1] == [[2 ** 62, 2 ** 62 + 1]]


# ------------------------------------------------------------------ n_jobs
@pytest.mark.parametrize("bad", [0, 1.5, True, "4"])
def test_n_jobs_is_validated(bad):
    X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    with pytest.raises(ValueError, match=f"n_jobs must be None or a non-zero integer "
                                         f"\\(-1: every core\\), got {bad!r}"):
        structsvm.fit(X, ["a", "b"], n_jobs=bad)


def test_n_jobs_100000_starts_no_more_threads_than_cores_and_work():
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count()
    assert worker_count(100_000) <= max(cores, 1)
    assert worker_count(100_000, n_tasks=3) <= 3 and worker_count(-1, n_tasks=0) == 1
    rng = np.random.default_rng(0)
    X = [[f"w{int(v)}" for v in rng.integers(0, 30, size=5)] for _ in range(300)]
    Y = [[w[1] for w in x] for x in X]

    before = threading.active_count()

    from structsvm.structures import SequenceFeatures
    from structsvm.learners import Perceptron

    model = structsvm.StructuredSVM(feature_map=SequenceFeatures(features="word"),
                                    learner=Perceptron(), max_iter=2, n_jobs=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, Y)
    assert model.score(X, Y) > 0.9
    assert threading.active_count() <= before + max(cores, 1) + 2


# ------------------------------------------------------------------ recursion
def test_a_node_with_1200_children_is_binarised_and_back():
    kids = " ".join(f"(NN w{i})" for i in range(1200))
    wide = Tree.fromstring(f"(S (NP {kids}) (VP (VB go)))")
    small = Tree.fromstring("(S (NP (DT a) (NN b)) (VP (VB go)))")
    nodes = binarize(clean_tree(wide), markov=1)
    assert len(nodes) == 2 * 1201 - 1
    assert unbinarize(nodes, wide.leaves()) == wide
    fm = GrammarFeatures(markov=1).fit([wide.leaves(), small.leaves()], [wide, small])
    assert fm.decode_outputs(fm.encode_outputs([wide]))[0] == wide
    assert bracket_scores([wide], [wide]).f1 == 1.0


def test_trees_deeper_than_the_recursion_limit_are_walked_without_recursion():
    depth = 5 * sys.getrecursionlimit()
    t = Tree("NN", ["w0"])
    for i in range(1, depth):  # right-branching: (S (NN wi) (S ...))
        t = Tree("S", [Tree("NN", [f"w{i}"]), t])
    words = [f"w{i}" for i in range(depth - 1, -1, -1)]
    c = clean_tree(t)
    nodes = binarize(c)
    assert len(nodes) == 2 * depth - 1
    back = unbinarize(nodes, words)
    assert bracket_scores([t], [back]).f1 == 1.0


# ------------------------------------------------------------------ empty inputs
def test_learn_svmstruct_c_on_a_file_without_examples(tmp_path, capsys):
    from structsvm.cli import main

    empty = tmp_path / "empty.dat"
    empty.write_text("# only a comment\n\n")
    assert main(["learn", "--task", "multiclass", "--svmstruct-c", "1", str(empty),
                 str(tmp_path / "m.npz")]) == 2
    assert capsys.readouterr().err == f"error: {empty} holds no examples\n"
    assert not (tmp_path / "m.npz").exists()


# ------------------------------------------------------------------ non-finite arithmetic
def test_features_whose_squares_overflow_are_refused_before_training(tmp_path, capsys):
    X = [np.array([1e300, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1e300])]
    with pytest.raises(ValueError, match=r"Sample 0: ‖Φ\(x, y\)‖² overflows float64 \(its "
                                         r"largest entry is 1e\+300\), so no learner can "
                                         r"train on it; scale the features"):
        structsvm.fit(X, ["a", "b", "a"])
    from structsvm.cli import main

    train = tmp_path / "huge.dat"
    train.write_text("1 1:1e300\n2 2:1\n1 1:1 2:1e300\n")
    assert main(["learn", "--task", "multiclass", str(train),
                 str(tmp_path / "m.npz")]) == 2
    assert "overflows float64" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


class _Diverging(LearnerBase):
    """A learner whose third round reports a NaN objective (as overflowing
    arithmetic would)."""

    name = "diverging"

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None):
        w = np.array(w0, dtype=float)
        for r in range(1, 4):
            objective = 1.0 / r if r < 3 else float("nan")
            callback(dict(round=r, w=w, objective=objective, time=0.0))
        return LearnerResult(w=w, objective=0.0, objective_curve=[0.0], n_iter=3,
                             duality_gap=0.0, converged=True, extra={})


def test_a_non_finite_objective_stops_training_and_fits_nothing(tmp_path):
    X = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
    model = structsvm.StructuredSVM(learner=_Diverging())
    with pytest.raises(NonFiniteError, match=r"training stopped in round 3: the primal "
                                             r"objective is nan; the training data's joint "
                                             r"features are moderate .*No model was "
                                             r"fitted"):
        model.fit(X, ["a", "b"])
    assert "coef_" not in vars(model)
    assert isinstance(NonFiniteError(1, float("nan")), ValueError)


# ------------------------------------------------------------------ decoders' budgets
@pytest.fixture(scope="module")
def grammar_model():
    trees = [Tree.fromstring(t) for t in (
        "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
        "(S (NP (DT a) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it)))))")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return structsvm.fit([t.leaves() for t in trees], trees,
                             feature_map=GrammarFeatures(), max_iter=5)


def test_a_1500_word_sentence_passes_its_chart_through_the_budget(grammar_model,
                                                                  monkeypatch):
    """645 MB for one sentence ignored STRUCTSVM_MAX_MEMORY: now its spans and chart
    are checked at encoding, the message naming the sample and the size."""
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "64M")
    X = [["the", "dog", "barks"], ["the"] * 1500]
    with pytest.raises(limits.MemoryLimitError,
                       match=r"the spans of 2 sentences \(1124253 spans of ≥ 2 words; the "
                             r"longest, sample 1, has 1500 words: \d+ bytes a span\) need "
                             r"\d+ bytes \([\d.]+ MiB\), above the memory limit of 64 MiB"):
        grammar_model.predict(X)
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1G")
    S = grammar_model.feature_map_.grammar_.n_symbols
    with pytest.raises(limits.MemoryLimitError,
                       match=rf"Sample 1: the CKY chart of its 1500 words \(1501² cells x "
                             rf"{S} symbols\) needs \d+ bytes"):
        monkeypatch.setattr(limits, "memory_limit", lambda: 20 * 1501 ** 2 * S - 1)
        grammar_model.feature_map_.encode_inputs([["the"] * 3, ["the"] * 1500])


def test_a_70000_word_sentence_is_refused_by_name_on_any_machine(grammar_model):
    with pytest.raises(limits.MemoryLimitError, match=r"sample 1, has 70000 words"):
        grammar_model.predict([["the"], ["the"] * 70_000])


def test_cky_itself_checks_its_chart(monkeypatch):
    from structsvm.structures.grammar._encoding import Grammar, GrammarPotentials
    from structsvm.structures.grammar.cky import cky

    g = Grammar(3, [0, 1], [2], [[2, 0, 1], [2, 2, 2], [2, 1, 0]], [False, False, True])
    n = 400
    p = GrammarPotentials(np.zeros((n, 2)), [0, n], np.zeros((n * (n - 1) // 2, 1)),
                          [0, n * (n - 1) // 2], np.zeros(3), np.zeros(3), g)
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "4M")
    with pytest.raises(limits.MemoryLimitError, match=r"Sentence 0 of the batch: the CKY "
                                                      r"chart of its 400 words"):
        cky(p)


def test_a_20000_by_20000_alignment_pair_passes_its_trace_through_the_budget(
        monkeypatch):
    fm = AlignmentFeatures().fit([("ACD", "ACD")], [[(0, 0), (1, 1), (2, 2)]])
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "100M")
    pair = ("A" * 20_000, "C" * 20_000)
    with pytest.raises(limits.MemoryLimitError,
                       match=r"Sample 1: the alignment trace of its 20000 x 20000 "
                             r"positions \(20001 x 20001 cells of one byte\) needs "
                             r"401160057 bytes \(383 MiB\), above the memory limit of "
                             r"100 MiB"):
        fm.encode_inputs([("AC", "CA"), pair])
    with pytest.raises(limits.MemoryLimitError, match=r"Pair 0 of the batch: the "
                                                      r"alignment trace"):
        monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1G")
        batch = fm.batch_potentials(fm.encode_inputs([pair]), np.zeros(fm.n_features_))
        monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "100M")
        structsvm.structures.alignment.needleman_wunsch.needleman_wunsch(batch)


# ------------------------------------------------------------------ readers
def test_a_line_of_300000_features_is_read_in_proportion(tmp_path, measured):  # noqa: F811
    path = tmp_path / "long.dat"
    rng = np.random.default_rng(0)
    vals = rng.random(300_000)
    path.write_text("1 " + " ".join(f"{j}:{v:.6f}" for j, v in
                                     enumerate(vals, start=1)) + "\n2 1:1\n")
    size = path.stat().st_size
    (shape, nnz), grown, seconds = measured(f"""
        from structsvm.corpora.svmlight import read_svm_light
        X, y, _ = read_svm_light({str(path)!r})
        out = [list(X.shape), int(X.nnz)]
    """)
    assert shape == [2, 300_000] and nnz == 300_001
    assert grown < 6 * size + SLACK, (grown / size, seconds)  # was 26 x the file
