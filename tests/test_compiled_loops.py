"""The loops compiled ahead of time (structsvm._compiled._aot, built by setup.py).

The compiled versions are checked against numba's JIT versions of the same source:
every call a default fit and prediction of each structure make is replayed through
the JIT loop on a copy of its arguments, and the results and the arrays the loop
writes must agree bit for bit. The type guard in front of the compiled code is
checked with arguments of other types, layouts and flags (the compiled code would
read them as the declared types; the guard must send them to numba instead).
"""
import copy
import importlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import structsvm
from structsvm import _compiled
from structsvm._compiled import _table
from structsvm.corpora import make_hmm_corpus
from structsvm.protocols import capability
from structsvm.registry import registered
from structsvm.structures import MulticlassFeatures, SequenceFeatures

EXTENSION = _compiled.extension()
needs_extension = pytest.mark.skipif(
    EXTENSION is None and os.environ.get("STRUCTSVM_REQUIRE_AOT") != "1",
    reason=f"{_table.MODULE} is not built here (no C compiler at installation, or "
           "STRUCTSVM_AOT=0): numba compiles every loop")

#: the flat Pegasos SVMs' loops: declared, called by no structured learner or map
FLAT = "structsvm.svm._pegasos_jit:"
#: the loops of chains of order k: declared, called by SequenceFeatures(order >= 2) only
ORDER_K = ("structsvm.structures.sequence._order_jit:",
           "structsvm.structures.sequence._order_oracle_jit:")
#: a numba loop that no module declares (no compiled version)
UNDECLARED = "structsvm.structures.sequence._viterbi_jit:row_maxima"


def test_extension_is_built_where_required():
    """CI installs with a C compiler: the extension must be there and current."""
    if os.environ.get("STRUCTSVM_REQUIRE_AOT") != "1":
        pytest.skip("STRUCTSVM_REQUIRE_AOT is not set")
    assert EXTENSION is not None, f"{_table.MODULE} missing or built from other source"
    assert _compiled.signatures()
    for key in _compiled.signatures():
        assert _compiled.has_compiled(key), key
    assert _compiled.all_compiled(_compiled.signatures())


def test_declared_result_types_are_numbas():
    """The declared result types are what numba infers for the declared arguments
    (pycc compiles with the declared result type: a wrong one would convert)."""
    for key, types in _compiled.signatures().items():
        module, function = _table.split_key(key)
        loop = getattr(importlib.import_module(module), function)
        sig = _table.numba_signature(types)
        loop.compile(sig.args)
        assert loop.overloads[sig.args].signature.return_type == sig.return_type, key


def _plugins():
    """Every registered learner and feature map (``"user"`` included)."""
    return {f"{kind}:{name}": cls for kind in ("learner", "structure")
            for name, cls in registered(kind).items()}


def test_declared_loops_are_the_fit_paths_loops():
    """Each learner's and feature map's ``compiled_loops`` names declared loops only
    (a loop module's ``SIGNATURES``), without repeats; every declared loop is named by
    some learner or map, but the flat Pegasos SVMs' loops, which no structured fit
    calls."""
    declared = set(_compiled.signatures())
    listed = set()
    for name, cls in _plugins().items():
        keys = tuple(capability(cls, "compiled_loops"))
        assert len(set(keys)) == len(keys), name
        assert set(keys) <= declared, (
            f"{name}: compiled_loops names loops that no loop module declares in its "
            f"SIGNATURES", sorted(set(keys) - declared))
        listed.update(keys)
    flat = {k for k in declared if k.startswith(FLAT)}
    assert flat and not listed & flat
    # chains of order k: loops of SequenceFeatures(order >= 2), not of its default path
    higher = {k for k in declared if k.startswith(ORDER_K)}
    assert higher and not listed & higher
    assert listed | flat | higher == declared, declared - listed - flat - higher


def _snapshot(args):
    return tuple(copy.deepcopy(a) for a in args)


def _equal(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=True))
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.fixture
def recorded_calls(monkeypatch):
    """Every call of a compiled loop: (key, arguments before, result, arguments
    after)."""
    calls = []
    for key in _compiled.signatures():
        module, function = _table.split_key(key)
        loop = getattr(_compiled.loops(module), function)
        if not isinstance(loop, _compiled.CompiledLoop):
            continue

        def record(*args, _key=key, _function=loop.function):
            before = _snapshot(args)
            result = _function(*args)
            calls.append((_key, before, copy.deepcopy(result), _snapshot(args)))
            return result
        monkeypatch.setattr(loop, "function", record)
    return calls


def _default_calls():
    """Small default calls of every structure whose loops the extension holds."""
    from alignment_pairs import evolved_pairs
    from test_feature_identity_trees_graphs import grammar_corpus, random_graph

    from structsvm.corpora import make_ranking_problem
    from structsvm.structures import (AlignmentFeatures,
        GrammarFeatures,
        GraphFeatures,
        RankingFeatures)
    from structsvm.svm import PegasosClassifier
    rng = np.random.default_rng(0)
    # tag sequences: dual_cd and its fused oracle; Viterbi and the shared unaries
    X, Y = make_hmm_corpus(120, n_states=5, n_words=80, random_state=0)
    structsvm.fit(X[:100], Y[:100], feature_map=SequenceFeatures(), decoder="viterbi",
                  C=0.1, max_iter=4, random_state=0).predict(X[100:])
    # chains of order 2: the order-k oracle, pruned and exact decoding
    for beam in (2, None):
        structsvm.fit(X[:60], Y[:60], feature_map=SequenceFeatures(order=2, beam=beam),
                      decoder="viterbi", C=0.1, max_iter=3,
                      random_state=0).predict(X[100:])
    # the row pool compacts only once it holds 100,000 dead entries: compact one here
    import scipy.sparse as sp
    from structsvm.learners._dual_cd_pool import RowPool
    pool = RowPool(50)
    pool.append(sp.random(300, 50, density=0.9, format="csr", random_state=0))
    pool.append(sp.random(3000, 50, density=0.9, format="csr", random_state=1))
    pool.compact(np.array([[0, 1], [-1, 2]], dtype=np.int64))
    # plain classes (multiclass_cd's sweep), then classes described by attributes
    Xm = rng.normal(size=(150, 12))
    ym = np.argmax(Xm[:, :4] + 0.5 * rng.normal(size=(150, 4)), axis=1)
    structsvm.fit(Xm, ym, feature_map=MulticlassFeatures(), decoder="argmax", C=0.1)
    attrs = {k: np.array(a, dtype=float) for k, a in
             enumerate([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]])}
    structsvm.fit(Xm, ym, feature_map=MulticlassFeatures(attributes=attrs),
                  decoder="argmax", C=0.1, max_iter=3).predict(Xm[:5])
    # sparse inputs: the class scores of the rows (as for text classification)
    structsvm.fit(sp.csr_matrix(Xm), ym, feature_map=MulticlassFeatures(attributes=attrs),
                  decoder="argmax", C=0.1, max_iter=3)
    # rankings: the aggregated oracle, the 1-slack SMO and its sparse sums
    Xr, Yr, _ = make_ranking_problem(n_queries=15, n_docs=8, random_state=0)
    structsvm.fit(Xr, Yr, feature_map=RankingFeatures(), max_iter=5).predict(Xr[:2])
    # parse trees, graphs, alignments
    Xg, Yg = grammar_corpus(rng, tagged=False, n_sent=12)
    structsvm.fit(Xg, Yg, feature_map=GrammarFeatures(), max_iter=2).predict(Xg[:2])
    Xn = [random_graph(rng, 4, {"e": 0}, int(rng.integers(3, 7))) for _ in range(10)]
    Yn = [[("a", "b", "c")[int(v)] for v in rng.integers(0, 3, size=x[0].shape[0])]
          for x in Xn]
    structsvm.fit(Xn, Yn, feature_map=GraphFeatures(), max_iter=2).predict(Xn[:2])
    Xa, Ya = evolved_pairs(12, random_state=0)
    structsvm.fit(Xa, Ya, feature_map=AlignmentFeatures(), max_iter=2).predict(Xa[:2])
    # dependency trees: the arc scores, their feature rows, Eisner
    from test_dependency_features import X_TOY, Y_TOY

    from structsvm.structures import DependencyFeatures
    structsvm.fit(X_TOY, Y_TOY, feature_map=DependencyFeatures(n_hash=2 ** 12),
                  max_iter=2).predict(X_TOY[:2])
    # with relations and second-order factors: pruning, factor tables, their search
    from test_dependency_labelled import X_UD, Y_UD
    structsvm.fit(X_UD, Y_UD, feature_map=DependencyFeatures(
        n_hash=2 ** 12, siblings=True, grandparents=True), max_iter=2).predict(X_UD[:2])
    # the structured Pegasos learner (the sparse sums, the running average)
    structsvm.fit(Xm, ym, feature_map=MulticlassFeatures(), decoder="argmax", C=0.1,
                  learner="pegasos", max_iter=2, random_state=0)
    # the flat Pegasos SVM
    PegasosClassifier(max_iter=3, random_state=0).fit(Xm, ym == 0)
    # losses over the whole data set: F1's search over fp, precision at k's below k
    from structsvm.structures import BinaryFeatures
    yb = np.where(ym == 0, 1, -1)
    for loss in ("f1", "precision_at_k"):   # sparse rows: their norms compiled
        structsvm.fit(sp.csr_matrix(Xm), yb, feature_map=BinaryFeatures(bias=0.0),
                      loss=loss, max_iter=3).predict(Xm[:5])


@needs_extension
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:.*stopped after max_iter")
def test_compiled_loops_equal_numbas(recorded_calls):
    _default_calls()
    seen = {key for key, *_ in recorded_calls}
    # every declared loop ran compiled: the calls passed exactly the declared types
    # (a stale SIGNATURES entry would send them to numba instead)
    declared = set(_compiled.signatures())
    assert seen == declared, declared - seen
    for key, before, result, after in recorded_calls:
        module, function = _table.split_key(key)
        jit = getattr(_compiled.loops(module), function).jit
        args = _snapshot(before)
        assert _equal(jit(*args), result), key
        assert all(_equal(a, b) for a, b in zip(args, after)), key


def _viterbi_args(n_tokens=40, K=4, seed=0):
    rng = np.random.default_rng(seed)
    offsets = np.array([0, n_tokens // 2, n_tokens], dtype=np.int64)
    return [rng.normal(size=(n_tokens, K)), offsets, rng.normal(size=(K, K)),
            rng.normal(size=K), rng.normal(size=K), np.zeros(0, dtype=np.int64), False,
            np.empty(n_tokens, dtype=np.int64)]


def _viterbi_loop():
    loop = _compiled.loops("structsvm.structures.sequence._viterbi_jit").viterbi_batch
    assert isinstance(loop, _compiled.CompiledLoop)
    return loop


@needs_extension
@pytest.mark.parametrize("change", [
    "int32 offsets", "Fortran-ordered unary", "strided unary", "read-only trans",
    "float flag", "int flag", "2-D start", "missing argument", "list offsets"])
def test_other_argument_types_go_to_numba(change, monkeypatch):
    loop = _viterbi_loop()
    args = _viterbi_args()
    if change == "int32 offsets":
        args[1] = args[1].astype(np.int32)
    elif change == "Fortran-ordered unary":
        args[0] = np.asfortranarray(args[0])
    elif change == "strided unary":
        args[0] = np.repeat(args[0], 2, axis=1)[:, ::2]
    elif change == "read-only trans":
        args[2].setflags(write=False)
    elif change == "float flag":
        args[6] = 0.0
    elif change == "int flag":
        args[6] = 0
    elif change == "2-D start":
        args[3] = args[3][None, :]
    elif change == "missing argument":
        args = args[:-1]
    elif change == "list offsets":
        args[1] = args[1].tolist()
    assert not loop.accepts(args)
    monkeypatch.setattr(loop, "function", lambda *a: pytest.fail("compiled code ran"))
    try:
        expected = loop.jit(*_snapshot(args))
    except Exception as exc:  # noqa: BLE001 - numba refuses it: so must the call
        with pytest.raises(type(exc)):
            loop(*args)
        return
    assert _equal(loop(*args), expected)


@needs_extension
def test_exact_types_run_the_compiled_code(monkeypatch):
    loop = _viterbi_loop()
    args = _viterbi_args()
    assert loop.accepts(args)
    assert loop.accepts(args[:6] + [np.True_, args[7]])
    ran = []
    compiled = loop.function
    monkeypatch.setattr(loop, "function", lambda *a: ran.append(1) or compiled(*a))
    path = args[7]
    loop(*args)
    assert ran == [1]
    reference = np.empty_like(path)
    loop.jit(*args[:7], reference)
    assert np.array_equal(path, reference)


@needs_extension
def test_compiled_loops_release_the_gil():
    """Oracle threads run loops at once: while one thread is inside a long compiled
    call, another Python thread keeps running (a kept GIL would stop it for the
    whole call)."""
    loop = _viterbi_loop()
    args = _viterbi_args(n_tokens=400_000, K=30, seed=1)
    loop(*args)  # a first call, untimed
    t0 = time.perf_counter()
    loop(*args)
    duration = time.perf_counter() - t0
    repeats = max(1, int(np.ceil(0.4 / duration)))

    def work():
        for _ in range(repeats):
            loop(*args)
    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    # with the GIL kept this thread would see gaps as long as a call
    assert len(ticks) > 1 and np.max(np.diff(ticks)) < 0.5 * duration * repeats


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("STRUCTSVM_AOT", "0")
    assert _compiled._load_extension() is False


@needs_extension
def test_extension_from_other_source_is_not_used(monkeypatch, caplog):
    monkeypatch.setattr(_table, "source_stamp", lambda root: -1)
    with caplog.at_level("INFO", logger="structsvm"):
        assert _compiled._load_extension() is False
    assert "other loop source" in caplog.text


def test_unused_extension_leaves_every_loop_to_numba(monkeypatch):
    """Without a usable extension no loop counts as compiled, and a loop module's
    namespace holds numba's dispatchers."""
    monkeypatch.setattr(_compiled, "_extension", False)
    monkeypatch.setattr(_compiled, "_namespaces", {})
    assert _compiled.extension() is None
    assert not any(_compiled.has_compiled(k) for k in _compiled.signatures())
    assert not _compiled.all_compiled(_compiled.signatures())
    loop = _compiled.loops("structsvm.structures.sequence._viterbi_jit").viterbi_batch
    assert not isinstance(loop, _compiled.CompiledLoop) and hasattr(loop, "py_func")


def test_signatures_are_read_from_the_loop_modules(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "_a_jit.py").write_text(
        "import numba\nSIGNATURES = {\"f\": (\"f8:1 i8\", \"f8\")}\n")
    (root / "sub" / "_b_jit.py").write_text("x = 1\n")  # declares none
    (root / "sub" / "other.py").write_text("SIGNATURES = {\"g\": (\"f8\", \"f8\")}\n")
    assert _table.signatures(str(root)) == {"pkg.sub._a_jit:f": ("f8:1 i8", "f8")}
    assert _table.export_name("pkg.sub._a_jit:f") == "pkg_sub__a_jit__f"


def test_source_stamp_follows_the_loop_source(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "_a_jit.py").write_text("x = 1\n")
    (root / "sub" / "other.py").write_text("y = 1\n")
    first = _table.source_stamp(str(root))
    (root / "sub" / "other.py").write_text("y = 2\n")  # not a loop module
    assert _table.source_stamp(str(root)) == first
    (root / "sub" / "_a_jit.py").write_text("x = 2\n")
    assert _table.source_stamp(str(root)) != first
    assert 0 <= first < 2**63
    # the table's own source (how the signatures are read) counts too
    second = _table.source_stamp(str(root))
    copy_ = tmp_path / "_table.py"
    copy_.write_bytes(open(_table.__file__, "rb").read() + b"\n# edited\n")
    monkeypatch.setattr(_table, "__file__", str(copy_))
    assert _table.source_stamp(str(root)) != second


@needs_extension
def test_default_fits_compile_nothing(tmp_path):
    """With the extension, a default sequence fit and predict compile no loop
    (numba's cache stays empty) and a multiclass fit does not import numba."""
    code = (
        "import sys, numpy as np, structsvm\n"
        "from structsvm.corpora import make_hmm_corpus\n"
        "from structsvm.structures import MulticlassFeatures, SequenceFeatures\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(100, 8)); y = np.argmax(X[:, :3], axis=1)\n"
        "structsvm.fit(X, y, feature_map=MulticlassFeatures(), decoder='argmax')\n"
        "print('numba' in sys.modules)\n"
        "X, Y = make_hmm_corpus(60, n_states=4, n_words=50, random_state=0)\n"
        "m = structsvm.fit(X, Y, feature_map=SequenceFeatures(), decoder='viterbi',\n"
        "                  max_iter=3)\n"
        "m.predict(X[:5])\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), STRUCTSVM_JIT_WARMUP="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env, check=True).stdout
    assert out.split() == ["False"]
    assert not list(tmp_path.rglob("*.nbi")), sorted(p.name for p in tmp_path.rglob("*"))


@needs_extension
def test_log_says_nothing_compiles_on_a_compiled_path(caplog):
    from structsvm.estimator import _training
    from structsvm.learners import DualCD
    X, Y = make_hmm_corpus(20, n_states=3, n_words=30, random_state=0)
    saved = list(_training._COMPILE_NOTED)
    _training._COMPILE_NOTED.clear()
    try:
        with caplog.at_level("INFO", logger="structsvm"):
            structsvm.fit(X, Y, feature_map=SequenceFeatures(), max_iter=2, tol=0.5,
                          verbose=1)
        assert "training dual_cd" in caplog.text and "compiles" not in caplog.text
    finally:
        _training._COMPILE_NOTED[:] = saved
    assert _compiled.all_compiled(capability(DualCD, "compiled_loops"))
    assert _compiled.all_compiled(capability(SequenceFeatures, "compiled_loops"))
    # a learner or map that declares no loops has none to compile (the perceptron,
    # a user's own structure); one declaring a loop without a compiled version has
    assert not capability(registered("learner")["perceptron"], "compiled_loops")
    assert not capability(registered("structure")["user"], "compiled_loops")
    assert _compiled.all_compiled(())
    assert UNDECLARED not in _compiled.signatures()
    assert not _compiled.all_compiled((*DualCD.compiled_loops, UNDECLARED))


@needs_extension
def test_log_says_when_a_declared_loop_is_not_compiled(monkeypatch, caplog):
    """A fit whose learner declares a loop the extension does not hold announces the
    compilation (though the extension is in use)."""
    from structsvm.estimator import _training
    from structsvm.learners import DualCD
    monkeypatch.setattr(DualCD, "compiled_loops", (*DualCD.compiled_loops, UNDECLARED))
    monkeypatch.setattr(_training, "_COMPILE_NOTED", [])
    X, Y = make_hmm_corpus(20, n_states=3, n_words=30, random_state=0)
    with caplog.at_level("INFO", logger="structsvm"):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), max_iter=2, tol=0.5,
                      verbose=1)
    assert "training dual_cd" in caplog.text
    assert "the first round compiles" in caplog.text
    assert "not in use" not in caplog.text


def test_log_says_when_the_extension_is_not_in_use(monkeypatch, caplog):
    from structsvm.estimator import _training
    monkeypatch.setattr(_compiled, "_extension", False)
    monkeypatch.setattr(_training, "_COMPILE_NOTED", [])
    X, Y = make_hmm_corpus(20, n_states=3, n_words=30, random_state=0)
    with caplog.at_level("INFO", logger="structsvm"):
        structsvm.fit(X, Y, feature_map=SequenceFeatures(), max_iter=2, tol=0.5,
                      verbose=1)
    assert "the first round compiles" in caplog.text
    assert "compiled at installation are not in use" in caplog.text
