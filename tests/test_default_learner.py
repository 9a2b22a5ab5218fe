"""learner=None picks the documented learner per structure; names stay selectable."""
import numpy as np
import pytest
from sklearn.base import clone

import structsvm
from structsvm.learners import default_learner
from structsvm.registry import registered
from structsvm.structures import (MulticlassFeatures, RankingFeatures, SequenceFeatures,
                                  TaxonomyFeatures)


def _multiclass():
    rng = np.random.default_rng(0)
    X = list(rng.normal(size=(12, 3)))
    return X, ["a", "b", "c"] * 4, MulticlassFeatures()


def _taxonomy():
    rng = np.random.default_rng(1)
    X = list(rng.normal(size=(8, 3)))
    return X, ["cat", "dog", "oak", "fern"] * 2, TaxonomyFeatures(
        {"animal": ["cat", "dog"], "plant": ["oak", "fern"]})


def _sequence():
    X = [["the", "dog", "runs"], ["a", "cat"], ["the", "cat", "runs"]]
    Y = [["D", "N", "V"], ["D", "N"], ["D", "N", "V"]]
    return X, Y, SequenceFeatures(features="word")


def _ranking():
    rng = np.random.default_rng(2)
    X = [rng.normal(size=(5, 3)) for _ in range(4)]
    Y = [rng.integers(0, 3, size=5) for _ in range(4)]
    return X, Y, RankingFeatures()


# structure: (data, the learner before the map is fitted, the one that trains)
CASES = {"multiclass": (_multiclass, "dual_cd", "multiclass_cd"),
         "taxonomy": (_taxonomy, "dual_cd", "dual_cd"),
         "sequence": (_sequence, "dual_cd", "dual_cd"),
         "ranking": (_ranking, "one_slack", "one_slack")}


@pytest.mark.parametrize("structure", sorted(CASES))
def test_default_resolves_to_the_documented_learner(structure):
    make, unfitted, trains = CASES[structure]
    X, Y, fm = make()
    assert type(fm).structure == structure
    assert default_learner(fm).name == unfitted == fm.default_learners[-1][0]
    model = structsvm.fit(X, Y, feature_map=fm)
    # a plain one-hot multiclass problem gets the specialised learner
    assert model.learner_.name == trains == fm.default_learners[0][0]
    assert model.get_params()["learner"] is None
    assert clone(model).get_params()["learner"] is None


def test_the_default_learner_keeps_its_configured_parameters():
    """The parameters measured per structure come with the learner."""
    assert default_learner(SequenceFeatures()).get_params()["n_batches"] == 16
    assert default_learner(TaxonomyFeatures({"a": ["b", "c"]})).get_params()[
        "n_batches"] == 2


def test_a_map_without_declared_learners_gets_the_generic_default():
    class Mine:  # satisfies no more of the contract than this function reads
        structure = "mine"

    assert default_learner(Mine()).name == "dual_cd"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(registered("learner")))
def test_every_learner_stays_selectable_by_name(name):
    X, Y, fm = _multiclass()
    model = structsvm.fit(X, Y, feature_map=fm, learner=name, max_iter=5, random_state=0)
    assert model.learner_.name == name
    assert model.get_params()["learner"] == name


def test_default_model_saves_and_loads(tmp_path):
    X, Y, fm = _sequence()
    model = structsvm.fit(X, Y, feature_map=fm)
    path = model.save(tmp_path / "m.npz")
    again = structsvm.load(path)
    assert again.learner_.name == "dual_cd" and again.get_params()["learner"] is None
    assert again.predict(X) == model.predict(X)


def test_bad_learner_name_fails_before_fitting():
    X, Y, fm = _multiclass()
    with pytest.raises(ValueError, match="Unknown learner 'sgd'"):
        structsvm.fit(X, Y, feature_map=fm, learner="sgd")


def test_the_guide_lists_every_learner_and_marks_exactly_the_defaults():
    """docs/guide.md's learner table: one row per registered learner, "(default"
    on exactly the learners ``learner=None`` can pick (it once still called the
    1-slack cutting plane the default of everything)."""
    import pathlib
    import re

    guide = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide.md"
    rows = re.findall(r'^\| `"(\w+)"`( \(default[^|]*)?\s*\|', guide.read_text(),
                      flags=re.MULTILINE)
    names = [name for name, _ in rows]
    assert sorted(names) == sorted(registered("learner")), names
    marked = {name for name, default in rows if default}
    assert marked == {name for cls in registered("structure").values()
                      for name, _ in cls.default_learners}


def test_the_guide_names_every_registered_decoder_and_loss():
    """docs/guide.md's plugins table names every decoder and loss a user can pass
    by name (it once stopped at the first wave's)."""
    import pathlib

    decoders, losses = registered("decoder"), registered("loss")
    guide = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    row = {line.split("|")[1].strip(): line for line in guide.splitlines()
           if line.startswith("| decoder |") or line.startswith("| loss |")}
    assert all(f'"{name}"' in row["decoder"] for name in decoders), sorted(decoders)
    assert all(f'"{name}"' in row["loss"] for name in losses), sorted(losses)
