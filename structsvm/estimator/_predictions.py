"""What a fitted estimator predicts beyond the best output: decoding under output
constraints, max-marginals and margins per part and per output, and the k best
outputs (private; :class:`~structsvm.estimator.StructuredSVM` calls these).

Every function works through the fitted map's batches of potentials, in chunks of
examples, and the resolved decoder's declared capabilities
(:class:`~structsvm.protocols.Decoder`: ``max_marginals``, ``nbest``); constraints go
through the map's ``constrain_potentials``. A decoder without a k-best search gets
its k best by enumeration (small output spaces), one without a max-marginal search
its part margins by decoding once more per part with the predicted choice
forbidden (exact, through the constraints).
"""
from __future__ import annotations

import numpy as np

from ..protocols import capability
from ..structures.constraints import OutputConstraints, as_constraint_list
from ..structures.exhaustive import exhaustive_nbest

#: examples decoded per batch when predicting
CHUNK = 4096


# --------------------------------------------------------------------------- batches
def _group_key(c):
    """Examples whose constraints share this key may share a batch (a chain batch
    shares one transition table)."""
    if c is None or c.transitions is None:
        return None
    t = c.transitions
    return t if isinstance(t, (str, frozenset)) else ("callable", id(t))


def batches(model, Xe, n, constraints):
    """``(idx, batch)`` over the examples, in chunks, each batch constrained.

    Raises
    ------
    TypeError
        Constraints for a feature map that takes none.
    """
    fm, w = model.feature_map_, model.coef_
    cons = as_constraint_list(constraints, n)
    restrict = None
    if any(c is not None for c in cons):
        restrict = capability(fm, "constrain_potentials")
        if restrict is None:
            raise TypeError(f"{type(fm).__name__} takes no output constraints (the "
                            "maps of sequences, dependency trees and classes do)")
    groups = {}
    for i, c in enumerate(cons):
        groups.setdefault(_group_key(c), []).append(i)
    for members in groups.values():
        members = np.asarray(members, dtype=np.intp)
        for start in range(0, members.size, CHUNK):
            idx = members[start:start + CHUNK]
            batch = fm.batch_potentials(Xe, w, idx)
            if restrict is not None:
                try:
                    batch = restrict(batch, [cons[i] for i in idx])
                except ValueError as exc:
                    raise ValueError(_renumber(str(exc), idx)) from None
            yield idx, batch


def _renumber(msg, idx):
    """A message naming "Sample j" of a batch, naming the example's own index."""
    if msg.startswith("Sample "):
        head, _, rest = msg[len("Sample "):].partition(":")
        if head.isdigit() and int(head) < len(idx):
            return f"Sample {int(idx[int(head)])}:{rest}"
    return msg


def _check_feasible(batch, outputs, idx):
    """Refuse outputs of score −inf: the constraints allowed no output."""
    scores = np.asarray(batch.score(list(outputs)), dtype=float).reshape(-1)
    bad = np.flatnonzero(scores == -np.inf)
    if bad.size:
        raise ValueError(f"Sample {int(idx[bad[0]])}: the constraints allow no output")


def _in_order(n, pieces):
    out = [None] * n
    for idx, values in pieces:
        for i, v in zip(idx, values):
            out[int(i)] = v
    return out


# --------------------------------------------------------------------------- argmax
def decode(model, Xe, n, constraints):
    """The best encoded output of every example under ``constraints``."""
    pieces = []
    for idx, batch in batches(model, Xe, n, constraints):
        out = list(model.decoder_(batch))
        _check_feasible(batch, out, idx)
        pieces.append((idx, out))
    return _in_order(n, pieces)


# --------------------------------------------------------------------------- margins
def _needs(model, what):
    decoder = model.decoder_
    func = getattr(decoder, what)  # a Decoder field, None when not declared
    if func is None:
        raise TypeError(f"decoder {decoder.name!r} ({decoder.structure} outputs) "
                        f"declares no {what.replace('_', '-')} search")
    return func


def max_marginals(model, Xe, n, constraints):
    """Every example's max-marginal table (n_parts, n_choices), its best output
    (encoded) and the best score."""
    func = _needs(model, "max_marginals")
    pieces = []
    for idx, batch in batches(model, Xe, n, constraints):
        tables, best = func(batch)
        outputs = list(model.decoder_(batch))
        bad = np.flatnonzero(np.asarray(best) == -np.inf)
        if bad.size:
            raise ValueError(f"Sample {int(idx[bad[0]])}: the constraints allow no "
                             "output")
        pieces.append((idx, list(zip(tables, outputs, np.asarray(best, dtype=float)))))
    return _in_order(n, pieces)


def _redecoded_margins(model, Xe, n, constraints):
    """Part margins by decoding again with each part's predicted choice forbidden
    (for decoders without a max-marginal search but exact under constraints):
    margin_p = s(ŷ) − max {s(y) : y_p ≠ ŷ_p}, one decode per part."""
    fm = model.feature_map_
    if capability(fm, "constrain_potentials") is None:
        raise TypeError(f"decoder {model.decoder_.name!r} declares no max-marginals "
                        f"search, and {type(fm).__name__} takes no constraints to find "
                        "margins by decoding again")
    cons = as_constraint_list(constraints, n)
    best = decode(model, Xe, n, constraints)
    raw = fm.decode_outputs(best)
    out = []
    for i in range(n):
        parts = len(np.ravel(best[i]))
        if not parts:
            out.append(np.zeros(0))
            continue
        c = cons[i] or OutputConstraints()
        # the label of each part (an output of one part, such as a class, is its own)
        labels = [raw[i]] if np.ndim(best[i]) == 0 else list(raw[i])
        rows = np.full(parts, i, dtype=np.intp)
        batch = fm.batch_potentials(Xe, model.coef_, rows)
        own = float(np.asarray(batch[0].score(best[i])))
        others = [OutputConstraints(c.fixed, c.allowed,
                                    {**c.forbidden, p: c.forbidden.get(p, []) +
                                     [labels[p]]}, c.transitions)
                  for p in range(parts)]
        restricted = fm.constrain_potentials(batch, others)
        alt = list(model.decoder_(restricted))
        scores = np.asarray(restricted.score(alt), dtype=float).reshape(-1)
        with np.errstate(invalid="ignore"):
            out.append(np.maximum(own - scores, 0.0))
    return out


def part_margins(table, y):
    """The margin of every part of output y: its max-marginal minus the best of
    another choice there (+inf where no other choice is allowed; at least 0)."""
    y = np.asarray(y, dtype=np.intp).reshape(-1)
    table = np.asarray(table, dtype=float)
    if table.shape[0] != y.size:
        raise ValueError(f"{table.shape[0]} parts in the max-marginals for an output of "
                         f"{y.size}")
    if not y.size:
        return np.zeros(0)
    rows = np.arange(y.size)
    own = table[rows, y]
    other = table.copy()
    other[rows, y] = -np.inf
    runner = other.max(axis=1)
    with np.errstate(invalid="ignore"):
        return np.maximum(own - runner, 0.0)


def margins(model, Xe, n, constraints, level):
    """Margins of the predicted outputs: per part (a list of arrays) or per output
    (an array: the best output's score minus the second best's)."""
    if level not in ("part", "output"):
        raise ValueError(f"level must be 'part' or 'output', got {level!r}")
    decoder = model.decoder_
    constrainable = capability(model.feature_map_, "constrain_potentials") is not None
    if decoder.max_marginals is None and level == "output" and not constrainable:
        out = np.empty(n)            # the second best from the k-best search
        for i, (_, scores) in enumerate(nbest(model, Xe, n, 2, constraints)):
            out[i] = scores[0] - scores[1] if len(scores) > 1 else np.inf
        return out
    if decoder.max_marginals is None:
        parts = _redecoded_margins(model, Xe, n, constraints)
    else:
        found = max_marginals(model, Xe, n, constraints)
        parts = [part_margins(table, y) for table, y, _ in found]
    if level == "part":
        return parts
    return np.array([p.min() if p.size else np.inf for p in parts])


# --------------------------------------------------------------------------- n-best
def nbest(model, Xe, n, k, constraints):
    """Every example's k best encoded outputs and their scores, best first."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    func = model.decoder_.nbest or exhaustive_nbest
    pieces = []
    for idx, batch in batches(model, Xe, n, constraints):
        found = func(batch, int(k))
        for j, (outputs, scores) in enumerate(found):
            if not len(outputs):
                raise ValueError(f"Sample {int(idx[j])}: the constraints allow no "
                                 "output")
        pieces.append((idx, found))
    return _in_order(n, pieces)


__all__ = ["OutputConstraints", "batches", "decode", "max_marginals", "part_margins",
           "margins", "nbest"]
