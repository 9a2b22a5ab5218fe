"""Compiled loops of the arc features: hashing, arc scores, feature rows (no
validation here: see structures/dependency/features.py).

Layout. A batch of sentences is stored token by token, each sentence preceded by its
root token: sentence s owns rows ``off[s]:off[s + 1]`` of the token matrix ``tok``,
row ``off[s]`` is the root and row ``off[s] + j`` word j (1-based), so n_s =
``off[s + 1] - off[s] - 1``. The columns of ``tok`` (see the constants below): word
id, id of the 5-prefix, tag id, 1 when the word is longer than 5 characters, coarse
(universal) tag id, lemma id, and the range ``fid[FSTART]:fid[FEND]`` of the token's
morphological feature ids in ``fid``. ``BOS`` and ``EOS`` are the tag ids before the
root and after the last word. ``flags`` says which optional columns the templates
read (``USE_CTAG``, ``USE_LEMMA``, ``USE_FEATS``) and whether arcs carry relations
(``LABELS``).

Arc a = ``arc_off[s] + h * (n_s + 1) + d`` of sentence s (an (n_s + 1) × (n_s + 1)
block in row-major order; column d = 0 and the diagonal are no arcs) has the scores
of the relations it may take at ``slot_off[a]:slot_off[a + 1]`` (one entry, relation
0, without relations): see :func:`arc_scores`.

Features (McDonald, Crammer & Pereira 2005, Table 1a-c, with the coarse tag, lemma
and morphological features of CoNLL-X / Universal Dependencies tokens where the
input has them): the value of every template (with the template's number) is
hashed to a column b of the ``D``; column b is the feature as it is, column b + c
(c = 1 .. 14) the feature conjoined with the arc's direction and distance class c.
So the two columns of a feature are one hash and one or two cache lines apart,
while any two features still share a column with probability 1/D, as with a hash
per feature: blocks of different values overlap. Templates that read one token
(head or dependent) are summed once per token and direction/distance class, not
once per arc.

Relations (McDonald, Lerman & Pereira 2006): a relation template's value, with the
arc's direction, is hashed to a block of L columns b .. b + L − 1, column b + l
being the feature conjoined with relation l; the scores of all relations of an arc
are then one contiguous run of w per template.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: The loops compiled at installation (those of the default training path; the
#: others are compiled by numba on first use), with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "relation_counts": ("i8:2 i8:1 i8:1 i8 i8 i8 i8:1 i8:1", "void"),
    "arc_scores": ("i8:2 i8:1 i8:1 i8:1 i8:1 f8:1 i8 i8 i8 i8 i8 i8 i8:1 i8:1 f8:1 "
                   "i8:1", "void"),
    "best_relations": ("f8:1 i8:1 i8:1 f8:1 i8:1", "void"),
    "arc_feature_rows": ("i8:2 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8 i8 i8 i8 i8 i8:1",
                         "i8:1"),
}

# the columns of the token matrix
WORD, PREFIX, TAG, LONG, CTAG, LEMMA, FSTART, FEND = 0, 1, 2, 3, 4, 5, 6, 7
N_COLUMNS = 8
# flags: the optional columns the templates read, and relations on the arcs
USE_CTAG, USE_LEMMA, USE_FEATS, LABELS = 1, 2, 4, 8

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
def mix(h, v):
    """Fold the integer ``v`` (>= 0) into the running hash ``h`` (uint64, wraps)."""
    h = (h ^ np.uint64(v)) * _M1
    return h ^ (h >> _S)


@njit(cache=True, nogil=True)
def _final(h):
    h = (h ^ (h >> _S)) * _M2
    return h ^ (h >> _S)


@njit(cache=True, nogil=True)
def block(h, D):
    """The first column of the block of a finished hash: MurmurHash3's 64-bit
    finaliser, then a column in [0, D − BLOCK] by its high 32 bits (Lemire's
    multiply-shift, no division; D < 2^32)."""
    return np.int64(((_final(h) >> _H) * np.uint64(D - BLOCK + 1)) >> _H)


@njit(cache=True, nogil=True)
def label_block(h, D, L):
    """The first column of the L columns of a relation template's value: a column
    in [0, D − L] (as :func:`block`)."""
    return np.int64(((_final(h) >> _H) * np.uint64(D - L + 1)) >> _H)


@njit(cache=True, nogil=True)
def start(template):
    return mix(_SEED, template)


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


@njit(cache=True, nogil=True)
def n_feats(tok, r):
    return tok[r, FEND] - tok[r, FSTART]


# ------------------------------------------------------------------ the templates
# Each emitter writes the blocks of its templates for one arc (or one token) into
# ``out`` from position ``k`` and returns the new position. The arc scores and the
# feature rows both call them: the scores are the sums of w over exactly the
# columns the rows hold.

#: unigram templates of one token, at most (the ``first`` of a head and a dependent
#: are this far apart)
N_UNIGRAM = 9


@njit(cache=True, nogil=True)
def _emit_unigram(tok, r, first, flags, D, out, k):
    """Templates of one token: (word, tag), word, tag; (prefix, tag), prefix when
    the word is long; coarse tag and (word, coarse tag); lemma and (lemma, tag).
    ``first`` is 1 for a head, 21 for a dependent."""
    out[k] = block(mix(mix(start(first), tok[r, WORD]), tok[r, TAG]), D)
    out[k + 1] = block(mix(start(first + 1), tok[r, WORD]), D)
    out[k + 2] = block(mix(start(first + 2), tok[r, TAG]), D)
    k += 3
    if tok[r, LONG]:
        out[k] = block(mix(mix(start(first + 3), tok[r, PREFIX]), tok[r, TAG]), D)
        out[k + 1] = block(mix(start(first + 4), tok[r, PREFIX]), D)
        k += 2
    if flags & USE_CTAG:
        out[k] = block(mix(start(first + 5), tok[r, CTAG]), D)
        out[k + 1] = block(mix(mix(start(first + 6), tok[r, WORD]), tok[r, CTAG]), D)
        k += 2
    if flags & USE_LEMMA:
        out[k] = block(mix(start(first + 7), tok[r, LEMMA]), D)
        out[k + 1] = block(mix(mix(start(first + 8), tok[r, LEMMA]), tok[r, TAG]), D)
        k += 2
    return k


#: partial hashes of a head row (:func:`_head_partials`): 13 pair templates, 4
#: surrounding-tag templates, 1 between template
N_PARTIAL = 18


@njit(cache=True, nogil=True)
def _head_partials(tok, base, n, h, BOS, EOS, out):
    """The hashes of the head's part of every template over head and dependent
    (the same for all arcs from head h: computed once per head)."""
    r = base + h
    wa, ta, pa = tok[r, WORD], tok[r, TAG], tok[r, PREFIX]
    hl = tok[r - 1, TAG] if h > 0 else BOS
    hr = tok[r + 1, TAG] if h < n else EOS
    out[0] = mix(mix(start(41), wa), ta)
    out[1] = mix(start(42), ta)
    out[2] = mix(start(43), wa)
    out[3] = mix(mix(start(44), wa), ta)
    out[4] = mix(mix(start(45), wa), ta)
    out[5] = mix(start(46), wa)
    out[6] = mix(start(47), ta)
    out[7] = mix(mix(start(48), pa), ta)
    out[8] = mix(start(49), ta)
    out[9] = mix(start(50), pa)
    out[10] = mix(mix(start(51), pa), ta)
    out[11] = mix(mix(start(52), pa), ta)
    out[12] = mix(start(53), pa)
    out[13] = mix(mix(start(54), ta), hr)
    out[14] = mix(mix(start(55), hl), ta)
    out[15] = mix(mix(start(56), ta), hr)
    out[16] = mix(mix(start(57), hl), ta)
    out[17] = mix(start(58), ta)


@njit(cache=True, nogil=True)
def _emit_pairs(tok, fid, base, n, h, d, hp, flags, BOS, EOS, D, out, k):
    """Templates over head h and dependent d, from the head's partial hashes
    ``hp``: the seven pairs of Table 1b over words (and six of them over 5-prefixes
    when either word is long), the tags beside head and dependent (Table 1c, four
    templates of four tags), and (head tag, tag, dependent tag) for every word
    between the two; then, where the input has them, the same pairs and contexts
    over coarse tags, pairs of lemmas and tags, and every morphological feature of
    either word with the other's (coarse) tag."""
    a = base + h
    b = base + d
    wb, tb, pb = tok[b, WORD], tok[b, TAG], tok[b, PREFIX]
    dl = tok[b - 1, TAG]  # d >= 1: the root's row at least
    dr = tok[b + 1, TAG] if d < n else EOS
    out[k] = block(mix(mix(hp[0], wb), tb), D)
    out[k + 1] = block(mix(mix(hp[1], wb), tb), D)
    out[k + 2] = block(mix(mix(hp[2], wb), tb), D)
    out[k + 3] = block(mix(hp[3], tb), D)
    out[k + 4] = block(mix(hp[4], wb), D)
    out[k + 5] = block(mix(hp[5], wb), D)
    out[k + 6] = block(mix(hp[6], tb), D)
    k += 7
    if tok[a, LONG] or tok[b, LONG]:
        out[k] = block(mix(mix(hp[7], pb), tb), D)
        out[k + 1] = block(mix(mix(hp[8], pb), tb), D)
        out[k + 2] = block(mix(mix(hp[9], pb), tb), D)
        out[k + 3] = block(mix(hp[10], tb), D)
        out[k + 4] = block(mix(hp[11], pb), D)
        out[k + 5] = block(mix(hp[12], pb), D)
        k += 6
    out[k] = block(mix(mix(hp[13], dl), tb), D)
    out[k + 1] = block(mix(mix(hp[14], dl), tb), D)
    out[k + 2] = block(mix(mix(hp[15], tb), dr), D)
    out[k + 3] = block(mix(mix(hp[16], tb), dr), D)
    k += 4
    lo, hi = (h, d) if h < d else (d, h)
    for q in range(lo + 1, hi):
        out[k] = block(mix(mix(hp[17], tok[base + q, TAG]), tb), D)
        k += 1
    ca, cb = tok[a, TAG], tok[b, TAG]
    if flags & USE_CTAG:
        ca, cb = tok[a, CTAG], tok[b, CTAG]
        cal = tok[a - 1, CTAG] if h > 0 else BOS
        car = tok[a + 1, CTAG] if h < n else EOS
        cbl = tok[b - 1, CTAG]
        cbr = tok[b + 1, CTAG] if d < n else EOS
        out[k] = block(mix(mix(start(60), ca), cb), D)
        out[k + 1] = block(mix(mix(start(61), ca), wb), D)
        out[k + 2] = block(mix(mix(start(62), tok[a, WORD]), cb), D)
        out[k + 3] = block(mix(mix(mix(mix(start(63), ca), car), cbl), cb), D)
        out[k + 4] = block(mix(mix(mix(mix(start(64), cal), ca), cbl), cb), D)
        out[k + 5] = block(mix(mix(mix(mix(start(65), ca), car), cb), cbr), D)
        out[k + 6] = block(mix(mix(mix(mix(start(66), cal), ca), cb), cbr), D)
        k += 7
    if flags & USE_LEMMA:
        la, lb = tok[a, LEMMA], tok[b, LEMMA]
        out[k] = block(mix(mix(start(67), la), lb), D)
        out[k + 1] = block(mix(mix(start(68), la), tb), D)
        out[k + 2] = block(mix(mix(start(69), tok[a, TAG]), lb), D)
        k += 3
    if flags & USE_FEATS:
        for q in range(tok[b, FSTART], tok[b, FEND]):
            out[k] = block(mix(mix(start(70), fid[q]), ca), D)
            k += 1
        for q in range(tok[a, FSTART], tok[a, FEND]):
            out[k] = block(mix(mix(start(71), fid[q]), cb), D)
            k += 1
    return k


@njit(cache=True, nogil=True)
def max_blocks(tok, base, n, h, d):
    """An upper bound on the blocks of the arc h → d (for buffers)."""
    return 2 * N_UNIGRAM + 40 + n + n_feats(tok, base + h) + n_feats(tok, base + d)


@njit(cache=True, nogil=True)
def _arc_blocks(tok, fid, base, n, h, d, flags, BOS, EOS, D, out):
    """The blocks of every unlabelled template of the arc h → d; returns how many."""
    hp = np.empty(N_PARTIAL, dtype=np.uint64)
    _head_partials(tok, base, n, h, BOS, EOS, hp)
    k = _emit_unigram(tok, base + h, 1, flags, D, out, 0)
    k = _emit_unigram(tok, base + d, 21, flags, D, out, k)
    return _emit_pairs(tok, fid, base, n, h, d, hp, flags, BOS, EOS, D, out, k)


# ------------------------------------------------------------------ relations
@njit(cache=True, nogil=True)
def _label_unigram(tok, fid, r, role, right, flags, D, L, out, k):
    """Relation templates of one token as dependent (``role`` 0) or head (1), with
    the arc's direction ``right`` (1: the head is left of its dependent): word, tag,
    coarse tag and lemma (where the input has them), and its morphological
    features one by one."""
    t0 = 80 + 10 * role
    out[k] = label_block(mix(mix(start(t0), right), tok[r, WORD]), D, L)
    out[k + 1] = label_block(mix(mix(start(t0 + 1), right), tok[r, TAG]), D, L)
    k += 2
    if flags & USE_CTAG:
        out[k] = label_block(mix(mix(start(t0 + 2), right), tok[r, CTAG]), D, L)
        k += 1
    if flags & USE_LEMMA:
        out[k] = label_block(mix(mix(start(t0 + 3), right), tok[r, LEMMA]), D, L)
        k += 1
    if flags & USE_FEATS:
        for q in range(tok[r, FSTART], tok[r, FEND]):
            out[k] = label_block(mix(mix(start(t0 + 4), right), fid[q]), D, L)
            k += 1
    return k


@njit(cache=True, nogil=True)
def _label_pairs(tok, base, h, d, flags, D, L, out, k):
    """Relation templates over head and dependent, with the direction: the two
    tags; the two coarse tags with the distance bucket; head lemma (or word) with
    dependent coarse tag, and the converse; the two coarse tags with the coarse tag
    of the word next to the head on the dependent's side, and of the word next to
    the dependent on the head's side; the dependent's coarse tag with the lemmas of
    those two words (what marks a relation often stands there: a preposition, a
    conjunction, a relative pronoun, "to")."""
    a, b = base + h, base + d
    right = 1 if h < d else 0
    step = 1 if h < d else -1
    ct = CTAG if flags & USE_CTAG else TAG
    lm = LEMMA if flags & USE_LEMMA else WORD
    ca, cb = tok[a, ct], tok[b, ct]
    ia, ib = a + step, b - step  # the inner neighbours (each other's when adjacent)
    dd = direction_distance(h, d)
    out[k] = label_block(mix(mix(mix(start(100), right), tok[a, TAG]), tok[b, TAG]),
                         D, L)
    out[k + 1] = label_block(mix(mix(mix(start(101), dd), ca), cb), D, L)
    out[k + 2] = label_block(mix(mix(mix(start(102), right), tok[a, lm]), cb), D, L)
    out[k + 3] = label_block(mix(mix(mix(start(103), right), ca), tok[b, lm]), D, L)
    out[k + 4] = label_block(mix(mix(mix(mix(start(104), right), ca), cb),
                                 tok[ia, ct]), D, L)
    out[k + 5] = label_block(mix(mix(mix(mix(start(105), right), ca), cb),
                                 tok[ib, ct]), D, L)
    out[k + 6] = label_block(mix(mix(mix(start(106), right), cb), tok[ia, lm]), D, L)
    out[k + 7] = label_block(mix(mix(mix(start(107), right), cb), tok[ib, lm]), D, L)
    return k + 8


#: relation templates of an arc, at most, besides the two words' features
N_LABEL = 16


@njit(cache=True, nogil=True)
def arc_columns(tok, fid, base, n, h, d, rel, flags, L, BOS, EOS, D, out):
    """Every column of the arc h → d with relation ``rel`` of the sentence whose
    root is row ``base`` (with repeats: a repeated column counts twice); returns
    how many were written. ``out`` holds at least ``arc_columns_bound`` entries."""
    dd = direction_distance(h, d)
    m = _arc_blocks(tok, fid, base, n, h, d, flags, BOS, EOS, D, out)
    for q in range(m - 1, -1, -1):  # blocks at the front, columns from the back
        b = out[q]
        out[2 * q] = b
        out[2 * q + 1] = b + dd
    k = 2 * m
    if flags & LABELS:
        right = 1 if h < d else 0
        k0 = k
        k = _label_unigram(tok, fid, base + d, 0, right, flags, D, L, out, k)
        k = _label_unigram(tok, fid, base + h, 1, right, flags, D, L, out, k)
        k = _label_pairs(tok, base, h, d, flags, D, L, out, k)
        for q in range(k0, k):
            out[q] += rel
    return k


@njit(cache=True, nogil=True)
def arc_columns_bound(tok, base, n, h, d):
    """The length ``out`` of :func:`arc_columns` needs for the arc h → d."""
    return 2 * max_blocks(tok, base, n, h, d) + N_LABEL + n_feats(tok, base + d) \
        + n_feats(tok, base + h)


# ------------------------------------------------------------------ scores
@njit(cache=True, nogil=True)
def _unigram_sums(tok, r, first, flags, w, D, sums, buf):
    """sums[c] = Σ w over the unigram columns c of the blocks of row r, c = 0 .. N_DD."""
    m = _emit_unigram(tok, r, first, flags, D, buf, 0)
    for c in range(N_DD + 1):
        s = 0.0
        for q in range(m):
            s += w[buf[q] + c]
        sums[c] = s


@njit(cache=True, nogil=True)
def _label_sums(tok, fid, r, role, flags, w, D, L, sums, buf):
    """sums[right, l] = Σ w over the relation-l columns of the one-token relation
    templates of row r as dependent (``role`` 0) or head (1), for either
    direction."""
    for right in range(2):
        m = _label_unigram(tok, fid, r, role, right, flags, D, L, buf, 0)
        for l in range(L):
            sums[right, l] = 0.0
        for q in range(m):
            b = buf[q]
            for l in range(L):
                sums[right, l] += w[b + l]


@njit(cache=True, nogil=True)
def _relation_range(tok, base, h, d, ct, key_size, rel_ptr):
    """The range of ``rel_ids`` the arc h → d may take (equal ends: every relation)."""
    if rel_ptr.size <= 1:
        return 0, 0
    right = 1 if h < d else 0
    key = (tok[base + h, ct] * key_size + tok[base + d, ct]) * 2 + right
    if key >= rel_ptr.size - 1:
        return 0, 0
    return rel_ptr[key], rel_ptr[key + 1]


@njit(cache=True, nogil=True)
def relation_counts(tok, off, arc_off, flags, L, key_size, rel_ptr, counts):
    """counts[a] = the relations arc a may take (1 for the entries that are no arcs,
    and for every arc without relations): see :func:`arc_scores`."""
    labels = (flags & LABELS) != 0
    ct = CTAG if flags & USE_CTAG else TAG
    for s in range(off.size - 1):
        base = off[s]
        m = off[s + 1] - base
        o = arc_off[s]
        for h in range(m):
            for d in range(m):
                c = 1
                if labels and d != 0 and d != h:
                    r0, r1 = _relation_range(tok, base, h, d, ct, key_size, rel_ptr)
                    c = L if r0 == r1 else r1 - r0
                counts[o + h * m + d] = c


@njit(cache=True, nogil=True)
def arc_scores(tok, fid, off, arc_off, slot_off, w, flags, L, BOS, EOS, D, key_size,
               rel_ptr, rel_ids, out, out_rel):
    """w · f(x, h, d, l) of every arc h → d and every relation l it may take, of
    every sentence (see the module's text).

    Arc a = ``arc_off[s] + h * (n_s + 1) + d`` of sentence s has the entries
    ``slot_off[a]:slot_off[a + 1]`` of ``out`` (scores) and ``out_rel`` (their
    relations, ascending); an entry that is no arc (d = 0 or d = h) has one, of
    relation 0 and score 0, and so has every arc without relations.

    The relation filter: an arc whose head and dependent have (coarse) tag ids a
    and b has key ``(a * key_size + b) * 2 + right``; where ``rel_ptr`` (size
    ``2 key_size² + 1``) gives the key relations, ``rel_ids[rel_ptr[key]:rel_ptr[key
    + 1]]`` (ascending), the arc takes those; a key without relations (or
    ``rel_ptr`` of size 1) every relation (:func:`relation_counts`).

    Per sentence: the unigram sums of every token as head and as dependent (for
    every direction/distance class, and for relations every direction), then per
    arc the pair, context and between templates: the same sum as over
    :func:`arc_columns`, added in another order.
    """
    labels = (flags & LABELS) != 0
    ct = CTAG if flags & USE_CTAG else TAG
    for s in range(off.size - 1):
        base = off[s]
        n = off[s + 1] - base - 1
        m = n + 1
        fmax = 0
        for j in range(m):
            fmax = max(fmax, n_feats(tok, base + j))
        buf = np.empty(N_UNIGRAM + N_LABEL + fmax, dtype=np.int64)
        heads = np.empty((m, N_DD + 1))
        deps = np.empty((m, N_DD + 1))
        for j in range(m):
            _unigram_sums(tok, base + j, 1, flags, w, D, heads[j], buf)
            _unigram_sums(tok, base + j, 21, flags, w, D, deps[j], buf)
        if labels:
            lab_h = np.empty((m, 2, L))
            lab_d = np.empty((m, 2, L))
            for j in range(m):
                _label_sums(tok, fid, base + j, 1, flags, w, D, L, lab_h[j], buf)
                _label_sums(tok, fid, base + j, 0, flags, w, D, L, lab_d[j], buf)
        else:
            lab_h = np.empty((0, 2, L))
            lab_d = np.empty((0, 2, L))
        cols = np.empty(40 + m + 2 * fmax, dtype=np.int64)
        lcols = np.empty(N_LABEL, dtype=np.int64)
        hp = np.empty(N_PARTIAL, dtype=np.uint64)
        o = arc_off[s]
        for h in range(m):
            _head_partials(tok, base, n, h, BOS, EOS, hp)
            for d in range(m):
                p = slot_off[o + h * m + d]
                if d == 0 or d == h:
                    out[p] = 0.0
                    out_rel[p] = 0
                    continue
                dd = direction_distance(h, d)
                total = heads[h, 0] + heads[h, dd] + deps[d, 0] + deps[d, dd]
                k = _emit_pairs(tok, fid, base, n, h, d, hp, flags, BOS, EOS, D, cols,
                                0)
                for q in range(k):
                    total += w[cols[q]] + w[cols[q] + dd]
                if not labels:
                    out[p] = total
                    out_rel[p] = 0
                    continue
                right = 1 if h < d else 0
                k = _label_pairs(tok, base, h, d, flags, D, L, lcols, 0)
                r0, r1 = _relation_range(tok, base, h, d, ct, key_size, rel_ptr)
                if r0 == r1:  # every relation
                    for l in range(L):
                        out[p + l] = total + lab_h[h, right, l] + lab_d[d, right, l]
                        out_rel[p + l] = l
                    for q in range(k):
                        b = lcols[q]
                        for l in range(L):
                            out[p + l] += w[b + l]
                    continue
                for j in range(r0, r1):
                    l = rel_ids[j]
                    v = total + lab_h[h, right, l] + lab_d[d, right, l]
                    for q in range(k):
                        v += w[lcols[q] + l]
                    out[p + j - r0] = v
                    out_rel[p + j - r0] = l


@njit(cache=True, nogil=True)
def best_relations(scores, rel, slot_off, best, best_rel):
    """The best entry of every arc: its score and relation (the first on ties)."""
    for a in range(slot_off.size - 1):
        p = slot_off[a]
        v, r = scores[p], rel[p]
        for q in range(p + 1, slot_off[a + 1]):
            if scores[q] > v:
                v, r = scores[q], rel[q]
        best[a] = v
        best_rel[a] = r


@njit(cache=True, nogil=True)
def find_slots(rel, slot_off, arcs, rels, out):
    """out[i] = the entry of arc ``arcs[i]`` with relation ``rels[i]``, or −1."""
    for i in range(arcs.size):
        a = arcs[i]
        out[i] = -1
        for q in range(slot_off[a], slot_off[a + 1]):
            if rel[q] == rels[i]:
                out[i] = q
                break


# ------------------------------------------------------------------ feature rows
@njit(cache=True, nogil=True)
def arc_feature_rows(tok, fid, off, heads, dep, rel, sent, flags, L, BOS, EOS, D,
                     row_ptr):
    """The columns of the arcs ``heads[a] → dep[a]`` with relations ``rel[a]`` of
    sentences ``sent[a]``, concatenated; ``row_ptr[a]:row_ptr[a + 1]`` are arc a's
    (filled here)."""
    total = 0
    for a in range(heads.size):
        s = sent[a]
        n = off[s + 1] - off[s] - 1
        total += arc_columns_bound(tok, off[s], n, heads[a], dep[a])
    out = np.empty(total, dtype=np.int64)
    pos = 0
    for a in range(heads.size):
        s = sent[a]
        base = off[s]
        n = off[s + 1] - base - 1
        k = arc_columns(tok, fid, base, n, heads[a], dep[a], rel[a], flags, L, BOS,
                        EOS, D, out[pos:])
        row_ptr[a] = pos
        pos += k
    row_ptr[heads.size] = pos
    return out[:pos]


@njit(cache=True, nogil=True)
def scatter_arcs(tok, fid, off, heads, dep, rel, sent, weight, flags, L, BOS, EOS, D,
                 out):
    """out[c] += weight[a] for every column c of every arc a (as in
    :func:`arc_feature_rows`): Σ of weighted feature rows into a dense vector."""
    cols = np.empty(256, dtype=np.int64)
    for a in range(heads.size):
        s = sent[a]
        base = off[s]
        n = off[s + 1] - base - 1
        need = arc_columns_bound(tok, base, n, heads[a], dep[a])
        if cols.size < need:
            cols = np.empty(need, dtype=np.int64)
        k = arc_columns(tok, fid, base, n, heads[a], dep[a], rel[a], flags, L, BOS,
                        EOS, D, cols)
        wa = weight[a]
        for q in range(k):
            out[cols[q]] += wa
