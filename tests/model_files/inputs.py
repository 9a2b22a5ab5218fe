"""The training and test data of the model files in this folder, rebuilt from fixed
seeds with numpy and NLTK alone (no structsvm), so that a test can predict with a
model file written by an earlier version of structsvm and compare with what that
version predicted."""
import numpy as np

#: model file name -> function of a numpy Generator: (X_train, Y_train, X_test)
CASES = {}


def case(name):
    def add(f):
        CASES[name] = f
        return f
    return add


@case("multiclass")
def multiclass(rng):
    X = list(rng.normal(size=(30, 4)))
    Y = [["a", "b", "c"][int(np.argmax(x[:3]))] for x in X]
    return X, Y, list(rng.normal(size=(10, 4)))


@case("multiclass_attributes")
def multiclass_attributes(rng):
    return multiclass(rng)


@case("multiclass_hamming_one_slack")
def multiclass_other_plugins(rng):
    return multiclass(rng)


@case("taxonomy")
def taxonomy(rng):
    leaves = ["cat", "dog", "oak", "fern"]
    X = list(rng.normal(size=(30, 4)))
    Y = [leaves[int(np.argmax(x))] for x in X]
    return X, Y, list(rng.normal(size=(10, 4)))


@case("sequence")
def sequence(rng):
    words = {"D": ["the", "a"], "N": ["dog", "cat", "Fido"], "V": ["runs", "sat"]}
    X, Y = [], []
    for _ in range(20):
        tags = ["D", "N", "V"][: int(rng.integers(1, 4))]
        X.append([words[t][int(rng.integers(len(words[t])))] for t in tags])
        Y.append(tags)
    return X, Y, [["the", "cat", "runs"], ["a", "Rex", "sat"], ["dog"]]


@case("checkpoint")
def checkpoint(rng):
    return sequence(rng)


@case("sequence_matrices")
def sequence_matrices(rng):
    X = [rng.normal(size=(int(rng.integers(1, 5)), 3)) for _ in range(20)]
    Y = [["A" if r[0] > 0 else "B" for r in x] for x in X]
    return X, Y, [rng.normal(size=(int(rng.integers(1, 5)), 3)) for _ in range(5)]


@case("ranking")
def ranking(rng):
    w = rng.normal(size=3)
    X = [rng.normal(size=(int(rng.integers(2, 6)), 3)) for _ in range(10)]
    Y = [np.round(q @ w) for q in X]
    return X, Y, [rng.normal(size=(int(rng.integers(2, 6)), 3)) for _ in range(5)]


@case("grammar")
def grammar(rng):
    from nltk import Tree

    trees = ["(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
             "(S (NP (DT a) (JJ big) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (PRP it)))))",
             "(S (NP (NNP Fido)) (VP (VBZ runs) (ADVP (RB fast))))",
             "(S (NP (PRP it)) (VP (VBD ran) (NP (DT the) (NN race))))",
             "(NP (DT the) (JJ old) (NN cat))"]
    Y = [Tree.fromstring(t) for t in trees]
    return [t.leaves() for t in Y], Y, [["the", "cat", "runs", "fast"], ["Rex", "sat"],
                                         ["a", "dog"], ["it"]]


@case("graph")
def graph(rng):
    def one(n):
        u = rng.integers(0, n, size=2 * n)
        v = (u + rng.integers(1, n, size=2 * n)) % n
        near = np.stack([u, v], axis=1)
        chain = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
        return (rng.normal(size=(n, 3)), {"chain": chain, "near": near},
                {"near": rng.normal(size=(2 * n, 2))})

    X = [one(int(rng.integers(3, 7))) for _ in range(12)]
    Y = [np.where(x[0][:, 0] > 0, "pos", np.where(x[0][:, 1] > 0, "mid", "neg"))
         for x in X]
    return X, Y, [one(int(rng.integers(3, 7))) for _ in range(4)]


@case("alignment")
def alignment(rng):
    alphabet = "ACGT"

    def mutate(s):
        out = []
        for ch in s:
            r = rng.random()
            if r < 0.1:
                continue                      # deletion
            out.append(alphabet[int(rng.integers(4))] if r < 0.25 else ch)
            if rng.random() < 0.1:
                out.append(alphabet[int(rng.integers(4))])  # insertion
        return "".join(out) or s[:1]

    def pair():
        s = "".join(alphabet[int(k)] for k in rng.integers(4, size=int(rng.integers(4, 9))))
        return s, mutate(s)

    X = [pair() for _ in range(12)]
    # the gold alignment: matching letters at equal positions (a simple, valid truth)
    Y = [[(i, i) for i in range(min(len(s), len(t))) if s[i] == t[i]] for s, t in X]
    return X, Y, [pair() for _ in range(4)]


@case("structure")
def structure(rng):
    A = rng.normal(size=(3, 4))
    X = [rng.normal(size=4) for _ in range(40)]
    Y = [tuple(int(v > 0) for v in A @ x) for x in X]
    return X, Y, [rng.normal(size=4) for _ in range(8)]


def data(name):
    """(X_train, Y_train, X_test) of the model file ``name``."""
    return CASES[name](np.random.default_rng(0))


def as_json(outputs):
    """Predictions as JSON values: strings, numbers, nested lists (trees as text)."""
    out = []
    for y in outputs:
        if hasattr(y, "label") and hasattr(y, "leaves"):  # an nltk Tree
            out.append(str(y).replace("\n", " "))
        else:
            out.append(np.asarray(y, dtype=object).tolist() if np.ndim(y) else
                       (y.item() if hasattr(y, "item") else y))
    return out
