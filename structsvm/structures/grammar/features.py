"""Joint features of phrase-structure trees: anchored rules and span features."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...limits import check_total, check_weights
from . import losses as _spans  # noqa: F401  (registers loss "spans")
from .cky import check_chart
from .outputs import EncodedTree
from ...protocols import FeatureMapBase, as_sequence
from ._encoding import (EncodedSentences, Grammar, GrammarPotentials, batch_scores,
                                span_rows)
from ._templates import (KINDS, LEAF_TEMPLATES, SPAN_TEMPLATES, TokenValues,
                                check_sentences)
from ..._compiled import loops
from ._trees import (binarize, check_trees, clean_tree, is_intermediate, tree_words,
                             unbinarize)
from .._names import FeatureNamesMixin
from .._state import StateReader

__all__ = ["GrammarFeatures", "GrammarPotentials", "Grammar", "clean_tree"]


class GrammarFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    r"""Joint features of parse trees: rules, and span and word features per symbol.

    Trees are cleaned (empty elements, function tags), binarised (unary chains
    collapsed into one symbol, right factoring with horizontal Markov order
    ``markov``) and scored as a weighted CFG whose rule weights depend on the
    sentence (Hall, Durrett & Klein 2014): a tree y of x with words (leaves) i, binary
    nodes (i, j, k, A → B C) and root symbol R has

    .. math::

        w\cdot\Phi(x, y) = \sum_{\text{words } i} w_{A_i}^{\top} \lambda(x, i)
          + \sum_{\text{nodes}} \big( w_A^{\top} \phi(x, i, j)
          + w_{A \to B\,C} \big) + w_R ,

    where λ(x, i) are features of word i (the word, its suffixes and shape, its POS
    tag and those of its neighbours when tags are given) and φ(x, i, j) surface
    features of the span [i, j) (its first and last words, the words just outside
    it, its length bucket, the shape and suffix of its boundary words, and the
    tags there), each conjoined with the symbol of the node. Unseen words keep their
    suffix, shape and tag features, so every sentence parses.

    Parameters
    ----------
    markov : int, default=0
        Horizontal Markov order: the intermediate symbols of a node with more than
        two children remember the labels of its last ``markov`` children.
    min_count : int, default=1
        Words seen fewer times in training count as unknown (they keep their suffix,
        shape and tag features).

    Attributes
    ----------
    symbols_ : ndarray of str
        Grammar symbols (collapsed unary chains ``S+VP``, intermediate ``NP|<>``).
    grammar_ : Grammar
        Symbols and binary rules as arrays (rule k is ``grammar_.rules[k]``).
    tagged_ : bool
        Whether inputs are ``(word, tag)`` pairs (else token lists).
    n_features_ : int
        d_leaf·L + d_span·P + |rules| + |symbols| for L leaf symbols, P phrase symbols.
    feature_names_ : ndarray of str of shape (n_features_,)
        ``leaf:<symbol>:<template>=<value>`` (word features of a preterminal),
        ``span:<symbol>:<template>=<value>`` (span features of a phrase),
        ``rule:<A> -> <B> <C>`` and ``root:<symbol>``, in the order of
        :meth:`split_weights`; a template reads ``word[-1]`` (the previous word),
        ``cls[first]`` (class of the span's first word), ``len`` (length bucket),
        and ``<UNK>``, ``<BOS>``, ``<EOS>`` are the unknown value and the positions
        before and after the sentence.

    Notes
    -----
    X is a list of sentences: lists of words, or of ``(word, tag)`` pairs (gold or
    predicted part-of-speech tags; then the tags feed the features, and the tree's
    preterminals are still predicted). Y is a list of ``nltk.Tree``; predictions are
    ``nltk.Tree`` objects over the input words, with the cleaned labels.

    Feature columns are indexed (one column per template and value), with one
    active column per template, so the scores of all words and spans of a batch
    are sums of weight rows (a compiled gather, no sparse product).

    References
    ----------
    D. Hall, G. Durrett, D. Klein. Less grammar, more features. ACL 2014.
    B. Taskar, D. Klein, M. Collins, D. Koller, C. Manning. Max-margin parsing.
    EMNLP 2004.

    Examples
    --------
    >>> from nltk import Tree
    >>> t = Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    >>> fm = GrammarFeatures().fit([t.leaves()], [t])
    >>> fm.symbols_.tolist()
    ['DT', 'NN', 'NP', 'S', 'VP+VBZ']
    >>> fm.decode_outputs(fm.encode_outputs([t]))[0] == t
    True
    """

    structure: ClassVar[str] = "grammar"
    default_loss: ClassVar[str] = "spans"
    default_decoder: ClassVar[str] = "cky"
    #: C for slacks that sum span losses (~30 per sentence) over ~1800 treebank trees
    #: (chosen on the treebank sample, docs/parsing.md)
    default_C: ClassVar[float] = 0.1
    #: a relative duality gap of 10 %: test F1 on the treebank has levelled off there
    default_tol: ClassVar[float] = 0.1
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.grammar._jit:_gather_sum",
        "structsvm.structures.grammar._cky_jit:cky_batch")
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, markov=0, min_count=1):
        self.markov = markov
        self.min_count = min_count

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        for name in ("markov", "min_count"):
            v = getattr(self, name)
            low = 0 if name == "markov" else 1
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an int >= {low}, got {v!r}")

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the grammar (symbols, rules) and the feature vocabularies."""
        self._check_params()
        words, tags, tagged = check_sentences(X)
        trees = check_trees(Y, words)
        self.tagged_ = bool(tagged)
        leaf_syms, phrase_syms, rule_set, binarised = set(), set(), set(), []
        for t in trees:
            nodes = binarize(t, self.markov)
            binarised.append(nodes)
            for i, j, k, s in nodes:
                (leaf_syms if k < 0 else phrase_syms).add(s)
        self.symbols_ = _obj_array(sorted(leaf_syms | phrase_syms))
        self._sym_index = {s: a for a, s in enumerate(self.symbols_)}
        for nodes in binarised:
            cell = {(i, j): self._sym_index[s] for i, j, _, s in nodes}
            for i, j, k, s in nodes:
                if k >= 0:
                    rule_set.add((cell[i, j], cell[i, k], cell[k, j]))
        leaf = sorted(self._sym_index[s] for s in leaf_syms)
        phrase = sorted(self._sym_index[s] for s in phrase_syms)
        root_ok = np.array([not is_intermediate(s) for s in self.symbols_])
        self.grammar_ = Grammar(len(self.symbols_), leaf, phrase, sorted(rule_set), root_ok)
        self._values = TokenValues.fit(words, tags, self.min_count)
        self._layout()
        check_weights(self.n_features_, "grammar features")
        return self

    def _layout(self):
        g, v = self.grammar_, self._values
        self.n_leaf_inputs_ = v.n_columns(LEAF_TEMPLATES)
        self.n_span_inputs_ = v.n_columns(SPAN_TEMPLATES)
        L, P = g.leaf_sym.size, g.phrase_sym.size
        self._span_base = self.n_leaf_inputs_ * L
        self._rule_base = self._span_base + self.n_span_inputs_ * P
        self._root_base = self._rule_base + g.n_rules
        self.n_features_ = int(self._root_base + g.n_symbols)

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedSentences` (feature columns of every word and span)."""
        words, tags, _ = check_sentences(X, self._tagged_for_input(X))
        self._check_sizes(words)
        return self._values.encode(words, tags)

    def _check_sizes(self, words):
        """Pass what a corpus of these sentences costs through the memory budget before
        anything of that size is built: every span of ≥ 2 words gets a row of feature
        columns (and, under a weight vector, a score per phrase symbol), and CKY a
        chart of (n + 1)² cells for the longest sentence."""
        lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        if not lengths.size:
            return
        spans = lengths * (lengths - 1) // 2
        s = int(np.argmax(lengths))
        per_span = _SPAN_WORK_BYTES + 4 * len(SPAN_TEMPLATES) \
            + 8 * self.grammar_.phrase_sym.size
        total = int(spans.sum())
        check_total(total * per_span,
                    f"the spans of {lengths.size} sentences ({total} spans of ≥ 2 words; "
                    f"the longest, sample {s}, has {int(lengths[s])} words: "
                    f"{per_span} bytes a span)")
        check_chart(lengths, self.grammar_.n_symbols)

    def _tagged_for_input(self, X):
        X = as_sequence(X, "X")
        for i, x in enumerate(X):
            if isinstance(x, (list, tuple)) and len(x):
                if (not isinstance(x[0], str)) != self.tagged_:
                    want = "(word, tag) pairs" if self.tagged_ else "lists of words"
                    raise TypeError(f"Sample {i}: the map was fitted on {want}; got "
                                    f"{x[0]!r} as the first token")
                break
        return self.tagged_

    def encode_outputs(self, Y, X=None):
        """Cleaned, binarised trees as :class:`~structsvm.structures.grammar.outputs.EncodedTree`.

        Raises
        ------
        ValueError
            A tree whose leaves differ from its sentence's words, or with a label or
            unary chain never seen in training (the message names the sample).
        """
        words = None
        if X is not None:
            words, _, _ = check_sentences(X, self._tagged_for_input(X))
        trees = check_trees(Y, words)
        out = []
        for i, t in enumerate(trees):
            nodes = binarize(t, self.markov)
            ids = []
            for _, _, _, s in nodes:
                a = self._sym_index.get(s)
                if a is None:
                    raise ValueError(f"Sample {i}: label {s!r} was never seen in training "
                                     "(a collapsed unary chain is joined by '+', an "
                                     "intermediate symbol ends in '|<...>')")
                ids.append(a)
            cell = {(n[0], n[1]): a for n, a in zip(nodes, ids)}
            rows = []
            for (i0, j0, k0, _), a in zip(nodes, ids):
                r = -1 if k0 < 0 else self.grammar_.rule_index.get(
                    (a, cell[i0, k0], cell[k0, j0]), -1)
                rows.append((i0, j0, k0, a, r))
            out.append(EncodedTree(np.array(rows, dtype=np.int64),
                                   tuple(tree_words(t))))
        return out

    def decode_outputs(self, Ye):
        """Encoded trees back to ``nltk.Tree`` objects over their words."""
        out = []
        for y in Ye:
            nodes = y.nodes if isinstance(y, EncodedTree) else np.asarray(y).reshape(-1, 5)
            words = y.words if isinstance(y, EncodedTree) and y.words is not None \
                else tuple(str(i) for i in range((len(nodes) + 1) // 2))
            sym = self.symbols_
            out.append(unbinarize([(a, b, k, sym[s]) for a, b, k, s, _ in nodes.tolist()],
                                  words))
        return out

    # ------------------------------------------------------------------ features
    def split_weights(self, w):
        """Views of ``w``: W_leaf (d_leaf, L), W_span (d_span, P), rules, roots."""
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        g = self.grammar_
        L, P = g.leaf_sym.size, g.phrase_sym.size
        return (w[:self._span_base].reshape(self.n_leaf_inputs_, L),
                w[self._span_base:self._rule_base].reshape(self.n_span_inputs_, P),
                w[self._rule_base:self._root_base], w[self._root_base:])

    def batch_potentials(self, Xe, w, idx=None):
        """:class:`GrammarPotentials` of the sentences ``idx`` of ``Xe`` under ``w``."""
        W_leaf, W_span, rules, roots = self.split_weights(w)
        return batch_scores(Xe.select(idx), W_leaf, W_span, rules, roots, self.grammar_)

    def _coo(self, Xs, Ye, sign=1.0):
        """(row, column) entries of Φ(x_s, y_s) for the trees ``Ye`` of ``Xs``."""
        n = len(Xs)
        if len(Ye) != n:
            raise ValueError(f"{n} inputs but {len(Ye)} outputs")
        g = self.grammar_
        L, P = g.leaf_sym.size, g.phrase_sym.size
        lens = np.diff(Xs.word_off)
        parts = [y.nodes if isinstance(y, EncodedTree) else
                 np.asarray(y, dtype=np.int64).reshape(-1, 5) for y in Ye]
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        if np.any(sizes != 2 * lens - 1):
            s = int(np.flatnonzero(sizes != 2 * lens - 1)[0])
            raise ValueError(f"Sample {s}: tree with {sizes[s]} nodes for a sentence of "
                             f"{lens[s]} words")
        nodes = np.concatenate(parts) if n else np.zeros((0, 5), np.int64)
        seq = np.repeat(np.arange(n), sizes)
        i, j, k, A, r = nodes.T
        leaf = k < 0
        lc = g.leaf_col[A]
        sel = leaf & (lc >= 0)
        wrow = Xs.word_off[seq[sel]] + i[sel]
        lcols = (Xs.leaf_cols[wrow].astype(np.int64) * L + lc[sel][:, None]).ravel()
        lrows = np.repeat(seq[sel], Xs.leaf_cols.shape[1])
        pc = g.phrase_col[A]
        sel = ~leaf & (pc >= 0)
        srow = Xs.span_off[seq[sel]] + span_rows(i[sel], j[sel], lens[seq[sel]])
        scols = (self._span_base + Xs.span_cols[srow].astype(np.int64) * P
                 + pc[sel][:, None]).ravel()
        srows = np.repeat(seq[sel], Xs.span_cols.shape[1])
        sel = ~leaf & (r >= 0)
        rcols, rrows = self._rule_base + r[sel], seq[sel]
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        roots = self._root_base + A[first] if n else np.zeros(0, np.int64)
        rows = np.concatenate([lrows, srows, rrows, np.arange(n)])
        cols = np.concatenate([lcols, scols, rcols, roots])
        return rows, cols, np.full(rows.size, sign)

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs = Xe.select(idx)
        rows, cols, data = self._coo(Xs, Ye)
        return sp.csr_matrix((data, (rows, cols)), shape=(len(Xs), self.n_features_))

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is Φ(x_i, y_i) − Φ(x_i, ŷ_i) (shared nodes cancel)."""
        Xs = Xe.select(idx)
        r1, c1, d1 = self._coo(Xs, Ye)
        r2, c2, d2 = self._coo(Xs, Ye_hat, -1.0)
        out = sp.csr_matrix((np.concatenate([d1, d2]),
                             (np.concatenate([r1, r2]), np.concatenate([c1, c2]))),
                            shape=(len(Xs), self.n_features_))
        out.eliminate_zeros()
        return out

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Dense Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)), scattered by a compiled pass.

        Parameters
        ----------
        Xe : EncodedSentences
        Ye, Ye_hat : list of EncodedTree
            True and decoded trees of the sentences ``idx``.
        idx : array-like of int, optional
        weights : ndarray of shape (n_sentences,), optional
            ω_i (ones by default).

        Returns
        -------
        ndarray of shape (n_features,)
        """
        Xs = Xe.select(idx)
        n = len(Xs)
        if len(Ye) != n or len(Ye_hat) != n:
            raise ValueError(f"{n} inputs but {len(Ye)} and {len(Ye_hat)} outputs")
        weights = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        g = self.grammar_
        out = np.zeros(self.n_features_)
        for s in range(n):
            if weights[s] == 0:
                continue
            for y, sign in ((Ye[s], weights[s]), (Ye_hat[s], -weights[s])):
                nodes = y.nodes if isinstance(y, EncodedTree) else \
                    np.asarray(y, dtype=np.int64).reshape(-1, 5)
                loops("structsvm.structures.grammar._jit").scatter_nodes(out, nodes, float(sign), Xs.word_off[s], Xs.span_off[s],
                              Xs.leaf_cols, Xs.span_cols, g.leaf_col, g.phrase_col,
                              g.leaf_sym.size, g.phrase_sym.size, 0, self._span_base,
                              self._rule_base, self._root_base)
        return out

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw sentence ``x`` and ``nltk.Tree`` ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    def potentials(self, x, w):
        """:class:`GrammarPotentials` of one raw sentence (score encoded trees)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self.grammar_

    def _build_feature_names(self):
        """Feature names in the order of :meth:`split_weights` (input-major blocks)."""
        g, sym = self.grammar_, [str(s) for s in self.symbols_]
        leaf = [sym[a] for a in g.leaf_sym]
        phrase = [sym[a] for a in g.phrase_sym]
        names = [f"leaf:{s}:{c}" for c in self._values.column_names(LEAF_TEMPLATES)
                 for s in leaf]
        names += [f"span:{s}:{c}" for c in self._values.column_names(SPAN_TEMPLATES)
                  for s in phrase]
        names += [f"rule:{sym[a]} -> {sym[b]} {sym[c]}" for a, b, c in g.rules.tolist()]
        return names + [f"root:{s}" for s in sym]

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        g = self.grammar_
        state = {"symbols_": self.symbols_, "tagged_": bool(self.tagged_),
                 "leaf_sym": g.leaf_sym, "phrase_sym": g.phrase_sym,
                 "rules": g.rules, "root_ok": g.root_ok.astype(np.int8),
                 "n_features_": int(self.n_features_)}
        for kind, vocab in self._values.vocabularies().items():
            state[f"vocab_{kind}"] = _obj_array(vocab)
        return state

    def load_fitted_state(self, state):
        """Restore the fitted vocabularies from :meth:`fitted_state` (model files).

        Every array is checked against what it indexes before the grammar is built
        (symbols, leaf and phrase symbols, rules, root flags, value vocabularies):
        a :class:`~structsvm.io.ModelFileError` names the first that does not fit.
        """
        r = StateReader(state, type(self).__name__)
        symbols = r.labels("symbols_", strings=True)
        S = len(symbols)
        leaf = r.distinct("leaf_sym", r.indices("leaf_sym", 0, S, what="symbols"),
                          "a symbol")
        phrase = r.distinct("phrase_sym", r.indices("phrase_sym", 0, S, what="symbols"),
                            "a symbol")
        rules = r.distinct("rules", r.indices("rules", 0, S, ndim=2, shape=(None, 3),
                                              what="the symbols of a rule"), "a rule")
        if rules.size and not np.isin(rules[:, 0], phrase).all():
            k = int(np.flatnonzero(~np.isin(rules[:, 0], phrase))[0])
            r.fail("rules", f"row {k} has parent symbol {int(rules[k, 0])}, which is no "
                            "phrase symbol")
        root_ok = r.indices("root_ok", 0, 2, shape=(S,), what="root flags")
        self.tagged_ = r.flag("tagged_")
        vocab = {k: r.labels(f"vocab_{k}", strings=True) for k in KINDS}
        self.symbols_ = _obj_array(symbols)
        self._sym_index = {s: a for a, s in enumerate(self.symbols_)}
        self.grammar_ = Grammar(S, leaf, phrase, rules, root_ok.astype(bool))
        self._values = TokenValues(vocab, self.tagged_)
        self._layout()
        r.count("n_features_", self.n_features_, "the symbols, rules and vocabularies")
        return self


#: bytes of index arrays built per span while its feature columns are encoded (its
#: start, end, offset and four template positions, int64)
_SPAN_WORK_BYTES = 8 * 8


def _obj_array(items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr

