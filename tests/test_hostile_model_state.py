"""Model files and checkpoints rewritten as an attacker would: real files whose index
arrays are moved out of range, written back with fresh checksums
(:func:`structsvm.io.write_model_file`). Loading (or resuming) must end in a
ModelFileError naming the file and the array, before any compiled loop runs: never a
crash, never a write outside an array."""
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm import io as sio
from structsvm.io import ModelFileError
from structsvm.learners import DualCD, MulticlassDualCD
from structure_examples import MultiLabel, multilabel_data
from test_save_load_all_maps import MAPS

RESERVED = ("format", "version", "sha256")


def _rewrite(src, dst, change):
    """Copy the model file ``src`` to ``dst`` with ``change(header, arrays)`` applied,
    with fresh checksums (what anyone can do with structsvm.io.write_model_file)."""
    meta, arrays = sio.read_model_file(src)
    header = {k: v for k, v in meta.items() if k not in RESERVED}
    change(header, arrays)
    sio.write_model_file(dst, header, arrays)
    return dst


def _get(header, arrays, key, where="feature_map_state"):
    v = header[where][key]
    if isinstance(v, dict) and "__array__" in v:
        return arrays[v["__array__"]]
    if isinstance(v, dict) and "__objarray__" in v:
        return np.array(v["__objarray__"], dtype=object)
    return v


def _set(header, arrays, key, value, where="feature_map_state"):
    """Replace a fitted-state value: an array keeps its name, anything else goes
    into the header as a JSON value (object arrays as the codec writes them)."""
    old = header[where][key]
    if isinstance(old, dict) and "__array__" in old and isinstance(value, np.ndarray) \
            and value.dtype.kind in "iufb":
        arrays[old["__array__"]] = value
    elif isinstance(value, np.ndarray):
        header[where][key] = {"__objarray__": value.tolist(), "shape": list(value.shape),
                              "order": "C"}
    else:
        header[where][key] = value


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """name -> (path of a model file fitted on that map's example data, test inputs)."""
    out = {}
    folder = tmp_path_factory.mktemp("saved")
    for name in ("multiclass", "multiclass-attributes", "taxonomy", "sequence-tokens",
                 "sequence-matrices", "ranking", "grammar-words", "graph"):
        fm, decoder, X, Y, X_new = MAPS[name](np.random.default_rng(0))
        with _quiet():
            model = structsvm.fit(X, Y, feature_map=fm, decoder=decoder, C=1.0,
                                  max_iter=20)
        path = folder / f"{name}.npz"
        model.save(path)
        out[name] = (path, X_new)
    X, Y = multilabel_data(n=20)
    model = structsvm.fit(X, Y, feature_map=MultiLabel(), max_iter=10)
    model.save(folder / "user.npz")
    out["user"] = (folder / "user.npz", X[:3])
    return out


class _quiet:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", ConvergenceWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


def _grammar_symbols(header, arrays):
    return len(_get(header, arrays, "symbols_"))


# (map, key, change(header, arrays) -> None, the message's words after the key)
CASES = [
    # the parse that crashed with SIGSEGV: a rule's parent symbol past the chart
    ("grammar-words", "rules", lambda h, a: _rules(h, a, 0, _grammar_symbols(h, a) + 50),
     r"feature_map_\.rules holds \d+ at position \(\d+, 0\); the symbols of a rule "
     r"must lie in \[0, \d+\)"),
    ("grammar-words", "rules", lambda h, a: _rules(h, a, 0, _grammar_symbols(h, a)),
     r"feature_map_\.rules holds \d+ at position"),
    ("grammar-words", "rules", lambda h, a: _rules(h, a, 2, -1),
     r"feature_map_\.rules holds -1 at position \(\d+, 2\)"),
    ("grammar-words", "leaf_sym",
     lambda h, a: _shift(h, a, "leaf_sym", _grammar_symbols(h, a)),
     r"feature_map_\.leaf_sym holds \d+ at position \d+; symbols must lie in"),
    ("grammar-words", "phrase_sym", lambda h, a: _shift(h, a, "phrase_sym", -100),
     r"feature_map_\.phrase_sym holds -\d+ at position"),
    ("grammar-words", "root_ok",
     lambda h, a: _set(h, a, "root_ok", np.ones(2, dtype=np.int8)),
     r"feature_map_\.root_ok has shape \(2,\)"),
    ("grammar-words", "symbols_",
     lambda h, a: _set(h, a, "symbols_", np.array(["S", "S", "NP"], dtype=object)),
     r"feature_map_\.symbols_ repeats the label 'S'"),
    ("taxonomy", "parent_", lambda h, a: _set(h, a, "parent_", np.array([-1, -1, 7, 0,
                                                                          1, 1])),
     r"feature_map_\.parent_ holds 7 at position 2; a node's parent must be -1"),
    ("taxonomy", "parent_", lambda h, a: _set(h, a, "parent_", np.array([-1, -5, 0, 0,
                                                                          1, 1])),
     r"feature_map_\.parent_ holds -5 at position 1"),
    ("taxonomy", "node_names_", lambda h, a: _set(h, a, "node_names_", np.array(
        ["animal", "plant", "cat", "cat", "oak", "fern"], dtype=object)),
     r"feature_map_\.node_names_ do not describe a tree \(tree node 3 repeats the name "
     r"'cat'"),
    ("taxonomy", "n_features_", lambda h, a: _set(h, a, "n_features_", 999),
     r"feature_map_\.n_features_ is 999, but 4 input features x 6 nodes give 24"),
    ("sequence-tokens", "vocabulary_",
     lambda h, a: _set(h, a, "vocabulary_", _get(h, a, "vocabulary_")[:3]),
     r"feature_map_\.n_input_features_ is \d+, but the observation columns .* number 3"),
    ("sequence-matrices", "n_features_", lambda h, a: _set(h, a, "n_features_", 13),
     r"feature_map_\.n_features_ is 13, but 3 observation features and 2 tags"),
    ("sequence-matrices", "tags_",
     lambda h, a: _set(h, a, "tags_", np.array(["A", "A"], dtype=object)),
     r"feature_map_\.tags_ repeats the label 'A'"),
    ("multiclass", "n_input_features_",
     lambda h, a: _set(h, a, "n_input_features_", 4),
     r"feature_map_\.n_features_ is 15, but 4 input features x 3 classes give 12"),
    ("multiclass-attributes", "lambda_",
     lambda h, a: _set(h, a, "lambda_", np.full((4, 2), np.nan)),
     r"feature_map_\.lambda_ holds NaN or infinite values"),
    ("ranking", "n_features_", lambda h, a: _set(h, a, "n_features_", -3),
     r"feature_map_\.n_features_ is -3; it must be >= 0"),
    ("graph", "edge_feature_widths_",
     lambda h, a: _set(h, a, "edge_feature_widths_", np.array([1, -2])),
     r"feature_map_\.edge_feature_widths_ holds -2 at position 1"),
    ("graph", "edge_has_features_",
     lambda h, a: _set(h, a, "edge_has_features_", np.array([1, 0, 1])),
     r"feature_map_\.edge_has_features_ has shape \(3,\); expected 2"),
    ("user", "n_features_", lambda h, a: _set(h, a, "n_features_", "many"),
     r"feature_map_\.n_features_ is 'many', not an integer"),
]


def _rules(header, arrays, column, value):
    rules = np.array(_get(header, arrays, "rules"))
    rules[len(rules) // 2, column] = value
    _set(header, arrays, "rules", rules)


def _shift(header, arrays, key, value):
    arr = np.array(_get(header, arrays, key))
    arr[-1] = value
    _set(header, arrays, key, arr)


@pytest.mark.parametrize("name, key, change, match", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_a_rewritten_index_array_is_a_model_file_error(saved, tmp_path, name, key,
                                                       change, match):
    src, X_new = saved[name]
    assert structsvm.load(src, trusted=[MultiLabel]).predict(X_new) is not None
    bad = _rewrite(src, tmp_path / "crafted.npz", change)
    with pytest.raises(ModelFileError, match=f"crafted.npz: {match}"):
        structsvm.load(bad, trusted=[MultiLabel])


def test_the_grammar_that_crashed_the_process_is_refused_in_a_child(saved, tmp_path):
    """The file of the report: rule parents far outside the chart. The child process
    loads and predicts; it must exit normally with the ModelFileError."""
    src, X_new = saved["grammar-words"]

    def change(header, arrays):
        rules = np.array(_get(header, arrays, "rules"))
        rules[:, 0] = 10 ** 6
        _set(header, arrays, "rules", rules)

    bad = _rewrite(src, tmp_path / "crash.npz", change)
    code = textwrap.dedent(f"""
        import structsvm
        try:
            structsvm.load({str(bad)!r}).predict({X_new!r})
        except structsvm.io.ModelFileError as exc:
            print("refused:", exc)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith(f"refused: {bad}: feature_map_.rules holds 1000000")


def test_a_grammar_built_by_hand_cannot_reach_the_chart_out_of_range():
    from structsvm.structures.grammar._encoding import Grammar, GrammarPotentials
    from structsvm.structures.grammar.cky import cky

    with pytest.raises(ValueError, match=r"Grammar: rules holds a symbol outside \[0, 3\)"):
        Grammar(3, [0, 1], [2], [[7, 0, 1]], [True] * 3)
    g = Grammar(3, [0, 1], [2], [[2, 0, 1]], [True] * 3)
    g.rule_parent = np.array([5])  # changed after construction
    p = GrammarPotentials(np.zeros((2, 2)), [0, 2], np.zeros((1, 1)), [0, 1],
                          np.zeros(1), np.zeros(3), g)
    with pytest.raises(ValueError, match=r"grammar.rule_parent holds a symbol outside"):
        cky(p)


def test_a_taxonomy_chain_of_12000_nodes_loads_in_proportion(saved, tmp_path):
    """The 45 KB model of the report: its tree rewritten to one chain of 12,000 nodes.
    Every node's path was built (1.2 GB); now only the leaves' paths are."""
    src, _ = saved["taxonomy"]
    n = 12_000

    def change(header, arrays):
        _set(header, arrays, "parent_", np.arange(-1, n - 1))
        _set(header, arrays, "node_names_", np.array([f"n{v}" for v in range(n)],
                                                      dtype=object))
        _set(header, arrays, "n_features_", 4 * n)
        arrays[header["coef"]["__array__"]] = np.zeros(4 * n)

    bad = _rewrite(src, tmp_path / "chain.npz", change)
    assert bad.stat().st_size < 200_000
    tracemalloc.start()
    try:
        model = structsvm.load(bad)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2 ** 20, peak
    assert model.feature_map_.tree_.height == n
    assert model.predict([np.ones(4)]) == [f"n{n - 1}"]  # the chain's one leaf


def test_a_tree_whose_paths_exceed_the_budget_is_refused(monkeypatch):
    from structsvm.limits import MemoryLimitError
    from structsvm.structures.taxonomy._tree import Tree

    n = 3000  # a chain of 1500 nodes and 1500 leaves hanging at its end
    parent = np.concatenate([np.arange(-1, n // 2 - 1), np.full(n // 2, n // 2 - 1)])
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "16M")
    with pytest.raises(MemoryLimitError, match=r"the root-to-leaf paths of a taxonomy "
                                               r"of 3000 nodes \(1500 leaves, 2251500 "
                                               r"nodes on their paths\) need"):
        Tree(parent, [f"n{v}" for v in range(n)])
    monkeypatch.setenv("STRUCTSVM_MAX_MEMORY", "1G")
    assert len(Tree(parent, [f"n{v}" for v in range(n)]).leaf_paths) == n // 2


# ------------------------------------------------------------------ learner states
def _blobs(n=40, k=3, d=5, seed=2):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    return [centers[c] + rng.normal(size=d) for c in y], [f"c{c}" for c in y]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """learner name -> (checkpoint path written mid-training, X, Y, params)."""
    X, Y = _blobs()
    out = {}
    for learner in (DualCD, MulticlassDualCD):
        params = dict(learner=learner(), C=1.0, tol=1e-9)
        ck = tmp_path_factory.mktemp("ck") / f"{learner.name}.npz"
        with _quiet():
            structsvm.StructuredSVM(max_iter=3, **params).fit(X, Y, checkpoint=ck,
                                                              checkpoint_every=0)
        out[learner.name] = (ck, X, Y, params)
    return out


def _state_set(key, value_of):
    def change(header, arrays):
        state = header["checkpoint"]["learner_state"]
        v = state[key]
        old = arrays[v["__array__"]] if isinstance(v, dict) and "__array__" in v else v
        new = value_of(np.array(old) if isinstance(old, np.ndarray) else old)
        if isinstance(v, dict) and "__array__" in v:
            arrays[v["__array__"]] = new
        else:
            state[key] = new
    return change


def _col(D):
    def f(ind):
        ind[len(ind) // 2] = D
        return ind
    return f


STATE_CASES = [
    # one past the end wrote past the weights and reported success
    ("dual_cd", "ind", _state_set("ind", _col(15)),
     r"dual_cd state: ind holds column 15 at position \d+; columns must lie in \[0, 15\)"),
    ("dual_cd", "ind", _state_set("ind", _col(10 ** 9)), r"ind holds column 1000000000"),
    ("dual_cd", "ind", _state_set("ind", _col(-1)), r"ind holds column -1"),
    ("dual_cd", "start", _state_set("start", lambda a: a + 10 ** 6),
     r"dual_cd state: start and len put row 0 at \[1000000, \d+\), outside the \d+ "
     r"stored entries"),
    ("dual_cd", "len", _state_set("len", lambda a: a * 0 - 1), r"start and len put row 0"),
    ("dual_cd", "slot", _state_set("slot", lambda a: a + 10 ** 6),
     r"dual_cd state: slot names a pool row outside"),
    ("dual_cd", "alpha", _state_set("alpha", lambda a: a * np.nan),
     r"dual_cd state: alpha holds NaN or infinite values"),
    ("dual_cd", "alpha", _state_set("alpha", lambda a: a + 5.0),
     r"dual_cd state: alpha holds a negative value, or a value on an empty slot|"
     r"alpha sums to more than C"),
    ("dual_cd", "alpha", _state_set("alpha", lambda a: -a - 1),
     r"alpha holds a negative value"),
    ("dual_cd", "gram", _state_set("gram", lambda a: a[:1]), r"gram has shape \(1, "),
    ("dual_cd", "dat", _state_set("dat", lambda a: a[:-1]), r"dat has \d+ entries, ind"),
    ("dual_cd", "C", _state_set("C", lambda c: float("inf")), r"C is inf"),
    ("multiclass_cd", "beta", _state_set("beta", lambda b: b * np.nan),
     r"multiclass_cd state: beta must be a finite 2-D array"),
    ("multiclass_cd", "labels", _state_set("labels", lambda y: y + 7),
     r"multiclass_cd state: labels must hold 40 classes in \[0, 3\)"),
    ("multiclass_cd", "beta", _state_set("beta", lambda b: b + 1.0),
     r"multiclass_cd state: beta is no dual point"),
]


@pytest.mark.parametrize("learner, key, change, match", STATE_CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(STATE_CASES)])
def test_a_rewritten_learner_state_is_refused_on_resume(checkpoints, tmp_path, learner,
                                                        key, change, match):
    ck, X, Y, params = checkpoints[learner]
    bad = _rewrite(ck, tmp_path / "crafted.ckpt.npz", change)
    with pytest.raises(ModelFileError, match=f"crafted.ckpt.npz: the {learner} state of "
                                             f"the checkpoint does not hold together "
                                             f"\\(.*{match}"):
        structsvm.StructuredSVM(max_iter=50, **params).fit(X, Y, resume=bad)
    # the untouched checkpoint resumes
    with _quiet():
        structsvm.StructuredSVM(max_iter=6, **params).fit(X, Y, resume=ck)


def test_learn_resume_with_a_crafted_checkpoint_is_an_error_line(checkpoints, tmp_path):
    """`structsvm learn --resume` on the crafted checkpoint of the report: an error
    line and status 2 in a child process (it crashed with SIGSEGV)."""
    from structsvm.corpora.svmlight import read_svm_light  # noqa: F401 (the format)

    X, Y = _blobs()
    train = tmp_path / "train.dat"
    train.write_text("".join(f"{y[1:]} " + " ".join(f"{j + 1}:{v:.17g}"
                                                    for j, v in enumerate(x)) + "\n"
                             for x, y in zip(X, Y)))
    ck = tmp_path / "run.ckpt.npz"
    argv = ["learn", "--task", "multiclass", "--learner", "dual_cd", "--max-iter", "3",
            "--checkpoint", str(ck), "--checkpoint-every", "0", str(train),
            str(tmp_path / "m.npz")]
    cli = [sys.executable, "-m", "structsvm.cli"]
    assert subprocess.run(cli + argv, capture_output=True, timeout=300).returncode == 0
    meta, arrays = sio.read_model_file(ck)
    D = meta["checkpoint"]["learner_state"]["n_features"]
    bad = _rewrite(ck, tmp_path / "bad.ckpt.npz", _state_set("ind", _col(D)))
    run = subprocess.run(cli + ["learn", "--task", "multiclass", "--learner", "dual_cd",
                                "--max-iter", "9", "--resume", str(bad), str(train),
                                str(tmp_path / "m2.npz")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert run.stderr.startswith(f"error: {bad}: the dual_cd state of the checkpoint "
                                 f"does not hold together (dual_cd state: ind holds "
                                 f"column {D}")
    assert not (tmp_path / "m2.npz").exists()
