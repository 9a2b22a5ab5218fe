"""Small evolved sequence pairs with known gold alignments, for the alignment tests.

An ancestor is drawn uniformly from ``alphabet``; each of two descendants copies it,
replacing a symbol with probability ``p_sub`` (by one of its group, the next letter of
the alphabet pair, with probability 0.8, else by any symbol) and deleting runs or
inserting runs of random symbols (geometric lengths) at rate ``p_indel`` per position.
Gold pairs are the positions of both descendants copied from one ancestor position.
"""
import numpy as np

ALPHABET = "ACDEFGHIKL"


def _descend(anc, rng, p_sub, p_indel, alphabet):
    out, origin = [], []
    k = 0
    while k < len(anc):
        if rng.random() < p_indel:  # insertion of random symbols
            for _ in range(int(rng.geometric(0.5))):
                out.append(alphabet[int(rng.integers(len(alphabet)))])
                origin.append(-1)
        if rng.random() < p_indel:  # deletion of a run
            k += int(rng.geometric(0.5))
            continue
        a = anc[k]
        if rng.random() < p_sub:
            if rng.random() < 0.8:
                pos = alphabet.index(a)
                a = alphabet[pos ^ 1]  # the other letter of its group of two
            else:
                a = alphabet[int(rng.integers(len(alphabet)))]
        out.append(a)
        origin.append(k)
        k += 1
    return "".join(out), origin


def evolved_pairs(n_pairs, random_state=0, length=(8, 16), p_sub=0.4, p_indel=0.08,
                  alphabet=ALPHABET):
    """(X, Y): pairs (s, t) and their gold alignments (int arrays of shape (k, 2))."""
    rng = np.random.default_rng(random_state)
    X, Y = [], []
    for _ in range(n_pairs):
        n = int(rng.integers(length[0], length[1] + 1))
        anc = [alphabet[int(v)] for v in rng.integers(len(alphabet), size=n)]
        s, os_ = _descend(anc, rng, p_sub, p_indel, alphabet)
        t, ot = _descend(anc, rng, p_sub, p_indel, alphabet)
        where_t = {a: j for j, a in enumerate(ot) if a >= 0}
        y = [(i, where_t[a]) for i, a in enumerate(os_) if a >= 0 and a in where_t]
        X.append((s, t))
        Y.append(np.array(y, dtype=np.int64).reshape(-1, 2))
    return X, Y
