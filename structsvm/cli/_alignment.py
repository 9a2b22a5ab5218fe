"""The command line's ``--task alignment``: aligned pairs in, aligned pairs out.

The text format is :mod:`structsvm.corpora.alignment`'s (blocks of two gapped rows);
``structsvm classify`` writes its predictions in the same format, so a prediction
file can be read back, scored, or given to ``structsvm learn``.
"""
from __future__ import annotations

__all__ = ["read_pairs", "predict_lines"]


def read_pairs(path, *, training):
    """(X, Y) of an aligned-pairs file; training data must be aligned throughout."""
    from ..corpora.alignment import read_alignment_pairs

    return read_alignment_pairs(path, require_alignment=training)


def predict_lines(predict, X, Y):
    """(lines of the predicted alignments, summary) for pairs X with gold Y or None.

    ``predict`` maps a list of pairs to their alignments. The summary scores the
    predictions of the pairs that come with a gold alignment (Q: gold pairs
    recovered; precision: predicted pairs that are gold, both pooled).
    """
    from ..corpora.alignment import _pair_lines
    from ..structures.alignment.metrics import alignment_scores

    pred = predict(X)
    lines = _pair_lines(X, pred)
    gold = [k for k, y in enumerate(Y) if y is not None]
    if not gold:
        return lines, "no gold alignment to score"
    scores = alignment_scores([Y[k] for k in gold], [pred[k] for k in gold])
    summary = f"Q {scores['Q']:.4f}, precision {scores['precision']:.4f}"
    if len(gold) < len(X):
        summary += f" (scored on the {len(gold)} pairs with a gold alignment)"
    return lines, summary
