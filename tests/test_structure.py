"""A structure written in plain Python (structsvm.Structure) trains like a built-in
map: every learner, threads, warm start, checkpoints, grid search, model files with
trusted=, plain functions; the "Write your own structure" page runs as written."""
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold

import structsvm
from structsvm.io import ModelFileError
from structsvm.structures.user.structure import FunctionStructure, StructureMap, same_output
from structure_examples import (ArrayParam, Enumerated, MultiLabel, SparseMultiLabel,
                                multilabel_data)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

DOC = Path(__file__).resolve().parent.parent / "docs" / "own_structure.md"


@pytest.fixture(scope="module")
def data():
    return multilabel_data(n=60)


def _same_predictions(a, b):
    return all(same_output(u, v) for u, v in zip(a, b))


@pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")
def test_default_call_trains_predicts_and_scores(data):
    X, Y = data
    model = structsvm.fit(X, Y, feature_map=MultiLabel())
    assert model.learner_.name == "dual_cd" and model.converged_
    assert isinstance(model.feature_map_, StructureMap)
    assert model.feature_map_.n_features_ == 3 * 5
    pred = model.predict(X)
    assert all(isinstance(p, tuple) for p in pred)
    assert model.score(X, Y) > 0.9
    assert model.get_params()["feature_map"].get_params() == {"n_labels": 3, "bias": 1.0}


def test_certified_learners_agree_and_the_others_run(data):
    X, Y = data
    objectives = {}
    for learner in ("one_slack", "n_slack", "dual_cd"):
        m = structsvm.fit(X, Y, feature_map=MultiLabel(), learner=learner, tol=1e-4)
        assert m.converged_, learner
        objectives[learner] = m.objective_
    ref = objectives["one_slack"]
    for name, obj in objectives.items():
        assert obj == pytest.approx(ref, rel=2e-3), objectives
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fw = structsvm.fit(X, Y, feature_map=MultiLabel(), learner="frank_wolfe",
                           max_iter=300)
    assert fw.objective_ >= ref * (1 - 2e-3) and fw.objective_ < ref * 1.05
    for learner in ("pegasos", "perceptron"):
        m = structsvm.fit(X, Y, feature_map=MultiLabel(), learner=learner,
                          random_state=0)
        assert m.objective_ >= ref * (1 - 2e-3)
        assert m.score(X, Y) > 0.85, learner


def test_enumeration_sparse_rows_and_outputs_give_the_same_optimum(data):
    X, Y = data
    ref = structsvm.fit(X, Y, feature_map=MultiLabel(), tol=1e-6)
    enum = structsvm.fit(X, Y, feature_map=Enumerated(), tol=1e-6)
    sparse = structsvm.fit(X, Y, feature_map=SparseMultiLabel(), tol=1e-6)
    for m in (enum, sparse):
        assert m.objective_ == pytest.approx(ref.objective_, rel=1e-5)
        assert _same_predictions(m.predict(X), ref.predict(X))


def test_missing_loss_augmented_argmax_and_outputs_stop_before_training(data):
    X, Y = data

    class Bare(MultiLabel):
        loss_augmented_argmax = structsvm.Structure.loss_augmented_argmax

    with pytest.raises(TypeError, match=r"Bare has neither loss_augmented_argmax nor "
                                        r"outputs.*define loss_augmented_argmax\(self, "
                                        r"x, y, w\) or outputs\(self, x\) in Bare"):
        structsvm.fit(X, Y, feature_map=Bare())
    with pytest.raises(TypeError, match="loss='hamming' is not MultiLabel's own loss.*"
                                        "outputs"):
        structsvm.fit(X, Y, feature_map=MultiLabel(), loss="hamming")
    m = structsvm.fit(X, Y, feature_map=Enumerated(), loss="hamming")
    assert m.loss_.name == "hamming"


@pytest.fixture
def python_workers(monkeypatch):
    """Every split oracle call of a structure goes to the workers, which are ready
    from the first such call on."""
    from structsvm.learners import problem

    monkeypatch.setattr(problem, "REMOTE_SECONDS", 0.0)
    monkeypatch.setattr(problem, "OPEN_IN_BACKGROUND", False)
    maps = []
    real = problem.Problem._map_python

    def spy(self, method, w, idx, args):
        out = real(self, method, w, idx, args)
        remote = self._pool is not None and os.getpid() not in self._pool.workers
        maps.append((remote, len(out)))
        return out

    monkeypatch.setattr(problem.Problem, "_map_python", spy)
    return maps


@pytest.mark.parametrize("learner", ["dual_cd", "one_slack"])
def test_n_jobs_2_decodes_in_worker_processes_to_the_same_model(python_workers, learner):
    """A structure's methods hold the GIL: with n_jobs=2 its oracle runs in a worker
    process and in this one, each taking a share of the examples, and the model is
    the one of n_jobs=1."""
    X, Y = multilabel_data(n=80, seed=1)
    one = structsvm.fit(X, Y, feature_map=MultiLabel(), learner=learner, n_jobs=1)
    assert python_workers and not any(remote for remote, _ in python_workers)
    python_workers.clear()
    two = structsvm.fit(X, Y, feature_map=MultiLabel(), learner=learner, n_jobs=2)
    # the first call runs here in one batch (it measures the time per example and
    # starts the worker), the others are shared with the worker: this process's
    # share and the worker's
    assert python_workers[0][1] == 1 and all(r for r, _ in python_workers)
    assert all(k > 1 for _, k in python_workers[1:])
    np.testing.assert_array_equal(one.coef_, two.coef_)
    assert one.objective_ == two.objective_ and one.n_iter_ == two.n_iter_


def _thread_counts(info):
    return sorted({lib["num_threads"] for lib in info if lib["user_api"] == "blas"})


def test_worker_processes_and_this_one_run_their_thread_pools_in_one_thread(
        python_workers, monkeypatch):
    """n processes on n cores: while the workers share the oracle, BLAS runs in one
    thread in every process (a spinning BLAS thread would take another process's
    core), and this process's limits come back when the fit ends."""
    from joblib.externals.loky import ProcessPoolExecutor
    from threadpoolctl import threadpool_info

    from structsvm.learners import _parallel, problem

    before = threadpool_info()
    seen = []
    real = problem.Problem._map_python

    def spy(self, method, w, idx, args):
        out = real(self, method, w, idx, args)
        if len(out) > 1 and not seen:  # a call shared with the worker
            seen.append(threadpool_info())
        return out

    monkeypatch.setattr(problem.Problem, "_map_python", spy)
    X, Y = multilabel_data(n=80, seed=1)
    structsvm.fit(X, Y, feature_map=MultiLabel(), learner="dual_cd", n_jobs=2)
    (here,) = seen
    assert here and _thread_counts(here) == [1]  # numpy's BLAS at least
    assert [lib["num_threads"] for lib in threadpool_info()] == \
        [lib["num_threads"] for lib in before]
    # the workers' initializer, as the workers run it
    with ProcessPoolExecutor(1, initializer=_parallel._receive,
                             initargs=(_parallel._Handle("no data"),)) as workers:
        worker = workers.submit(threadpool_info).result()
    assert worker and _thread_counts(worker) == [1]


class Handle:
    """A resource of this process (as a database connection): copied by reference,
    never pickled."""

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("a Handle stays in its process")


class Unpicklable(MultiLabel):
    """Holds a Handle: it cannot be sent to worker processes."""

    def __init__(self, n_labels=3, bias=1.0, handle=None):
        super().__init__(n_labels, bias)
        self.handle = handle


def test_a_structure_that_cannot_reach_the_workers_trains_here(python_workers):
    X, Y = multilabel_data(n=80, seed=1)
    s = Unpicklable(handle=Handle())
    with pytest.warns(UserWarning, match=r"n_jobs=2: the oracle runs in this process: "
                                         r"its workers could not receive the problem "
                                         r"\(.*a Handle stays in its process"):
        two = structsvm.fit(X, Y, feature_map=s, learner="dual_cd", n_jobs=2)
    one = structsvm.fit(X, Y, feature_map=s, learner="dual_cd", n_jobs=1)
    assert not any(remote for remote, _ in python_workers)
    np.testing.assert_array_equal(one.coef_, two.coef_)


def test_warm_start_continues(data):
    X, Y = data
    est = structsvm.StructuredSVM(feature_map=MultiLabel(), warm_start=True,
                                  learner="one_slack")
    est.fit(X, Y)
    first = est.objective_
    est.fit(X, Y)
    assert est.objective_ == pytest.approx(first, rel=1e-3) and est.n_iter_ <= 2


def test_checkpoint_and_resume(data, tmp_path):
    X, Y = data
    path = tmp_path / "ck.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        structsvm.fit(X, Y, feature_map=MultiLabel(), learner="one_slack", max_iter=2,
                      checkpoint=path, checkpoint_every=0.0)
    resumed = structsvm.fit(X, Y, feature_map=MultiLabel(), learner="one_slack",
                            resume=path)
    full = structsvm.fit(X, Y, feature_map=MultiLabel(), learner="one_slack")
    assert resumed.converged_ and resumed.n_iter_ > 2
    assert resumed.objective_ == pytest.approx(full.objective_, rel=2e-3)
    with pytest.raises(ModelFileError, match="trusted=\\[MultiLabel\\]"):
        structsvm.estimator.read_checkpoint_info(path)


def test_grid_search_over_the_structures_params_and_C(data):
    X, Y = data
    search = GridSearchCV(structsvm.StructuredSVM(feature_map=MultiLabel()),
                          {"feature_map__bias": [0.0, 1.0], "C": [0.1, 1.0]},
                          cv=KFold(3))
    search.fit(X, Y)
    assert set(search.best_params_) == {"feature_map__bias", "C"}
    assert search.score(X, Y) > 0.85
    assert clone(MultiLabel(bias=2.0)).get_params()["bias"] == 2.0


def test_save_and_load_with_trusted(data, tmp_path):
    X, Y = data
    model = structsvm.fit(X, Y, feature_map=MultiLabel(bias=0.5))
    path = model.save(tmp_path / "model.npz")
    with pytest.raises(ModelFileError, match=r"structure_examples:MultiLabel.*"
                                             r"trusted=\[MultiLabel\]"):
        structsvm.load(path)
    with pytest.raises(ModelFileError, match="trusted="):
        structsvm.load(path, trusted=[Enumerated])   # another class is no help
    back = structsvm.load(path, trusted=[MultiLabel])
    assert _same_predictions(back.predict(X), model.predict(X))
    np.testing.assert_array_equal(back.coef_, model.coef_)
    assert type(back.feature_map) is MultiLabel and back.feature_map.bias == 0.5
    assert back.feature_map is not back.feature_map_.user_structure
    assert back.score(X, Y) == model.score(X, Y)
    with pytest.raises(TypeError, match="list of classes"):
        structsvm.load(path, trusted=[MultiLabel()])


def test_what_cannot_be_saved_is_refused_clearly(data, tmp_path):
    X, Y = data

    class Local(MultiLabel):
        pass

    cases = [(Local(), "inside a function"),
             (ArrayParam(scale=np.ones(2)), "parameter 'scale' of ArrayParam holds a "
                                            "ndarray.*JSON values"),
             (FunctionStructure(joint_feature=MultiLabel().joint_feature,
                                argmax=MultiLabel().argmax,
                                outputs=Enumerated().outputs), "plain functions")]
    for structure, message in cases:
        model = structsvm.fit(X, Y, feature_map=structure, max_iter=2)
        with pytest.raises(ValueError, match=message):
            model.save(tmp_path / "m.npz")
    main = type("InMain", (MultiLabel,), {"__module__": "__main__"})
    model = structsvm.fit(X, Y, feature_map=main(), max_iter=2)
    with pytest.raises(ValueError, match="__main__"):
        model.save(tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_plain_functions(data):
    X, Y = data
    s = Enumerated()
    with pytest.raises(TypeError, match="loss_augmented_argmax= or outputs= to "
                                        "FunctionStructure"):
        structsvm.fit(X, Y, feature_map=s.joint_feature, decoder=s.argmax)
    model = structsvm.fit(X, Y, feature_map=FunctionStructure(
        joint_feature=s.joint_feature, argmax=s.argmax, loss=s.loss, outputs=s.outputs))
    ref = structsvm.fit(X, Y, feature_map=Enumerated())
    assert model.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    with pytest.raises(TypeError, match="is a class"):
        structsvm.fit(X, Y, feature_map=MultiLabel)
    with pytest.raises(TypeError, match="give its argmax as decoder="):
        structsvm.fit(X, Y, feature_map=s.joint_feature)
    with pytest.raises(TypeError, match="decodes with its argmax"):
        structsvm.fit(X, Y, feature_map=MultiLabel(), decoder=s.argmax)


def test_outputs_may_be_any_objects():
    from nltk import Tree

    trees = [Tree("A", ["x"]), Tree("B", ["x"])]

    class Trees(structsvm.Structure):
        def joint_feature(self, x, y):
            return x * (1.0 if y.label() == "A" else -1.0)

        def argmax(self, x, w):
            return trees[0] if w @ x >= 0 else trees[1]

        def outputs(self, x):
            return trees

    X = [np.array([1.0, 0.5]), np.array([-1.0, 0.2]), np.array([0.8, -0.1])]
    Y = [trees[0], trees[1], trees[0]]
    model = structsvm.fit(X, Y, feature_map=Trees())
    assert model.predict(X) == Y and model.score(X, Y) == 1.0


# --------------------------------------------------------------------------- the page
BLOCK = re.compile(r"(?:<!-- file: (\S+) -->\n)?```python\n(.*?)^```", re.S | re.M)


def test_the_guide_page_runs(tmp_path, monkeypatch):
    """Blocks marked ``<!-- file: NAME -->`` are written to NAME (an importable
    module); the others run in order in one namespace, in a temporary folder. Its
    calls (default calls and named learners) raise no ConvergenceWarning."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert any(name for name, _ in blocks) and any(not name for name, _ in blocks)
    namespace = {"__name__": "own_structure_page"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for k, (name, code) in enumerate(blocks):
            if name:
                (tmp_path / name).write_text(code, encoding="utf-8")
            else:
                exec(compile(code, f"own_structure.md block {k + 1}", "exec"), namespace)
    for name, _ in blocks:
        if name:
            sys.modules.pop(Path(name).stem, None)


def test_a_file_cannot_name_another_class_into_being(data, tmp_path):
    from structsvm.io import read_model_file, write_model_file

    X, Y = data
    path = structsvm.fit(X, Y, feature_map=MultiLabel(), max_iter=2).save(
        tmp_path / "model.npz")
    meta, arrays = read_model_file(path)
    header = {k: v for k, v in meta.items() if k not in ("format", "version", "sha256")}
    user = header["feature_map"]["params"]["user_structure"]
    assert user == {"__object__": "structure_examples:MultiLabel",
                    "params": {"n_labels": 3, "bias": 1.0}}
    lookalike = type("MultiLabel", (MultiLabel,), {"__module__": "elsewhere"})
    for name in ("subprocess:Popen", "structure_examples:Enumerated", "os:system"):
        user["__object__"] = name
        write_model_file(tmp_path / "edited.npz", header, arrays)
        with pytest.raises(ModelFileError, match=re.escape(repr(name))):
            structsvm.load(tmp_path / "edited.npz", trusted=[MultiLabel])
    user["__object__"] = "structure_examples:MultiLabel"
    write_model_file(tmp_path / "edited.npz", header, arrays)
    with pytest.raises(ModelFileError, match="trusted="):
        structsvm.load(tmp_path / "edited.npz", trusted=[lookalike])
    assert structsvm.load(tmp_path / "edited.npz", trusted=[MultiLabel]).predict(X[:1])


def test_n_features_may_be_set_by_the_structure(data):
    X, Y = data

    class Declared(MultiLabel):
        n_features = 15

    class Wrong(MultiLabel):
        n_features = 16

    assert structsvm.fit(X, Y, feature_map=Declared(), max_iter=2).coef_.shape == (15,)
    with pytest.raises(ValueError, match="joint_feature returned 15 features, expected "
                                         "16"):
        structsvm.fit(X, Y, feature_map=Wrong())
    with pytest.raises(ValueError, match="must be 1-D"):
        structsvm.fit(X, Y, feature_map=FunctionStructure(
            joint_feature=lambda x, y: np.ones((2, 2)), argmax=MultiLabel().argmax,
            outputs=Enumerated().outputs))


def test_a_checkpoint_of_an_unsavable_structure_is_refused_before_training(data,
                                                                            tmp_path):
    X, Y = data

    class Local(MultiLabel):
        pass

    with pytest.raises(ValueError, match="inside a function"):
        structsvm.fit(X, Y, feature_map=Local(), checkpoint=tmp_path / "ck.npz")
    assert not (tmp_path / "ck.npz").exists()


def test_rows_of_any_form_stack_to_their_matrix():
    """Dense rows, CSR rows with unsorted or repeated columns and other sparse formats
    (through joint_feature_row) stack to the matrix of their dense values."""
    import scipy.sparse as sp

    from structsvm.structures.user._map import joint_feature_row, stack_rows

    class Given(structsvm.Structure):
        def joint_feature(self, x, y):
            return x

    rows = [np.array([0.0, 1.5, 0.0, -2.0]),
            sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([3, 0, 3]),
                           np.array([0, 3])), shape=(1, 4)),
            sp.coo_matrix(np.array([[0.0, 0.0, 4.0, 0.0]])),
            np.zeros(4)]
    dense = np.array([[0.0, 1.5, 0.0, -2.0], [2.0, 0.0, 0.0, 4.0],
                      [0.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    M = stack_rows([joint_feature_row(Given(), r, None, 4) for r in rows], 4)
    assert M.format == "csr" and M.has_canonical_format
    np.testing.assert_array_equal(M.toarray(), dense)


def test_a_structure_has_the_parameters_scikit_learn_reads():
    """Structure answers get_params / set_params as a scikit-learn estimator does
    (without importing scikit-learn): clone copies it, nested names reach a
    parameter's parameters, a wrong name is refused, repr shows changed values."""
    s = ArrayParam(scale=np.array([1.0, 2.0]))
    t = clone(MultiLabel(n_labels=4))
    assert isinstance(t, MultiLabel) and t.get_params() == {"n_labels": 4, "bias": 1.0}
    assert repr(MultiLabel()) == "MultiLabel()"
    assert repr(MultiLabel(n_labels=4)) == "MultiLabel(n_labels=4)"
    with pytest.raises(ValueError, match="Invalid parameter 'labels' for MultiLabel"):
        MultiLabel().set_params(labels=3)
    m = StructureMap(MultiLabel())
    assert m.get_params()["user_structure__n_labels"] == 3
    m.set_params(user_structure__n_labels=5)
    assert m.user_structure.n_labels == 5
    assert clone(s).get_params().keys() == s.get_params().keys()
    assert repr(s) == "ArrayParam(scale=array([1., 2.]))"
    model = structsvm.StructuredSVM(feature_map=MultiLabel())
    assert model.get_params()["feature_map__bias"] == 1.0
    model.set_params(feature_map__bias=0.5)
    assert model.feature_map.bias == 0.5


def test_a_structure_whose_init_takes_star_args_is_refused_by_name():
    """get_params reads the parameters back by name (clone, grid search, saving): an
    __init__ with *args has parameters it cannot name, refused with the class named."""

    class Varargs(MultiLabel):
        def __init__(self, *labels):
            super().__init__(len(labels))

    with pytest.raises(RuntimeError, match=r"Varargs\.__init__ takes \*labels"):
        Varargs(1, 2).get_params()
