"""Evaluation metrics for structured outputs (raw, decoded outputs).

Sections: sequences (token/sentence accuracy, chunk F1), rankings (NDCG, MAP,
pairwise accuracy, Kendall's τ), trees (tree distance). Each function validates its
inputs and names the offending sample.
"""
from __future__ import annotations

import numpy as np

__all__ = []

# ----------------------------------------------------------------------- sequences

# ----------------------------------------------------------------------- rankings

# ----------------------------------------------------------------------- trees
