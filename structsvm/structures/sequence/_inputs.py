"""What the sequence map is given, checked and turned into arrays: its parameters, the
input kind (token lists or per-sentence matrices), the observation columns learned
from training sentences (or restored from a model file), matrix inputs stacked, tags
mapped to states and back."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...protocols import as_sequence
from ._observations import FEATURE_SETS, TokenFeaturizer
from .._validation import as_label_array

__all__ = ["check_params", "check_order_params", "input_kind", "check_sentences", "check_pairs", "fit_columns",
           "saved_columns", "stack_matrices", "tags_to_states", "states_to_tags"]


def check_params(features, min_count, n_hash):
    """Raise ValueError naming the parameter that is not a valid value."""
    if not (callable(features) or features in FEATURE_SETS):
        raise ValueError(f"features must be one of {sorted(FEATURE_SETS)} or a callable "
                         f"f(sentence, t), got {features!r}")
    if not (isinstance(min_count, (int, np.integer)) and min_count >= 1):
        raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
    if n_hash is not None and not (isinstance(n_hash, (int, np.integer))
                                   and n_hash >= 1):
        raise ValueError(f"n_hash must be None or an int >= 1, got {n_hash!r}")


def check_order_params(order, emission_order, beam):
    """Raise ValueError naming the order parameter that is not a valid value."""
    if isinstance(order, bool) or order not in (1, 2, 3):
        raise ValueError(f"order must be 1, 2 or 3, got {order!r}")
    if isinstance(emission_order, bool) or emission_order not in (0, 1):
        raise ValueError(f"emission_order must be 0 or 1, got {emission_order!r}")
    if beam is not None and not (isinstance(beam, (int, np.integer))
                                 and not isinstance(beam, bool) and beam >= 1):
        raise ValueError(f"beam must be None or an int >= 1, got {beam!r}")


def input_kind(X):
    """``"matrix"`` when sentence 0 is a (T, d) array or sparse matrix, else
    ``"tokens"``."""
    x0 = X[0]
    return "matrix" if sp.issparse(x0) or (isinstance(x0, np.ndarray)
                                           and x0.ndim == 2) else "tokens"


def check_sentences(X, kind=None):
    """``(X, kind)``: the sentences as a sequence, each a non-empty token list or, for
    ``kind="matrix"`` (by default the kind of sentence 0), a (T, d) matrix."""
    X = as_sequence(X, "X")
    if len(X) == 0:
        raise ValueError("X is empty: at least one sentence is needed")
    kind = kind or input_kind(X)
    for i, x in enumerate(X):
        if kind == "matrix":
            if not (sp.issparse(x) or (isinstance(x, np.ndarray) and x.ndim == 2)):
                raise TypeError(f"Sentence {i}: expected a (T, d) matrix like "
                                f"sentence 0, got {type(x).__name__}")
            n = x.shape[0]
        else:
            if isinstance(x, (str, bytes)) or sp.issparse(x) or not hasattr(x, "__len__"):
                raise TypeError(f"Sentence {i}: expected a list of tokens, got "
                                f"{type(x).__name__} {x!r:.40}")
            n = len(x)
        if n == 0:
            raise ValueError(f"Sentence {i} is empty: every sentence needs a token")
    return X, kind


def check_pairs(X, Y):
    """The tag lists ``Y`` as a sequence, one per sentence of ``X`` and as long."""
    Y = as_sequence(Y, "Y")
    if len(Y) != len(X):
        raise ValueError(f"X has {len(X)} sentences but Y has {len(Y)}")
    for i, (x, y) in enumerate(zip(X, Y)):
        n = x.shape[0] if input_kind([x]) == "matrix" else len(x)
        if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
            raise TypeError(f"Sentence {i}: expected a list of tags, got "
                            f"{type(y).__name__}")
        if len(y) != n:
            raise ValueError(f"Sentence {i}: x has {n} tokens but y has {len(y)} tags")
    return Y


def fit_columns(X, kind, features, min_count, n_hash, encode=False):
    """The observation columns of the training sentences ``X`` (checked, of ``kind``).

    Returns
    -------
    vocabulary : ndarray of str or None
        Observation strings in column order (None when hashing or for matrices).
    n_input_features : int
    featurizer : TokenFeaturizer or None
        Fitted on token lists (None for matrices).
    encoded : tuple or None
        With ``encode`` and token lists, the arguments of ``EncodedSequences`` of
        ``X`` (their feature strings built once, for fitting and encoding).
    """
    if kind == "matrix":
        widths = {x.shape[1] for x in X}
        if len(widths) != 1:
            raise ValueError(f"sentences have different feature widths {sorted(widths)}")
        return None, widths.pop(), None, None
    fz = TokenFeaturizer(features, n_hash)
    encoded = None
    if encode:
        encoded = fz.fit_transform(X, min_count)
    else:
        fz.fit(X, min_count)
    vocabulary = None if n_hash is not None else as_label_array(list(fz.vocabulary))
    return vocabulary, fz.n_columns, fz, encoded


def saved_columns(features, n_hash, vocabulary):
    """The featurizer of token lists whose columns a model file saved: the
    ``vocabulary`` strings in column order, or hashing (``vocabulary`` None)."""
    return TokenFeaturizer(
        features, n_hash,
        None if vocabulary is None else {s: j for j, s in enumerate(vocabulary)})


def stack_matrices(X, n_input_features):
    """One CSR matrix of the (T, d) sentences ``X`` (widths checked against the
    fitted ``n_input_features``, entries finite) and the sentence offsets."""
    for i, x in enumerate(X):
        if x.shape[1] != n_input_features:
            raise ValueError(f"Sentence {i}: has {x.shape[1]} features per token, "
                             f"the map was fitted with {n_input_features}")
    M = sp.vstack([sp.csr_matrix(x, dtype=float) for x in X], format="csr")
    if not np.all(np.isfinite(M.data)):
        raise ValueError("X contains NaN or infinite feature values")
    offsets = np.concatenate([[0], np.cumsum([x.shape[0] for x in X])])
    return M, offsets


def tags_to_states(Y, index, tags):
    """State arrays of the tag lists ``Y`` (``index``: tag -> state); a tag not in
    ``index`` raises a ValueError naming the sentence, the position and ``tags``."""
    out = []
    for i, y in enumerate(Y):
        try:
            out.append(np.fromiter((index[t] for t in y), dtype=np.intp,
                                   count=len(y)))
        except (KeyError, TypeError):
            t = next(t for t, tag in enumerate(y) if _unknown(index, tag))
            raise ValueError(f"Sentence {i}, token {t}: tag {y[t]!r} was not seen in "
                             f"training; the tag set is {tags.tolist()}") from None
    return out


def _unknown(index, tag):
    try:
        return tag not in index
    except TypeError:
        return True


def states_to_tags(Ye, tags):
    """State arrays back to tag lists (``tags[k]`` is state k)."""
    if len(Ye) < 2:
        return [tags[np.asarray(y, dtype=np.intp)].tolist() for y in Ye]
    parts = [np.asarray(y, dtype=np.intp).reshape(-1) for y in Ye]
    flat = tags[np.concatenate(parts)].tolist()  # one conversion for all
    ends = np.cumsum([p.size for p in parts]).tolist()
    return [flat[a:b] for a, b in zip([0] + ends[:-1], ends)]
