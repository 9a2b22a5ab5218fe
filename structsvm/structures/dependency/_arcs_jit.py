"""Compiled loops of the arc features: hashing, arc scores, feature rows (no
validation here: see structures/dependency/features.py).

Layout. A batch of sentences is stored token by token, each sentence preceded by its
root token: sentence s owns rows ``off[s]:off[s + 1]`` of the token arrays, row
``off[s]`` is the root and row ``off[s] + j`` word j (1-based), so n_s =
``off[s + 1] - off[s] - 1``. Per token: ``word`` (word id), ``prefix`` (id of the
5-prefix), ``tag`` (POS id), ``long`` (1 when the word is longer than 5 characters);
``BOS`` and ``EOS`` are the tag ids before the root and after the last word.

Arc scores of sentence s fill ``scores[score_off[s]:score_off[s + 1]]``, an
(n_s + 1) × (n_s + 1) block in row-major order: entry ``h * (n_s + 1) + d`` scores the
arc h → d (head h, dependent d); column 0 and the diagonal are not arcs (0).

Features (McDonald, Crammer & Pereira 2005, Table 1a-c): the value of every template
(with the template's number) is hashed to a column b of the ``D``; column b is the
feature as it is, column b + c (c = 1 .. 14) the feature conjoined with the arc's
direction and distance class c. So the two columns of a feature are one hash and
one or two cache lines apart, while any two features still share a column with
probability 1/D, as with a hash per feature: blocks of different values overlap.
Templates 1-10 read one token (head or dependent), so their sums are computed once
per token and direction/distance class (``_unigram_sums``), not once per arc.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: The loops compiled at installation (those of the default training path; the
#: others are compiled by numba on first use), with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "arc_scores": ("i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 f8:1 i8 i8 i8 f8:1", "void"),
    "arc_feature_rows": ("i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8 i8 i8 i8:1",
                         "i8:1"),
}

#: number of direction × distance classes: 2 directions × 7 distance buckets
N_DD = 14
#: columns a hashed template value spans: as it is, and conjoined with each class
BLOCK = 16
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S = np.uint64(33)
_H = np.uint64(32)
_SEED = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _mix(h, v):
    """Fold the integer ``v`` into the running hash ``h`` (uint64, wraps)."""
    h = (h ^ np.uint64(v)) * _M1
    return h ^ (h >> _S)


@njit(cache=True, nogil=True)
def _block(h, D):
    """The first column of the block of a finished hash: MurmurHash3's 64-bit
    finaliser, then a column in [0, D − BLOCK] by its high 32 bits (Lemire's
    multiply-shift, no division; D < 2^32)."""
    h = (h ^ (h >> _S)) * _M2
    h = h ^ (h >> _S)
    return np.int64(((h >> _H) * np.uint64(D - BLOCK + 1)) >> _H)


@njit(cache=True, nogil=True)
def _start(template):
    return _mix(_SEED, template)


@njit(cache=True, nogil=True)
def direction_distance(h, d):
    """The class 1 .. 14 of the arc h → d: direction (head left or right of its
    dependent) × distance bucket 1, 2, 3, 4, 5, 6-10, > 10."""
    dist = d - h if d > h else h - d
    if dist > 10:
        b = 6
    elif dist > 5:
        b = 5
    else:
        b = dist - 1
    return 1 + (0 if h < d else 7) + b


# ------------------------------------------------------------------ the templates
# Each emitter writes the blocks of its templates for one arc (or one token) into
# ``out`` from position ``k`` and returns the new position. The arc scores and the
# feature rows both call them: the scores are the sums of w over exactly the
# columns the rows hold.

@njit(cache=True, nogil=True)
def _emit_unigram(word, prefix, tag, long_, r, first, D, out, k):
    """Templates of one token: (word, tag), word, tag; (prefix, tag), prefix when
    the word is long. ``first`` is 1 for a head, 6 for a dependent."""
    out[k] = _block(_mix(_mix(_start(first), word[r]), tag[r]), D)
    out[k + 1] = _block(_mix(_start(first + 1), word[r]), D)
    out[k + 2] = _block(_mix(_start(first + 2), tag[r]), D)
    k += 3
    if long_[r]:
        out[k] = _block(_mix(_mix(_start(first + 3), prefix[r]), tag[r]), D)
        out[k + 1] = _block(_mix(_start(first + 4), prefix[r]), D)
        k += 2
    return k


#: partial hashes of a head row (:func:`_head_partials`): 13 pair templates, 4
#: surrounding-tag templates, 1 between template
N_PARTIAL = 18


@njit(cache=True, nogil=True)
def _head_partials(word, prefix, tag, base, n, h, BOS, EOS, out):
    """The hashes of the head's part of every template over head and dependent
    (the same for all arcs from head h: computed once per head)."""
    r = base + h
    wa, ta, pa = word[r], tag[r], prefix[r]
    hl = tag[r - 1] if h > 0 else BOS
    hr = tag[r + 1] if h < n else EOS
    out[0] = _mix(_mix(_start(11), wa), ta)
    out[1] = _mix(_start(12), ta)
    out[2] = _mix(_start(13), wa)
    out[3] = _mix(_mix(_start(14), wa), ta)
    out[4] = _mix(_mix(_start(15), wa), ta)
    out[5] = _mix(_start(16), wa)
    out[6] = _mix(_start(17), ta)
    out[7] = _mix(_mix(_start(18), pa), ta)
    out[8] = _mix(_start(19), ta)
    out[9] = _mix(_start(20), pa)
    out[10] = _mix(_mix(_start(21), pa), ta)
    out[11] = _mix(_mix(_start(22), pa), ta)
    out[12] = _mix(_start(23), pa)
    out[13] = _mix(_mix(_start(24), ta), hr)
    out[14] = _mix(_mix(_start(25), hl), ta)
    out[15] = _mix(_mix(_start(26), ta), hr)
    out[16] = _mix(_mix(_start(27), hl), ta)
    out[17] = _mix(_start(28), ta)


@njit(cache=True, nogil=True)
def _emit_pairs(word, prefix, tag, long_, base, n, h, d, hp, BOS, EOS, D, out, k):
    """Templates over head h and dependent d, from the head's partial hashes
    ``hp``: the seven pairs of Table 1b over words (and six of them over 5-prefixes
    when either word is long), the tags beside head and dependent (Table 1c, four
    templates of four tags), and (head tag, tag, dependent tag) for every word
    between the two."""
    b = base + d
    wb, tb, pb = word[b], tag[b], prefix[b]
    dl = tag[b - 1]  # d >= 1: the root's row at least
    dr = tag[b + 1] if d < n else EOS
    out[k] = _block(_mix(_mix(hp[0], wb), tb), D)
    out[k + 1] = _block(_mix(_mix(hp[1], wb), tb), D)
    out[k + 2] = _block(_mix(_mix(hp[2], wb), tb), D)
    out[k + 3] = _block(_mix(hp[3], tb), D)
    out[k + 4] = _block(_mix(hp[4], wb), D)
    out[k + 5] = _block(_mix(hp[5], wb), D)
    out[k + 6] = _block(_mix(hp[6], tb), D)
    k += 7
    if long_[base + h] or long_[b]:
        out[k] = _block(_mix(_mix(hp[7], pb), tb), D)
        out[k + 1] = _block(_mix(_mix(hp[8], pb), tb), D)
        out[k + 2] = _block(_mix(_mix(hp[9], pb), tb), D)
        out[k + 3] = _block(_mix(hp[10], tb), D)
        out[k + 4] = _block(_mix(hp[11], pb), D)
        out[k + 5] = _block(_mix(hp[12], pb), D)
        k += 6
    out[k] = _block(_mix(_mix(hp[13], dl), tb), D)
    out[k + 1] = _block(_mix(_mix(hp[14], dl), tb), D)
    out[k + 2] = _block(_mix(_mix(hp[15], tb), dr), D)
    out[k + 3] = _block(_mix(_mix(hp[16], tb), dr), D)
    k += 4
    lo, hi = (h, d) if h < d else (d, h)
    for q in range(lo + 1, hi):
        out[k] = _block(_mix(_mix(hp[17], tag[base + q]), tb), D)
        k += 1
    return k


@njit(cache=True, nogil=True)
def _arc_blocks(word, prefix, tag, long_, base, n, h, d, BOS, EOS, D, out):
    """The blocks of every template of the arc h → d; returns how many."""
    hp = np.empty(N_PARTIAL, dtype=np.uint64)
    _head_partials(word, prefix, tag, base, n, h, BOS, EOS, hp)
    k = _emit_unigram(word, prefix, tag, long_, base + h, 1, D, out, 0)
    k = _emit_unigram(word, prefix, tag, long_, base + d, 6, D, out, k)
    return _emit_pairs(word, prefix, tag, long_, base, n, h, d, hp, BOS, EOS, D, out, k)


@njit(cache=True, nogil=True)
def arc_columns(word, prefix, tag, long_, base, n, h, d, BOS, EOS, D, out):
    """Every column of the arc h → d of the sentence whose root is row ``base``
    (with repeats: a repeated column counts twice); returns how many were written.
    ``out`` holds at least ``2 * (30 + n)`` entries."""
    dd = direction_distance(h, d)
    m = _arc_blocks(word, prefix, tag, long_, base, n, h, d, BOS, EOS, D, out)
    for q in range(m - 1, -1, -1):  # blocks at the front, columns from the back
        b = out[q]
        out[2 * q] = b
        out[2 * q + 1] = b + dd
    return 2 * m


# ------------------------------------------------------------------ scores
@njit(cache=True, nogil=True)
def _unigram_sums(word, prefix, tag, long_, r, first, w, D, sums, buf):
    """sums[c] = Σ w over the unigram columns c of the blocks of row r, c = 0 .. N_DD."""
    m = _emit_unigram(word, prefix, tag, long_, r, first, D, buf, 0)
    for c in range(N_DD + 1):
        s = 0.0
        for q in range(m):
            s += w[buf[q] + c]
        sums[c] = s


@njit(cache=True, nogil=True)
def arc_scores(word, prefix, tag, long_, off, score_off, w, BOS, EOS, D, out):
    """w · f(x, h, d) of every arc h → d of every sentence (see the module's text).

    Per sentence: the unigram sums of every token as head and as dependent (for
    every direction/distance class), then per arc the pair, context and between
    templates: the same sum as over :func:`arc_columns`, added in another order.
    """
    buf = np.empty(8, dtype=np.int64)
    for s in range(off.size - 1):
        base = off[s]
        n = off[s + 1] - base - 1
        m = n + 1
        heads = np.empty((m, N_DD + 1))
        deps = np.empty((m, N_DD + 1))
        for j in range(m):
            _unigram_sums(word, prefix, tag, long_, base + j, 1, w, D, heads[j], buf)
            _unigram_sums(word, prefix, tag, long_, base + j, 6, w, D, deps[j], buf)
        cols = np.empty(20 + m, dtype=np.int64)
        hp = np.empty(N_PARTIAL, dtype=np.uint64)
        o = score_off[s]
        for h in range(m):
            _head_partials(word, prefix, tag, base, n, h, BOS, EOS, hp)
            for d in range(m):
                if d == 0 or d == h:
                    out[o + h * m + d] = 0.0
                    continue
                dd = direction_distance(h, d)
                total = heads[h, 0] + heads[h, dd] + deps[d, 0] + deps[d, dd]
                k = _emit_pairs(word, prefix, tag, long_, base, n, h, d, hp, BOS, EOS, D,
                                cols, 0)
                for q in range(k):
                    total += w[cols[q]] + w[cols[q] + dd]
                out[o + h * m + d] = total


# ------------------------------------------------------------------ feature rows
@njit(cache=True, nogil=True)
def arc_feature_rows(word, prefix, tag, long_, off, heads, dep, sent, BOS, EOS, D,
                     row_ptr):
    """The columns of the arcs ``heads[a] → dep[a]`` of sentences ``sent[a]``,
    concatenated; ``row_ptr[a]:row_ptr[a + 1]`` are arc a's (filled here)."""
    total = 0
    for a in range(heads.size):
        s = sent[a]
        n = off[s + 1] - off[s] - 1
        row_ptr[a] = total
        total += 2 * (30 + n)
    row_ptr[heads.size] = total
    out = np.empty(total, dtype=np.int64)
    pos = 0
    for a in range(heads.size):
        s = sent[a]
        base = off[s]
        n = off[s + 1] - base - 1
        k = arc_columns(word, prefix, tag, long_, base, n, heads[a], dep[a], BOS, EOS, D,
                        out[pos:])
        row_ptr[a] = pos
        pos += k
    row_ptr[heads.size] = pos
    return out[:pos]


@njit(cache=True, nogil=True)
def scatter_arcs(word, prefix, tag, long_, off, heads, dep, sent, weight, BOS, EOS, D,
                 out):
    """out[c] += weight[a] for every column c of every arc a (as in
    :func:`arc_feature_rows`): Σ of weighted feature rows into a dense vector."""
    cols = np.empty(64, dtype=np.int64)
    for a in range(heads.size):
        s = sent[a]
        base = off[s]
        n = off[s + 1] - base - 1
        need = 2 * (30 + n)
        if cols.size < need:
            cols = np.empty(need, dtype=np.int64)
        k = arc_columns(word, prefix, tag, long_, base, n, heads[a], dep[a], BOS, EOS, D,
                        cols)
        wa = weight[a]
        for q in range(k):
            out[cols[q]] += wa
