"""Compiled CKY over a batch of sentences (no validation here: see structures/grammar/cky.py).

Layout (shared with :func:`cky_reference`):

- ``leaf_scores[word_off[s] + i, a]``: score of leaf symbol ``leaf_sym[a]`` over word i;
- ``span_scores[span_off[s] + c(i, j), p]``: score of phrase symbol ``phrase_sym[p]``
  over the span [i, j) of length ≥ 2, with c(i, j) = i(2n − 1 − i)/2 + j − i − 2
  (spans ordered by start, then end);
- rules r: ``parent[r] -> left[r] right[r]`` scoring ``rule_score[r]``, sorted by left
  child with ``left_ptr[B]:left_ptr[B + 1]`` the rules whose left child is B;
- ``root_scores[A]``: added when A covers the whole sentence (−inf: not a root).

Output: per sentence 2n − 1 rows ``(i, j, k, symbol, rule)`` in pre-order from row
``node_off[s]`` (k = rule = −1 for words), and the best score.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: The loops compiled at installation, with the argument and result types a call
#: must have to run that code (see :mod:`structsvm._compiled`; ``f8:2`` is a
#: C-contiguous 2-D float64 array, ``i8`` an int64 scalar, a tuple in parentheses).
SIGNATURES = {
    "cky_batch": (
        "f8:2 i8:1 f8:2 i8:1 i8:1 i8:1 f8:1 i8:1 "
        "i8:1 i8:1 f8:1 i8:1 i8 i8:2 i8:1 f8:1",
        "b1:1"),
}

NEG = -np.inf


def span_index(i, j, n):
    """Row of span [i, j) (length ≥ 2) among a sentence's spans of n words."""
    return i * (2 * n - 1 - i) // 2 + j - i - 2


@njit(cache=True, nogil=True)
def _keep_best(row, beam, order, vals):
    """Set all but the ``beam`` highest finite entries of ``row`` to −inf."""
    m = 0
    for a in range(row.size):
        if row[a] > NEG:
            order[m] = a
            vals[m] = row[a]
            m += 1
    if m <= beam:
        return
    cut = np.partition(vals[:m], m - beam)[m - beam]
    kept = 0
    for t in range(m):
        a = order[t]
        if row[a] >= cut and kept < beam:
            kept += 1
        else:
            row[a] = NEG


@njit(cache=True, nogil=True)
def _fill(s, n, leaf_scores, word_off, span_scores, span_off, leaf_sym, phrase_sym,
          rule_parent, rule_right, rule_score, left_ptr, pair_ptr, pair_rule, beam, chart,
          bk, br, active, n_act, order, vals):
    S = chart.shape[2]
    for i in range(n + 1):
        for j in range(n + 1):
            n_act[i, j] = 0
            for a in range(S):
                chart[i, j, a] = NEG
    w0 = word_off[s]
    for i in range(n):
        for a in range(leaf_sym.size):
            chart[i, i + 1, leaf_sym[a]] = leaf_scores[w0 + i, a]
        if beam > 0 and n > 1:
            _keep_best(chart[i, i + 1], beam, order, vals)
        m = 0
        for a in range(S):
            if chart[i, i + 1, a] > NEG:
                active[i, i + 1, m] = a
                m += 1
        n_act[i, i + 1] = m
    s0 = span_off[s]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            best = chart[i, j]
            for k in range(i + 1, j):
                # rules by left child (cost Σ_B |rules(B)|) or by child pair (cost
                # |active left| × |active right|): whichever visits fewer rules
                n_l, n_r = n_act[i, k], n_act[k, j]
                by_left = 0
                for t in range(n_l):
                    B = active[i, k, t]
                    by_left += left_ptr[B + 1] - left_ptr[B]
                if by_left <= n_l * n_r:
                    for t in range(n_l):
                        B = active[i, k, t]
                        lb = chart[i, k, B]
                        for r in range(left_ptr[B], left_ptr[B + 1]):
                            rc = chart[k, j, rule_right[r]]
                            if rc == NEG:
                                continue
                            v = lb + rc + rule_score[r]
                            A = rule_parent[r]
                            if v > best[A]:
                                best[A] = v
                                bk[i, j, A] = k
                                br[i, j, A] = r
                else:
                    for t in range(n_l):
                        B = active[i, k, t]
                        lb = chart[i, k, B]
                        for u in range(n_r):
                            C = active[k, j, u]
                            q = B * S + C
                            if pair_ptr[q] == pair_ptr[q + 1]:
                                continue
                            v0 = lb + chart[k, j, C]
                            for e in range(pair_ptr[q], pair_ptr[q + 1]):
                                r = pair_rule[e]
                                v = v0 + rule_score[r]
                                A = rule_parent[r]
                                if v > best[A]:
                                    best[A] = v
                                    bk[i, j, A] = k
                                    br[i, j, A] = r
            row = s0 + i * (2 * n - 1 - i) // 2 + j - i - 2
            for p in range(phrase_sym.size):
                A = phrase_sym[p]
                if best[A] > NEG:
                    best[A] += span_scores[row, p]
            if beam > 0 and length < n:
                _keep_best(best, beam, order, vals)
            m = 0
            for a in range(S):
                if best[a] > NEG:
                    active[i, j, m] = a
                    m += 1
            n_act[i, j] = m


@njit(cache=True, nogil=True)
def cky_batch(leaf_scores, word_off, span_scores, span_off, leaf_sym, phrase_sym,
              root_scores, rule_parent, rule_left, rule_right, rule_score, left_ptr,
              beam, out, node_off, best_score):
    """Decode every sentence; returns a bool array: True where no parse was found."""
    n_sent = word_off.size - 1
    S = root_scores.size
    # rules by (left, right) child pair: pair_rule[pair_ptr[B*S + C]:pair_ptr[B*S + C + 1]]
    pair_ptr = np.zeros(S * S + 1, dtype=np.int64)
    for r in range(rule_parent.size):
        pair_ptr[rule_left[r] * S + rule_right[r] + 1] += 1
    for q in range(S * S):
        pair_ptr[q + 1] += pair_ptr[q]
    fill = pair_ptr[:-1].copy()
    pair_rule = np.empty(rule_parent.size, dtype=np.int64)
    for r in range(rule_parent.size):
        q = rule_left[r] * S + rule_right[r]
        pair_rule[fill[q]] = r
        fill[q] += 1
    n_max = 1
    for s in range(n_sent):
        n_max = max(n_max, word_off[s + 1] - word_off[s])
    chart = np.empty((n_max + 1, n_max + 1, S))
    bk = np.zeros((n_max + 1, n_max + 1, S), dtype=np.int32)
    br = np.zeros((n_max + 1, n_max + 1, S), dtype=np.int32)
    active = np.zeros((n_max + 1, n_max + 1, S), dtype=np.int32)
    n_act = np.zeros((n_max + 1, n_max + 1), dtype=np.int32)
    order = np.zeros(S, dtype=np.int64)
    vals = np.zeros(S)
    failed = np.zeros(n_sent, dtype=np.bool_)
    stack = np.zeros((2 * n_max + 2, 3), dtype=np.int64)
    for s in range(n_sent):
        n = word_off[s + 1] - word_off[s]
        for attempt in range(2):
            bm = beam if attempt == 0 else 0
            _fill(s, n, leaf_scores, word_off, span_scores, span_off, leaf_sym,
                  phrase_sym, rule_parent, rule_right, rule_score, left_ptr, pair_ptr,
                  pair_rule, bm, chart, bk, br, active, n_act, order, vals)
            top, top_val = -1, NEG
            for a in range(S):
                v = chart[0, n, a] + root_scores[a]
                if chart[0, n, a] > NEG and root_scores[a] > NEG and v > top_val:
                    top, top_val = a, v
            if top >= 0 or bm == 0:
                break
        best_score[s] = top_val
        if top < 0:
            failed[s] = True
            continue
        pos = node_off[s]
        sp = 0
        stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, top
        sp = 1
        while sp > 0:
            sp -= 1
            i, j, A = stack[sp, 0], stack[sp, 1], stack[sp, 2]
            if j - i == 1:
                out[pos, 0], out[pos, 1], out[pos, 2] = i, j, -1
                out[pos, 3], out[pos, 4] = A, -1
            else:
                k, r = bk[i, j, A], br[i, j, A]
                out[pos, 0], out[pos, 1], out[pos, 2] = i, j, k
                out[pos, 3], out[pos, 4] = A, r
                stack[sp, 0], stack[sp, 1], stack[sp, 2] = k, j, rule_right[r]
                stack[sp + 1, 0], stack[sp + 1, 1] = i, k
                stack[sp + 1, 2] = rule_left[r]
                sp += 2
            pos += 1
    return failed


def cky_reference(leaf_scores, span_scores, leaf_sym, phrase_sym, root_scores,
                  rule_parent, rule_left, rule_right, rule_score):
    """Plain-Python exact CKY of ONE sentence (for tests): (score, nodes) or (−inf, None).

    Same layout as :func:`cky_batch` with one sentence (offsets 0); nodes are
    ``(i, j, k, symbol, rule)`` tuples in pre-order.
    """
    n = len(leaf_scores)
    chart = {}
    for i in range(n):
        cell = {}
        for a, A in enumerate(leaf_sym):
            cell[int(A)] = (float(leaf_scores[i][a]), None)
        chart[i, i + 1] = cell
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            cell = {}
            for k in range(i + 1, j):
                left, right = chart[i, k], chart[k, j]
                for r in range(len(rule_parent)):
                    B, C, A = int(rule_left[r]), int(rule_right[r]), int(rule_parent[r])
                    if B in left and C in right:
                        v = left[B][0] + right[C][0] + float(rule_score[r])
                        if A not in cell or v > cell[A][0]:
                            cell[A] = (v, (k, r))
            row = span_index(i, j, n)
            for p, A in enumerate(phrase_sym):
                A = int(A)
                if A in cell:
                    cell[A] = (cell[A][0] + float(span_scores[row][p]), cell[A][1])
            chart[i, j] = cell
    best, top = -np.inf, None
    for A, (v, _) in chart[0, n].items():
        if root_scores[A] > -np.inf and v + root_scores[A] > best:
            best, top = v + float(root_scores[A]), A
    if top is None:
        return -np.inf, None
    nodes = []

    def walk(i, j, A):
        back = chart[i, j][A][1]
        if back is None:
            nodes.append((i, j, -1, A, -1))
            return
        k, r = back
        nodes.append((i, j, k, A, r))
        walk(i, k, int(rule_left[r]))
        walk(k, j, int(rule_right[r]))

    walk(0, n, top)
    return best, nodes
