"""``import structsvm`` loads no heavy library: the estimator, the feature maps and the
libraries they need are imported when a name is first used (PEP 562 ``__getattr__``).

Each check runs in a fresh interpreter and reads ``sys.modules`` (what got imported),
not the clock.
"""
import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "scipy.stats", "scipy.sparse", "cvxpy", "numba", "nltk", "networkx",
         "joblib")


def _fresh(code):
    """Run ``code`` in a fresh interpreter; return what it printed as JSON."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _loaded_after(statement):
    return _fresh(f"import json, sys\n{statement}\n"
                  f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")


@pytest.mark.parametrize("statement", [
    "import structsvm",
    "import structsvm.structures",
    "import structsvm.structures.sequence, structsvm.structures.ranking",
    "from structsvm.structures.sequence import token_accuracy, chunk_f1",
    "from structsvm.structures.ranking import ndcg_at_k",
    "import structsvm.registry; structsvm.registry.lookup('decoder', 'viterbi')",
    "import structsvm.corpora",
    "import structsvm.svm, structsvm.model_selection",
    "from structsvm.corpora import find_data, read_conll",
    "import structsvm; structsvm.__version__; dir(structsvm)",
])
def test_import_loads_no_heavy_library(statement):
    assert _loaded_after(statement) == []


def test_the_check_sees_a_heavy_import():
    # the same probe reports what a name's first use imports
    assert "sklearn" in _loaded_after("from structsvm.structures import SequenceFeatures")
    assert "numba" in _loaded_after("import structsvm.structures.sequence._jit")
    assert "sklearn" in _loaded_after("import structsvm; structsvm.StructuredSVM")


def test_every_exported_name_resolves_and_is_listed():
    out = _fresh(
        "import json, importlib\n"
        "res = {}\n"
        "import structsvm.structures\n"
        "pkgs = ['structsvm', 'structsvm.structures', 'structsvm.corpora', 'structsvm.svm',\n"
        "        'structsvm.model_selection', 'structsvm.estimator', 'structsvm.learners']\n"
        "pkgs += [f'structsvm.structures.{n}' for n in structsvm.structures.BUILTIN]\n"
        "for pkg in pkgs:\n"
        "    m = importlib.import_module(pkg)\n"
        "    missing = [n for n in m.__all__ if n not in dir(m)]\n"
        "    bad = [n for n in m.__all__ if getattr(m, n) is None]\n"
        "    ns = {}\n"
        "    exec(f'from {pkg} import *', ns)\n"
        "    res[pkg] = [missing, bad, sorted(set(m.__all__) - set(ns))]\n"
        "print(json.dumps(res))\n")
    assert all(v == [[], [], []] for v in out.values()), out


def test_names_resolve_to_their_defining_module():
    import structsvm
    from structsvm.estimator import StructuredSVM, fit, load
    from structsvm.structures.ranking.features import RankingFeatures
    from structsvm.structures.user.structure import Structure

    assert (structsvm.StructuredSVM, structsvm.fit, structsvm.load) == \
        (StructuredSVM, fit, load)
    assert structsvm.Structure is Structure
    assert structsvm.structures.RankingFeatures is RankingFeatures
    from structsvm.structures.grammar.metrics import bracket_scores
    from structsvm.structures.ranking.metrics import ndcg_at_k
    from structsvm.structures.sequence.metrics import token_accuracy

    assert structsvm.structures.sequence.token_accuracy is token_accuracy
    assert structsvm.structures.ranking.ndcg_at_k is ndcg_at_k
    assert structsvm.structures.grammar.bracket_scores is bracket_scores
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        structsvm.not_a_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from structsvm.structures import NotAMap", {})


def test_registry_is_filled_before_it_is_first_read():
    out = _fresh(
        "import json\n"
        "from structsvm.registry import registered\n"
        "print(json.dumps(sorted(registered('structure'))))\n")
    assert out == ["alignment", "binary", "dependency", "grammar", "graph", "multiclass",
                   "ranking", "sequence", "taxonomy", "user"]


def test_a_registered_map_replaces_a_builtin_before_the_first_read():
    out = _fresh(
        "import json\n"
        "from structsvm.registry import register, registered\n"
        "from structsvm.structures.ranking.features import RankingFeatures\n"
        "class Mine(RankingFeatures):\n"
        "    pass\n"
        "Mine.n = 7\n"
        "register('structure', 'ranking', Mine)\n"
        "print(json.dumps([registered('structure')['ranking'].__name__,\n"
        "                  registered('structure')['ranking'].n]))\n")
    assert out == ["Mine", 7]


def test_a_worker_receives_a_python_structure_without_scikit_learn(tmp_path):
    """A worker process (n_jobs on a structure written in Python) unpickles the
    problem: the learners' problem module and the user's Structure subclass. Neither
    imports scikit-learn, half of a worker's start."""
    (tmp_path / "my_structure.py").write_text(
        "import numpy as np\n"
        "import structsvm\n"
        "class Mine(structsvm.Structure):\n"
        "    def __init__(self, k=2):\n"
        "        self.k = k\n"
        "    def joint_feature(self, x, y):\n"
        "        return np.eye(self.k)[y] * x\n"
        "    def argmax(self, x, w):\n"
        "        return int(np.argmax(w * x))\n", encoding="utf-8")
    out = _fresh(
        "import json, pickle, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import structsvm.learners.problem\n"
        "from structsvm.structures.user.structure import StructureMap\n"
        "import my_structure\n"
        "blob = pickle.dumps(StructureMap(my_structure.Mine(k=3)))\n"
        "del sys.modules['my_structure']\n"
        "m = pickle.loads(blob)\n"
        "print(json.dumps([m.user_structure.k, 'sklearn' in sys.modules]))\n")
    assert out == [3, False]


def test_the_built_in_learners_are_registered_under_their_names():
    from structsvm.learners import BUILT_IN
    from structsvm.registry import lookup

    for name in BUILT_IN:
        assert lookup("learner", name).name == name
