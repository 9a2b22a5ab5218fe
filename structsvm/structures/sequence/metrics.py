"""Sequence metrics: token and sentence accuracy, conlleval-compatible chunk scores.

Each function validates its inputs and names the offending sentence.
"""
from __future__ import annotations

__all__ = ["token_accuracy", "sentence_accuracy", "iob_chunks", "chunk_scores",
           "chunk_f1"]


def _check_tag_lists(Y_true, Y_pred):
    Y_true, Y_pred = list(Y_true), list(Y_pred)
    if len(Y_true) != len(Y_pred):
        raise ValueError(f"Y_true has {len(Y_true)} sentences but Y_pred has {len(Y_pred)}")
    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        if isinstance(a, str) or isinstance(b, str):
            raise TypeError(f"Sentence {i}: expected a list of tags, got a string")
        if len(a) != len(b):
            raise ValueError(f"Sentence {i}: {len(a)} true tags but {len(b)} predicted")
    return Y_true, Y_pred


def token_accuracy(Y_true, Y_pred):
    """Fraction of tokens whose predicted tag equals the true one (over all sentences).

    A true tag the model never saw counts as an error, like any other mismatch.

    Examples
    --------
    >>> token_accuracy([["D", "N"], ["V"]], [["D", "V"], ["V"]])
    0.6666666666666666
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    n = sum(len(y) for y in Y_true)
    if n == 0:
        raise ValueError("token_accuracy needs at least one token")
    return sum(a == b for y, z in zip(Y_true, Y_pred) for a, b in zip(y, z)) / n


def sentence_accuracy(Y_true, Y_pred):
    """Fraction of sentences tagged entirely correctly.

    Examples
    --------
    >>> sentence_accuracy([["D", "N"], ["V"]], [["D", "V"], ["V"]])
    0.5
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    if not Y_true:
        raise ValueError("sentence_accuracy needs at least one sentence")
    return sum(list(a) == list(b) for a, b in zip(Y_true, Y_pred)) / len(Y_true)


def _split_tag(tag):
    if tag == "O" or tag is None:
        return "O", ""
    if not isinstance(tag, str) or len(tag) < 2 or tag[1] != "-" or tag[0] not in "BIES":
        raise ValueError(f"chunk tag {tag!r} is not 'O' or B-/I-/E-/S- followed by a type")
    return tag[0], tag[2:]


def iob_chunks(tags):
    """Chunks ``(type, start, end)`` (end exclusive) of one tag sequence.

    Reads IOB2 (every chunk starts with ``B-``), IOB1 (``B-`` only between adjacent
    chunks of one type) and IOBES with conlleval's rules: a chunk starts at ``B-``/
    ``S-``, at an ``I-``/``E-`` after ``O`` or after a chunk's end, or where the type
    changes; it ends before ``B-``/``S-``/``O``, after ``E-``/``S-``, or where the
    type changes.

    Examples
    --------
    >>> iob_chunks(["B-NP", "I-NP", "B-VP", "I-NP", "O", "I-PP"])
    [('NP', 0, 2), ('VP', 2, 3), ('NP', 3, 4), ('PP', 5, 6)]
    """
    out, start, prev, prev_type = [], None, "O", ""
    for t, tag in enumerate(list(tags) + ["O"]):
        kind, typ = _split_tag(tag)
        ends = (prev in "ES" or (prev in "BI" and kind in "BSO")
                or (prev != "O" and prev_type != typ))
        if ends and start is not None:
            out.append((prev_type, start, t))
            start = None
        begins = (kind in "BS" or (prev in "ESO" and kind in "EI")
                  or (kind != "O" and prev_type != typ))
        if begins and kind != "O":
            start = t
        prev, prev_type = kind, typ
    return out


def chunk_scores(Y_true, Y_pred):
    """Chunk precision, recall and F1 (conlleval-compatible), overall and per type.

    A predicted chunk is correct when a true chunk has the same type, start and end.
    P = correct / predicted chunks, R = correct / true chunks, F1 = 2PR / (P + R)
    (0 when undefined), as printed by the CoNLL shared tasks' ``conlleval``.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1``, ``n_true``, ``n_pred``, ``n_correct`` and
        ``per_type`` (type -> dict with the same keys).

    References
    ----------
    E. F. Tjong Kim Sang, S. Buchholz. Introduction to the CoNLL-2000 shared task:
    chunking. CoNLL 2000.

    Examples
    --------
    >>> s = chunk_scores([["B-NP", "I-NP", "B-VP"]], [["B-NP", "B-NP", "B-VP"]])
    >>> round(s["precision"], 3), round(s["recall"], 3), round(s["f1"], 3)
    (0.333, 0.5, 0.4)
    """
    Y_true, Y_pred = _check_tag_lists(Y_true, Y_pred)
    counts = {}

    def bump(typ, key):
        counts.setdefault(typ, {"n_true": 0, "n_pred": 0, "n_correct": 0})[key] += 1

    for i, (a, b) in enumerate(zip(Y_true, Y_pred)):
        try:
            ta, tb = set(iob_chunks(a)), set(iob_chunks(b))
        except ValueError as exc:
            raise ValueError(f"Sentence {i}: {exc}") from None
        for c in ta:
            bump(c[0], "n_true")
        for c in tb:
            bump(c[0], "n_pred")
        for c in ta & tb:
            bump(c[0], "n_correct")

    def prf(d):
        p = d["n_correct"] / d["n_pred"] if d["n_pred"] else 0.0
        r = d["n_correct"] / d["n_true"] if d["n_true"] else 0.0
        return dict(d, precision=p, recall=r, f1=2 * p * r / (p + r) if p + r else 0.0)

    total = {k: sum(d[k] for d in counts.values()) for k in ("n_true", "n_pred",
                                                              "n_correct")}
    out = prf(total)
    out["per_type"] = {t: prf(d) for t, d in sorted(counts.items())}
    return out


def chunk_f1(Y_true, Y_pred):
    """Overall chunk F1 of :func:`chunk_scores`."""
    return chunk_scores(Y_true, Y_pred)["f1"]
