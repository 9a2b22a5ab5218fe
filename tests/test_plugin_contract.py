"""The plugin contract: capabilities are declared attributes read through
structsvm.protocols, never probed with hasattr/getattr(..., default) elsewhere;
every kind of plugin registers the same way."""
import ast
import pathlib

import numpy as np
import pytest

import structsvm
from structsvm import protocols
from structsvm.learners import DualCD, MulticlassDualCD, get_learner
from structsvm.protocols import (FEATURE_MAP_CAPABILITIES, LEARNER_CAPABILITIES,
                                 POTENTIALS_CAPABILITIES, Decoder, FeatureMapBase,
                                 LearnerBase, capability)
from structsvm.registry import KINDS, lookup, register, registered, unregister
from structsvm.structures import MulticlassFeatures, get_decoder

PACKAGE = pathlib.Path(structsvm.__file__).parent
LEARNERS = registered("learner")

# (file, call) pairs that read attributes of something other than a plugin, and why
# (structsvm/protocols.py is the one place a declared capability is read)
ALLOWED = {
    ("estimator/_saved_state.py", "hasattr(type(fm), 'structure')"):
        "an object read from a model file: is it a feature map at all",
    ("estimator/_saved_state.py", "getattr(fm, 'load_fitted_state', None)"):
        "an object read from a model file: is it a feature map at all",
    ("io/_format.py", "getattr(cls, '_get_param_names', None)"):
        "any allowed class a model file names (scikit-learn parameters or not)",
    ("io/_format.py", "getattr(obj, 'get_params', None)"):
        "any value being written to a model file",
    ("io/_format.py", "getattr(obj, '__name__', type(obj).__name__)"):
        "the name of a value that cannot be saved, for the message",
    ("io/_savable.py", "getattr(found, part, None)"):
        "does a user class import back by its module and qualified name",
    ("io/__init__.py", "getattr(os, 'O_BINARY', 0)"):
        "an open() flag that exists on some platforms only",
    ("structures/losses.py", "getattr(self.func, '__name__', self.func)"):
        "a user's function, for repr",
    ("structures/user/_map.py", "getattr(func, '__name__', type(func).__name__)"):
        "a user's loss function, for its name",
    ("structures/grammar/_templates.py", "hasattr(x, '__len__')"):
        "input validation of user data",
    ("structures/sequence/_inputs.py", "hasattr(x, '__len__')"):
        "input validation of user data",
    ("structures/sequence/_inputs.py", "hasattr(y, '__len__')"):
        "input validation of user data",
    ("structures/graph/features.py", "hasattr(y, '__len__')"):
        "input validation of user data",
    ("structures/sequence/_oracle.py", "getattr(Xe, '_flat_truth', None)"):
        "a cache on the map's own encoded data",
    **{(f"structures/{f}", "getattr(type(batch), 'structure', None)"):
       "a decoder refuses any object that is no batch of its structure"
       for f in ("grammar/cky.py", "sequence/viterbi.py", "graph/max_product.py",
                 "alignment/needleman_wunsch.py")},
    ("estimator/_defaults.py", "getattr(module, body.id, None)"):
        "module constants named in source code (the defaults page)",
    ("estimator/_defaults.py", "getattr(cls, body.attr, None)"):
        "class constants named in source code (the defaults page)",
    ("plotting.py", "hasattr(path, 'path')"): "a user's regularisation path or list",
    ("plotting.py", "hasattr(path, 'evaluations')"):
        "a user's regularisation path or list",
    ("corpora/_lines.py", "getattr(source, 'name', '<stream>')"):
        "a user's file object, for messages",
    ("corpora/_lines.py", "getattr(os, 'O_BINARY', 0)"):
        "an open() flag that exists on some platforms only",
    ("corpora/_lines.py", "getattr(os, 'O_NONBLOCK', 0)"):
        "an open() flag that exists on some platforms only",
    ("corpora/_lines.py", "hasattr(os, 'set_blocking')"):
        "a function that exists on some platforms only",
    ("_compiled/warmup.py", "getattr(loop, 'py_func', None)"):
        "a numba dispatcher, or a loop compiled at installation (nothing to wait for)",
    ("_compiled/__init__.py", "hasattr(extension(), _table.export_name(key))"):
        "does the extension module compiled at installation hold this loop",
    ("structures/user/_params.py", "hasattr(value, 'get_params')"):
        "a parameter with parameters of its own (scikit-learn's get_params convention)",
    ("estimator/_checkpoints.py", "hasattr(v, 'get_params')"):
        "a parameter with parameters of its own (scikit-learn's get_params convention)",
    ("structures/user/structure.py", "hasattr(feature_map, 'get_params')"):
        "a plain function given as the feature map, not an object with parameters",
}


def _probes():
    """(file, call source) of every hasattr(...) and 3-argument getattr(...) call."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "protocols.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                    node.func.id == "hasattr"
                    or (node.func.id == "getattr" and len(node.args) == 3)):
                yield rel, ast.unparse(node)


def test_no_capability_probing_outside_protocols():
    found = set(_probes())
    unexpected = sorted(found - set(ALLOWED))
    assert not unexpected, (
        "plugins are read through structsvm.protocols.capability (declared "
        f"capabilities), not probed: {unexpected}")


def test_every_capability_has_a_default_on_the_base_classes():
    for name, default in FEATURE_MAP_CAPABILITIES.items():
        assert getattr(FeatureMapBase, name) == default, name
    for name, default in LEARNER_CAPABILITIES.items():
        assert getattr(LearnerBase, name) == default, name
    assert capability(object(), "augments") == POTENTIALS_CAPABILITIES["augments"]
    with pytest.raises(KeyError):
        capability(DualCD(), "not_a_capability")


def test_learner_capabilities_are_attributes():
    assert {n for n, c in LEARNERS.items() if c.certifies_gap} == {
        "one_slack", "n_slack", "dual_cd", "multiclass_cd", "frank_wolfe", "partitioned_cd"}
    assert {n for n, c in LEARNERS.items() if c.runs_blocks} == {"partitioned_cd"}
    assert {n for n, c in LEARNERS.items() if c.resumable} == {
        "one_slack", "n_slack", "dual_cd", "multiclass_cd", "partitioned_cd"}
    assert {n for n, c in LEARNERS.items() if c.accepts_constraints} == {
        "one_slack", "n_slack"}
    assert not LEARNERS["frank_wolfe"].supports_warm_start
    assert not LEARNERS["partitioned_cd"].supports_warm_start
    for cls in LEARNERS.values():
        assert isinstance(cls(), protocols.Learner)


class _PlainLearner:
    """A learner that only satisfies the protocol: no base class, no get_params."""

    name = "plain_gd"
    certifies_gap = False

    def solve(self, problem, w0, *, max_iter, tol, random_state=None, callback=None):
        w = np.array(w0, dtype=float)
        for t in range(1, (max_iter or 50) + 1):
            v = problem.oracle(w)
            g = w - problem.C * np.asarray(v.psi[v.slack > 0].sum(axis=0)).ravel()
            w = w - g / (t + 1.0)
            obj = problem.primal_objective(w)
            if callback is not None:
                callback(dict(round=t, w=w, objective=obj, time=0.0))
        return protocols.LearnerResult(w=w, objective=problem.primal_objective(w),
                                       objective_curve=[], n_iter=t)


def _blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, size=(10, 2)) for c in ([0, 0], [3, 0], [0, 3])])
    return list(X), [k for k in "abc" for _ in range(10)]


def test_get_learner_accepts_any_object_satisfying_the_protocol():
    learner = _PlainLearner()
    got = get_learner(learner)
    assert got is not learner and isinstance(got, _PlainLearner)
    X, Y = _blobs()
    model = structsvm.fit(X, Y, learner=learner, max_iter=30)
    assert model.learner_.name == "plain_gd" and model.score(X, Y) > 0.6
    with pytest.raises(TypeError, match="solve"):
        get_learner(object())


def test_register_learner():
    @register("learner", "test_registered_learner")
    class Mine(LearnerBase):
        name = "test_registered_learner"
        solve = _PlainLearner.solve

    try:
        assert isinstance(get_learner("test_registered_learner"), Mine)
        X, Y = _blobs()
        model = structsvm.fit(X, Y, learner="test_registered_learner", max_iter=20)
        assert model.score(X, Y) > 0.6
    finally:
        unregister("learner", "test_registered_learner")
    with pytest.raises(TypeError, match="learner 'x' must be a learner class"):
        register("learner", "x", object)
    with pytest.raises(ValueError, match="Unknown learner 'test_registered_learner'"):
        get_learner("test_registered_learner")


def test_every_kind_of_plugin_registers_the_same_way():
    """One function for every kind; a plugin is checked against its kind; a name can
    name the plugin's module (imported when first read); unregister brings a
    built-in back."""
    assert KINDS == ("structure", "decoder", "loss", "learner")
    assert lookup("structure", "multiclass") is MulticlassFeatures
    for name, cls in registered("structure").items():
        assert cls.structure == name

    class MyMap(MulticlassFeatures):
        structure = "test_my_map"

    assert register("structure", "test_my_map", MyMap) is MyMap
    try:
        assert lookup("structure", "test_my_map") is MyMap
    finally:
        unregister("structure", "test_my_map")
    with pytest.raises(TypeError, match="structure 'nothing' must be a feature-map class"):
        register("structure", "nothing", object)
    with pytest.raises(ValueError, match="Unknown plugin kind 'gizmo'"):
        register("gizmo", "x", object)

    def copy(batch, exclude=None):
        return get_decoder("argmax")(batch, exclude)

    register("decoder", "test_argmax_copy", Decoder("test_argmax_copy", "multiclass", copy))
    try:
        assert get_decoder("test_argmax_copy").func is copy
    finally:
        unregister("decoder", "test_argmax_copy")
    with pytest.raises(TypeError, match="a structsvm.protocols.Decoder named 'other'"):
        register("decoder", "other", Decoder("test_argmax_copy", "multiclass", copy))
    # by name: the module is imported when the plugin is first read
    register("loss", "test_hamming_by_name", "structsvm.structures.losses:HammingLoss")
    try:
        assert lookup("loss", "test_hamming_by_name").name == "hamming"
    finally:
        unregister("loss", "test_hamming_by_name")
    # a plugin of one's own under a built-in's name takes its place, until removed
    original = lookup("decoder", "argmax")
    mine = Decoder("argmax", "multiclass", copy)
    register("decoder", "argmax", mine)
    try:
        assert get_decoder("argmax") is mine
    finally:
        unregister("decoder", "argmax")
    assert get_decoder("argmax") is original


def test_built_in_plugins_declare_capabilities_on_the_base_classes():
    for name, cls in registered("structure").items():
        if name != "user":  # a Structure's map: the generic defaults, see below
            assert issubclass(cls, FeatureMapBase), cls
    for cls in LEARNERS.values():
        assert issubclass(cls, LearnerBase), cls
    # a map that only satisfies the protocol gets the documented defaults
    assert capability(object(), "has_fused_oracle") is False
    assert capability(object(), "example_costs") is None


def test_every_loss_declares_its_decomposition():
    """What a decoder, a map's potentials and the oracle ask of a loss."""
    for name, cls in registered("loss").items():
        assert cls.decomposition in protocols.DECOMPOSITIONS, name
        if cls.counts_wrong_parts:
            assert cls.decomposition in ("position", "span", "cell", "pair"), name
    for name, cls in registered("structure").items():
        loss = lookup("loss", cls.default_loss) if name != "user" else None
        # the default loss is one the map's potentials add, or one over the whole
        # data set, which labels the batch itself (its most_violated)
        if loss is not None and loss.decomposition != "dataset":
            assert loss.decomposition in fm_augments(name), (name, loss.decomposition)


def fm_augments(structure):
    """What the potentials of a built-in structure's batches add."""
    import importlib

    import structsvm.structures as s

    potentials = {"multiclass": "MulticlassPotentials", "taxonomy": "TreePotentials",
                  "sequence": "ChainPotentials", "ranking": "RankingPotentials",
                  "grammar": "GrammarPotentials", "graph": "GraphPotentials",
                  "alignment": "AlignmentPotentials", "dependency": "ArcPotentials",
                  "binary": "BinaryPotentials"}
    cls = getattr(importlib.import_module(s.__name__), potentials[structure])
    return capability(cls, "augments")
