"""Pairwise sequence alignment with affine gaps: global (Needleman-Wunsch) and local
(Smith-Waterman) decoding of a batch, numba, loss-augmented by the batch."""
from __future__ import annotations

import numpy as np

from ..._compiled import loops
from ...limits import check_total
from ...protocols import Decoder

# the loops, imported (with numba) when a decode first runs
_alignment_jit = loops("structsvm.structures.alignment._jit")

__all__ = ["needleman_wunsch", "smith_waterman", "NEEDLEMAN_WUNSCH", "SMITH_WATERMAN"]


def _check(batch):
    if getattr(type(batch), "structure", None) != "alignment":
        raise TypeError(f"alignment decoders decode alignment potentials, got "
                        f"{type(batch).__name__}")
    s_codes = np.ascontiguousarray(batch.s_codes, dtype=np.int32)
    t_codes = np.ascontiguousarray(batch.t_codes, dtype=np.int32)
    s_off = np.ascontiguousarray(batch.s_off, dtype=np.int64)
    t_off = np.ascontiguousarray(batch.t_off, dtype=np.int64)
    tables = np.ascontiguousarray(batch.tables, dtype=np.float64)
    gaps = np.ascontiguousarray(batch.gaps, dtype=np.float64)
    if tables.ndim != 3 or tables.shape[1] != tables.shape[2] or tables.shape[0] < 1:
        raise ValueError(f"tables must have shape (n_channels, Q, Q), got {tables.shape}")
    C, Q = tables.shape[0], tables.shape[1]
    if s_codes.ndim != 2 or t_codes.ndim != 2 or s_codes.shape[0] != C \
            or t_codes.shape[0] != C:
        raise ValueError(f"s_codes {s_codes.shape} and t_codes {t_codes.shape} must have "
                         f"one row per channel ({C})")
    for name, off, codes in (("s", s_off, s_codes), ("t", t_off, t_codes)):
        if off.ndim != 1 or off.size != len(batch) + 1 or off[0] != 0 \
                or off[-1] != codes.shape[1] or np.any(np.diff(off) < 0):
            raise ValueError(f"{name}_off must rise from 0 to the number of {name} "
                             "positions, one step per pair")
        if codes.size and (codes.min() < 0 or codes.max() >= Q):
            raise ValueError(f"{name}_codes must lie in [0, {Q}) (rows of tables)")
    if gaps.shape != (4,):
        raise ValueError(f"gaps must be (open, extend, end_open, end_extend), got shape "
                         f"{gaps.shape}")
    for name, arr in (("tables", tables), ("gaps", gaps)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contain NaN or infinite values")
    gold = batch.gold
    if gold is None:
        gold, bonus = np.zeros(0, dtype=np.int64), np.zeros(len(batch))
    else:
        gold = np.ascontiguousarray(gold, dtype=np.int64)
        bonus = np.ascontiguousarray(batch.gold_bonus, dtype=np.float64)
        lens = np.repeat(np.diff(t_off), np.diff(s_off))
        if gold.shape != (s_codes.shape[1],) or bonus.shape != (len(batch),) \
                or np.any(gold >= lens) or np.any(gold < -1) \
                or not np.all(np.isfinite(bonus)):
            raise ValueError("gold must hold a column of t (or -1) per position of s, "
                             "gold_bonus one finite value per pair")
    return s_codes, s_off, t_codes, t_off, tables, gaps, gold, bonus


def check_trace(s_lens, t_lens, source=None):
    """Pass the largest allocation of decoding these pairs through the memory budget:
    a trace of (n + 1)(m + 1) bytes for the pair with the most cells, and seven rows
    of m + 1 floats for the longest t. The message names ``source(p)`` for pair p
    (default "Sample p")."""
    if not len(s_lens):
        return
    cells = (np.asarray(s_lens, dtype=np.int64) + 1) * (np.asarray(t_lens, dtype=np.int64)
                                                         + 1)
    p = int(np.argmax(cells))
    n, m = int(s_lens[p]), int(t_lens[p])
    size = (n + 1) * (m + 1) + 7 * 8 * (int(np.max(t_lens)) + 1)
    check_total(size, f"the alignment trace of its {n} x {m} positions ({n + 1} x "
                      f"{m + 1} cells of one byte)",
                f"Sample {p}" if source is None else source(p), verb="needs")


def _decode(batch, exclude, local):
    name = "smith_waterman" if local else "needleman_wunsch"
    if exclude is not None:
        raise ValueError(f"{name} cannot exclude an alignment (no second-best search); "
                         "use loss-augmented decoding (the default for every learner)")
    if local and not batch.free_ends:
        raise ValueError("smith_waterman finds local alignments, whose unaligned ends "
                         "cost nothing, but these potentials score end gaps: use "
                         "AlignmentFeatures(end_gaps='free') with smith_waterman, or "
                         "the global decoder 'needleman_wunsch'")
    s_codes, s_off, t_codes, t_off, tables, gaps, gold, bonus = _check(batch)
    check_trace(np.diff(s_off), np.diff(t_off), lambda p: f"Pair {p} of the batch")
    n_pairs = len(batch)
    cap = np.minimum(np.diff(s_off), np.diff(t_off))
    out_off = np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)
    out = np.empty((int(out_off[-1]), 2), dtype=np.int64)
    counts = np.empty(n_pairs, dtype=np.int64)
    best = np.empty(n_pairs)
    _alignment_jit.align_batch(s_codes, s_off, t_codes, t_off, tables, gaps, bool(local),
                               gold, bonus, out, out_off, counts, best)
    return [out[out_off[p]:out_off[p] + counts[p]] for p in range(n_pairs)]


def needleman_wunsch(batch, exclude=None):
    r"""Best global alignment of every pair of a batch, with affine gaps (Gotoh).

    An alignment y of s (n symbols) and t (m symbols) is a set of index pairs
    (i, j), increasing in both; it scores

    .. math::

        s(y) = \sum_{(i, j) \in y} S_{ij}
            + \sum_{\text{gap runs } r} \big(o_r + (L_r - 1)\, e_r\big),

    with the match scores S of the batch and, per run of L unaligned positions of
    one sequence, the open and extend scores (o, e): the end-gap ones for runs
    before the first or after the last pair, the internal ones otherwise. Between
    two pairs the unaligned positions of s come before those of t, so every y is
    one path of the three-state program of Gotoh (1982), with M the state "(i, j)
    aligned" and X, Y "a gap in t, in s":

    .. math::

        M_{ij} &= S_{ij} + \max(\ell(i) + \ell(j),\, M_{i-1,j-1},\, X_{i-1,j-1},\,
            Y_{i-1,j-1}) \\
        X_{ij} &= \max(M_{i-1,j} + o,\, X_{i-1,j} + e) \\
        Y_{ij} &= \max(M_{i,j-1} + o,\, X_{i,j-1} + o,\, Y_{i,j-1} + e)

    where ℓ(L) is the score of a leading end run of length L (0 for L = 0); the
    best alignment ends at the cell maximising M_ij + ℓ(n − i − 1) + ℓ(m − j − 1),
    or is empty, scoring ℓ(n) + ℓ(m). O(nm) time per pair; the whole batch is one
    compiled call. The match scores are never stored: S_ij is summed from the
    batch's per-channel tables row by row.

    Loss-augmented decoding is the same program: the batch's ``augment`` adds
    −1/|y| at the gold cells (loss "alignment").

    Parameters
    ----------
    batch : AlignmentPotentials
        Codes, tables and gap scores (see
        :class:`structsvm.structures.alignment._encoding.AlignmentPotentials`).
    exclude : None
        Not supported (raises).

    Returns
    -------
    list of ndarray of int of shape (k, 2)
        The aligned pairs of every pair of sequences. Ties go to the first maximum
        in the order of the recurrences (earlier cells, then M before X before Y).

    Raises
    ------
    ValueError
        Malformed potentials, or ``exclude`` given.

    References
    ----------
    S. B. Needleman, C. D. Wunsch. A general method applicable to the search for
    similarities in the amino acid sequence of two proteins. J. Mol. Biol. 48, 1970.
    O. Gotoh. An improved algorithm for matching biological sequences. J. Mol. Biol.
    162, 1982.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures import AlignmentPotentials
    >>> S = np.array([[2., -1.], [-1., 2.]])      # one channel: identity codes
    >>> p = AlignmentPotentials([[0, 1, 0]], [0, 3], [[0, 0]], [0, 2], S[None],
    ...                         gaps=[-3., -1., -2., -1.])
    >>> needleman_wunsch(p)[0].tolist()            # s = ABA, t = AA: A-A / A-A
    [[0, 0], [2, 1]]
    """
    return _decode(batch, exclude, local=False)


def smith_waterman(batch, exclude=None):
    r"""Best local alignment of every pair of a batch, with affine gaps.

    The program of :func:`needleman_wunsch` with free ends (Smith & Waterman 1981):
    ℓ ≡ 0, so an alignment may start at any pair (M_ij = S_ij + max(0, ...)) and end
    at any pair, and the empty alignment scores 0. Its score is the sum of the match
    scores and the internal gap runs only, so it is the exact argmax of a batch whose
    end gaps carry no features (``AlignmentFeatures(end_gaps="free")``); batches
    that score end gaps are refused.

    Parameters
    ----------
    batch : AlignmentPotentials
        With ``free_ends`` True.
    exclude : None
        Not supported (raises).

    Returns
    -------
    list of ndarray of int of shape (k, 2)

    Raises
    ------
    ValueError
        Malformed potentials, potentials that score end gaps, or ``exclude`` given.

    References
    ----------
    T. F. Smith, M. S. Waterman. Identification of common molecular subsequences.
    J. Mol. Biol. 147, 1981.

    Examples
    --------
    >>> import numpy as np
    >>> from structsvm.structures import AlignmentPotentials
    >>> S = np.array([[2., -1.], [-1., 2.]])
    >>> p = AlignmentPotentials([[1, 0, 0, 1]], [0, 4], [[0, 0]], [0, 2], S[None],
    ...                         gaps=[-3., -1., 0., 0.], free_ends=True)
    >>> smith_waterman(p)[0].tolist()              # s = BAAB, t = AA
    [[1, 0], [2, 1]]
    """
    return _decode(batch, exclude, local=True)


NEEDLEMAN_WUNSCH = Decoder(name="needleman_wunsch", structure="alignment", func=needleman_wunsch)
SMITH_WATERMAN = Decoder(name="smith_waterman", structure="alignment", func=smith_waterman)
