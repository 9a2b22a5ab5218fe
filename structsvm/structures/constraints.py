"""Constraints on predicted outputs: parts fixed to a label, labels allowed or
forbidden per part, allowed transitions; what every structure that takes them
shares (the rules as users write them, checked, and their masks over a structure's
choices)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["OutputConstraints", "as_constraint_list", "part_mask"]

#: the transition schemes known by name (chunk tags: B-/I-/E-/S- prefixes and O)
SCHEMES = ("BIO", "IOB2", "IOB1", "BIOES", "IOBES")


class OutputConstraints:
    """Rules a predicted output must obey: decoding then finds the best output among
    those that obey them (exactly: the decoders stay exact).

    A *part* is a position of an output as ``predict`` returns it: token t of a
    tagged sentence (its tag), word d of a parse (``y[d - 1]``, its head), the one
    part 0 of a class label. Parts are numbered from 0.

    Parameters
    ----------
    fixed : dict of int to label, optional
        Parts whose label is known: ``{3: "B-PER"}`` (token 3 is tagged B-PER),
        ``{0: 2}`` (word 1 hangs on word 2).
    allowed : dict of int to iterable of labels, optional
        Parts that may take only these labels.
    forbidden : dict of int to iterable of labels, optional
        Parts that may not take these labels.
    transitions : str, callable or collection of pairs, optional
        Sequences only: which tag may follow which. ``"BIO"`` (alias ``"IOB2"``:
        I-X only after B-X or I-X), ``"IOB1"`` (B-X only after a token of type X),
        ``"BIOES"`` (alias ``"IOBES"``: B-X and I-X before I-X or E-X only, E-X, S-X
        and O before B-, S- or O or the end; a sentence starts with B-, S- or O),
        a function ``allowed(previous, tag) -> bool`` (``previous`` None at the
        sentence's start, ``tag`` None at its end), or a collection of the allowed
        ``(previous, tag)`` pairs (None for start and end; every pair not listed is
        forbidden).

    Notes
    -----
    Decoding under constraints scores every output they forbid −∞ (a forbidden tag
    or transition, an arc into a word from a forbidden head) and runs the same exact
    search: the result is the highest-scoring output among those the constraints
    allow. When they allow none, prediction raises a ValueError naming the sample.

    Examples
    --------
    >>> c = OutputConstraints(fixed={0: "B-NP"}, forbidden={2: ["O"]}, transitions="BIO")
    >>> c
    OutputConstraints(fixed={0: 'B-NP'}, forbidden={2: ['O']}, transitions='BIO')
    """

    def __init__(self, fixed=None, allowed=None, forbidden=None, transitions=None):
        self.fixed = _parts(fixed, "fixed", single=True)
        self.allowed = _parts(allowed, "allowed")
        self.forbidden = _parts(forbidden, "forbidden")
        if isinstance(transitions, str):
            if transitions.upper() not in SCHEMES:
                raise ValueError(f"transitions={transitions!r}: choose one of "
                                 f"{list(SCHEMES)}, a function allowed(previous, tag) or "
                                 "a collection of allowed (previous, tag) pairs")
            transitions = transitions.upper()
        elif transitions is not None and not callable(transitions):
            try:
                pairs = [tuple(p) for p in transitions]
            except TypeError:
                raise TypeError(f"transitions must be a scheme name, a function or a "
                                f"collection of (previous, tag) pairs, got "
                                f"{type(transitions).__name__}") from None
            if any(len(p) != 2 for p in pairs):
                raise ValueError("transitions: every allowed transition is a pair "
                                 "(previous, tag)")
            transitions = frozenset(pairs)
        self.transitions = transitions

    def __repr__(self):
        args = [f"{name}={value!r}" for name, value in
                (("fixed", self.fixed), ("allowed", self.allowed),
                 ("forbidden", self.forbidden), ("transitions", self.transitions))
                if value]
        return f"OutputConstraints({', '.join(args)})"

    def parts(self):
        """Every part named by ``fixed``, ``allowed`` or ``forbidden``, sorted."""
        return sorted(set(self.fixed) | set(self.allowed) | set(self.forbidden))

    def allows_transition(self, previous, tag):
        """Whether ``tag`` may follow ``previous`` (None: the sentence's start or
        end) under ``transitions``; every transition when it is None."""
        rule = self.transitions
        if rule is None:
            return True
        if isinstance(rule, str):
            return _SCHEME_RULES[rule](previous, tag)
        if callable(rule):
            return bool(rule(previous, tag))
        return (previous, tag) in rule


def _parts(spec, name, single=False):
    """``{part: label}`` (single) or ``{part: [labels]}`` checked: parts are ints >= 0."""
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise TypeError(f"{name} must be a dict from part (an int >= 0) to "
                        f"{'a label' if single else 'labels'}, got {type(spec).__name__}")
    out = {}
    for part, labels in spec.items():
        if isinstance(part, bool) or not isinstance(part, (int, np.integer)) or part < 0:
            raise ValueError(f"{name}: part {part!r} is not an int >= 0")
        if single:
            out[int(part)] = labels
        elif isinstance(labels, (str, bytes)) or not _iterable(labels):
            raise TypeError(f"{name}[{part}] must be a list of labels, got {labels!r}")
        else:
            out[int(part)] = list(labels)
    return out


def _iterable(x):
    try:
        iter(x)
    except TypeError:
        return False
    return True


# --------------------------------------------------------------------------- schemes
def _chunk_tag(tag):
    """(kind, type) of a chunk tag: ("O", "") or one of B/I/E/S and the type."""
    if tag == "O":
        return "O", ""
    if isinstance(tag, str) and len(tag) > 2 and tag[1] == "-" and tag[0] in "BIES":
        return tag[0], tag[2:]
    raise ValueError(f"transitions: tag {tag!r} is not a chunk tag (O, or B-, I-, E-, "
                     "S- followed by a type)")


def _bio(previous, tag):
    if tag is None:
        return True
    kind, typ = _chunk_tag(tag)
    if kind in "ES":
        raise ValueError(f"transitions='BIO': tag {tag!r} belongs to BIOES, not BIO")
    if kind != "I":
        return True
    if previous is None:
        return False
    pk, pt = _chunk_tag(previous)
    return pk in "BI" and pt == typ


def _iob1(previous, tag):
    if tag is None:
        return True
    kind, typ = _chunk_tag(tag)
    if kind in "ES":
        raise ValueError(f"transitions='IOB1': tag {tag!r} belongs to BIOES, not IOB1")
    if kind != "B":
        return True
    if previous is None:
        return False
    pk, pt = _chunk_tag(previous)
    return pk in "BI" and pt == typ


def _bioes(previous, tag):
    pk, pt = ("O", "") if previous is None else _chunk_tag(previous)
    kind, typ = ("O", "") if tag is None else _chunk_tag(tag)
    if pk in "BI":  # inside a chunk: continue or close it
        return tag is not None and kind in "IE" and typ == pt
    return kind in "BSO"  # outside: open a chunk, a single, O, or the end


_SCHEME_RULES = {"BIO": _bio, "IOB2": _bio, "IOB1": _iob1, "BIOES": _bioes,
                 "IOBES": _bioes}


# --------------------------------------------------------------------------- helpers
def as_constraint_list(constraints, n):
    """One :class:`OutputConstraints` (or None) per example: ``constraints`` given
    once for all ``n`` examples, or as a list of ``n``."""
    if constraints is None or isinstance(constraints, OutputConstraints):
        return [constraints] * n
    if isinstance(constraints, (str, bytes, Mapping)) or not _iterable(constraints):
        raise TypeError(f"constraints must be an OutputConstraints or a list of them "
                        f"(one per example), got {type(constraints).__name__}")
    out = list(constraints)
    if len(out) != n:
        raise ValueError(f"constraints has {len(out)} entries for {n} examples")
    for i, c in enumerate(out):
        if c is not None and not isinstance(c, OutputConstraints):
            raise TypeError(f"Sample {i}: constraints must be an OutputConstraints or "
                            f"None, got {type(c).__name__}")
    return out


def part_mask(constraints, n_parts, n_choices, encode, sample, what="part"):
    """The (n_parts, n_choices) mask of the choices ``constraints`` allow at every part
    (None: no part is constrained).

    Parameters
    ----------
    constraints : OutputConstraints or None
    n_parts, n_choices : int
    encode : callable
        ``encode(label, part)`` the choice (an int) or choices (an array of ints) a
        label stands for at a part (raises ValueError naming an unknown label).
    sample : int
        The example's index, for messages.
    what : str
        What a part is, for messages ("token", "word", ...).
    """
    if constraints is None or not constraints.parts():
        return None
    mask = np.ones((n_parts, n_choices), dtype=bool)
    for part in constraints.parts():
        if part >= n_parts:
            raise ValueError(f"Sample {sample}: constraints name {what} {part}, but the "
                             f"output has {n_parts} {what}s (0 .. {n_parts - 1})")
    for part, label in constraints.fixed.items():
        choice = encode(label, part)
        mask[part] = False
        mask[part, choice] = True
    for part, labels in constraints.allowed.items():
        ok = np.zeros(n_choices, dtype=bool)
        for lab in labels:
            ok[encode(lab, part)] = True
        mask[part] &= ok
    for part, labels in constraints.forbidden.items():
        for lab in labels:
            mask[part, encode(lab, part)] = False
    return mask
