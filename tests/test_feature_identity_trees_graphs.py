"""Φ of the grammar and graph maps rebuilt on the test side from their documentation.

``GrammarFeatures``: random trees (n-ary nodes, unary chains over phrases and over
preterminals) are binarised here (unary chains joined by ``+``, right factoring with
``X|<...>`` intermediate symbols), and every node's features are written out by hand:
the word templates of a preterminal (the word, its suffixes and shape, the classes and
words of its neighbours, ``<BOS>``/``<EOS>`` outside the sentence, ``<UNK>`` for
values not seen in training), the span templates of a phrase (bias, length bucket,
first/last/outside words and classes, boundary shapes and suffix, the pairs), the
rule of every binary node and the root symbol. The expected Φ is the count of those
names, located through ``feature_names_``; the map's own encoders are not used.

``GraphFeatures``: Φ is written in the documented layout of w (node features ⊗ label
with the bias as the last input row, then one (d_t, K, K) block per edge type in
``edge_types_`` order, label pairs ordered (min, max) on undirected types, edge
features or a constant 1 as the weight of the pair) and its names are checked at
those positions.
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk import Tree

from structsvm.structures import GraphFeatures
from structsvm.structures.grammar.features import GrammarFeatures
from structsvm.structures.grammar.cky import cky

seeds = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=25, deadline=None)

# ----------------------------------------------------------------------------- grammar
VOCAB = ["The", "dog", "Dogs", "runs", "ran", "fast", "42", "a-b", "x", "USA", "it's"]
TAGS = ["DT", "NN", "VB", "RB", "CD"]
PHRASES = ["S", "NP", "VP", "PP", "ADJP"]
UNSEEN = ["Zebra", "quickly", "1999", "e-mail"]


def shape(w):
    """X upper, x lower, d digit, else the character; runs collapsed, first 6 kept."""
    out = []
    for ch in w:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out[:6])


def bucket(length):
    names = {1: "1", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6-7", 7: "6-7", 8: "8-10",
             9: "8-10", 10: "8-10"}
    return names.get(length) or ("11-15" if length <= 15 else "16-20" if length <= 20
                                 else "21-30" if length <= 30 else ">30")


def random_tree(rng, words, tags, i=0, j=None, parent=None):
    """A random tree over words[i:j]: n-ary nodes, unary chains, no same-label unary."""
    j = len(words) if j is None else j
    if j - i == 1:
        node = Tree(tags[i], [words[i]])
        if rng.random() < 0.3:
            node = Tree(str(rng.choice(PHRASES)), [node])   # a chain over a tag: NP+PRP
        return node
    n_kids = int(rng.integers(2, min(4, j - i) + 1))
    cuts = np.sort(rng.choice(np.arange(i + 1, j), size=n_kids - 1, replace=False))
    bounds = [i, *cuts.tolist(), j]
    label = str(rng.choice(PHRASES))
    kids = [random_tree(rng, words, tags, a, b, label) for a, b in zip(bounds, bounds[1:])]
    node = Tree(label, kids)
    if rng.random() < 0.25:
        node = Tree(str(rng.choice([p for p in PHRASES if p != label])), [node])
    return node


def binarise(t, markov, start=0):
    """(i, j, symbol, (left, right) symbols or None) of every node, root first."""
    labels = [t.label()]
    while len(t) == 1 and isinstance(t[0], Tree):
        t = t[0]
        labels.append(t.label())
    symbol = "+".join(labels)
    if not isinstance(t[0], Tree):
        return [(start, start + 1, symbol, None)]
    return factor(list(t), symbol, labels[-1], start, markov, [])


def factor(kids, symbol, base, start, markov, seen):
    left = binarise(kids[0], markov, start)
    mid = left[0][1]
    if len(kids) == 2:
        right = binarise(kids[1], markov, mid)
    else:
        ctx = (seen + [kids[0].label()])[-markov:] if markov else []
        right = factor(kids[1:], f"{base}|<{','.join(ctx)}>", base, mid, markov, ctx)
    return [(start, right[0][1], symbol, (left[0][2], right[0][2]))] + left + right


def token_values(word, tag):
    lw = word.lower()
    return {"word": lw, "suf1": lw[-1:], "suf2": lw[-2:], "suf3": lw[-3:],
            "shape": shape(word), "cls": tag if tag is not None else shape(word)}


def expected_grammar_names(words, tags, nodes, seen_values):
    """Names of the active features of the nodes (``binarise``'s rows), with
    multiplicity."""
    n = len(words)

    def val(kind, pos):
        if pos < 0:
            return "<BOS>"
        if pos >= n:
            return "<EOS>"
        v = token_values(words[pos], None if tags is None else tags[pos])[kind]
        return v if v in seen_values[kind] else "<UNK>"

    names = Counter()
    names[f"root:{nodes[0][2]}"] += 1
    for i, j, sym, kids in nodes:
        if kids is None:
            feats = ["bias"] + [f"{k}[0]={val(k, i)}" for k in
                                ("word", "suf1", "suf2", "suf3", "shape", "cls")]
            feats += [f"cls[-1]={val('cls', i - 1)}", f"cls[+1]={val('cls', i + 1)}",
                      f"word[-1]={val('word', i - 1)}", f"word[+1]={val('word', i + 1)}",
                      f"cls[-1]={val('cls', i - 1)}&cls[0]={val('cls', i)}",
                      f"cls[0]={val('cls', i)}&cls[+1]={val('cls', i + 1)}"]
            names.update(f"leaf:{sym}:{f}" for f in feats)
            continue
        at = {"first": i, "last": j - 1, "before": i - 1, "after": j}
        ln = bucket(j - i)
        feats = ["bias", f"len={ln}"]
        feats += [f"{k}[{p}]={val(k, at[p])}" for k in ("word", "cls")
                  for p in ("first", "last", "before", "after")]
        feats += [f"suf3[last]={val('suf3', j - 1)}", f"shape[first]={val('shape', i)}",
                  f"shape[last]={val('shape', j - 1)}"]
        for a, b in (("before", "first"), ("last", "after"), ("first", "last")):
            feats.append(f"cls[{a}]={val('cls', at[a])}&cls[{b}]={val('cls', at[b])}")
        feats += [f"len={ln}&cls[first]={val('cls', i)}",
                  f"len={ln}&cls[last]={val('cls', j - 1)}"]
        names.update(f"span:{sym}:{f}" for f in feats)
        names[f"rule:{sym} -> {kids[0]} {kids[1]}"] += 1
    return names


def grammar_corpus(rng, tagged, n_sent=5):
    X, Y = [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, 9))
        words = [str(w) for w in rng.choice(VOCAB, size=n)]
        tags = [str(t) for t in rng.choice(TAGS, size=n)]
        tree = random_tree(rng, words, tags)
        # given tags need not be the tree's preterminals (predicted tags)
        given_tags = [t if rng.random() < 0.7 else str(rng.choice(TAGS)) for t in tags]
        X.append(list(zip(words, given_tags)) if tagged else words)
        Y.append(tree)
    return X, Y


@SETTINGS
@given(seed=seeds, tagged=st.booleans(), markov=st.integers(0, 2),
       min_count=st.integers(1, 2))
def test_grammar_phi_rebuilt_from_the_templates(seed, tagged, markov, min_count):
    rng = np.random.default_rng(seed)
    X, Y = grammar_corpus(rng, tagged)
    fm = GrammarFeatures(markov=markov, min_count=min_count).fit(X, Y)
    words_of = [[w for w, _ in x] if tagged else list(x) for x in X]
    tags_of = [[t for _, t in x] if tagged else None for x in X]
    # the values seen in training, per kind (words: only those seen min_count times)
    counts = {k: Counter() for k in ("word", "suf1", "suf2", "suf3", "shape", "cls")}
    for ws, ts in zip(words_of, tags_of):
        for p, w in enumerate(ws):
            for k, v in token_values(w, None if ts is None else ts[p]).items():
                counts[k][v] += 1
    seen = {k: {v for v, c in cnt.items() if k != "word" or c >= min_count}
            for k, cnt in counts.items()}
    names = list(fm.feature_names_)
    index = {name: a for a, name in enumerate(names)}
    assert len(index) == len(names)            # every column has a name of its own
    # n_features_ = d_leaf·L + d_span·P + |rules| + |symbols|, blocks sized by hand
    size = {k: 3 + len(seen[k]) for k in seen}
    d_leaf = 1 + sum(size[k] for k in ("word", "suf1", "suf2", "suf3", "shape", "cls")) \
        + 2 * size["cls"] + 2 * size["word"] + 2 * size["cls"] ** 2
    d_span = 1 + 11 + 4 * size["word"] + 4 * size["cls"] + size["suf3"] \
        + 2 * size["shape"] + 3 * size["cls"] ** 2 + 2 * 11 * size["cls"]
    all_nodes = [nd for t in Y for nd in binarise(t, markov)]
    leaf_syms = {s for _, _, s, k in all_nodes if k is None}
    phrase_syms = {s for _, _, s, k in all_nodes if k is not None}
    rules = {(s, *k) for _, _, s, k in all_nodes if k is not None}
    assert fm.n_features_ == d_leaf * len(leaf_syms) + d_span * len(phrase_syms) \
        + len(rules) + len(leaf_syms | phrase_syms)
    # the training trees, and each tree again over words and tags never seen
    cases = list(zip(X, Y, words_of, tags_of))
    for x, t, ws, ts in list(cases):
        new_w = [str(rng.choice(UNSEEN)) if rng.random() < 0.5 else w for w in ws]
        new_t = None if ts is None else [str(rng.choice(["XX", *TAGS])) for _ in ts]
        t2 = t.copy(deep=True)
        for p, leaf_pos in enumerate(t2.treepositions("leaves")):
            t2[leaf_pos] = new_w[p]
        cases.append((list(zip(new_w, new_t)) if tagged else new_w, t2, new_w, new_t))
    w = rng.normal(size=fm.n_features_)

    def phi_of(ws, ts, nodes):
        out = np.zeros(fm.n_features_)
        for name, c in expected_grammar_names(ws, ts, nodes, seen).items():
            out[index[name]] += c
        return out

    expected = []
    for x, t, ws, ts in cases:
        expected.append(phi_of(ws, ts, binarise(t, markov)))
        np.testing.assert_array_equal(fm.joint_feature(x, t), expected[-1])
        ye = fm.encode_outputs([t], [x])[0]
        assert fm.potentials(x, w).score(ye) == pytest.approx(w @ expected[-1], abs=1e-9)
    # the same rows from one batch (sentences at offsets), and the difference sum
    # against the trees CKY decodes under w (their Φ read off the decoded nodes)
    Xs, Ts = [c[0] for c in cases], [c[1] for c in cases]
    Xe = fm.encode_inputs(Xs)
    Ye = fm.encode_outputs(Ts, Xs)
    np.testing.assert_array_equal(fm.joint_features(Xe, Ye).toarray(), np.array(expected))
    Yhat = cky(fm.batch_potentials(Xe, w), exact=True)
    weights = rng.uniform(0.5, 2.0, size=len(cases))
    want = np.zeros(fm.n_features_)
    for (x, t, ws, ts), phi, yh, om in zip(cases, expected, Yhat, weights):
        sym = [str(v) for v in fm.symbols_]
        cell = {(a, b): sym[A] for a, b, _, A, _ in yh.nodes.tolist()}
        nodes = [(a, b, sym[A], None if k < 0 else (cell[a, k], cell[k, b]))
                 for a, b, k, A, _ in yh.nodes.tolist()]
        want += om * (phi - phi_of(ws, ts, nodes))
    np.testing.assert_allclose(fm.joint_feature_difference_sum(Xe, Ye, Yhat, weights=weights),
                               want, atol=1e-9)


def test_grammar_hand_written_sentence():
    # one sentence spelled out in full: (S (NP (DT The) (NN dog)) (VP (VB runs)))
    t = Tree.fromstring("(S (NP (DT The) (NN dog)) (VP (VB runs)))")
    fm = GrammarFeatures().fit([["The", "dog", "runs"]], [t])
    phi = dict(zip(fm.feature_names_, fm.joint_feature(["The", "dog", "runs"], t)))
    on = {name for name, v in phi.items() if v}
    assert all(phi[name] == 1 for name in on)
    assert {"root:S", "rule:S -> NP VP+VB", "rule:NP -> DT NN", "span:S:len=3",
            "span:NP:len=2", "span:NP:word[first]=the", "span:NP:word[last]=dog",
            "span:NP:word[before]=<BOS>", "span:NP:word[after]=runs",
            "span:S:word[after]=<EOS>", "span:NP:cls[first]=Xx",
            "span:NP:cls[last]=x&cls[after]=x", "span:NP:len=2&cls[first]=Xx",
            "leaf:VP+VB:word[0]=runs", "leaf:VP+VB:word[-1]=dog",
            "leaf:DT:word[+1]=dog", "leaf:DT:cls[-1]=<BOS>&cls[0]=Xx",
            "leaf:DT:bias", "span:S:bias", "leaf:NN:suf3[0]=dog"} <= on
    # 3 words × 13 word templates + 2 phrases × 18 span templates + 2 rules + 1 root
    assert len(on) == 3 * 13 + 2 * 18 + 2 + 1


# ----------------------------------------------------------------------------- graphs
def random_graph(rng, d, spec, n_nodes):
    """(node features, {type: edges}, {type: edge features}) for types in ``spec``
    (type -> edge-feature width, 0 for none)."""
    x = rng.normal(size=(n_nodes, d))
    x[rng.random(size=x.shape) < 0.3] = 0.0
    edges, feats = {}, {}
    for t, width in spec.items():
        m = int(rng.integers(1, 6)) if n_nodes > 1 else 0
        u = rng.integers(0, n_nodes, size=m)
        v = (u + rng.integers(1, max(n_nodes, 2), size=m)) % n_nodes   # no self-loops
        edges[t] = np.stack([u, v], axis=1).reshape(-1, 2)
        if width:
            feats[t] = rng.normal(size=(m, width))
    return (x, edges, feats) if feats else (x, edges)


def expected_graph_phi(graph, y, classes, bias, spec, directed):
    """Φ in the documented layout of w, written out entry by entry."""
    x, edges = graph[0], graph[1]
    feats = graph[2] if len(graph) == 3 else {}
    K = len(classes)
    k = [classes.index(v) for v in y]
    d = x.shape[1] + (bias > 0)
    types = sorted(spec)
    widths = {t: spec[t] or 1 for t in types}
    phi = np.zeros(d * K + sum(widths.values()) * K * K)
    for v in range(x.shape[0]):
        for j in range(x.shape[1]):
            phi[j * K + k[v]] += x[v, j]
        if bias > 0:
            phi[(d - 1) * K + k[v]] += bias     # the bias is the last input row
    base = d * K
    for t in types:
        is_dir = directed is True or (not isinstance(directed, bool) and t in directed)
        for e, (u, v) in enumerate(edges[t]):
            a, b = k[u], k[v]
            if not is_dir:
                a, b = min(a, b), max(a, b)
            psi = feats[t][e] if spec[t] else [1.0]
            for j, val in enumerate(psi):
                phi[base + j * K * K + a * K + b] += val
        base += widths[t] * K * K
    return phi


@SETTINGS
@given(seed=seeds, d=st.integers(1, 3), K=st.integers(2, 4),
       bias=st.sampled_from([0.0, 1.0, 2.5]),
       directed=st.sampled_from([False, True, ("chain",), ("skip", "near")]))
def test_graph_phi_in_the_documented_layout(seed, d, K, bias, directed):
    rng = np.random.default_rng(seed)
    classes = [f"c{k}" for k in range(K)]
    # types with and without edge features; names not in sorted order on purpose
    spec = {"skip": int(rng.integers(0, 3)), "chain": 0, "near": int(rng.integers(1, 4))}
    if rng.random() < 0.3:
        spec = {"chain": 0}
    X = [random_graph(rng, d, spec, int(rng.integers(1, 6))) for _ in range(4)]
    Y = [[classes[c] for c in rng.integers(0, K, size=g[0].shape[0])] for g in X]
    Y[0] = list(classes) + Y[0][K:] if len(Y[0]) >= K else Y[0]
    X.append(random_graph(rng, d, spec, K))
    Y.append(list(classes))                                  # every label seen
    fm = GraphFeatures(bias=bias, directed=directed).fit(X, Y)
    assert list(fm.classes_) == classes and fm.edge_types_ == sorted(spec)
    d_in = d + (bias > 0)
    assert fm.n_features_ == d_in * K + sum(spec[t] or 1 for t in spec) * K * K
    names = fm.feature_names_
    # names at the hand-computed positions
    for j in range(d_in):
        feat = "bias" if bias > 0 and j == d else f"x{j}"
        assert [names[j * K + c] for c in range(K)] == [f"node:{feat}:{c}" for c in classes]
    base = d_in * K
    for t in sorted(spec):
        is_dir = directed is True or (not isinstance(directed, bool) and t in directed)
        arrow = "->" if is_dir else "-"
        for j in range(spec[t] or 1):
            col = f":x{j}" if spec[t] else ""
            assert names[base + j * K * K + 1] == f"edge:{t}{col}:c0{arrow}c1"
            assert names[base + j * K * K + K * K - 1] == \
                f"edge:{t}{col}:c{K - 1}{arrow}c{K - 1}"
        base += (spec[t] or 1) * K * K
    w = rng.normal(size=fm.n_features_)
    Y_rand, rows, rows_rand = [], [], []
    for g, y in zip(X, Y):
        Y_rand.append([classes[c] for c in rng.integers(0, K, size=len(y))])
        for lab, out in ((y, rows), (Y_rand[-1], rows_rand)):
            out.append(expected_graph_phi(g, lab, classes, bias, spec, directed))
            np.testing.assert_allclose(fm.joint_feature(g, lab), out[-1], atol=1e-12)
            ye = fm.encode_outputs([lab], [g])[0]
            assert fm.potentials(g, w).score(ye) == pytest.approx(w @ out[-1], abs=1e-9)
    # the same rows from one batch (graphs at offsets), its differences and their sum
    Xe = fm.encode_inputs(X)
    Ye, Ye_rand = fm.encode_outputs(Y, X), fm.encode_outputs(Y_rand, X)
    np.testing.assert_allclose(fm.joint_features(Xe, Ye).toarray(), np.array(rows),
                               atol=1e-12)
    diff = np.array(rows) - np.array(rows_rand)
    np.testing.assert_allclose(fm.joint_feature_differences(Xe, Ye, Ye_rand).toarray(),
                               diff, atol=1e-12)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    np.testing.assert_allclose(
        fm.joint_feature_difference_sum(Xe, Ye, Ye_rand, weights=weights), weights @ diff,
        atol=1e-12)


def test_graph_hand_written_example():
    # a path a - b - a with one "chain" edge type without features and a "skip" edge
    # with two features; bias 2 on every node
    x = np.array([[1.0], [3.0], [0.5]])
    g = (x, {"chain": np.array([[0, 1], [1, 2]]), "skip": np.array([[2, 0]])},
         {"skip": np.array([[0.5, -1.0]])})
    fm = GraphFeatures(bias=2.0, directed=("chain",)).fit([g], [["a", "b", "a"]])
    phi = fm.joint_feature(g, ["a", "b", "a"])
    by_name = {n: v for n, v in zip(fm.feature_names_, phi) if v}
    assert by_name == {"node:x0:a": 1.5, "node:x0:b": 3.0, "node:bias:a": 4.0,
                       "node:bias:b": 2.0, "edge:chain:a->b": 1.0, "edge:chain:b->a": 1.0,
                       "edge:skip:x0:a-a": 0.5, "edge:skip:x1:a-a": -1.0}
