"""CKY: exact search against test-side enumeration of every binary tree, plain and
loss-augmented; the compiled kernel against the Python reference; pruning; errors."""
import numpy as np
import pytest

from structsvm.structures import GrammarPotentials
from structsvm.structures.grammar.features import Grammar
from structsvm.structures import get_decoder
from structsvm.structures.grammar._cky_jit import cky_reference
from structsvm.structures.grammar.cky import cky
from structsvm.structures.grammar import SpanLoss


def random_problem(rng, n_words, n_sym=4, density=0.5):
    """A random grammar (every rule parent a phrase symbol) and random scores."""
    leaf_sym = np.sort(rng.choice(n_sym, size=rng.integers(1, n_sym + 1), replace=False))
    phrase_sym = np.sort(rng.choice(n_sym, size=rng.integers(1, n_sym + 1), replace=False))
    rules = [(a, b, c) for a in phrase_sym for b in range(n_sym) for c in range(n_sym)
             if rng.random() < density]
    if not rules:
        rules = [(phrase_sym[0], leaf_sym[0], leaf_sym[0])]
    root_ok = rng.random(n_sym) < 0.8
    root_ok[rng.integers(n_sym)] = True
    g = Grammar(n_sym, leaf_sym, phrase_sym, rules, root_ok)
    n_spans = n_words * (n_words - 1) // 2
    p = GrammarPotentials(rng.normal(size=(n_words, leaf_sym.size)), [0, n_words],
                          rng.normal(size=(n_spans, phrase_sym.size)), [0, n_spans],
                          rng.normal(size=g.n_rules), rng.normal(size=n_sym), g,
                          [tuple(f"w{i}" for i in range(n_words))])
    return g, p


def span_row(i, j, n):
    # the spans of length >= 2 of a sentence, ordered by start then end
    return [(a, b) for a in range(n) for b in range(a + 2, n + 1)].index((i, j))


def all_trees(p, i, j, n):
    """Every binary tree over words [i, j) the grammar allows: (nodes, score)."""
    g = p.grammar
    if j - i == 1:
        for a, A in enumerate(g.leaf_sym):
            yield [(i, j, -1, int(A), -1)], float(p.leaf_scores[i, a])
        return
    for k in range(i + 1, j):
        rights = list(all_trees(p, k, j, n))
        for lt, ls in all_trees(p, i, k, n):
            for rt, rs in rights:
                B, C = lt[0][3], rt[0][3]
                for r, (A, b, c) in enumerate(g.rules.tolist()):
                    if b == B and c == C:
                        pc = list(g.phrase_sym).index(A)
                        s = ls + rs + p.rule_scores[r] + p.span_scores[span_row(i, j, n), pc]
                        yield [(i, j, k, A, r)] + lt + rt, s


def brute_force(p, gold=None):
    """Best (score, nodes) over all trees; with ``gold``: score + span loss."""
    n = p.leaf_scores.shape[0]
    best, arg = -np.inf, None
    gold_set = None if gold is None else {(a, b, s) for a, b, _, s, _ in gold}
    for nodes, s in all_trees(p, 0, n, n):
        A = nodes[0][3]
        if not p.grammar.root_ok[A]:
            continue
        v = s + p.root_scores[A]
        if gold_set is not None:
            v += sum((a, b, sym) not in gold_set for a, b, _, sym, _ in nodes)
        if v > best:
            best, arg = v, nodes
    return best, arg


@pytest.mark.parametrize("seed", range(25))
def test_cky_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    g, p = random_problem(rng, n)
    best, nodes = brute_force(p)
    if nodes is None:
        with pytest.raises(ValueError, match="Sample 0: the grammar has no parse"):
            cky(p, exact=True)
        return
    tree = cky(p, exact=True)[0]
    assert p.score(tree) == pytest.approx(best, abs=1e-9)
    assert tree.nodes.tolist() == [list(t) for t in nodes]  # continuous scores: no ties
    ref_score, ref_nodes = cky_reference(p.leaf_scores, p.span_scores, g.leaf_sym,
                                         g.phrase_sym, np.where(g.root_ok, p.root_scores,
                                                                -np.inf),
                                         g.rule_parent, g.rule_left, g.rule_right,
                                         p.rule_scores)
    assert ref_score == pytest.approx(best, abs=1e-9)
    assert [list(t) for t in ref_nodes] == tree.nodes.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_loss_augmented_cky_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 5))
    trees = []
    while not trees:  # redraw the (rare) grammars that cannot parse n words
        g, p = random_problem(rng, n, density=0.7)
        trees = [t for t, _ in all_trees(p, 0, n, n) if g.root_ok[t[0][3]]]
    gold = trees[rng.integers(len(trees))]
    best, _ = brute_force(p, gold)
    loss = SpanLoss()
    y_hat = cky(p.augment([np.array(gold)], loss), exact=True)[0]
    value = p.score(y_hat) + loss(np.array(gold), y_hat)
    assert value == pytest.approx(best, abs=1e-9)
    # normalised loss: the augmented scores carry 1/(2n - 1) per wrong node
    best_n = -np.inf
    gold_set = {(a, b, s) for a, b, _, s, _ in gold}
    for nodes, s in all_trees(p, 0, n, n):
        if g.root_ok[nodes[0][3]]:
            wrong = sum((a, b, sym) not in gold_set for a, b, _, sym, _ in nodes)
            best_n = max(best_n, s + p.root_scores[nodes[0][3]] + wrong / (2 * n - 1))
    y_n = cky(p.augment([np.array(gold)], SpanLoss(normalize=True)), exact=True)[0]
    assert p.score(y_n) + SpanLoss(normalize=True)(np.array(gold), y_n) == \
        pytest.approx(best_n, abs=1e-9)


def test_batch_kernel_matches_reference_and_pruning_with_wide_beam_is_exact():
    rng = np.random.default_rng(7)
    parts = [random_problem(rng, n, n_sym=7, density=0.3) for n in (9, 1, 6, 12)]
    # one grammar for the batch: take the first and redraw scores for the others
    g = parts[0][0]
    lengths = np.array([9, 1, 6, 12])
    word_off = np.concatenate([[0], np.cumsum(lengths)])
    span_off = np.concatenate([[0], np.cumsum(lengths * (lengths - 1) // 2)])
    p = GrammarPotentials(rng.normal(size=(word_off[-1], g.leaf_sym.size)), word_off,
                          rng.normal(size=(span_off[-1], g.phrase_sym.size)), span_off,
                          rng.normal(size=g.n_rules), rng.normal(size=g.n_symbols), g)
    exact = cky(p, exact=True)
    wide = cky(p, beam=g.n_symbols)
    for s in range(len(lengths)):
        q = p[s]
        score, nodes = cky_reference(q.leaf_scores, q.span_scores, g.leaf_sym, g.phrase_sym,
                                     np.where(g.root_ok, q.root_scores, -np.inf),
                                     g.rule_parent, g.rule_left, g.rule_right,
                                     q.rule_scores)
        assert exact[s].nodes.tolist() == [list(t) for t in nodes]
        assert p.score(exact)[s] == pytest.approx(score)
        assert np.array_equal(wide[s].nodes, exact[s].nodes)
    narrow = cky(p, beam=1)          # pruned: a valid tree, never better than exact
    assert np.all(p.score(narrow) <= p.score(exact) + 1e-9)
    for t, n in zip(narrow, lengths):
        assert len(t.nodes) == 2 * n - 1


def test_hand_parsed_sentence():
    # "they fish": S -> NP VP with NP on "they", VP on "fish"; symbols NP VP S
    g = Grammar(3, leaf_sym=[0, 1], phrase_sym=[2], rules=[[2, 0, 1], [2, 1, 0]],
                root_ok=[False, False, True])
    p = GrammarPotentials(np.array([[1.0, 0.0], [0.0, 1.0]]), [0, 2], np.zeros((1, 1)),
                          [0, 1], np.zeros(2), np.zeros(3), g)
    (t,) = get_decoder("cky")(p)
    assert t.nodes.tolist() == [[0, 2, 1, 2, 0], [0, 1, -1, 0, -1], [1, 2, -1, 1, -1]]
    assert p.score(t) == 2.0


def test_errors():
    rng = np.random.default_rng(0)
    g, p = random_problem(rng, 3)
    with pytest.raises(ValueError, match="exclude"):
        cky(p, exclude=[None])
    with pytest.raises(ValueError, match="beam"):
        cky(p, beam=0)
    bad = GrammarPotentials(p.leaf_scores * np.nan, p.word_off, p.span_scores, p.span_off,
                            p.rule_scores, p.root_scores, g)
    with pytest.raises(ValueError, match="leaf_scores contain NaN"):
        cky(bad)
    empty = GrammarPotentials(np.zeros((0, g.leaf_sym.size)), [0, 0],
                              np.zeros((0, g.phrase_sym.size)), [0, 0], p.rule_scores,
                              p.root_scores, g)
    with pytest.raises(ValueError, match="Sample 0: empty sentence"):
        cky(empty)
    with pytest.raises(TypeError, match="parse potentials"):
        cky(object())
