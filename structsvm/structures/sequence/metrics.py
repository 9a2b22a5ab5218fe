"""Sequence metrics: token and sentence accuracy, conlleval-compatible chunk scores,
and the margins of predicted chunks.

Each function validates its inputs and names the offending sentence.
"""
from __future__ import annotations

import numpy as np

__all__ = ["token_accuracy", "sentence_accuracy", "iob_chunks", "chunk_scores",
           "chunk_f1", "chunk_margins"]


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


def chunk_margins(tags, max_marginals, tag_set):
    """The margin of every chunk of a predicted tagging: its score minus the best
    score of a tagging without that chunk.

    With μ_t(c) the max-marginals of the tagging's chains
    (:meth:`StructuredSVM.predict_max_marginals`) and m_t = μ_t(ŷ_t) − max_{c ≠ ŷ_t}
    μ_t(c) the tokens' margins, a chunk (X, s, e) (tokens s .. e − 1) is lost by
    changing a token inside it, by continuing it past its end (I-X or E-X at e), or,
    for a chunk that starts with I-X, by a previous token of type X joining it:

    .. math::

        m(X, s, e) = \\min\\Big(\\min_{s \\le t < e} m_t,\\;
            \\max_c \\mu_e(c) - \\max_{c \\in \\{I-X, E-X\\}} \\mu_e(c),\\;
            \\max_c \\mu_{s-1}(c) - \\max_{c \\in \\{B-X, I-X\\}} \\mu_{s-1}(c)\\Big)

    (the last term for chunks starting with I-X only). It is the exact margin for a
    chunk that starts with B-X when the max-marginals range over BIO-valid taggings
    of a B/I/O tag set (decoding under ``OutputConstraints(transitions="BIO")``);
    otherwise a lower bound (a tagging that changes a token of the chunk may keep it,
    e.g. B-X → I-X after O).

    Parameters
    ----------
    tags : list of str
        The predicted tagging.
    max_marginals : ndarray of shape (n_tokens, n_tags)
        Its max-marginals, columns in the order of ``tag_set``.
    tag_set : sequence of str
        The tags (a fitted map's ``tags_``).

    Returns
    -------
    list of ((str, int, int), float)
        Every chunk ``(type, start, end)`` of :func:`iob_chunks`, with its margin.

    Examples
    --------
    >>> import numpy as np
    >>> mm = np.array([[5., 3., 1.],     # B-NP, I-NP, O at token 0
    ...                [2., 5., 4.],     # token 1
    ...                [3.5, 4.5, 5.]])   # token 2
    >>> chunk_margins(["B-NP", "I-NP", "O"], mm, ["B-NP", "I-NP", "O"])
    [(('NP', 0, 2), 0.5)]
    """
    tags = list(tags)
    mm = np.asarray(max_marginals, dtype=float)
    index = {t: k for k, t in enumerate(tag_set)}
    if mm.shape != (len(tags), len(index)):
        raise ValueError(f"max_marginals has shape {mm.shape}, expected "
                         f"{(len(tags), len(index))} (tokens x tags)")
    if not len(tags):
        return []
    own = np.array([mm[t, index[tag]] for t, tag in enumerate(tags)])
    other = mm.copy()
    other[np.arange(len(tags)), [index[tag] for tag in tags]] = -np.inf
    token = own - other.max(axis=1)
    top = mm.max(axis=1)

    def best_of(t, names):
        cols = [index[c] for c in names if c in index]
        return mm[t, cols].max() if cols else -np.inf

    out = []
    for typ, s, e in iob_chunks(tags):
        m = token[s:e].min()
        if e < len(tags):
            m = min(m, top[e] - best_of(e, (f"I-{typ}", f"E-{typ}")))
        if tags[s].startswith("I-") and s > 0:
            m = min(m, top[s - 1] - best_of(s - 1, (f"B-{typ}", f"I-{typ}")))
        out.append(((typ, s, e), float(max(m, 0.0))))
    return out
