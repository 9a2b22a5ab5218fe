"""Decoding under output constraints: never an output a constraint forbids, and the
best (the k best, the max-marginals) among the allowed outputs, against enumeration
with the rules checked independently (tags fixed, allowed or forbidden per token;
BIO, IOB1, BIOES, a user's function or table of transitions; chains of orders 1-3;
classes)."""
import numpy as np
import pytest

import structsvm
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.structures.constraints import OutputConstraints
from structsvm.structures.multiclass.argmax import argmax, top_k
from structsvm.structures.multiclass.constraints import constrain_classes
from structsvm.structures.multiclass.features import MulticlassPotentials
from structsvm.structures.sequence import ChainPotentials, OrderKChainPotentials
from structsvm.structures.sequence.constraints import constrain_tagged, transition_mask
from structsvm.structures.sequence.lattice import chain_max_marginals, kbest_viterbi
from structsvm.structures.sequence.viterbi import viterbi

BIO_TAGS = ["B-A", "I-A", "B-B", "I-B", "O"]
BIOES_TAGS = ["B-A", "I-A", "E-A", "S-A", "O"]


# ------------------------------------------------------------------ the rules, plainly
def _split(tag):
    return ("O", "") if tag == "O" else (tag[0], tag[2:])


def bio_valid(path):
    prev = None
    for tag in path:
        kind, typ = _split(tag)
        if kind == "I" and (prev is None or _split(prev) not in (("B", typ), ("I", typ))):
            return False
        prev = tag
    return True


def iob1_valid(path):
    prev = None
    for tag in path:
        kind, typ = _split(tag)
        if kind == "B" and (prev is None or _split(prev)[1] != typ or prev == "O"):
            return False
        prev = tag
    return True


def bioes_valid(path):
    """Every chunk is S-X alone or B-X I-X* E-X; nothing else."""
    open_type = None
    for tag in path:
        kind, typ = _split(tag)
        if open_type is None:
            if kind in "IE":
                return False
            if kind == "B":
                open_type = typ
        else:
            if kind not in "IE" or typ != open_type:
                return False
            if kind == "E":
                open_type = None
    return open_type is None


VALID = {"BIO": bio_valid, "IOB1": iob1_valid, "BIOES": bioes_valid}


def obeys(path, c):
    """Whether a tag path obeys OutputConstraints c, read independently of the masks."""
    for t, tag in c.fixed.items():
        if path[t] != tag:
            return False
    for t, tags in c.allowed.items():
        if path[t] not in tags:
            return False
    for t, tags in c.forbidden.items():
        if path[t] in tags:
            return False
    rule = c.transitions
    if isinstance(rule, str):
        return VALID[rule](path)
    if rule is not None:
        steps = list(zip([None] + list(path), list(path) + [None]))
        ok = rule if callable(rule) else (lambda a, b: (a, b) in rule)
        return all(ok(a, b) for a, b in steps)
    return True


# ------------------------------------------------------------------ random cases
def random_constraints(rng, tags, T, scheme):
    fixed, allowed, forbidden = {}, {}, {}
    for t in range(T):
        u = rng.random()
        if u < 0.15:
            fixed[t] = tags[rng.integers(len(tags))]
        elif u < 0.3:
            allowed[t] = list(rng.choice(tags, size=int(rng.integers(1, len(tags) + 1)),
                                         replace=False))
        elif u < 0.45:
            forbidden[t] = list(rng.choice(tags, size=int(rng.integers(1, len(tags))),
                                           replace=False))
    if scheme == "table":
        names = [None] + list(tags)
        transitions = {(a, b) for a in names for b in names
                       if not (a is None and b is None) and rng.random() < 0.7}
    elif scheme == "function":
        bad = tags[rng.integers(len(tags))]

        def transitions(prev, tag):
            return not (prev == bad and tag == bad)  # no two in a row
    else:
        transitions = scheme
    return OutputConstraints(fixed=fixed, allowed=allowed, forbidden=forbidden,
                             transitions=transitions)


def random_chain_case(seed):
    rng = np.random.default_rng(seed)
    scheme = rng.choice(["BIO", "IOB1", "BIOES", "table", "function", None])
    tags = list(BIOES_TAGS if scheme == "BIOES" else BIO_TAGS)
    K = len(tags) if scheme in ("BIO", "BIOES", "IOB1") else int(rng.integers(2, 5))
    tags = tags[:K]
    order = int(rng.integers(1, 4))
    n_seq = 3
    lengths = rng.integers(1, 5 if order < 3 else 4, size=n_seq)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    n = int(offsets[-1])
    if order == 1 and rng.random() < 0.5:
        batch = ChainPotentials(rng.normal(size=(n, K)), offsets, rng.normal(size=(K, K)),
                                rng.normal(size=K), rng.normal(size=K))
    else:
        b = K + 1
        keys = [np.arange(b ** (m + 1)) + (0 if m == 2 else b ** 3)
                for m in range(2, order + 1)]
        keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
        keys = keys[rng.random(keys.size) < 0.3]
        batch = OrderKChainPotentials(
            rng.normal(size=(n, K)), offsets, rng.normal(size=(K, K)), rng.normal(size=K),
            rng.normal(size=K), order, keys, rng.normal(size=keys.size),
            rng.normal(size=(n, K + 1, K)) if rng.random() < 0.5 else None)
    same = random_constraints(rng, tags, int(lengths.min()), scheme)
    cons = [OutputConstraints(**{**_parts(random_constraints(rng, tags, int(T), scheme)),
                                 "transitions": same.transitions}) for T in lengths]
    return rng, tags, batch, cons


def _parts(c):
    return {"fixed": c.fixed, "allowed": c.allowed, "forbidden": c.forbidden}


def allowed_paths(one, tags, c):
    out = []
    for y in one.enumerate():
        if obeys([tags[s] for s in y], c):
            out.append((y, one.score(y)))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_constrained_chain_decoders_equal_enumeration(seed):
    """viterbi, k-best and max-marginals of the constrained batch against every
    path that obeys the rules (60 seeds x 3 chains; orders 1-3)."""
    rng, tags, batch, cons = random_chain_case(seed)
    index = {t: k for k, t in enumerate(tags)}
    restricted = constrain_tagged(tags, index, batch, cons)
    best = viterbi(restricted)
    k = int(rng.integers(1, 7))
    lists = kbest_viterbi(restricted, k)
    mm, top = chain_max_marginals(restricted)
    for i in range(len(batch)):
        ok = allowed_paths(batch[i], tags, cons[i])
        if not ok:
            assert top[i] == -np.inf and lists[i][0] == []
            assert restricted[i].score(best[i]) == -np.inf
            continue
        scores = np.array([s for _, s in ok])
        # the best path obeys the rules and scores the best allowed score
        assert obeys([tags[s] for s in best[i]], cons[i])
        assert batch[i].score(best[i]) == pytest.approx(scores.max())
        # the k best: the top k allowed scores, every listed path allowed
        ys, ss = lists[i]
        np.testing.assert_allclose(ss, np.sort(scores)[::-1][:k], atol=1e-9)
        assert all(obeys([tags[s] for s in y], cons[i]) for y in ys)
        # max-marginals over the allowed paths
        T = len(best[i])
        want = np.full((T, len(tags)), -np.inf)
        for y, s in ok:
            want[np.arange(T), y] = np.maximum(want[np.arange(T), y], s)
        np.testing.assert_allclose(mm[i], want, atol=1e-9)


def test_transition_masks_of_the_schemes():
    m = transition_mask(BIO_TAGS, OutputConstraints(transitions="BIO"))
    K = len(BIO_TAGS)
    assert not m[K, 1] and not m[4, 1] and not m[2, 1] and m[0, 1] and m[1, 1]
    assert not m[0, 3] and m[2, 3] and m[:K, K].all()
    m = transition_mask(BIOES_TAGS, OutputConstraints(transitions="BIOES"))
    assert not m[0, K] and not m[1, K] and m[2, K] and m[3, K]   # B-, I- never end
    assert not m[K, 1] and not m[K, 2] and m[K, 0] and m[K, 3]   # start: B, S, O
    assert m[0, 1] and m[0, 2] and not m[0, 0] and not m[0, 4]   # B-A: I-A or E-A
    with pytest.raises(ValueError, match="not a chunk tag"):
        transition_mask(["NN", "VB"], OutputConstraints(transitions="BIO"))
    with pytest.raises(ValueError, match="belongs to BIOES"):
        transition_mask(BIOES_TAGS, OutputConstraints(transitions="BIO"))


def test_bad_constraints_are_named():
    with pytest.raises(ValueError, match="choose one of"):
        OutputConstraints(transitions="BILOU-ish")
    with pytest.raises(ValueError, match="part -1 is not an int >= 0"):
        OutputConstraints(fixed={-1: "O"})
    with pytest.raises(TypeError, match="must be a list of labels"):
        OutputConstraints(forbidden={0: "O"})
    with pytest.raises(TypeError, match="must be a dict"):
        OutputConstraints(fixed=["O"])
    batch = ChainPotentials(np.zeros((3, 2)), [0, 1, 3], np.zeros((2, 2)), np.zeros(2),
                            np.zeros(2))
    index = {"A": 0, "B": 1}
    with pytest.raises(ValueError, match="Sample 1: constraints name token 2, but the "
                                         "output has 2 tokens"):
        constrain_tagged(["A", "B"], index, batch, [None, OutputConstraints(fixed={2: "A"})])
    with pytest.raises(ValueError, match="Sample 0: constraints: tag 'C' .* not seen"):
        constrain_tagged(["A", "B"], index, batch, [OutputConstraints(fixed={0: "C"}), None])
    with pytest.raises(ValueError, match="Sample 1: its transitions differ"):
        constrain_tagged(["A", "B"], index, batch,
                         [None, OutputConstraints(transitions={("A", "B")})])


# ------------------------------------------------------------------ classes
@pytest.mark.parametrize("seed", range(20))
def test_constrained_classes_equal_enumeration(seed):
    rng = np.random.default_rng(900 + seed)
    K = int(rng.integers(2, 6))
    classes = [f"c{j}" for j in range(K)]
    index = {c: j for j, c in enumerate(classes)}
    scores = rng.normal(size=(6, K))
    cons = []
    for _ in range(6):
        u = rng.random()
        if u < 0.3:
            cons.append(OutputConstraints(forbidden={0: list(rng.choice(classes, K - 1,
                                                                        replace=False))}))
        elif u < 0.6:
            cons.append(OutputConstraints(allowed={0: list(rng.choice(classes, 2,
                                                                      replace=False))}))
        else:
            cons.append(None)
    batch = constrain_classes(classes, index, MulticlassPotentials(scores), cons)
    got, lists = argmax(batch), top_k(batch, 3)
    for i, c in enumerate(cons):
        ok = [j for j in range(K) if c is None or (
            classes[j] not in c.forbidden.get(0, []) and
            (0 not in c.allowed or classes[j] in c.allowed[0]))]
        assert got[i] in ok and scores[i, got[i]] == scores[i, ok].max()
        want = sorted(ok, key=lambda j: -scores[i, j])[:3]
        assert lists[i][0].tolist() == want


# ------------------------------------------------------------------ the estimator
TAGGED = [("the dog ran".split(), ["B-NP", "I-NP", "B-VP"]),
          ("a cat sat down".split(), ["B-NP", "I-NP", "B-VP", "O"]),
          ("dogs ran".split(), ["B-NP", "B-VP"]),
          ("the old cat ran fast".split(), ["B-NP", "I-NP", "I-NP", "B-VP", "O"])]


@pytest.fixture(scope="module")
def tagger():
    X, Y = [x for x, _ in TAGGED], [y for _, y in TAGGED]
    return structsvm.fit(X * 3, Y * 3, feature_map=SequenceFeatures(features="word"),
                         C=1.0)


def test_predict_under_constraints_equals_enumeration(tagger):
    fm, w = tagger.feature_map_, tagger.coef_
    X = ["the cat ran".split(), "old dogs sat fast".split()]
    c = OutputConstraints(fixed={1: "I-NP"}, forbidden={2: ["B-VP"]}, transitions="BIO")
    got = tagger.predict(X, constraints=c)
    for x, y in zip(X, got):
        pot = fm.potentials(x, w)
        tags = list(fm.tags_)
        best = max((p for p in pot.enumerate() if obeys([tags[s] for s in p], c)),
                   key=pot.score)
        assert y == [tags[s] for s in best]
    # one constraint per input, None for no constraint
    mixed = tagger.predict(X, constraints=[None, c])
    assert mixed[0] == tagger.predict(X[:1])[0] and mixed[1] == got[1]
    # the k best under the constraints obey them
    for y, s in tagger.predict_nbest(X, k=4, constraints=c)[1]:
        assert obeys(y, c)


def test_constraints_allowing_nothing_and_unknown_labels(tagger):
    X = ["the cat ran".split()] * 3
    impossible = OutputConstraints(fixed={0: "I-NP"}, transitions="BIO")
    with pytest.raises(ValueError, match="Sample 2: the constraints allow no output"):
        tagger.predict(X, constraints=[None, None, impossible])
    with pytest.raises(ValueError, match="Sample 1: constraints: tag 'B-PP'"):
        tagger.predict(X, constraints=[None, OutputConstraints(fixed={0: "B-PP"}), None])
    with pytest.raises(ValueError, match="Sample 0: constraints name token 3"):
        tagger.predict(X, constraints=OutputConstraints(fixed={3: "O"}))
    with pytest.raises(ValueError, match="2 entries for 3 examples"):
        tagger.predict(X, constraints=[None, None])


def test_classes_under_constraints_and_structures_without_them():
    X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]
    model = structsvm.fit(X, ["a", "b", "c"], feature_map=MulticlassFeatures(), C=10.0)
    assert model.predict(X) == ["a", "b", "c"]
    got = model.predict(X, constraints=OutputConstraints(forbidden={0: ["a", "c"]}))
    assert got == ["b", "b", "b"]
    with pytest.raises(ValueError, match="transitions constrain sequences"):
        model.predict(X, constraints=OutputConstraints(transitions="BIO"))
    rank = structsvm.fit([np.eye(3)], [np.array([2.0, 1.0, 0.0])],
                         feature_map=structsvm.structures.RankingFeatures())
    with pytest.raises(TypeError, match="RankingFeatures takes no output constraints"):
        rank.predict([np.eye(3)], constraints=OutputConstraints(fixed={0: 1}))


# ------------------------------------------------------------------ chunk margins
from structsvm.structures.sequence.metrics import chunk_margins, iob_chunks  # noqa: E402


@pytest.mark.parametrize("seed", range(30))
def test_chunk_margins_equal_enumeration(seed):
    """Under BIO-valid decoding the chunk margin is exact: the best tagging's score
    minus the best BIO-valid tagging without the chunk; without the constraints it
    is a lower bound of the same difference over all taggings."""
    rng = np.random.default_rng(1500 + seed)
    tags = BIO_TAGS
    K = len(tags)
    T = int(rng.integers(1, 6))
    batch = ChainPotentials(rng.normal(size=(T, K)), [0, T], rng.normal(size=(K, K)),
                            rng.normal(size=K), rng.normal(size=K))
    index = {t: k for k, t in enumerate(tags)}
    for constrained in (True, False):
        c = OutputConstraints(transitions="BIO") if constrained else None
        restricted = constrain_tagged(tags, index, batch, [c])
        paths = [([tags[s] for s in y], batch.score(y)) for y in batch.enumerate()
                 if not constrained or bio_valid([tags[s] for s in y])]
        best_tags, best = max(paths, key=lambda p: p[1])
        mm, _ = chain_max_marginals(restricted)
        for chunk, m in chunk_margins(best_tags, mm[0], tags):
            rest = [s for y, s in paths if chunk not in iob_chunks(y)]
            brute = best - max(rest) if rest else np.inf
            if constrained and best_tags[chunk[1]].startswith("B-"):
                assert m == pytest.approx(brute, abs=1e-9)
            else:
                assert m <= brute + 1e-9
