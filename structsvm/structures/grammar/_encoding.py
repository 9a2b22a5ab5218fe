"""Grammar batches: the rule table, encoded sentences and the CKY potentials."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .outputs import EncodedTree
from ..._compiled import loops
from ...protocols import check_decomposition
from .._ragged import consecutive_run, gather_rows

__all__ = ["Grammar", "GrammarPotentials", "EncodedSentences", "span_rows"]


class Grammar:
    """Symbols and binary rules of a binarised grammar, as arrays.

    Parameters
    ----------
    n_symbols : int
    leaf_sym : ndarray of int
        Symbols that can sit on a word (preterminal chains), in leaf-column order.
    phrase_sym : ndarray of int
        Symbols of spans of ≥ 2 words, in phrase-column order.
    rules : ndarray of int of shape (n_rules, 3)
        Rows (parent, left, right); reordered by left child.
    root_ok : ndarray of bool of shape (n_symbols,)
        Symbols allowed at the root (not the intermediate ones).
    """

    def __init__(self, n_symbols, leaf_sym, phrase_sym, rules, root_ok):
        self.n_symbols = int(n_symbols)
        self.leaf_sym = np.asarray(leaf_sym, dtype=np.int64).reshape(-1)
        self.phrase_sym = np.asarray(phrase_sym, dtype=np.int64).reshape(-1)
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 3)
        S = self.n_symbols
        for name, arr in (("leaf_sym", self.leaf_sym), ("phrase_sym", self.phrase_sym),
                          ("rules", rules)):
            if arr.size and (arr.min() < 0 or arr.max() >= S):
                raise ValueError(f"Grammar: {name} holds a symbol outside [0, {S}) "
                                 f"({int(arr.min())} .. {int(arr.max())})")
        if np.asarray(root_ok).shape != (S,):
            raise ValueError(f"Grammar: root_ok has shape {np.asarray(root_ok).shape}, "
                             f"expected ({S},)")
        order = np.lexsort((rules[:, 2], rules[:, 0], rules[:, 1]))
        self.rules = rules[order]
        self.rule_parent = np.ascontiguousarray(self.rules[:, 0])
        self.rule_left = np.ascontiguousarray(self.rules[:, 1])
        self.rule_right = np.ascontiguousarray(self.rules[:, 2])
        self.left_ptr = np.searchsorted(self.rule_left, np.arange(self.n_symbols + 1)) \
            .astype(np.int64)
        self.root_ok = np.asarray(root_ok, dtype=bool)
        self.leaf_col = np.full(self.n_symbols, -1, dtype=np.int64)
        self.leaf_col[self.leaf_sym] = np.arange(self.leaf_sym.size)
        self.phrase_col = np.full(self.n_symbols, -1, dtype=np.int64)
        self.phrase_col[self.phrase_sym] = np.arange(self.phrase_sym.size)
        self.rule_index = {tuple(r): k for k, r in enumerate(self.rules.tolist())}

    @property
    def n_rules(self):
        """Number of binary rules."""
        return len(self.rules)


def span_rows(i, j, n):
    """Row of span [i, j) (j − i ≥ 2) among the spans of a sentence of n words."""
    return i * (2 * n - 1 - i) // 2 + j - i - 2


class EncodedSentences:
    """Feature columns of a corpus: one row per word and one per span of ≥ 2 words.

    Parameters
    ----------
    leaf_cols : ndarray of int32 of shape (n_words, n_leaf_templates)
        Active leaf-feature columns of every word (one per template).
    word_off : ndarray of int64 of shape (n_sentences + 1,)
    span_cols : ndarray of int32 of shape (n_spans, n_span_templates)
        Active span-feature columns of every span of ≥ 2 words, spans of a sentence
        ordered by start then end (:func:`span_rows`).
    span_off : ndarray of int64 of shape (n_sentences + 1,)
    words : list of tuple of str
    """

    def __init__(self, leaf_cols, word_off, span_cols, span_off, words):
        self.leaf_cols = leaf_cols
        self.word_off = np.asarray(word_off, dtype=np.int64)
        self.span_cols = span_cols
        self.span_off = np.asarray(span_off, dtype=np.int64)
        self.words = list(words)

    def __len__(self):
        return len(self.word_off) - 1

    def select(self, idx=None):
        """The sentences ``idx`` (all, without copy, for None) as a new instance."""
        if idx is None:
            return self
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            a, b = run
            return EncodedSentences(
                self.leaf_cols[self.word_off[a]:self.word_off[b]],
                self.word_off[a:b + 1] - self.word_off[a],
                self.span_cols[self.span_off[a]:self.span_off[b]],
                self.span_off[a:b + 1] - self.span_off[a], self.words[a:b])
        lw, ls = gather_rows(self.word_off, idx), gather_rows(self.span_off, idx)
        return EncodedSentences(self.leaf_cols[lw[0]], lw[1], self.span_cols[ls[0]],
                                ls[1], [self.words[i] for i in idx])



class GrammarPotentials:
    """Scores of a batch of sentences under a weight vector, for the CKY decoder.

    A binarised tree y of sentence s scores

    .. math::

        s(y) = \\sum_{\\text{words } i} \\ell[i, A_i]
             + \\sum_{\\text{nodes } (i, j, k, A \\to B\\,C)} (\\sigma[(i, j), A]
             + \\rho[A \\to B\\,C]) + \\tau[A_{\\text{root}}]

    with ``leaf_scores`` ℓ, ``span_scores`` σ, ``rule_scores`` ρ and
    ``root_scores`` τ.

    Parameters
    ----------
    leaf_scores : ndarray of shape (n_words, n_leaf_symbols)
    word_off : ndarray of int64 of shape (n_sentences + 1,)
    span_scores : ndarray of shape (n_spans, n_phrase_symbols)
    span_off : ndarray of int64 of shape (n_sentences + 1,)
    rule_scores : ndarray of shape (n_rules,)
    root_scores : ndarray of shape (n_symbols,)
    grammar : Grammar
    words : list of tuple of str, optional
    candidates : list of EncodedTree, optional
        One known tree per sentence that a decoder must return when its (pruned)
        search finds nothing better: the true trees of a loss-augmented batch, so
        that an approximate search never reports a negative violation.

    Examples
    --------
    >>> g = Grammar(3, leaf_sym=[0, 1], phrase_sym=[2], rules=[[2, 0, 1]],
    ...             root_ok=[False, False, True])
    >>> p = GrammarPotentials(np.array([[1., 0.], [0., 2.]]), [0, 2], np.array([[.5]]),
    ...                       [0, 1], np.array([.25]), np.zeros(3), g)
    >>> p.score(np.array([[0, 2, 1, 2, 0], [0, 1, -1, 0, -1], [1, 2, -1, 1, -1]]))
    3.75
    """

    structure: ClassVar[str] = "grammar"
    enumerable: ClassVar[bool] = False
    augments: ClassVar[tuple] = ("span",)  # the loss decompositions augment adds

    def __init__(self, leaf_scores, word_off, span_scores, span_off, rule_scores,
                 root_scores, grammar, words=None, candidates=None):
        self.leaf_scores = np.asarray(leaf_scores, dtype=float)
        self.word_off = np.asarray(word_off, dtype=np.int64)
        self.span_scores = np.asarray(span_scores, dtype=float)
        self.span_off = np.asarray(span_off, dtype=np.int64)
        self.rule_scores = np.asarray(rule_scores, dtype=float)
        self.root_scores = np.asarray(root_scores, dtype=float)
        self.grammar = grammar
        self.words = words if words is not None else [None] * (len(self.word_off) - 1)
        self.candidates = candidates

    def __len__(self):
        return len(self.word_off) - 1

    def lengths(self):
        """Number of words of each sentence in the batch."""
        return np.diff(self.word_off)

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sentence {i} out of range for a batch of {n}")
        i %= n
        a, b = self.word_off[i], self.word_off[i + 1]
        c, d = self.span_off[i], self.span_off[i + 1]
        return GrammarPotentials(self.leaf_scores[a:b], [0, b - a], self.span_scores[c:d],
                                 [0, d - c], self.rule_scores, self.root_scores,
                                 self.grammar, [self.words[i]],
                                 None if self.candidates is None else [self.candidates[i]])

    def _replace(self, leaf_scores, span_scores, candidates):
        return GrammarPotentials(leaf_scores, self.word_off, span_scores, self.span_off,
                                 self.rule_scores, self.root_scores, self.grammar,
                                 self.words, candidates)

    # ------------------------------------------------------------------ scores
    def _flat(self, Y):
        """Concatenated nodes of one tree per sentence, checked against the lengths.

        Returns (seq, nodes, leaf rows, leaf columns, span rows, span columns) where
        the rows/columns index the nodes whose symbol has a leaf / phrase column.
        """
        n_words = self.lengths()
        parts = [_nodes(y) for y in Y]
        sizes = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
        if np.any(sizes != 2 * n_words - 1):
            s = int(np.flatnonzero(sizes != 2 * n_words - 1)[0])
            raise ValueError(f"Sample {s}: tree with {sizes[s]} nodes for a sentence of "
                             f"{n_words[s]} words (expected {2 * n_words[s] - 1})")
        nodes = np.concatenate(parts) if parts else np.zeros((0, 5), np.int64)
        seq = np.repeat(np.arange(len(parts)), sizes)
        g = self.grammar
        i, j, k, A = nodes[:, 0], nodes[:, 1], nodes[:, 2], nodes[:, 3]
        lc = np.where(k < 0, g.leaf_col[A], -1)
        pc = np.where(k >= 0, g.phrase_col[A], -1)
        lsel, psel = np.flatnonzero(lc >= 0), np.flatnonzero(pc >= 0)
        lrows = self.word_off[seq[lsel]] + i[lsel]
        prow = self.span_off[seq[psel]] + span_rows(i[psel], j[psel], n_words[seq[psel]])
        return seq, nodes, (lrows, lc[lsel]), (prow, pc[psel]), sizes

    def _score_batch(self, Y):
        seq, nodes, (lr, lc), (pr, pc), sizes = self._flat(Y)
        n = len(self)
        out = np.zeros(n)
        np.add.at(out, self._seq_of(seq, nodes, leaf=True), self.leaf_scores[lr, lc])
        np.add.at(out, self._seq_of(seq, nodes, leaf=False), self.span_scores[pr, pc])
        r = nodes[:, 4]
        rs = r >= 0
        np.add.at(out, seq[rs], self.rule_scores[r[rs]])
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        if n:
            out += self.root_scores[nodes[first, 3]]
        return out

    def _seq_of(self, seq, nodes, leaf):
        g = self.grammar
        k, A = nodes[:, 2], nodes[:, 3]
        if leaf:
            sel = (k < 0) & (g.leaf_col[A] >= 0)
        else:
            sel = (k >= 0) & (g.phrase_col[A] >= 0)
        return seq[sel]

    def score(self, y):
        """Score of tree ``y`` (batch of one), or an array with the score of ``Y[i]``."""
        if isinstance(y, EncodedTree) or (isinstance(y, np.ndarray) and y.ndim == 2):
            if len(self) != 1:
                raise ValueError("score(y) with one tree needs a batch of one sentence; "
                                 "pass a list of trees")
            return float(self._score_batch([y])[0])
        if len(y) != len(self):
            raise ValueError(f"{len(y)} trees for a batch of {len(self)} sentences")
        return self._score_batch(y)

    def enumerate(self):
        """Not supported: trees are decoded by CKY, never enumerated."""
        raise TypeError("parse trees are not enumerated (Catalan-many); use the 'cky' "
                        "decoder")

    # ------------------------------------------------------------------ loss
    def augment(self, Y, loss):
        """Scores plus the span loss of every chart entry against ``Y[i]``.

        For :class:`~structsvm.structures.grammar.losses.SpanLoss` Δ(y, ŷ) = Σ_{nodes of ŷ} c_y [node ∉ y],
        so c_y is added to every leaf and span score and subtracted again at the
        nodes of y: then loss-augmented decoding is CKY on the new scores. The true
        trees become the batch's ``candidates`` (a pruned search returns y_i rather
        than a tree whose augmented score is below s(y_i)).
        """
        if len(Y) != len(self):
            raise ValueError(f"{len(Y)} outputs for a batch of {len(self)} sentences")
        check_decomposition(loss, self.augments, "a parse batch (e.g. loss='spans')")
        seq, nodes, (lr, lc), (pr, pc), _ = self._flat(Y)
        costs = np.asarray(loss.part_costs(Y), dtype=float)
        leaf = self.leaf_scores + np.repeat(costs, self.lengths())[:, None]
        span = self.span_scores + np.repeat(costs, np.diff(self.span_off))[:, None]
        leaf[lr, lc] -= costs[self._seq_of(seq, nodes, leaf=True)]
        span[pr, pc] -= costs[self._seq_of(seq, nodes, leaf=False)]
        return self._replace(leaf, span, list(Y))


def _nodes(y):
    if isinstance(y, EncodedTree):
        return y.nodes
    return np.asarray(y, dtype=np.int64).reshape(-1, 5)


def gather_sum(cols, W):
    """``out[r] = Σ_t W[cols[r, t]]``: scores of rows with one active column per
    template (the kernel ``_gather_sum``)."""
    out = np.zeros((cols.shape[0], W.shape[1]))
    if cols.shape[0] and cols.shape[1] and W.shape[1]:
        loops("structsvm.structures.grammar._jit")._gather_sum(
            cols, np.ascontiguousarray(W, dtype=float), out)
    return out


def batch_scores(Xe, W_leaf, W_span, rule_scores, root_scores, grammar):
    """:class:`GrammarPotentials` of all sentences of ``Xe`` (EncodedSentences)."""
    leaf = gather_sum(Xe.leaf_cols, W_leaf)
    span = gather_sum(Xe.span_cols, W_span)
    return GrammarPotentials(leaf, Xe.word_off, span, Xe.span_off, rule_scores,
                             root_scores, grammar, Xe.words)
