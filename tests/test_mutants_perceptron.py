"""The structured perceptron (structsvm.learners.perceptron): behaviours the mutation
run found untested (see docs/testing.md, "Mutation testing")."""
import warnings

import numpy as np

from structsvm import StructuredSVM
from structsvm.learners import Perceptron


def _overlapping(seed=0, n=40):
    """Three classes that overlap: no w separates them, so every epoch errs."""
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 3, size=n)
    X = [rng.normal(size=4) + 0.7 * np.eye(4)[y] for y in Y]
    return X, [int(y) for y in Y]


def _fit(**params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StructuredSVM(**params).fit(*_overlapping())


def test_averaged_weights_are_returned_when_training_does_not_converge():
    """average=True returns the running average of the weights, not the last ones;
    the last ones are what average=False returns from the same run."""
    avg = _fit(learner=Perceptron(average=True), max_iter=5, random_state=0)
    last = _fit(learner=Perceptron(average=False), max_iter=5, random_state=0)
    assert avg.n_iter_ == last.n_iter_ == 5
    assert not np.allclose(avg.coef_, last.coef_)
    # the average of weights that start at 0 and grow by mistakes is shorter
    assert np.linalg.norm(avg.coef_) < np.linalg.norm(last.coef_)


def test_a_resumed_run_leaves_numpys_global_random_state_alone():
    """With random_state=None a resumed run continues its own random stream, in a
    generator of its own: numpy's global generator is neither read nor reset."""
    model = _fit(learner="perceptron", max_iter=2, warm_start=True)
    np.random.seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(*_overlapping())
    drawn = np.random.random(3)
    np.random.seed(7)
    np.testing.assert_array_equal(drawn, np.random.random(3))
