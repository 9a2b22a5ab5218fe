"""Defaults have one source: the code. docs/defaults.md is generated from it, and no
page or docstring restates a default that disagrees with it.

The generated page (:func:`structsvm._defaults.defaults_markdown`, filled into
docs/defaults.md by the mkdocs hook docs/hooks/defaults.py) must name every feature
map, learner, decoder and loss with the values the estimator uses.
"""
import importlib.util
import inspect
import warnings
from pathlib import Path

import pytest

import structsvm
from structsvm import _defaults
from structsvm.features import (GrammarFeatures, GraphFeatures, MulticlassFeatures,
                                RankingFeatures, SequenceFeatures, TaxonomyFeatures)
from structsvm.learners import (DEFAULT_LEARNERS, DEFAULT_PARAMS, LEARNERS,
                                make_default_learner)

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS_PAGE = ROOT / "docs" / "defaults.md"
HOOK = ROOT / "docs" / "hooks" / "defaults.py"


# ---------------------------------------------------------------- the generated page
@pytest.fixture(scope="module")
def page():
    return _defaults.defaults_markdown()


@pytest.fixture(scope="module")
def rows():
    return {r["feature_map"]: r for r in _defaults.structure_defaults()}


def _table_row(page, first_cell):
    """The cells of the markdown table row whose first cell is ``first_cell``."""
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row for {first_cell} in the defaults page")


def test_every_feature_map_is_found():
    found = set(_defaults.feature_maps())
    assert {MulticlassFeatures, SequenceFeatures, TaxonomyFeatures, RankingFeatures,
            GrammarFeatures, GraphFeatures} <= found
    for cls in found:
        assert cls.__name__ in structsvm.features.__all__


def test_page_names_every_map_learner_decoder_and_loss(page):
    for cls in _defaults.feature_maps():
        _table_row(page, f"`{cls.__name__}`")
    for name, cls in LEARNERS.items():
        cells = _table_row(page, f"`{name}`")
        assert cells[1] == f"`{cls.__name__}`"
    for name in _defaults.decoder_names():
        _table_row(page, f"`{name}`")
    for name in structsvm.losses.LOSSES:
        _table_row(page, f"`{name}`")
    for name in inspect.signature(structsvm.StructuredSVM).parameters:
        _table_row(page, f"`{name}`")


@pytest.mark.parametrize("cls", _defaults.feature_maps(), ids=lambda c: c.__name__)
def test_per_structure_row_reads_the_class_attributes(page, cls):
    # columns: map, structure, decoder, loss, learner, C, tol, max_iter
    cells = _table_row(page, f"`{cls.__name__}`")
    assert cells[1] == f"`{cls.structure}`"
    assert cells[2] == f"`{cls.default_decoder}`"
    assert cells[3] == f"`{cls.default_loss}`"
    assert float(cells[5].strip("`")) == cls.default_C
    assert float(cells[6].strip("`")) == cls.default_tol
    name = DEFAULT_LEARNERS.get(cls.structure, DEFAULT_LEARNERS[None])
    assert f"`{name}`" in cells[4]
    for key, value in DEFAULT_PARAMS.get(cls.structure, {}).items():
        if LEARNERS[name]().get_params()[key] != value:
            assert f"{key}={value!r}" in cells[4]


def test_sequence_tol_in_the_table_is_the_maps(page):
    cells = _table_row(page, "`SequenceFeatures`")
    assert cells[6] == f"`{SequenceFeatures.default_tol!r}`"


def test_structure_rows_match_what_the_estimator_runs(rows):
    for cls in _defaults.feature_maps():
        r = rows[cls.__name__]
        learner = make_default_learner(cls.structure)
        assert learner.name == r["learner"]
        own = type(learner)().get_params()
        for key, value in learner.get_params().items():
            assert r["learner_params"].get(key, own[key]) == value


def test_learner_max_iter_defaults_are_read_from_the_code():
    info = _defaults.learner_defaults()
    assert set(info) == set(LEARNERS)
    for name, row in info.items():
        assert isinstance(row["max_iter"], int) and row["max_iter"] >= 1, name
        assert row["params"] == LEARNERS[name]().get_params()


@pytest.mark.parametrize("name", ["pegasos", "one_slack"])
def test_learner_max_iter_is_what_solve_runs(name):
    # tol=0 on data no w separates: the learner runs until its max_iter default
    X, Y = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.9, 0.0]], ["a", "b", "b", "a"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = structsvm.fit(X, Y, learner=name, tol=0.0)
    assert m.n_iter_ == _defaults.learner_defaults()[name]["max_iter"]


def test_estimator_defaults_are_the_signature():
    sig = inspect.signature(structsvm.StructuredSVM)
    assert _defaults.estimator_defaults() == {
        k: p.default for k, p in sig.parameters.items()}


def test_hook_fills_the_page_and_mkdocs_registers_it():
    spec = importlib.util.spec_from_file_location("_defaults_hook", HOOK)
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    text = DEFAULTS_PAGE.read_text(encoding="utf-8")
    assert text.count(hook.MARKER) == 1

    class _File:
        src_uri = "defaults.md"

    class _Page:
        file = _File()

    out = hook.on_page_markdown(text, _Page(), {}, None)
    assert hook.MARKER not in out and _defaults.defaults_markdown() in out
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "hooks:\n  - docs/hooks/defaults.py" in config
    assert "Defaults: defaults.md" in config
