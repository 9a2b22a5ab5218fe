"""Protein-like sequence pairs evolved from a common ancestor (known gold alignment).

The model behind :func:`structsvm.corpora.alignment.simulate_alignment_pairs`: an
ancestor drawn from amino-acid background frequencies, two descendants evolved
independently by a reversible substitution process with physico-chemical groups and
by affine (geometric-length) insertions and deletions.
"""
from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import expm
from sklearn.utils import check_random_state

__all__ = ["AMINO_ACIDS", "BACKGROUND_FREQUENCIES", "AMINO_ACID_GROUPS",
           "substitution_rate_matrix", "simulate_alignment_pairs"]

#: The twenty amino acids, one-letter codes.
AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
#: Background frequencies of :data:`AMINO_ACIDS` (Robinson & Robinson 1991, the
#: composition of 1,021 unrelated proteins; the figures NCBI BLAST uses), renormalised
#: to sum to 1.
BACKGROUND_FREQUENCIES = np.array(
    [78.05, 19.25, 53.64, 62.95, 38.56, 73.77, 21.99, 51.42, 57.44, 90.19,
     22.43, 44.87, 52.03, 42.64, 51.29, 71.20, 58.41, 64.41, 13.30, 32.16])
BACKGROUND_FREQUENCIES = BACKGROUND_FREQUENCIES / BACKGROUND_FREQUENCIES.sum()
#: Physico-chemical groups: aliphatic, aromatic, basic, acidic and amide, small and
#: hydroxyl, proline, cysteine (Taylor 1986).
AMINO_ACID_GROUPS = ("ILMV", "FWY", "HKR", "DENQ", "AGST", "P", "C")


def substitution_rate_matrix(group_bias=8.0):
    r"""The reversible rate matrix of the simulator, one substitution per site per unit.

    .. math::

        Q_{ab} = \frac{1}{\mu} r_{ab}\,\pi_b \quad (a \ne b), \qquad
        Q_{aa} = -\sum_{b \ne a} Q_{ab}, \qquad
        \mu = \sum_a \pi_a \sum_{b \ne a} r_{ab}\,\pi_b,

    with :math:`\pi` the background frequencies and :math:`r_{ab}` = ``group_bias``
    when a and b share one of :data:`AMINO_ACID_GROUPS`, 1 otherwise (the general
    time-reversible form: :math:`\pi_a Q_{ab} = \pi_b Q_{ba}`, stationary
    distribution :math:`\pi`). :math:`\mu` scales time so that one unit is one
    expected substitution per site.

    Parameters
    ----------
    group_bias : float, default=8.0
        How much faster an amino acid is replaced by one of its own group.

    Returns
    -------
    Q : ndarray of shape (20, 20)
        Rows and columns in the order of :data:`AMINO_ACIDS`.

    Examples
    --------
    >>> Q = substitution_rate_matrix()
    >>> rate = -BACKGROUND_FREQUENCIES @ np.diag(Q)  # substitutions per unit time
    >>> bool(np.allclose(Q.sum(axis=1), 0)), round(float(rate), 6)
    (True, 1.0)
    """
    if not (isinstance(group_bias, numbers.Real) and np.isfinite(group_bias)
            and group_bias > 0):
        raise ValueError(f"group_bias must be a positive number, got {group_bias!r}")
    group = np.empty(len(AMINO_ACIDS), dtype=int)
    for g, members in enumerate(AMINO_ACID_GROUPS):
        group[[AMINO_ACIDS.index(a) for a in members]] = g
    r = np.where(group[:, None] == group[None, :], float(group_bias), 1.0)
    Q = r * BACKGROUND_FREQUENCIES[None, :]
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, -Q.sum(axis=1))
    return Q / float(-BACKGROUND_FREQUENCIES @ np.diag(Q))


def _check(name, value, low, high=np.inf, *, integer=False, low_open=False):
    kind = numbers.Integral if integer else numbers.Real
    ok = isinstance(value, kind) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and value <= high
    if not ok:
        what = "an int" if integer else "a number"
        bound = f"> {low}" if low_open else f">= {low}"
        upper = "" if high == np.inf else f" and <= {high}"
        raise ValueError(f"{name} must be {what} {bound}{upper}, got {value!r}")


def _evolve(ancestor, P_cum, indel_rate, p_stop, rng):
    """One descendant: (residues as indices, origin per position: ancestor index or -1)."""
    L = len(ancestor)
    # deletions: an event starts at each site with probability indel_rate / 2 and
    # removes a geometric number of sites from there on
    kept = np.ones(L, dtype=bool)
    starts = np.flatnonzero(rng.random_sample(L) < indel_rate / 2)
    lengths = rng.geometric(p_stop, size=starts.size)
    for a, n in zip(starts, lengths):
        kept[a:a + n] = False
    # insertions: an event in each of the L + 1 slots (before site g, and at the end)
    # with probability indel_rate / 2, of geometric length
    ins = np.zeros(L + 1, dtype=int)
    slots = np.flatnonzero(rng.random_sample(L + 1) < indel_rate / 2)
    ins[slots] = rng.geometric(p_stop, size=slots.size)
    origin = []
    for g in range(L + 1):
        origin.extend([-1] * ins[g])
        if g < L and kept[g]:
            origin.append(g)
    origin = np.asarray(origin, dtype=np.intp)
    residues = np.empty(origin.size, dtype=np.intp)
    inherited = origin >= 0
    # substitutions: the residue at a kept site is drawn from row ancestor[g] of P(t)
    u = rng.random_sample(int(inherited.sum()))
    cum = P_cum[ancestor[origin[inherited]]]
    residues[inherited] = np.minimum((u[:, None] >= cum).sum(axis=1), 19)
    n_new = int((~inherited).sum())
    residues[~inherited] = rng.choice(20, size=n_new, p=BACKGROUND_FREQUENCIES)
    return residues, origin


def simulate_alignment_pairs(n_pairs, *, length=(100, 200), divergence=1.0,
                             indel_rate=0.04, mean_indel_length=3.0, group_bias=8.0,
                             random_state=None):
    r"""Simulate protein-like sequence pairs with their true (gold) alignment.

    Synthetic data: each pair descends from its own random ancestor; the gold
    alignment is known because the simulator records where every residue came from.

    1. The ancestor's length is uniform on ``length`` (inclusive); its residues are
       drawn independently from :data:`BACKGROUND_FREQUENCIES` (Robinson & Robinson
       1991).
    2. Each of the two descendants evolves independently for time ``divergence``
       (expected substitutions per site) along its own branch:

       - indels: at each ancestral site a deletion starts with probability
         ``indel_rate / 2`` and in each of the L + 1 slots between sites (and at
         both ends) an insertion with probability ``indel_rate / 2``; lengths are
         geometric with mean ``mean_indel_length`` (the affine gap model: a gap of
         length k has probability :math:`\propto (1 - 1/\ell)^{k-1}`); inserted
         residues are drawn from the background frequencies;
       - substitutions: a surviving site with ancestral residue a becomes b with
         probability :math:`P(t)_{ab} = [\exp(Q\,t)]_{ab}`, with the reversible rate
         matrix Q of :func:`substitution_rate_matrix` (faster exchanges within
         physico-chemical groups) and t = ``divergence``.
    3. The gold alignment pairs position i of s with position j of t when both
       descend from the same ancestral site (sites deleted in either descendant and
       inserted residues are gaps).

    The two sequences are 2 t substitutions per site apart (t = 1 is about 200 PAM);
    at the defaults about 22 % of the aligned residues are identical, the "twilight
    zone" where a fixed substitution matrix misaligns a good share of the residues.

    Parameters
    ----------
    n_pairs : int
        Number of pairs, >= 1.
    length : (int, int), default=(100, 200)
        Smallest and largest ancestor length.
    divergence : float, default=1.0
        Branch length t of each descendant, in expected substitutions per site (> 0).
    indel_rate : float, default=0.04
        Indel events per ancestral site and branch, half insertions, half deletions
        (in [0, 1]).
    mean_indel_length : float, default=3.0
        Mean of the geometric indel lengths (>= 1).
    group_bias : float, default=8.0
        Rate ratio of substitutions within a physico-chemical group to those across
        groups (:func:`substitution_rate_matrix`).
    random_state : int, RandomState or None
        Same seed, same pairs.

    Returns
    -------
    X : list of (str, str)
        The descendant sequences (s, t), one-letter amino-acid codes.
    Y : list of ndarray of shape (m, 2)
        The gold alignments: aligned index pairs (i, j), increasing in both columns.

    References
    ----------
    A. B. Robinson, L. R. Robinson. Distribution of glutamine and asparagine residues
    and their near neighbors in peptides and proteins. PNAS 88:8880-8884, 1991.
    W. R. Taylor. The classification of amino acid conservation. J. Theor. Biol.
    119:205-218, 1986.
    J. L. Thorne, H. Kishino, J. Felsenstein. Inching toward reality: an improved
    likelihood model of sequence evolution. J. Mol. Evol. 34:3-16, 1992 (indels of
    geometric length).

    Examples
    --------
    >>> X, Y = simulate_alignment_pairs(2, random_state=0)
    >>> (s, t), y = X[0], Y[0]
    >>> y.shape[1], bool((np.diff(y, axis=0) > 0).all())
    (2, True)
    """
    _check("n_pairs", n_pairs, 1, integer=True)
    try:
        lo, hi = length
    except (TypeError, ValueError):
        raise ValueError(f"length must be a pair (smallest, largest), got {length!r}") \
            from None
    _check("length[0]", lo, 1, integer=True)
    _check("length[1]", hi, lo, integer=True)
    _check("divergence", divergence, 0, low_open=True)
    _check("indel_rate", indel_rate, 0, 1)
    _check("mean_indel_length", mean_indel_length, 1)
    P = expm(substitution_rate_matrix(group_bias) * float(divergence))
    P_cum = np.cumsum(np.clip(P, 0.0, None), axis=1)
    P_cum /= P_cum[:, -1:]
    p_stop = 1.0 / float(mean_indel_length)
    rng = check_random_state(random_state)
    letters = np.array(list(AMINO_ACIDS))
    X, Y = [], []
    for _ in range(int(n_pairs)):
        L = int(rng.randint(int(lo), int(hi) + 1))
        ancestor = rng.choice(20, size=L, p=BACKGROUND_FREQUENCIES)
        (rs, os_), (rt, ot) = (_evolve(ancestor, P_cum, float(indel_rate), p_stop, rng)
                               for _ in range(2))
        where_s = np.full(L, -1, dtype=np.intp)
        where_t = np.full(L, -1, dtype=np.intp)
        where_s[os_[os_ >= 0]] = np.flatnonzero(os_ >= 0)
        where_t[ot[ot >= 0]] = np.flatnonzero(ot >= 0)
        both = (where_s >= 0) & (where_t >= 0)
        X.append(("".join(letters[rs]), "".join(letters[rt])))
        Y.append(np.column_stack([where_s[both], where_t[both]]).astype(np.intp))
    return X, Y
