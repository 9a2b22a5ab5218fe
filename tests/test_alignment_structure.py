"""The alignment model written as a user Structure (the code block of the "Write your
own structure" page, executed as it is written there) against AlignmentFeatures: the
same Φ and the same predictions, plain and loss-augmented, from the same weights."""
import ast
import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from structsvm.structures import AlignmentFeatures
from structsvm.structures import get_decoder
from structsvm.structures.alignment import AlignmentLoss
from structsvm.testing import check_structure

from alignment_pairs import evolved_pairs

PAGE = Path(__file__).resolve().parent.parent / "docs" / "own_structure.md"
NAME = "alignment_structure.py"


def page_code():
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(rf"<!-- file: {re.escape(NAME)} -->\n```python\n(.*?)^```", text,
                  re.S | re.M)
    assert m, f"{PAGE.name} has no block for {NAME}"
    return m.group(1)


@pytest.fixture(scope="module")
def Alignment(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    (folder / NAME).write_text(page_code(), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("alignment_structure").Alignment
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("alignment_structure", None)


def test_the_structure_is_under_40_lines():
    cls = next(n for n in ast.parse(page_code()).body if isinstance(n, ast.ClassDef))
    assert cls.end_lineno - cls.lineno + 1 < 40
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert {"joint_feature", "argmax", "loss", "loss_augmented_argmax"} <= methods


def _map_weights(fm, alphabet):
    """Columns of the map for the user's Φ layout (−1: a pair the map never saw)."""
    names = [f"sub:{a}>{b}" for a in alphabet for b in alphabet]
    seen = set(fm.alphabet_)
    cols = [fm.feature_index(n)[0] if n[4] in seen and n[6] in seen else -1
            for n in names]
    cols += list(fm.feature_index(["gap:open", "gap:extend", "end_gap:open",
                                   "end_gap:extend"]))
    return np.array(cols)


@pytest.mark.parametrize("weights", ["random", "rounded", "trained"])
def test_same_predictions_as_the_builtin_map(Alignment, weights):
    X, Y = evolved_pairs(25, random_state=11, length=(3, 14))
    user = Alignment()
    fm = AlignmentFeatures(symmetric=False).fit(X, Y)
    cols = _map_weights(fm, user.alphabet)
    rng = np.random.default_rng(12)
    if weights == "trained":
        import structsvm

        w = structsvm.fit(X, Y, feature_map=AlignmentFeatures(symmetric=False),
                          max_iter=20).coef_
    else:
        w = rng.normal(size=fm.n_features_)
        if weights == "rounded":  # many ties: the tie-breaking must agree too
            w = np.round(w)
    w_user = np.where(cols >= 0, w[cols], 0.0)
    Xe = fm.encode_inputs(X)
    decode = get_decoder("needleman_wunsch")
    plain = decode(fm.batch_potentials(Xe, w))
    augmented = decode(fm.batch_potentials(Xe, w).augment(Y, AlignmentLoss()))
    for x, y, p, a in zip(X, Y, plain, augmented):
        assert user.joint_feature(x, y) @ w_user == \
            pytest.approx(fm.joint_feature(x, y) @ w, abs=1e-12)
        np.testing.assert_array_equal(user.argmax(x, w_user), p)
        np.testing.assert_array_equal(user.loss_augmented_argmax(x, y, w_user), a)
        assert user.loss(y, a) == pytest.approx(AlignmentLoss()(y, a))


def test_the_user_structure_keeps_the_contract(Alignment):
    X, Y = evolved_pairs(4, random_state=13, length=(3, 4))
    check_structure(Alignment(), X, Y, n_weights=2, save=False)
