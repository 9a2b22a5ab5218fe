"""A synthetic tagging corpus sampled from a random HMM (offline examples and tests)."""
from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_hmm_corpus", "make_two_spirals"]


def make_hmm_corpus(n_sentences=600, *, n_states=6, n_words=200, mean_length=12,
                    ambiguity=0.3, random_state=None):
    """Sample tagged sentences from a random hidden Markov model.

    Each state (tag ``"T0"``, ``"T1"``, ...) owns a block of words; with probability
    ``ambiguity`` a token is drawn from another state's block instead, so words are
    ambiguous and the transitions matter. Transitions are sparse-ish (Dirichlet with
    concentration 0.3), lengths are 1 + Poisson(mean_length - 1). Words are strings
    ``"w17"``; words of one block share a suffix, so affix features help with
    unseen words.

    Parameters
    ----------
    n_sentences : int, default=600
    n_states : int, default=6
    n_words : int, default=200
    mean_length : float, default=12
    ambiguity : float in [0, 1), default=0.3
    random_state : int, RandomState or None

    Returns
    -------
    X : list of list of str
    Y : list of list of str

    Examples
    --------
    >>> X, Y = make_hmm_corpus(3, random_state=0)
    >>> len(X), all(len(x) == len(y) for x, y in zip(X, Y))
    (3, True)
    """
    for name, val, low in (("n_sentences", n_sentences, 1), ("n_states", n_states, 1),
                           ("n_words", n_words, n_states)):
        if not (isinstance(val, (int, np.integer)) and val >= low):
            raise ValueError(f"{name} must be an int >= {low}, got {val!r}")
    if not 0 <= ambiguity < 1:
        raise ValueError(f"ambiguity must be in [0, 1), got {ambiguity!r}")
    if not mean_length >= 1:
        raise ValueError(f"mean_length must be >= 1, got {mean_length!r}")
    rng = check_random_state(random_state)
    K = n_states
    start = rng.dirichlet(np.ones(K))
    trans = rng.dirichlet(np.full(K, 0.3), size=K)
    block = np.arange(n_words) % K                     # the state owning each word
    emit = np.zeros((K, n_words))
    for k in range(K):
        own = block == k
        emit[k, own] = (1 - ambiguity) * rng.dirichlet(np.ones(own.sum()))
        emit[k, ~own] = ambiguity * rng.dirichlet(np.ones((~own).sum()))
    words = [f"w{j}{'abcdefghijklmnopqrstuvwxyz'[block[j] % 26]}x" for j in range(n_words)]
    X, Y = [], []
    for _ in range(n_sentences):
        T = 1 + rng.poisson(mean_length - 1)
        s = rng.choice(K, p=start)
        xs, ys = [], []
        for _ in range(T):
            xs.append(words[rng.choice(n_words, p=emit[s])])
            ys.append(f"T{s}")
            s = rng.choice(K, p=trans[s])
        X.append(xs)
        Y.append(ys)
    return X, Y


def make_two_spirals(n, noise=0.15, random_state=0):
    """Two interleaved spirals of 1.5 turns in [-1, 1]², labels ±1 (n // 2 each).

    The kernel lecture's example of data a linear model cannot separate: point k of
    an arm sits at angle θ_k = 3π √u_k (u_k uniform) and radius θ_k / 3π, the second
    arm is the first reflected through the origin, and Gaussian noise of standard
    deviation ``noise / 3`` is added.

    Returns
    -------
    X : ndarray of shape (2 * (n // 2), 2)
    y : ndarray of shape (2 * (n // 2),), values ±1

    Examples
    --------
    >>> X, y = make_two_spirals(10)
    >>> X.shape, sorted(set(y.tolist()))
    ((10, 2), [-1.0, 1.0])
    """
    rng = np.random.RandomState(random_state)
    m = n // 2
    theta = np.sqrt(rng.rand(m)) * 3 * np.pi
    arm = np.c_[theta * np.cos(theta), theta * np.sin(theta)] / (3 * np.pi)
    X = np.r_[arm + noise * rng.randn(m, 2) / 3, -arm + noise * rng.randn(m, 2) / 3]
    return X, np.r_[np.ones(m), -np.ones(m)]
