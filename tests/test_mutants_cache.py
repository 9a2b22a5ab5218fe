"""The fingerprint that guards warm-started working sets (structsvm.learners._cache):
behaviours the mutation run found untested (see docs/testing.md, "Mutation testing")."""
import numpy as np

from structsvm.structures import MulticlassFeatures
from structsvm.structures import get_decoder
from structsvm.learners._cache import problem_fingerprint
from structsvm.structures import HammingLoss, ZeroOneLoss
from structsvm.learners.problem import Problem


def _problem(X, Y, fm, loss=None, C=1.0, rescaling="margin"):
    return Problem(fm.encode_inputs(X), fm.encode_outputs(Y), fm, get_decoder("argmax"),
                   loss or ZeroOneLoss(), C, rescaling=rescaling)


def test_fingerprint_tells_training_problems_apart():
    """Equal for the same examples, loss and rescaling (also at another C); different
    when one example, its label, the loss or the rescaling differs, at the same
    number of features."""
    rng = np.random.default_rng(0)
    X = [rng.normal(size=5) for _ in range(12)]
    Y = [i % 3 for i in range(12)]
    fm = MulticlassFeatures().fit(X, Y)
    base = problem_fingerprint(_problem(X, Y, fm))
    assert problem_fingerprint(_problem(list(X), list(Y), fm)) == base
    assert problem_fingerprint(_problem(X, Y, fm, C=7.0)) == base
    X2 = list(X)
    X2[4] = X2[4] + 1e-3
    Y2 = list(Y)
    Y2[0] = 1
    others = [_problem(X2, Y, fm), _problem(X, Y2, fm), _problem(X, Y, fm, HammingLoss()),
              _problem(X, Y, fm, rescaling="slack")]
    prints = [problem_fingerprint(p) for p in others]
    assert base not in prints and len(set(prints)) == len(prints)
