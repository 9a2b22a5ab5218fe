"""A fit's lifecycle, proven on the learners' own counters: a run resumed from a
checkpoint starts at the checkpoint's point (not at w = 0) and stops after the
rounds that remain of ``max_iter``; a warm-started fit needs fewer passes than a
cold one on the same data (the way scikit-learn tests ``warm_start``: the same
estimator refitted, ``n_iter_`` compared).

Every learner that declares the capability is covered (``resumable``,
``supports_warm_start``; :class:`structsvm.protocols.LearnerBase`), so a learner
registered later is tested too.
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import structsvm
from structsvm.estimator import read_checkpoint_info
from structsvm.structures import MulticlassFeatures
from structsvm.learners import DualCD
from structsvm.registry import registered
from structsvm.structures import get_loss
from structsvm.structures import get_decoder
from structsvm.learners.problem import Problem
from structsvm.protocols import capability

RESUMABLE = sorted(n for n, cls in registered("learner").items()
                   if capability(cls, "resumable"))
WARM = sorted(n for n, cls in registered("learner").items()
              if capability(cls, "supports_warm_start"))


def overlapping(n=80, k=4, d=6, seed=1):
    """Blobs that overlap: many examples at the bound, slow to certify tightly."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d))
    y = rng.integers(0, k, size=n)
    return [centers[c] + rng.normal(size=d) for c in y], [f"c{c}" for c in y]


def separable(n=60, k=3, d=4, seed=2, margin=0.5):
    """Classes of a random linear rule, with a margin: the perceptron converges."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(k, d))
    X, Y = [], []
    while len(X) < n:
        x = rng.normal(size=d) * 2.0
        s = np.sort(W @ x)
        if s[-1] - s[-2] > margin:
            X.append(x)
            Y.append(f"c{int(np.argmax(W @ x))}")
    return X, Y


def quiet_fit(model, X, Y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, Y, **kw)


def primal(model, X, Y):
    """½‖w‖² + C Σ_i max_y [Δ(y_i, y) − w·(Φ(x_i, y_i) − Φ(x_i, y))] by brute force
    over the classes (zero-one Δ), from ``coef_`` and ``joint_feature`` only."""
    w, fm = model.coef_, model.feature_map_
    labels = sorted(set(Y))
    total = 0.0
    for x, y in zip(X, Y):
        truth = w @ fm.joint_feature(x, y)
        total += max(float(o != y) - truth + w @ fm.joint_feature(x, o) for o in labels)
    return 0.5 * float(w @ w) + model.C * total


# ------------------------------------------------------------------ resume
def _estimator(learner, **kw):
    return structsvm.StructuredSVM(feature_map=MulticlassFeatures(), learner=learner,
                                   C=1.0, tol=1e-12, random_state=0, **kw)


@pytest.fixture(scope="module")
def data():
    return overlapping()


#: rounds before the checkpoint: the primal of the sequential dual method's first
#: passes is above P(0) (it is not monotone), where a restart from 0 would not show
CHECKPOINT_AFTER = {"multiclass_cd": 10, "partitioned_cd": 10}


class RoundSpy:
    """Records the ``round`` of every callback the learner makes (the estimator's
    round tracker), while active."""

    def __init__(self, monkeypatch):
        from structsvm.estimator import _training

        self.rounds = []
        original = _training.RoundTracker.__call__

        def spy(tracker, info):
            self.rounds.append(int(info["round"]))
            return original(tracker, info)

        monkeypatch.setattr(_training.RoundTracker, "__call__", spy)


@pytest.mark.parametrize("learner", RESUMABLE)
def test_resume_starts_at_the_checkpoint(learner, data, tmp_path, monkeypatch):
    """The resumed run records its first objective on its first pass (a dual point
    restored, or the checkpoint's w, is certified first; a restart from α = 0 sweeps
    first), and that objective is at or below the checkpoint's (a restart from
    w = 0 records P(0), far above it)."""
    X, Y = data
    ck = tmp_path / "ck.npz"
    first = quiet_fit(_estimator(learner, max_iter=CHECKPOINT_AFTER.get(learner, 3)), X,
                      Y, checkpoint=ck)
    model, info = read_checkpoint_info(ck)
    assert info["n_iter"] == first.n_iter_ and not first.converged_
    assert model.objective_ == pytest.approx(primal(model, X, Y), rel=1e-9)
    zero = model.C * len(X)  # P(0): every example's hinge is its largest loss, 1
    assert model.objective_ < 0.9 * zero  # so the comparison below can fail
    spy = RoundSpy(monkeypatch)
    resumed = quiet_fit(_estimator(learner, max_iter=first.n_iter_ + 4), X, Y,
                        resume=ck)
    k = len(first.objective_curve_)
    assert resumed.objective_curve_[:k] == first.objective_curve_
    assert len(resumed.objective_curve_) == k + len(spy.rounds)
    assert spy.rounds[0] <= 1
    assert resumed.objective_curve_[k] <= model.objective_ * (1 + 1e-12)
    assert resumed.objective_ == pytest.approx(primal(resumed, X, Y), rel=1e-9)


@pytest.mark.parametrize("learner", RESUMABLE)
@pytest.mark.parametrize("done, total", [(2, 4), (3, 5)])
def test_resume_stops_after_the_remaining_rounds(learner, done, total, data, tmp_path,
                                                 monkeypatch):
    """``max_iter`` counts on from the checkpoint: a resumed fit that does not
    converge stops with ``n_iter_ == max_iter``, not ``done + max_iter``."""
    X, Y = data
    ck = tmp_path / "ck.npz"
    quiet_fit(_estimator(learner, max_iter=done), X, Y, checkpoint=ck)
    assert read_checkpoint_info(ck)[1]["n_iter"] == done
    spy = RoundSpy(monkeypatch)
    resumed = quiet_fit(_estimator(learner, max_iter=total), X, Y, resume=ck)
    assert not resumed.converged_
    assert resumed.n_iter_ == total
    assert max(spy.rounds) == total - done  # the learner ran the remaining rounds


def test_resume_with_no_rounds_left_is_refused(data, tmp_path):
    """A checkpoint that has run ``max_iter`` rounds leaves none: resuming with the same
    ``max_iter`` says so instead of running one more round past it."""
    X, Y = data
    ck = tmp_path / "ck.npz"
    quiet_fit(_estimator("dual_cd", max_iter=3), X, Y, checkpoint=ck)
    with pytest.raises(ValueError, match="already run 3 rounds and max_iter=3"):
        quiet_fit(_estimator("dual_cd", max_iter=3), X, Y, resume=ck)


# ------------------------------------------------------------------ warm start
@pytest.mark.parametrize("learner", WARM)
def test_warm_start_needs_fewer_passes(learner):
    """scikit-learn's test of ``warm_start``: refitting without it repeats the same
    passes; refitting with it continues the previous fit and needs fewer, to an
    objective no worse."""
    X, Y = separable()
    model = structsvm.StructuredSVM(feature_map=MulticlassFeatures(), learner=learner,
                                    C=1.0, tol=1e-3, random_state=0, max_iter=300)
    model.fit(X, Y)
    reference = model.n_iter_
    assert model.converged_ and reference > 2  # not trivial: several passes needed
    model.fit(X, Y)
    assert model.n_iter_ == reference  # a cold refit repeats the same passes
    cold_objective = model.objective_
    model.set_params(warm_start=True)
    model.fit(X, Y)  # only the weights (and a state kept by default) carry over
    model.fit(X, Y)  # continues from the state kept with warm_start=True
    assert model.converged_
    assert model.n_iter_ < reference
    if learner != "perceptron":  # the perceptron does not minimise the objective
        assert model.objective_ <= cold_objective * (1 + 1e-3)


def test_dual_cd_warm_start_from_weights_alone_needs_fewer_passes():
    """Without a saved state (the first fit did not keep it), a warm start of dual_cd
    has only w0: the most violated outputs under w0 seed its caches, so it needs
    fewer passes than a cold fit at a new C (a learner that ignores w0 needs the
    same number)."""
    X, Y = overlapping(n=60, seed=3)
    kw = dict(feature_map=MulticlassFeatures(), learner=DualCD(), tol=1e-4, max_iter=300,
              random_state=0)
    cold = structsvm.StructuredSVM(C=2.0, **kw).fit(X, Y)
    warm = structsvm.StructuredSVM(C=1.0, **kw).fit(X, Y)
    assert warm.learner_state_ is None  # no state: only w0 = coef_ carries over
    warm.set_params(C=2.0, warm_start=True)
    warm.fit(X, Y)
    assert cold.converged_ and warm.converged_ and cold.n_iter_ > 2
    assert warm.n_iter_ < cold.n_iter_
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-3)


def test_dual_cd_starts_from_the_outputs_most_violated_at_w0():
    """w0 seeds the caches before the first pass: the dual value D(α) = P − gap is
    above D(0) = 0 at the first certified pass (``max_iter=1`` certifies at once),
    and after two passes the seeded run is ahead of the one from w0 = 0 in both
    the dual and the primal."""
    X, Y = overlapping(n=60, seed=4)
    opt = structsvm.StructuredSVM(feature_map=MulticlassFeatures(), learner="dual_cd",
                                  C=1.0, tol=1e-8).fit(X, Y)
    fm = opt.feature_map_
    problem = Problem(fm.encode_inputs(X), fm.encode_outputs(Y), fm, get_decoder("argmax"),
                      get_loss("zero_one"), 1.0)
    w0 = 0.5 * opt.coef_
    for passes in (1, 2):
        zero = DualCD().solve(problem, np.zeros_like(w0), max_iter=passes, tol=0.0)
        warm = DualCD().solve(problem, w0, max_iter=passes, tol=0.0)
        dual_zero = zero.objective - zero.duality_gap
        dual_warm = warm.objective - warm.duality_gap
        assert dual_warm > dual_zero + 0.05 * opt.objective_
        if passes == 1:
            assert dual_zero == 0.0 and zero.objective == pytest.approx(len(X))
        else:
            assert warm.objective < zero.objective
