"""Taxonomy map, tree decoder and tree-distance loss against brute force."""
import itertools

import networkx as nx
import numpy as np
import pytest

from structsvm.structures import TaxonomyFeatures
from structsvm.structures.taxonomy.features import build_tree
from structsvm.structures.taxonomy.features import TreePotentials
from structsvm.structures import get_decoder
from structsvm.structures import ZeroOneLoss, get_loss
from structsvm.structures.taxonomy import tree_distance
from structsvm.structures.taxonomy import TreeDistanceLoss


def random_children(rng, n_nodes):
    """A random rooted tree as {parent: [children]} over names 'n0'..; 'n0' is the root."""
    kids = {}
    for v in range(1, n_nodes):
        p = int(rng.integers(0, v))
        kids.setdefault(f"n{p}", []).append(f"n{v}")
    return kids


def all_paths(kids, root="n0"):
    """Every root-to-leaf path by depth-first search (the brute-force output space)."""
    out = []

    def walk(node, prefix):
        if node not in kids:
            out.append(prefix)
            return
        for c in kids[node]:
            walk(c, prefix + (c,))
    walk(root, ())
    return out


def brute_best(node_scores, tree, paths, bonus=None):
    best, arg = -np.inf, None
    for k, p in enumerate(paths):
        enc = tree.encode(p)
        s = node_scores[list(enc)].sum() + (0.0 if bonus is None else bonus(enc))
        if s > best + 1e-12:
            best, arg = s, enc
    return arg, best


# ----------------------------------------------------------------------- tree parsing
def test_tree_from_graph_dict_and_paths_agree():
    kids = {"H": ["Hi", "G"], "Hi": ["Pan", "Homo"], "G": ["Gorilla"]}
    g = nx.DiGraph([(p, c) for p, cs in kids.items() for c in cs])
    paths = [("H", "Hi", "Pan"), ("H", "Hi", "Homo"), ("H", "G", "Gorilla")]
    trees = [build_tree(kids), build_tree(g), build_tree(paths)]
    for t in trees:
        assert t.root == "H"
        assert sorted(t.path_names(p) for p in t.leaf_paths) == sorted(p[1:] for p in paths)


def test_forest_gets_virtual_root_and_repeated_names_need_paths():
    t = build_tree(["talk.politics.misc", "talk.religion.misc", "sci.med"], sep=".")
    assert t.root is None and t.height == 3
    with pytest.raises(ValueError, match="names 2 nodes"):
        t.encode("misc")
    assert t.path_names(t.encode("talk.religion.misc", ".")) == ("talk", "religion", "misc")


@pytest.mark.parametrize("bad, match", [
    (nx.DiGraph([("a", "b"), ("c", "b"), ("r", "a"), ("r", "c")]), "parents"),
    (["a.b", "a.b.c"], "internal node"),
    ("a.b", "string"),
])
def test_tree_errors(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build_tree(bad, sep=".")


def test_label_errors_name_the_sample():
    fm = TaxonomyFeatures({"r": ["a", "b"], "a": ["a1", "a2"]})
    X = np.eye(2)
    with pytest.raises(ValueError, match="Sample 1: label 'a' is an internal node"):
        fm.fit(X, ["b", "a"])
    with pytest.raises(ValueError, match="Sample 0: unknown label 'zz'"):
        fm.fit(X, ["zz", "b"])


# ----------------------------------------------------------------------- decoder
@pytest.mark.parametrize("seed", range(25))
def test_tree_decoder_equals_exhaustive_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    kids = random_children(rng, int(rng.integers(2, 16)))
    tree = build_tree(kids)
    paths = all_paths(kids)
    scores = rng.normal(size=(3, tree.n_nodes))
    batch = TreePotentials(scores, tree)
    got = get_decoder("tree")(batch)
    assert got == get_decoder("exhaustive")(batch)
    for i in range(3):
        arg, best = brute_best(scores[i], tree, paths)
        assert got[i] == arg
        assert batch[i].score(got[i]) == pytest.approx(best)
    if len(paths) > 1:  # argmax over y != y_i
        excl = [tree.encode(paths[int(rng.integers(len(paths)))]) for _ in range(3)]
        got = get_decoder("tree")(batch, exclude=excl)
        assert got == get_decoder("exhaustive")(batch, exclude=excl)
        assert all(g != e for g, e in zip(got, excl))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("loss", [TreeDistanceLoss(), TreeDistanceLoss(normalize=True),
                                  ZeroOneLoss()])
def test_loss_augmented_tree_decoding_equals_brute_force(seed, loss):
    rng = np.random.default_rng(100 + seed)
    kids = random_children(rng, int(rng.integers(2, 14)))
    tree = build_tree(kids)
    paths = all_paths(kids)
    scores = rng.normal(size=(4, tree.n_nodes))
    Y = [tree.encode(paths[int(rng.integers(len(paths)))]) for _ in range(4)]
    aug = TreePotentials(scores, tree).augment(Y, loss)
    got = get_decoder("tree")(aug)
    for i in range(4):
        arg, best = brute_best(scores[i], tree, paths, bonus=lambda p: loss(Y[i], p))
        val = scores[i, list(got[i])].sum() + loss(Y[i], got[i])
        assert val == pytest.approx(best)
        assert aug[i].score(got[i]) == pytest.approx(val)


# ----------------------------------------------------------------------- loss
@pytest.mark.parametrize("seed", range(10))
def test_tree_distance_equals_graph_shortest_path(seed):
    rng = np.random.default_rng(200 + seed)
    kids = random_children(rng, int(rng.integers(2, 20)))
    tree = build_tree(kids)
    g = nx.Graph([(p, c) for p, cs in kids.items() for c in cs])
    paths = all_paths(kids)
    loss = TreeDistanceLoss()
    for a, b in itertools.product(paths, repeat=2):
        ea, eb = tree.encode(a), tree.encode(b)
        ref = nx.shortest_path_length(g, a[-1], b[-1])
        assert loss(ea, eb) == ref
        # node decomposition: Δ = Σ_{v ∈ ŷ} t[v] + |y|
        t = loss.part_losses(ea, tree.n_nodes)
        assert t[list(eb)].sum() + len(ea) == ref
        assert TreeDistanceLoss(normalize=True)(ea, eb) == pytest.approx(
            ref / (len(ea) + len(eb)))


def test_tree_distance_metric_with_and_without_tree():
    tree = ["comp.sys.mac.hardware", "comp.sys.ibm.pc.hardware", "comp.graphics",
            "rec.autos"]
    yt = ["comp.sys.mac.hardware", "rec.autos", "comp.graphics"]
    yp = ["comp.sys.ibm.pc.hardware", "comp.graphics", "comp.graphics"]
    expect = (5 + 4 + 0) / 3
    assert tree_distance(yt, yp, sep=".") == pytest.approx(expect)
    assert tree_distance(yt, yp, tree=tree, sep=".") == pytest.approx(expect)
    with pytest.raises(ValueError, match="pass tree="):
        tree_distance(["a"], ["b"])


def test_loss_registered():
    assert isinstance(get_loss("tree_distance"), TreeDistanceLoss)


# ----------------------------------------------------------------------- feature map
@pytest.mark.parametrize("form", ["leaf", "path", "sep"])
def test_joint_feature_score_identity_and_label_forms(form):
    rng = np.random.default_rng(7)
    paths = [("animal", "cat"), ("animal", "dog", "puppy"), ("animal", "dog", "wolf"),
             ("plant", "oak")]
    tree = {"leaf": {"animal": ["cat", "dog"], "dog": ["puppy", "wolf"], "plant": ["oak"]},
            "path": paths, "sep": None}[form]
    labels = {"leaf": [p[-1] for p in paths], "path": paths,
              "sep": [".".join(p) for p in paths]}[form]
    X = rng.normal(size=(4, 3))
    fm = TaxonomyFeatures(tree, sep="." if form == "sep" else None, bias=1.0).fit(X, labels)
    assert fm.n_features_ == 4 * fm.tree_.n_nodes
    w = rng.normal(size=fm.n_features_)
    for x, y in zip(X, labels):
        phi = fm.joint_feature(x, y)
        enc = fm.encode_outputs([y])[0]
        assert w @ phi == pytest.approx(fm.potentials(x, w).score(enc))
        assert fm.decode_outputs([enc]) == [y]
    # batched rows equal the one-at-a-time vectors
    Xe = fm.encode_inputs(X)
    J = fm.joint_features(Xe, fm.encode_outputs(labels)).toarray()
    assert np.allclose(J, np.stack([fm.joint_feature(x, y) for x, y in zip(X, labels)]))


def test_sparse_inputs_and_fitted_state_round_trip():
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    X = sp.random(6, 5, density=0.5, format="csr", random_state=1)
    Y = ["a.x", "a.y", "b.z", "a.x", "b.z", "a.y"]
    fm = TaxonomyFeatures(sep=".").fit(X, Y)
    w = rng.normal(size=fm.n_features_)
    pred = get_decoder("tree")(fm.batch_potentials(fm.encode_inputs(X), w))
    fm2 = TaxonomyFeatures(sep=".").load_fitted_state(fm.fitted_state())
    pred2 = get_decoder("tree")(fm2.batch_potentials(fm2.encode_inputs(X), w))
    assert pred == pred2 and fm2.decode_outputs(pred2) == fm.decode_outputs(pred)
