"""Max-marginals and k-best paths of chains (orders 1-3, with emission pairs, with
forbidden tags and transitions) against enumeration of every path, and the compiled
loops against plain Python recursions over the same lattice."""
import itertools

import numpy as np
import pytest

from structsvm.structures.sequence import ChainPotentials, OrderKChainPotentials
from structsvm.structures.sequence import _lattice_jit
from structsvm.structures.sequence.lattice import (chain_max_marginals, history_tables,
                                                   kbest_viterbi)


def first_order(rng, n_seq, max_len, K, forbid=0.0, ints=False):
    lengths = rng.integers(1, max_len + 1, size=n_seq)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    draw = (lambda *s: rng.integers(0, 3, size=s).astype(float)) if ints else \
        (lambda *s: rng.normal(size=s))
    unary, trans, start, end = draw(offsets[-1], K), draw(K, K), draw(K), draw(K)
    for a in (unary, trans, start, end):
        a[rng.random(a.shape) < forbid] = -np.inf
    return ChainPotentials(unary, offsets, trans, start, end)


def order_k(rng, n_seq, max_len, K, k, pair, forbid=0.0):
    lengths = rng.integers(1, max_len + 1, size=n_seq)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    b = K + 1
    keys = [np.arange(b ** (m + 1)) + (0 if m == 2 else b ** 3) for m in range(2, k + 1)]
    keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    keys = keys[rng.random(keys.size) < 0.5]
    n = int(offsets[-1])
    unary = rng.normal(size=(n, K))
    unary[rng.random(unary.shape) < forbid] = -np.inf
    trans = rng.normal(size=(K, K))
    trans[rng.random(trans.shape) < forbid] = -np.inf
    return OrderKChainPotentials(unary, offsets, trans, rng.normal(size=K),
                                 rng.normal(size=K), k, keys, rng.normal(size=keys.size),
                                 rng.normal(size=(n, K + 1, K)) if pair else None)


def brute(one):
    """Every path of a batch of one with a finite score, and the scores."""
    paths = [y for y in one.enumerate()]
    scores = np.array([one.score(y) for y in paths])
    keep = np.isfinite(scores)
    return [p for p, f in zip(paths, keep) if f], scores[keep]


def brute_max_marginals(one):
    paths, scores = brute(one)
    T, K = one.unary.shape
    mm = np.full((T, K), -np.inf)
    for y, s in zip(paths, scores):
        mm[np.arange(T), y] = np.maximum(mm[np.arange(T), y], s)
    return mm, (scores.max() if scores.size else -np.inf)


def _batches(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 5))
    forbid = float(rng.choice([0.0, 0.0, 0.2, 0.5]))
    if seed % 2 == 0:
        return first_order(rng, 4, 5, K, forbid)
    k = int(rng.integers(1, 4))
    return order_k(rng, 4, 5 if k < 3 else 4, K, k, bool(rng.integers(0, 2)), forbid)


# ------------------------------------------------------------------ against enumeration
@pytest.mark.parametrize("seed", range(40))
def test_max_marginals_equal_enumeration(seed):
    # 40 seeds x 4 chains: orders 1-3, 1-4 tags, lengths 1-5, some scores -inf
    batch = _batches(seed)
    mm, best = chain_max_marginals(batch)
    for i in range(len(batch)):
        want, top = brute_max_marginals(batch[i])
        np.testing.assert_allclose(mm[i], want, rtol=0, atol=1e-9)
        np.testing.assert_allclose(best[i], top, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_kbest_equals_enumeration(seed):
    batch = _batches(100 + seed)
    k = int(np.random.default_rng(seed).integers(1, 9))
    got = kbest_viterbi(batch, k)
    for i in range(len(batch)):
        one = batch[i]
        paths, scores = brute(one)
        order = np.argsort(-scores, kind="stable")[:k]
        ys, ss = got[i]
        assert len(ys) == len(ss) == order.size
        np.testing.assert_allclose(ss, scores[order], rtol=0, atol=1e-9)
        # continuous scores: no ties, so the paths themselves are the top k
        for y, j in zip(ys, order):
            assert np.array_equal(y, paths[j])
            assert one.score(y) == pytest.approx(ss[list(order).index(j)], abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_kbest_with_ties(seed):
    """Integer scores tie often: the scores equal the top k of enumeration, the paths
    are distinct and score what is reported, and every path scoring more than the
    k-th score is listed (which of the paths tied at the k-th score come is the
    kernel's choice)."""
    rng = np.random.default_rng(500 + seed)
    batch = first_order(rng, 3, 4, int(rng.integers(2, 4)), ints=True)
    k = int(rng.integers(1, 12))
    for i, (ys, ss) in enumerate(kbest_viterbi(batch, k)):
        one = batch[i]
        paths, scores = brute(one)
        want = np.sort(scores)[::-1][:k]
        np.testing.assert_allclose(ss, want, atol=1e-9)
        assert len({tuple(y) for y in ys}) == len(ys)
        assert all(one.score(y) == pytest.approx(s) for y, s in zip(ys, ss))
        listed = {tuple(y) for y in ys}
        assert all(tuple(p) in listed for p, s in zip(paths, scores) if s > want[-1] + 1e-9)


def test_no_allowed_path():
    p = ChainPotentials(np.array([[-np.inf, 0.0], [0.0, -np.inf]]), [0, 2],
                        np.array([[0.0, 0.0], [-np.inf, 0.0]]), np.zeros(2), np.zeros(2))
    mm, best = chain_max_marginals(p)   # y0 must be 1, y1 must be 0: 1 -> 0 forbidden
    assert best[0] == -np.inf and np.all(mm[0] == -np.inf)
    assert kbest_viterbi(p, 3)[0][0] == []


def test_empty_chain_and_bad_arguments():
    p = ChainPotentials(np.zeros((2, 2)), [0, 0, 2], np.zeros((2, 2)), np.zeros(2),
                        np.zeros(2))
    ys, ss = kbest_viterbi(p, 2)[0]
    assert [y.tolist() for y in ys] == [[]] and ss.tolist() == [0.0]
    mm, best = chain_max_marginals(p)
    assert mm[0].shape == (0, 2) and best[0] == 0.0
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        kbest_viterbi(p, 0)
    bad = ChainPotentials(np.array([[np.nan, 0.0]]), [0, 1], np.zeros((2, 2)),
                          np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="unary contain NaN or \\+inf"):
        chain_max_marginals(bad)
    with pytest.raises(TypeError, match="chain potentials"):
        kbest_viterbi(object(), 1)


# ------------------------------------------------------------------ the loops, plainly
def plain_lattice(U, pair, Tr, F, K, b):
    """Forward and backward over explicit tuples of histories (dicts), one chain."""
    S = Tr.shape[0]
    k = round(np.log(S) / np.log(b))
    T = U.shape[0]

    def code(hist):
        h = 0
        for s in hist:
            h = h * b + s
        return h

    def step(hist, c, t):
        v = U[t, c] + Tr[code(hist), c]
        if pair is not None:
            v += pair[t, hist[-1], c]
        return v

    start = (K,) * k
    alpha = [{start: 0.0}]
    for t in range(T):
        nxt = {}
        for hist, a in alpha[-1].items():
            for c in range(K):
                h2 = hist[1:] + (c,)
                nxt[h2] = max(nxt.get(h2, -np.inf), a + step(hist, c, t))
        alpha.append(nxt)
    beta = [None] * (T + 1)
    beta[T] = {h: F[code(h)] for h in alpha[T]}
    for t in range(T - 1, -1, -1):
        beta[t] = {h: max(step(h, c, t) + beta[t + 1][h[1:] + (c,)] for c in range(K))
                   for h in alpha[t]}
    mm = np.full((T, K), -np.inf)
    for t in range(T):
        for h, a in alpha[t + 1].items():
            mm[t, h[-1]] = max(mm[t, h[-1]], a + beta[t + 1][h])
    return mm, max(a + F[code(h)] for h, a in alpha[T].items())


def plain_kbest(U, pair, Tr, F, K, b, n):
    """k-best by keeping, for every history, the n best prefixes as explicit paths."""
    S = Tr.shape[0]
    k = round(np.log(S) / np.log(b))

    def code(hist):
        h = 0
        for s in hist:
            h = h * b + s
        return h

    lists = {(K,) * k: [(0.0, ())]}
    for t in range(U.shape[0]):
        nxt = {}
        for hist, items in lists.items():
            for c in range(K):
                e = U[t, c] + Tr[code(hist), c] + (pair[t, hist[-1], c]
                                                     if pair is not None else 0.0)
                for s, path in items:
                    nxt.setdefault(hist[1:] + (c,), []).append((s + e, path + (c,)))
        lists = {h: sorted((x for x in v if x[0] > -np.inf), key=lambda x: -x[0])[:n]
                 for h, v in nxt.items()}
    final = sorted(((s + F[code(h)], p) for h, v in lists.items() for s, p in v
                    if s + F[code(h)] > -np.inf), key=lambda x: -x[0])[:n]
    return final


@pytest.mark.parametrize("seed", range(15))
def test_loops_equal_plain_recursions(seed):
    batch = _batches(300 + seed)
    k, Tr, F = history_tables(batch)
    K = batch.n_states
    pair = batch.pair if type(batch).higher_order else None
    U = np.ascontiguousarray(batch.unary)
    off = batch.offsets
    mm = np.empty(U.shape)
    best = np.empty(len(batch))
    p = np.zeros((0, 0, 0)) if pair is None else np.ascontiguousarray(pair)
    _lattice_jit.max_marginals_batch(U, off, p, pair is not None, Tr, F, K + 1, mm, best)
    n = 4
    paths = np.zeros((U.shape[0], n), dtype=np.int64)
    scores = np.empty((len(batch), n))
    counts = np.zeros(len(batch), dtype=np.int64)
    _lattice_jit.kbest_batch(U, off, p, pair is not None, Tr, F, K + 1, n, paths, scores,
                             counts)
    for i in range(len(batch)):
        lo, hi = off[i], off[i + 1]
        ref_mm, ref_best = plain_lattice(U[lo:hi], None if pair is None else pair[lo:hi],
                                         Tr, F, K, K + 1)
        np.testing.assert_allclose(mm[lo:hi], ref_mm, atol=1e-9)
        np.testing.assert_allclose(best[i], ref_best, atol=1e-9)
        ref = plain_kbest(U[lo:hi], None if pair is None else pair[lo:hi], Tr, F, K, K + 1,
                          n)
        assert counts[i] == len(ref)
        np.testing.assert_allclose(scores[i, :counts[i]], [s for s, _ in ref], atol=1e-9)


def test_history_tables_score_every_path():
    """Summing the tables along a path gives the batch's own score (order 3, pairs)."""
    rng = np.random.default_rng(7)
    batch = order_k(rng, 1, 4, 2, 3, True)
    k, Tr, F = history_tables(batch)
    b = batch.n_states + 1
    for y in itertools.product(range(batch.n_states), repeat=int(batch.offsets[1])):
        h, s = b ** k - 1, 0.0
        for t, c in enumerate(y):
            s += batch.unary[t, c] + Tr[h, c] + batch.pair[t, h % b, c]
            h = (h * b + c) % b ** k
        assert s + F[h] == pytest.approx(batch.score(np.array(y)))
