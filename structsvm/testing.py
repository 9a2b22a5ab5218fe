"""Conformance checks for structures: :func:`check_structure`, the check a structure's
author runs (as scikit-learn's ``check_estimator`` is for estimators)."""
from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .estimator import StructuredSVM, load
from .protocols import as_sequence, capability
from .structures import get_decoder, get_loss
from .structures.user import Structure, StructureLoss, as_structure, same_output

__all__ = ["check_structure"]


def check_structure(structure, X, Y, *, n_weights=3, random_state=0, save=True):
    """Check that ``structure`` keeps the contract of a structure on data X, Y.

    Each check raises an AssertionError whose message starts with the property
    that fails:

    - ``joint_feature``: a 1-D array or a 1 × d sparse row, of one length d for
      every (x, y) tried (the training pairs, ``outputs(x)``, the argmaxes);
    - ``argmax``: under a few random w, ``argmax(x, w)`` scores at least as high as
      every output the structure gives for x: ``outputs(x)`` where given, y, and the
      argmaxes and loss-augmented argmaxes of x under the other weights;
    - ``loss``: loss(y, y) == 0, and loss ≥ 0 (finite) on the pairs tried (y and
      the outputs of its own x: an output of another example is never compared);
    - ``loss_augmented_argmax``: where given, it maximises loss(y, ·) + w·Φ(x, ·)
      over the same outputs, also under weights scaled down until the loss weighs
      as much as the scores;
    - ``clone``/``get_params``: the parameters round-trip;
    - ``save``: a fitted model saves and loads back with ``trusted=`` and predicts
      the same (with ``save=True``).

    A structure whose outputs hold a hidden part (a :class:`structsvm.Structure` with
    ``latent = True``, or a built-in map that declares ``latent``) is checked on its
    complete outputs (y, h):

    - ``latent_argmax``: under a few random w, the completion of y it gives has y's
      label and scores at least as high as every other completion of y the
      structure gives (``outputs(x)`` where given, the argmaxes);
    - ``argmax``: it scores at least as high as every output tried, the
      completions included;
    - ``loss``: loss(y, (ŷ, ĥ)) ≥ 0 and finite on the outputs tried;
    - ``loss_augmented_argmax``: where given, it maximises loss(y, ·) + w·Φ(x, ·)
      over the outputs tried;
    - ``clone``/``get_params`` and ``save`` as above.

    Parameters
    ----------
    structure : Structure or FeatureMap
        A :class:`structsvm.Structure`, or a built-in feature map (checked through
        its ``joint_feature(x, y)``, ``potentials(x, w)`` and default decoder and
        loss, fitted on X, Y).
    X, Y : sequences of inputs and outputs (a few examples suffice).
    n_weights : int, default=3
        Random weight vectors tried.
    random_state : int, default=0
    save : bool, default=True
        Check that a fitted model saves and loads back (False for a structure that
        cannot be saved on purpose: plain functions, a class defined in a script).

    Raises
    ------
    AssertionError
        The first property that fails.

    Examples
    --------
    >>> import numpy as np, structsvm
    >>> from structsvm.testing import check_structure
    >>> from structsvm.structures import MulticlassFeatures
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]
    >>> check_structure(MulticlassFeatures(), X, ["a", "b", "a"])
    """
    X, Y = as_sequence(X, "X"), as_sequence(Y, "Y")
    assert len(X) == len(Y) and len(X) > 0, "X and Y must be non-empty, of equal length"
    _check_params(structure)
    user = as_structure(structure)
    if (user.latent if user is not None else capability(structure, "latent")):
        _check_latent(_latent_view(structure, X, Y), X, Y, n_weights, random_state)
        if save:
            _check_save(structure, X, Y)
        return
    view = _view(structure, X, Y)
    d = _check_joint_feature(view, X, Y)
    rng = np.random.default_rng(random_state)
    weights = [rng.normal(size=d) for _ in range(n_weights)]
    for i, (x, y) in enumerate(zip(X, Y)):
        y = view.encode(x, y)
        # the outputs the structure itself gives for x, under every weight tried
        found = [view.argmax(x, w) for w in weights]
        if view.laa is not None and view.truth_is_output:
            # (a built-in's loss-augmented argmax may range over more than its
            # outputs: a ranking's pair labellings)
            found += [view.laa(x, y, w) for w in weights]
        cands = _candidates(view, x, y) + found
        _check_loss(view, x, y, cands, i)
        for w in weights:
            _check_argmax(view, x, w, cands, i)
            if view.laa is not None:
                # at w the scores outweigh the loss; scaled down, the loss decides
                for v in (w, w / _loss_scale(view, x, y, w, cands, i)):
                    _check_laa(view, x, y, v, cands, i)
    if save:
        _check_save(structure, X, Y)


# --------------------------------------------------------------------------- views
class _View:
    """What the checks call, on outputs as the structure sees them (a built-in
    map's encoded outputs): phi(x, y), argmax(x, w), loss(y, y'), laa (or None),
    outputs (or None), and encode(x, y) of a training output."""

    def __init__(self, phi, argmax, loss, laa, outputs, encode=None,
                 truth_is_output=True):
        self.phi, self.argmax, self.loss, self.laa, self.outputs = \
            phi, argmax, loss, laa, outputs
        self.encode = encode if encode is not None else (lambda x, y: y)
        # whether training outputs are predictions too (a built-in map's encoded
        # truths need not be: a ranking's preferences vs the predicted orderings)
        self.truth_is_output = truth_is_output


def _view(structure, X, Y):
    user = as_structure(structure)
    if user is not None:
        laa = user.loss_augmented_argmax if user.provides("loss_augmented_argmax") \
            else None
        outs = user.outputs if user.provides("outputs") else None
        return _View(user.joint_feature, user.argmax, StructureLoss(user), laa, outs)
    fm = clone(structure).fit(X, Y)
    decoder = get_decoder(type(fm).default_decoder)
    loss = get_loss(type(fm).default_loss)
    for x, y in zip(X, Y):  # the public, raw-data method has the map's length
        n = _as_vector(fm.joint_feature(x, y), "joint_feature(x, y)").size
        assert n == fm.n_features_, f"joint_feature: {n} features, the map has " \
                                    f"{fm.n_features_}"

    def phi(x, ye):
        return fm.joint_features(fm.encode_inputs([x]), [ye]).toarray().ravel()

    def argmax(x, w):
        return decoder(fm.potentials(x, w))[0]

    def laa(x, ye, w):
        return decoder(fm.potentials(x, w).augment([ye], loss))[0]

    def outputs(x):
        batch = fm.potentials(x, np.zeros(fm.n_features_))
        if not type(batch).enumerable or batch.output_space_sizes()[0] > 2000:
            return None
        return list(batch[0].enumerate())

    def encode(x, y):
        return fm.encode_outputs([y], [x])[0]

    batch = type(fm.potentials(X[0], np.zeros(fm.n_features_)))
    adds = type(loss).decomposition in capability(batch, "augments")
    return _View(phi, argmax, loss, laa if adds else None, outputs,
                 encode=encode, truth_is_output=False)


class _LatentView:
    """What the latent checks call, on complete outputs as the structure sees them
    (a built-in map's encoded outputs): phi(x, out), argmax(x, w), complete(x, y, w)
    (the completion of the training output y), loss(y, out), laa (or None),
    outputs(x) (or None), completes(y, out) (whether out completes y), encode(x, y)
    and the length of Φ, ``n_features``."""

    def __init__(self, phi, argmax, complete, loss, laa, outputs, completes, encode,
                 n_features):
        self.phi, self.argmax, self.complete, self.loss = phi, argmax, complete, loss
        self.laa, self.outputs, self.completes = laa, outputs, completes
        self.encode, self.n_features = encode, n_features


def _latent_view(structure, X, Y):
    user = as_structure(structure)
    if user is not None:
        assert user.provides("latent_argmax"), \
            f"latent_argmax: {type(user).__name__} sets latent = True but does not " \
            "define latent_argmax(self, x, y, w)"
        laa = user.loss_augmented_argmax if user.provides("loss_augmented_argmax") \
            else None
        outs = user.outputs if user.provides("outputs") else None
        d = user.n_features
        if d is None:
            assert user.provides("init_latent"), \
                f"n_features: {type(user).__name__} is latent: set n_features or " \
                "define init_latent(self, x, y)"
            first = (Y[0], user.init_latent(X[0], Y[0]))
            d = _as_vector(user.joint_feature(X[0], first), "joint_feature").size
        return _LatentView(user.joint_feature, user.argmax,
                           lambda x, y, w: (y, user.latent_argmax(x, y, w)),
                           user.loss, laa, outs,
                           lambda y, out: same_output(out[0], y), lambda x, y: y, d)
    fm = clone(structure).fit(X, Y)
    decoder = get_decoder(type(fm).default_decoder)
    loss = fm.latent_loss(get_loss(type(fm).default_loss))

    def phi(x, out):
        return fm.joint_features(fm.encode_inputs([x]), [out]).toarray().ravel()

    def argmax(x, w):
        return decoder(fm.potentials(x, w))[0]

    def complete(x, ye, w):
        return fm.impute(fm.encode_inputs([x]), [ye], w)[0]

    def laa(x, ye, w):
        return decoder(fm.potentials(x, w).augment([ye], loss))[0]

    def outputs(x):
        batch = fm.potentials(x, np.zeros(fm.n_features_))
        if batch.output_space_sizes()[0] > 2000:
            return None
        return list(batch[0].enumerate())

    def completes(ye, out):
        # a built-in's training output may leave parts unknown (None): any label
        # completes those
        return all(a is None or a == b for a, b in zip(
            np.atleast_1d(np.asarray(fm.decode_outputs([ye])[0], dtype=object)),
            np.atleast_1d(np.asarray(fm.decode_outputs([out])[0], dtype=object))))

    def encode(x, y):
        return fm.encode_outputs([y], [x])[0]

    return _LatentView(phi, argmax, complete, loss, laa, outputs, completes, encode,
                       fm.n_features_)


def _check_latent(view, X, Y, n_weights, random_state):
    rng = np.random.default_rng(random_state)
    d = view.n_features
    for i, (x, y) in enumerate(zip(X, Y)):
        ye = view.encode(x, y)
        weights = [rng.normal(size=d) for _ in range(n_weights)]
        done = [view.complete(x, ye, w) for w in weights]
        outs = [] if view.outputs is None else list(view.outputs(x) or [])
        cands = outs + done + [view.argmax(x, w) for w in weights]
        if view.laa is not None:
            cands += [view.laa(x, ye, w) for w in weights]
        for out in cands:
            n = _as_vector(view.phi(x, out), f"sample {i} with {out!r}").size
            assert n == d, f"joint_feature: sample {i} with {out!r} has {n} features, " \
                           f"expected {d}: one length for every (x, (y, h))"
            v = _loss(view, ye, out, i)
            assert np.isfinite(v) and v >= 0, \
                f"loss: loss(y, {out!r}) = {v!r} for sample {i}; a loss is finite and >= 0"
        mine = [c for c in cands if view.completes(ye, c)]
        for w, h in zip(weights, done):
            assert view.completes(ye, h), \
                f"latent_argmax: for sample {i} it completes y = {y!r} as {h!r}, an " \
                "output of another y"
            s_h = _score(view, x, h, w)
            for c in mine:
                s = _score(view, x, c, w)
                assert s_h >= s - _tol(s), \
                    f"latent_argmax: for sample {i} and a random w, the completion " \
                    f"{h!r} of y scores {s_h:.6g} but the completion {c!r} scores {s:.6g}"
        for w in weights:
            _check_argmax(view, x, w, cands, i)
            if view.laa is not None:
                for v in (w, w / _loss_scale_latent(view, x, ye, w, cands, i)):
                    y_hat = view.laa(x, ye, v)
                    best = _loss(view, ye, y_hat, i) + _score(view, x, y_hat, v)
                    for c in cands:
                        val = _loss(view, ye, c, i) + _score(view, x, c, v)
                        assert best >= val - _tol(val), \
                            f"loss_augmented_argmax: for sample {i} and a random w, " \
                            f"it returns {y_hat!r} with loss + score {best:.6g} but " \
                            f"{c!r} has {val:.6g}"


def _loss_scale_latent(view, x, ye, w, cands, i):
    """As :func:`_loss_scale`, over complete outputs."""
    scores = [_score(view, x, c, w) for c in cands]
    losses = [_loss(view, ye, c, i) for c in cands]
    spread = max(losses) - min(losses)
    if spread <= 0:
        return 1.0
    return max(1.0, 4.0 * (max(scores) - min(scores)) / spread)


# --------------------------------------------------------------------------- checks
def _as_vector(phi, what):
    if sp.issparse(phi):
        assert phi.ndim == 2 and phi.shape[0] == 1, \
            f"joint_feature: {what} returned a sparse matrix of shape {phi.shape}, " \
            "not a 1 x d row"
        return np.asarray(phi.toarray(), dtype=float).ravel()
    phi = np.asarray(phi)
    assert phi.ndim == 1, f"joint_feature: {what} returned shape {phi.shape}, not a " \
                          "1-D array or a 1 x d sparse row"
    assert phi.dtype.kind in "biuf", f"joint_feature: {what} returned dtype {phi.dtype}"
    return phi.astype(float)


def _check_joint_feature(view, X, Y):
    d = None
    for i, (x, y) in enumerate(zip(X, Y)):
        pairs = [(view.encode(x, y), "y")] + [(o, "an output of outputs(x)")
                                              for o in _outputs(view, x)]
        for out, name in pairs:
            n = _as_vector(view.phi(x, out), f"sample {i} with {name}").size
            d = n if d is None else d
            assert n == d, f"joint_feature: sample {i} with {name} has {n} features, " \
                            f"sample 0 has {d}: one length for every (x, y)"
    return d


def _outputs(view, x):
    if view.outputs is None:
        return []
    out = view.outputs(x)
    return [] if out is None else list(out)


def _score(view, x, y, w):
    return float(_as_vector(view.phi(x, y), "an output tried") @ w)


def _candidates(view, x, y):
    """Outputs of x to compare with, besides the argmaxes: outputs(x) where given,
    and y when training outputs are predictions too. Never another example's output
    (it need not belong to x: a sentence of another length)."""
    outs = _outputs(view, x)
    return outs + ([y] if view.truth_is_output else [])


def _loss_scale(view, x, y, w, cands, i):
    """How much larger the scores' spread is under w than the losses' spread over the
    candidates (at least 1): w divided by it lets the loss decide the
    loss-augmented argmax."""
    scores = [_score(view, x, c, w) for c in cands]
    losses = [_loss(view, y, c, i) for c in _predictions(view, x, y, cands)]
    spread = max(losses) - min(losses)
    if spread <= 0:
        return 1.0
    return max(1.0, 4.0 * (max(scores) - min(scores)) / spread)


def _tol(s):
    return 1e-8 * (1.0 + abs(s))


def _check_argmax(view, x, w, cands, i):
    y_hat = view.argmax(x, w)
    s_hat = _score(view, x, y_hat, w)
    for y in cands:
        s = _score(view, x, y, w)
        assert s_hat >= s - _tol(s), \
            f"argmax: for sample {i} and a random w, argmax(x, w) = {y_hat!r} scores " \
            f"{s_hat:.6g} but {y!r} scores {s:.6g}"


def _loss(view, a, b, i):
    try:
        return float(view.loss(a, b))
    except ValueError as exc:
        raise AssertionError(f"loss: sample {i}: {exc}") from None


def _predictions(view, x, y, cands):
    """The candidates that are predictions (a loss's second argument): with y when
    training outputs are predictions too."""
    return cands + [y] if view.truth_is_output else cands


def _check_loss(view, x, y, cands, i):
    zero = _loss(view, y, y, i)
    assert zero == 0, f"loss: loss(y, y) = {zero!r} for sample {i}, not 0"
    for other in _predictions(view, x, y, cands):
        v = _loss(view, y, other, i)
        assert np.isfinite(v) and v >= 0, \
            f"loss: loss(y, {other!r}) = {v!r} for sample {i}; a loss is finite and >= 0"


def _check_laa(view, x, y, w, cands, i):
    y_hat = view.laa(x, y, w)
    v_hat = _loss(view, y, y_hat, i) + _score(view, x, y_hat, w)
    # a built-in's loss-augmented argmax may range over a larger space than its
    # argmax (a ranking's pair labellings): compared with y and outputs(x) only
    others = _predictions(view, x, y, cands) if view.truth_is_output else \
        _outputs(view, x)
    for other in others + [y]:
        v = _loss(view, y, other, i) + _score(view, x, other, w)
        assert v_hat >= v - _tol(v), \
            f"loss_augmented_argmax: for sample {i} and a random w, it returns " \
            f"{y_hat!r} with loss + score {v_hat:.6g} but {other!r} has {v:.6g}"


def _check_params(structure):
    params = structure.get_params(deep=False)
    try:
        copy = clone(structure)
    except RuntimeError as exc:
        raise AssertionError(f"clone: {exc}") from None
    assert type(copy) is type(structure), "clone: the copy is of another class"
    again = type(structure)(**params).get_params(deep=False)
    for k, v in params.items():
        assert k in again and _same_param(again[k], v), \
            f"get_params: parameter {k!r} does not round-trip through " \
            f"{type(structure).__name__}(**get_params()); __init__ must store each " \
            "parameter under its own name, unchanged"


def _same_param(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _check_save(structure, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StructuredSVM(feature_map=structure, max_iter=3).fit(X, Y)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.npz")
        try:
            model.save(path)
        except ValueError as exc:
            raise AssertionError(f"save: the fitted model cannot be saved ({exc})") \
                from None
        back = load(path, trusted=[type(structure)])
    before, after = model.predict(X), back.predict(X)
    for i, (a, b) in enumerate(zip(before, after)):
        assert same_output(a, b), f"save: the loaded model predicts {b!r} for sample " \
                                  f"{i}, the saved one {a!r}"
    assert isinstance(structure, Structure) or type(back.feature_map_) is \
        type(model.feature_map_), "save: the loaded model has another feature map"
