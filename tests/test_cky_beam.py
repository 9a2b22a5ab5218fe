"""Pruned CKY against a test-side beam search, plain and loss-augmented.

The reference below is written from the decoder's documentation only: every chart
cell of length < n keeps its ``beam`` best symbols (scores including the cell's span
score) as children of larger spans, the root cell is never pruned, a sentence left
without a parse is searched again exactly, and a batch's ``candidates`` (the true
trees of a loss-augmented batch) replace a found tree that scores lower.
"""
import numpy as np
import pytest

from structsvm.structures import GrammarPotentials
from structsvm.structures.grammar.features import Grammar
from structsvm.structures.grammar.cky import cky
from structsvm.structures.grammar import SpanLoss

from test_cky import random_problem


def beam_reference(p, beam=None):
    """(score, nodes, n_pruned) of the best tree of a one-sentence batch; beam=None:
    exact. Nodes are (i, j, k, symbol, rule) rows in pre-order."""
    g = p.grammar
    n = p.leaf_scores.shape[0]
    phrase = {int(A): c for c, A in enumerate(g.phrase_sym)}
    rows = {(a, b): r for r, (a, b) in enumerate(
        (a, b) for a in range(n) for b in range(a + 2, n + 1))}
    chart, n_pruned = {}, 0

    def prune(cell):
        nonlocal n_pruned
        if beam is None or len(cell) <= beam:
            return cell
        keep = sorted(cell, key=lambda A: cell[A][0], reverse=True)[:beam]
        n_pruned += len(cell) - beam
        return {A: cell[A] for A in keep}

    for i in range(n):
        cell = {int(A): (float(p.leaf_scores[i, a]), None) for a, A in enumerate(g.leaf_sym)}
        chart[i, i + 1] = prune(cell) if n > 1 else cell
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            cell = {}
            for k in range(i + 1, j):
                for r, (A, B, C) in enumerate(g.rules.tolist()):
                    if B in chart[i, k] and C in chart[k, j]:
                        v = chart[i, k][B][0] + chart[k, j][C][0] + p.rule_scores[r]
                        if A not in cell or v > cell[A][0]:
                            cell[A] = (v, (k, r))
            for A in cell:
                if A in phrase:
                    cell[A] = (cell[A][0] + p.span_scores[rows[i, j], phrase[A]], cell[A][1])
            chart[i, j] = prune(cell) if length < n else cell
    roots = [(v + p.root_scores[A], A) for A, (v, _) in chart[0, n].items()
             if g.root_ok[A]]
    if not roots:
        if beam is None:
            return -np.inf, None, n_pruned
        return (*beam_reference(p)[:2], n_pruned)    # the exact search
    best, top = max(roots)
    nodes = []

    def walk(i, j, A):
        back = chart[i, j][A][1]
        if back is None:
            nodes.append((i, j, -1, A, -1))
            return
        k, r = back
        nodes.append((i, j, k, A, r))
        walk(i, k, int(g.rules[r, 1]))
        walk(k, j, int(g.rules[r, 2]))

    walk(0, n, top)
    return best, np.array(nodes), n_pruned


def problem(seed):
    """A random grammar of 8 symbols, 4-6 on words and 4-6 on phrases (so cells hold
    more symbols than the beam keeps), and random scores for 5-8 words."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 9))
    while True:
        g, p = random_problem(rng, n, n_sym=8, density=0.35)
        if min(g.leaf_sym.size, g.phrase_sym.size) >= 4:
            return rng, g, p


def test_pruned_cky_equals_the_beam_reference():
    differs = 0
    for seed in range(30):
        rng, g, p = problem(seed)
        exact_score, exact_nodes, _ = beam_reference(p)
        if exact_nodes is None:
            continue
        for beam in (1, 2, 3):
            score, nodes, n_pruned = beam_reference(p, beam)
            assert n_pruned > 0                           # the beam really prunes
            tree = cky(p, beam=beam)[0]
            assert tree.nodes.tolist() == nodes.tolist(), (seed, beam)
            assert p.score(tree) == pytest.approx(score, abs=1e-9)
            assert score <= exact_score + 1e-9
            differs += score < exact_score - 1e-9
    # pruning changes the answer on a good share of these (else the test proves little)
    assert differs >= 40


def test_pruned_cky_on_a_batch_equals_the_reference_per_sentence():
    rng = np.random.default_rng(3)
    g, _ = random_problem(rng, 2, n_sym=8, density=0.35)
    lengths = np.array([7, 1, 5, 8, 2])
    word_off = np.concatenate([[0], np.cumsum(lengths)])
    span_off = np.concatenate([[0], np.cumsum(lengths * (lengths - 1) // 2)])
    p = GrammarPotentials(rng.normal(size=(word_off[-1], g.leaf_sym.size)), word_off,
                          rng.normal(size=(span_off[-1], g.phrase_sym.size)), span_off,
                          rng.normal(size=g.n_rules), rng.normal(size=g.n_symbols), g)
    trees = cky(p, beam=2)
    for s in range(len(lengths)):
        _, nodes, _ = beam_reference(p[s], 2)
        assert trees[s].nodes.tolist() == nodes.tolist()


def _gold_and_augmented(seed, scale, own):
    """A sentence, its true tree (the exact best tree under the sentence's own scores
    with ``own``, else under other scores) and the span-loss-augmented batch of the
    sentence's scores times ``scale``."""
    rng, g, p = problem(seed)
    other = GrammarPotentials(rng.normal(size=p.leaf_scores.shape), p.word_off,
                              rng.normal(size=p.span_scores.shape), p.span_off,
                              rng.normal(size=g.n_rules), rng.normal(size=g.n_symbols), g,
                              p.words)
    _, gold, _ = beam_reference(p if own else other)
    if gold is None:
        return None
    p = GrammarPotentials(scale * p.leaf_scores, p.word_off, scale * p.span_scores,
                          p.span_off, scale * p.rule_scores, scale * p.root_scores, g,
                          p.words)
    return p, gold, p.augment([gold], SpanLoss())


def test_loss_augmented_pruned_cky_equals_the_reference_with_its_guard():
    guarded = 0
    for seed in range(30):
        # a true tree the pruned search easily beats, and one it may miss (the best
        # tree of scores large next to the loss)
        for scale, own in ((1.0, False), (10.0, True)):
            case = _gold_and_augmented(seed, scale, own)
            if case is None:
                continue
            p, gold, aug = case
            beam = 1 + seed % 3
            score, nodes, n_pruned = beam_reference(aug, beam)
            assert n_pruned > 0
            # the reference's guard: the true tree when the pruned search found worse
            gold_aug = aug.score(gold)
            if gold_aug > score:
                nodes, guarded = gold, guarded + 1
            tree = cky(aug, beam=beam)[0]
            assert tree.nodes.tolist() == nodes.tolist(), (seed, scale, beam)
            violation = SpanLoss()(gold, tree) + p.score(tree) - p.score(gold)
            assert violation >= -1e-9
            assert aug.score(tree) == pytest.approx(violation + p.score(gold), abs=1e-9)
    assert guarded >= 8            # the guard was needed (and used) in many cases


def test_the_guard_turns_a_negative_violation_into_the_true_tree():
    # a case where the pruned search alone ends below the true tree: the true tree is
    # the exact best one and the beam of one symbol per cell misses it
    found = None
    for seed in range(200):
        rng, g, p = problem(seed)
        _, gold, _ = beam_reference(p)
        if gold is None:
            continue
        p = GrammarPotentials(10 * p.leaf_scores, p.word_off, 10 * p.span_scores,
                              p.span_off, 10 * p.rule_scores, 10 * p.root_scores, g, p.words)
        aug = p.augment([gold], SpanLoss())
        score, nodes, _ = beam_reference(aug, 1)
        unguarded = SpanLoss()(gold, nodes) + p.score(nodes) - p.score(gold)
        if unguarded < -1e-6:
            found = p, gold, aug
            break
    assert found is not None, "no case where beam pruning gives a negative violation"
    p, gold, aug = found
    tree = cky(aug, beam=1)[0]
    assert tree.nodes.tolist() == gold.tolist()
    assert SpanLoss()(gold, tree) + p.score(tree) - p.score(gold) == 0.0
    # exact search needs no guard: it finds the true tree or something better
    exact = cky(aug, exact=True)[0]
    assert SpanLoss()(gold, exact) + p.score(exact) - p.score(gold) >= 0.0


def test_a_sentence_pruned_to_no_parse_is_decoded_again_exactly():
    # symbols A, B on words, S over phrases; only S -> B B exists, and every word
    # prefers A: a beam of one keeps A alone in every word's cell, leaving no parse
    g = Grammar(3, leaf_sym=[0, 1], phrase_sym=[2], rules=[[2, 1, 1]],
                root_ok=[False, False, True])
    p = GrammarPotentials(np.array([[1.0, 0.0], [2.0, -1.0]]), [0, 2], np.zeros((1, 1)),
                          [0, 1], np.array([0.5]), np.zeros(3), g)
    _, nodes, n_pruned = beam_reference(p, 1)
    assert n_pruned == 2
    tree = cky(p, beam=1)[0]
    assert tree.nodes.tolist() == nodes.tolist() == \
        [[0, 2, 1, 2, 0], [0, 1, -1, 1, -1], [1, 2, -1, 1, -1]]
    assert p.score(tree) == pytest.approx(-0.5)


def test_a_beam_keeps_exactly_beam_symbols_among_ties():
    # A, B, C tie on every word; a beam of one keeps the first (A), so the pruned search
    # can only use S -> A A, while the exact one prefers S -> B B
    g = Grammar(4, leaf_sym=[0, 1, 2], phrase_sym=[3], rules=[[3, 0, 0], [3, 1, 1]],
                root_ok=[False, False, False, True])
    p = GrammarPotentials(np.zeros((2, 3)), [0, 2], np.zeros((1, 1)), [0, 1],
                          np.array([0.0, 1.0]), np.zeros(4), g)
    _, nodes, n_pruned = beam_reference(p, 1)
    assert n_pruned == 4
    assert cky(p, beam=1)[0].nodes.tolist() == nodes.tolist() == \
        [[0, 2, 1, 3, 0], [0, 1, -1, 0, -1], [1, 2, -1, 0, -1]]
    assert cky(p, beam=2)[0].nodes.tolist() == cky(p, exact=True)[0].nodes.tolist() == \
        [[0, 2, 1, 3, 1], [0, 1, -1, 1, -1], [1, 2, -1, 1, -1]]
