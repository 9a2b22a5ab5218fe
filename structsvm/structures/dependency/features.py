"""Joint features of dependency trees: arcs with their relations (McDonald, Crammer &
Pereira 2005; McDonald, Lerman & Pereira 2006) and, optionally, sibling and
grandparent factors (McDonald & Pereira 2006; Carreras 2007)."""
from __future__ import annotations

from collections import Counter
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..._compiled import loops, warmup
from ...limits import check_array_size, check_weights
from ...protocols import FeatureMapBase, as_sequence
from .._ragged import consecutive_run, gather_rows
from ._arcs import ArcPotentials
from ._arcs_jit import (CTAG, LABELS, N_COLUMNS, TAG, USE_CTAG, USE_FEATS,
                        USE_LEMMA)
from ._inputs import check_heads, split_output, tokens
from ._second_order import SecondOrderPotentials

__all__ = ["DependencyFeatures", "EncodedSentences"]

# ids every vocabulary reserves: unknown, the root token, before and after a
# sentence, no token (a head's first dependent has no previous sibling)
UNK, ROOT, BOS, EOS, NONE = 0, 1, 2, 3, 4
_FIRST_ID = 5
#: a word longer than this also has its prefix of this length as a feature value
PREFIX_LENGTH = 5


class EncodedSentences:
    """Token ids of a batch of sentences, each preceded by its root token.

    Sentence s owns rows ``off[s]:off[s + 1]`` of ``tok``: the root, then its words.

    Parameters
    ----------
    tok : ndarray of int64 of shape (n_rows, 8)
        Per token: word id, 5-prefix id, tag id, 1 where the word is longer than 5
        characters, coarse tag id, lemma id, and the range of its morphological
        feature ids in ``feats`` (the root's ids are ``ROOT``).
    feats : ndarray of int64
        Feature ids, of all tokens.
    off : ndarray of int64 of shape (n_sentences + 1,)
    """

    def __init__(self, tok, feats, off):
        self.tok = np.ascontiguousarray(tok, dtype=np.int64)
        self.feats = np.ascontiguousarray(feats, dtype=np.int64)
        self.off = np.asarray(off, dtype=np.int64)

    def __len__(self):
        return len(self.off) - 1

    def lengths(self):
        """Number of words of every sentence (the root not counted)."""
        return np.diff(self.off) - 1

    def select(self, idx=None):
        """The sentences ``idx`` (all, without copy, for None) as a new instance."""
        if idx is None:
            return self
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        run = consecutive_run(idx)
        if run is not None:
            a, b = self.off[run[0]], self.off[run[1]]
            return EncodedSentences(self.tok[a:b], self.feats,
                                    self.off[run[0]:run[1] + 1] - a)
        rows, off = gather_rows(self.off, idx)
        return EncodedSentences(self.tok[rows], self.feats, off)

    def arrays(self):
        """The token matrix, feature ids and offsets, as the compiled loops take them."""
        return self.tok, self.feats, self.off


class DependencyFeatures(FeatureMapBase, BaseEstimator):
    r"""Joint features of dependency trees: arcs with their relations, and optionally
    sibling and grandparent factors.

    A sentence x of n words gets a root node 0; a tree y gives every word d its
    head y_d ∈ {0, .., n} and, when the training trees carry them, its relation
    l_d. First order, the score of a tree is the sum of the scores of its arcs,

    .. math::

        w \cdot \Phi(x, y) = \sum_{d=1}^{n} w \cdot f(x, y_d, d, l_d),

    so that the best relation of every arc is found arc by arc and Eisner's
    (projective) or Chu-Liu-Edmonds' (non-projective) algorithm finds the best tree
    exactly, loss-augmented too (the attachment loss counts words). With
    ``siblings`` and ``grandparents`` every word d adds the factors

    .. math::

        w \cdot f_{\mathrm{sib}}(x, y_d, s_d, d) + w \cdot f_{\mathrm{grand}}(x, y_{y_d}, y_d, d),

    s_d the previous dependent of y_d between y_d and d (McDonald & Pereira 2006),
    y_{y_d} the head of d's head (Carreras 2007); their projective search is exact
    over the arcs it keeps (``max_heads``).

    f(x, h, d, l) holds the first-order templates of McDonald, Crammer & Pereira
    (2005, Table 1): the head's and the dependent's word and tag, alone and
    together; the seven pairs of (head word, head tag) with (dependent word,
    dependent tag); the tags beside head and dependent and every tag between them;
    the same over the 5-prefixes of words longer than five characters. Where the
    tokens have them (CoNLL-U), the same unigrams, pairs and contexts over the
    universal (coarse) tags, pairs over lemmas, and every morphological feature of
    one word with the other's coarse tag. Each is once as it is and once conjoined
    with the arc's direction and distance (1, 2, 3, 4, 5, 6-10, more than 10 words).
    Relation templates (a block of columns per value, one per relation) read the
    word, tag, coarse tag and lemma of head and dependent, the dependent's
    morphological features, and pairs of the two words' tags and lemmas, with the
    arc's direction. Every template value is hashed to a column of the
    ``n_hash``.

    Parameters
    ----------
    n_hash : int, default=4194304
        Number of feature columns (the length of w) the template values are hashed
        into.
    min_count : int, default=1
        Words, prefixes and lemmas seen fewer times in training count as unknown.
    tag_key : str, default="xpos"
        Where a token dict (CoNLL-U fields) holds its tag; when absent, ``"upos"``
        and the other keys of ``TAG_KEYS`` are tried. ``"upos"`` is always read as
        the coarse tag.
    siblings : bool, default=False
        Score every pair of adjacent dependents of a head on one side (second order,
        McDonald & Pereira 2006).
    grandparents : bool, default=False
        Score every arc with the head of its head (second order, Carreras 2007).
    max_heads : int or None, default=8
        With second-order factors: the heads the search keeps for every word, those
        of its best arcs by first-order max-marginal under the current weights,
        with the arcs of the best first-order tree (and in training the true arcs).
        None keeps every arc (the exact search, O(n⁴) with grandparents).
    prune_margin : float, default=3.0
        With ``max_heads``: of a word's ``max_heads`` best heads, only those whose
        max-marginals are within this of its best (a difference of 1 is the loss
        of one word).
    filter_relations : bool, default=True
        With relations: an arc may take only the relations that training arcs with
        the same pair of (coarse) tags and direction had (every relation where the
        pair was never seen); the others score −inf.

    Attributes
    ----------
    words_, prefixes_, tags_, ctags_, lemmas_, feats_ : ndarray of str
        The vocabularies (id = position + 5; 0 is unknown, 1 the root, 2 and 3 the
        positions before and after the sentence, 4 no token).
    relations_ : ndarray of str
        The relations of the training trees, the most frequent first (empty when
        they had heads only).
    relation_keys_ : ndarray of int64 of shape (n_pairs, 2)
        With ``filter_relations``: the (key, relation id) pairs of the training arcs,
        key = (head tag id × key_size + dependent tag id) × 2 + (1 if the head is
        left of its dependent), over the coarse tags where the tokens have them.
    columns_ : tuple of str
        The optional token fields the training sentences had and the templates read
        (``"ctag"``, ``"lemma"``, ``"feats"``).
    n_features_ : int
        ``n_hash``.

    Notes
    -----
    X is a list of sentences: lists of ``(word, tag)`` pairs, of token dicts
    (``{"form": ..., "xpos": ..., "upos": ..., "lemma": ..., "feats": ...}``, as
    :func:`read_conllu` gives them) or ``nltk.DependencyGraph`` objects. Y is a list
    of head lists (``y[d - 1]`` the head of word d, 0 for the root) or of
    ``(head, relation)`` pairs; every one must be a tree. ``predict`` gives back the
    same form: heads, or (head, relation) pairs.

    The scores of all arcs of a batch come from one compiled pass: the templates of
    one word are summed once per word (and direction and distance), the others per
    arc, so a sentence of n words costs O(n²) hashed look-ups plus one per word
    between each head and dependent, and the relations' scores O(n² L) additions
    over contiguous columns.

    References
    ----------
    R. McDonald, K. Crammer, F. Pereira. Online large-margin training of dependency
    parsers. ACL 2005.
    R. McDonald, F. Pereira, K. Ribarov, J. Hajič. Non-projective dependency parsing
    using spanning tree algorithms. HLT/EMNLP 2005.
    R. McDonald, F. Pereira. Online learning of approximate dependency parsing
    algorithms. EACL 2006.
    R. McDonald, K. Lerman, F. Pereira. Multilingual dependency analysis with a
    two-stage discriminative parser. CoNLL-X 2006.
    X. Carreras. Experiments with a higher-order projective dependency parser.
    EMNLP-CoNLL 2007.
    T. Koo, M. Collins. Efficient third-order dependency parsers. ACL 2010.
    K. Weinberger, A. Dasgupta, J. Langford, A. Smola, J. Attenberg. Feature hashing
    for large scale multitask learning. ICML 2009.

    Examples
    --------
    >>> X = [[("John", "NNP"), ("sleeps", "VBZ")]]
    >>> fm = DependencyFeatures(n_hash=2**16).fit(X, [[2, 0]])
    >>> fm.tags_.tolist(), fm.n_features_
    (['NNP', 'VBZ'], 65536)
    >>> int(fm.joint_feature(X[0], [2, 0]).sum())   # the columns of 2 arcs
    102
    >>> fm = DependencyFeatures(n_hash=2**16).fit(X, [[(2, "nsubj"), (0, "root")]])
    >>> fm.relations_.tolist()
    ['nsubj', 'root']
    """

    structure: ClassVar[str] = "dependency"
    default_decoder: ClassVar[str] = "eisner"
    default_loss: ClassVar[str] = "hamming"
    #: C for slacks that sum attachment losses (~24 words a sentence) over ~3400
    #: treebank sentences: chosen on the treebank's file split (docs/learners.md)
    default_C: ClassVar[float] = 0.03
    #: certified relative duality gap: held-out UAS has levelled off there
    #: (docs/learners.md)
    default_tol: ClassVar[float] = 0.1
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {"n_batches": 16,
                                                      "inner_passes": 0}),)
    # its compiled loops, in the order its default training path calls them (with
    # relations and second-order factors the later ones)
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.dependency._arcs_jit:arc_scores",
        "structsvm.structures.dependency._decoders_jit:eisner_batch",
        "structsvm.structures.dependency._arcs_jit:arc_feature_rows",
        "structsvm.structures.dependency._arcs_jit:relation_counts",
        "structsvm.structures.dependency._arcs_jit:best_relations",
        "structsvm.structures.dependency._second_order_jit:prune_batch",
        "structsvm.structures.dependency._second_order_jit:layout_sizes",
        "structsvm.structures.dependency._factors_jit:factor_tables",
        "structsvm.structures.dependency._second_order_jit:second_order_batch",
        "structsvm.structures.dependency._factors_jit:tree_factor_columns")
    has_feature_differences: ClassVar[bool] = True
    has_difference_sum: ClassVar[bool] = True

    def __init__(self, n_hash=2 ** 22, min_count=1, tag_key="xpos", siblings=False,
                 grandparents=False, max_heads=8, prune_margin=3.0,
                 filter_relations=True):
        self.n_hash = n_hash
        self.min_count = min_count
        self.tag_key = tag_key
        self.siblings = siblings
        self.grandparents = grandparents
        self.max_heads = max_heads
        self.prune_margin = prune_margin
        self.filter_relations = filter_relations

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        for name, low, high in (("n_hash", 16, 2 ** 32 - 1), ("min_count", 1, None)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low \
                    or (high is not None and v > high):
                raise ValueError(f"{name} must be an int from {low}"
                                 f"{'' if high is None else f' to {high}'}, got {v!r}")
        if not isinstance(self.tag_key, str):
            raise ValueError(f"tag_key must be a str, got {self.tag_key!r}")
        for name in ("siblings", "grandparents", "filter_relations"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got "
                                 f"{getattr(self, name)!r}")
        v = self.max_heads
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              or v < 1):
            raise ValueError(f"max_heads must be None or an int >= 1, got {v!r}")
        v = self.prune_margin
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not v >= 0:
            raise ValueError(f"prune_margin must be a number >= 0, got {v!r}")

    def fit(self, X, Y):
        """Learn the vocabularies and relations; check that every y is a tree."""
        self._fit(X, Y)
        return self

    def fit_encode(self, X, Y):
        """:meth:`fit`, and :meth:`encode_inputs` of the same sentences (read once).

        Returns
        -------
        EncodedSentences
            Equal to ``self.fit(X, Y).encode_inputs(X)``.
        """
        return self._fit(X, Y)

    def _fit(self, X, Y):
        self._check_params()
        sents = tokens(X, self.tag_key)
        Y = as_sequence(Y, "Y")
        if len(Y) != len(sents):
            raise ValueError(f"{len(sents)} sentences but {len(Y)} trees")
        heads, rels = [], []
        for i, y in enumerate(Y):
            h, r = split_output(y, i)
            heads.append(h)
            rels.append(r)
        labelled = [r is not None for r in rels]
        if any(labelled) and not all(labelled):
            i = labelled.index(not labelled[0])
            raise ValueError(f"Sample {i}: every tree has relations or none does (sample "
                             f"0 {'has' if labelled[0] else 'has none'}, sample {i} "
                             f"{'has' if labelled[i] else 'has none'})")
        heads = check_heads(heads, [len(s) for s in sents])
        keep = int(self.min_count)
        words = Counter(t.word for s in sents for t in s)
        prefixes = Counter(t.word[:PREFIX_LENGTH] for s in sents for t in s
                           if len(t.word) > PREFIX_LENGTH)
        lemmas = Counter(t.lemma for s in sents for t in s if t.lemma is not None)
        self.words_ = _str_array(sorted(w for w, c in words.items() if c >= keep))
        self.prefixes_ = _str_array(sorted(p for p, c in prefixes.items() if c >= keep))
        self.lemmas_ = _str_array(sorted(w for w, c in lemmas.items() if c >= keep))
        self.tags_ = _str_array(sorted({t.tag for s in sents for t in s}))
        self.ctags_ = _str_array(sorted({t.ctag for s in sents for t in s
                                         if t.ctag is not None}))
        self.feats_ = _str_array(sorted({f for s in sents for t in s for f in t.feats}))
        # the most frequent relations first: the relations an arc allows then sit
        # together at the start of a relation template's columns
        freq = Counter(r for rs in rels if rs is not None for r in rs)
        self.relations_ = _str_array(sorted(freq, key=lambda r: (-freq[r], r)))
        self.columns_ = tuple(name for name, vocab in (("ctag", self.ctags_),
                                                       ("lemma", self.lemmas_),
                                                       ("feats", self.feats_))
                              if len(vocab))
        self._index()
        self.n_features_ = int(self.n_hash)
        check_weights(self.n_features_, f"{self.n_features_} hashed features")
        if self.n_labels_ > self.n_features_ // 4:
            raise ValueError(f"{self.n_labels_} relations need n_hash of at least "
                             f"{4 * self.n_labels_}, got {self.n_hash}")
        Xe = self._encode(sents)
        self.relation_keys_ = np.zeros((0, 2), dtype=np.int64)
        if self.labelled_ and self.filter_relations:
            codes = [np.fromiter((self._relation_id[r] for r in rs), dtype=np.int64,
                                 count=len(rs)) * (hs.size + 1) + hs
                     for hs, rs in zip(heads, rels)]
            h, dep, rel, sent = self._arcs(Xe, codes)
            col = CTAG if "ctag" in self.columns_ else TAG
            a = Xe.tok[Xe.off[sent] + h, col]
            b = Xe.tok[Xe.off[sent] + dep, col]
            key = (a * self._key_size() + b) * 2 + (h < dep)
            self.relation_keys_ = np.unique(np.stack([key, rel], axis=1), axis=0)
        self._index_relations()
        return Xe

    def _key_size(self):
        """The ids a (coarse) tag of the relation filter's keys can have."""
        return (len(self.ctags_) if "ctag" in self.columns_ else len(self.tags_)) \
            + _FIRST_ID

    def _index_relations(self):
        """The relation filter as the compiled scores read it: ``rel_ptr`` over every
        key, ``rel_ids`` (a single 0 when there is no filter)."""
        keys = self.relation_keys_
        if not len(keys):
            self._rel_ptr = np.zeros(1, dtype=np.int64)
            self._rel_ids = np.zeros(0, dtype=np.int64)
            return
        n_keys = 2 * self._key_size() ** 2
        if keys[:, 0].min() < 0 or keys[:, 0].max() >= n_keys \
                or keys[:, 1].min() < 0 or keys[:, 1].max() >= self.n_labels_:
            raise ValueError("inconsistent dependency state: relation_keys_ outside "
                             f"{n_keys} keys and {self.n_labels_} relations")
        counts = np.bincount(keys[:, 0], minlength=n_keys)
        self._rel_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        self._rel_ids = np.ascontiguousarray(keys[order, 1], dtype=np.int64)

    def _index(self):
        ids = lambda vocab: {v: k + _FIRST_ID for k, v in enumerate(vocab)}  # noqa: E731
        self._word_id, self._prefix_id = ids(self.words_), ids(self.prefixes_)
        self._tag_id, self._ctag_id = ids(self.tags_), ids(self.ctags_)
        self._lemma_id, self._feat_id = ids(self.lemmas_), ids(self.feats_)
        self._relation_id = {r: k for k, r in enumerate(self.relations_)}
        self.n_labels_ = max(1, len(self.relations_))
        self._flags = ((USE_CTAG if "ctag" in self.columns_ else 0)
                       | (USE_LEMMA if "lemma" in self.columns_ else 0)
                       | (USE_FEATS if "feats" in self.columns_ else 0)
                       | (LABELS if len(self.relations_) else 0))

    @property
    def labelled_(self):
        """Whether the fitted trees carry relations."""
        return len(self.relations_) > 0

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedSentences` (token ids, a root token first) of raw sentences."""
        return self._encode(tokens(X, self.tag_key))

    def _encode(self, sents):
        lengths = np.fromiter((len(s) + 1 for s in sents), dtype=np.int64,
                              count=len(sents))
        off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        check_array_size((int(off[-1]), N_COLUMNS), 8,
                         f"the token ids of {len(sents)} sentences")
        # column by column over the words of all sentences, then the roots put in
        flat = [t for s in sents for t in s]
        k = len(flat)

        def ids(index, values):
            get = index.get
            return np.fromiter((get(v, UNK) for v in values), dtype=np.int64, count=k)

        words = [t.word for t in flat]
        long_ = np.fromiter((len(w) > PREFIX_LENGTH for w in words), dtype=np.int64,
                            count=k)
        n_feats = np.fromiter((len(t.feats) for t in flat), dtype=np.int64, count=k)
        fend = np.cumsum(n_feats)
        fget = self._feat_id.get
        feats = np.fromiter((fget(f, UNK) for t in flat for f in t.feats),
                            dtype=np.int64, count=int(fend[-1]) if k else 0)
        cols = np.stack([ids(self._word_id, words),
                         ids(self._prefix_id, (w[:PREFIX_LENGTH] for w in words))
                         * long_,
                         ids(self._tag_id, (t.tag for t in flat)), long_,
                         ids(self._ctag_id, (t.ctag for t in flat)),
                         ids(self._lemma_id, (t.lemma for t in flat)),
                         fend - n_feats, fend], axis=1) if k else \
            np.zeros((0, N_COLUMNS), dtype=np.int64)
        tok = np.empty((int(off[-1]), N_COLUMNS), dtype=np.int64)
        is_root = np.zeros(int(off[-1]), dtype=bool)
        is_root[off[:-1]] = True
        tok[is_root] = [ROOT, ROOT, ROOT, 0, ROOT, ROOT, 0, 0]
        tok[~is_root] = cols
        return EncodedSentences(tok, feats, off)

    def encode_outputs(self, Y, X=None):
        """Trees to int64 arrays, each checked to be a tree over its sentence: word d's
        code is ``relation * (n + 1) + head`` (the head alone without relations; a
        relation unseen in training gets the id ``len(relations_)``, never
        predicted)."""
        Y = as_sequence(Y, "Y")
        parts = [split_output(y, i) for i, y in enumerate(Y)]
        if X is None:
            lengths = [len(np.ravel(h)) if not isinstance(h, (str, bytes)) else -1
                       for h, _ in parts]
        else:
            lengths = [len(s) for s in tokens(X, self.tag_key)]
        heads = check_heads([h for h, _ in parts], lengths)
        if not self.labelled_:
            return heads
        out = []
        L = len(self.relations_)
        for i, (h, (_, rels)) in enumerate(zip(heads, parts)):
            if rels is None:
                raise ValueError(f"Sample {i}: the map was fitted on trees with "
                                 "relations; give (head, relation) pairs")
            r = np.fromiter((self._relation_id.get(v, L) for v in rels),
                            dtype=np.int64, count=len(rels))
            out.append(r * (h.size + 1) + h)
        return out

    def decode_outputs(self, Ye):
        """Encoded trees back to lists of heads, or of (head, relation) pairs."""
        out = []
        for y in Ye:
            y = np.asarray(y, dtype=np.int64).ravel()
            if not self.labelled_:
                out.append(y.tolist())
                continue
            m = y.size + 1
            out.append([(int(c % m), str(self.relations_[c // m])) for c in y])
        return out

    # ------------------------------------------------------------------ features
    def _arcs(self, Xs, parts):
        """(head, dependent, relation, sentence) of the arcs of one tree per sentence
        of ``Xs`` (``parts``: encoded trees), checked against the sentences'
        lengths and the relations."""
        n = Xs.lengths()
        if len(parts) != len(n):
            raise ValueError(f"{len(n)} sentences but {len(parts)} trees")
        codes = [np.asarray(y, dtype=np.int64).reshape(-1) for y in parts]
        sizes = np.fromiter((c.size for c in codes), dtype=np.int64, count=len(codes))
        if np.any(sizes != n):
            s = int(np.flatnonzero(sizes != n)[0])
            raise ValueError(f"Sample {s}: {sizes[s]} heads for a sentence of {n[s]} "
                             "words")
        c = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        sent = np.repeat(np.arange(len(n), dtype=np.int64), n)
        m = n[sent] + 1
        h, rel = c % m, c // m
        first = np.concatenate([[0], np.cumsum(n)[:-1]]).astype(np.int64)
        dep = np.arange(c.size, dtype=np.int64) - first[sent] + 1
        bad = (c < 0) | (h == dep) | (rel >= self.n_labels_)
        if bad.any():
            s = int(sent[np.flatnonzero(bad)[0]])
            raise ValueError(f"Sample {s}: a head outside 0 .. n, a word its own head, "
                             "or a relation the map was not fitted on")
        return h, dep, rel, sent

    def _jit_args(self):
        return self._flags, self.n_labels_, BOS, EOS, self.n_features_

    def _rows(self, Xs, h, dep, rel, sent, row_of_arc, data, n_rows):
        """CSR rows: row ``row_of_arc[a]`` adds ``data[a]`` on every column of arc a."""
        jit = loops("structsvm.structures.dependency._arcs_jit")
        ptr = np.empty(h.size + 1, dtype=np.int64)
        warmup.wait(jit.arc_feature_rows)
        cols = jit.arc_feature_rows(*Xs.arrays(), h, dep, rel, sent, *self._jit_args(),
                                    ptr)
        counts = np.diff(ptr)
        rows = np.repeat(row_of_arc, counts)
        vals = np.repeat(data, counts)
        out = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, self.n_features_))
        out.sum_duplicates()
        out.eliminate_zeros()
        return out

    @property
    def _second_order(self):
        return bool(self.siblings or self.grandparents)

    def _factor_args(self):
        return self._flags, bool(self.siblings), bool(self.grandparents), \
            self.n_features_

    def _factor_rows(self, Xs, heads, sent_rows, signs, n_rows):
        """CSR rows of the second-order factors of one tree per sentence
        (``heads``: flat), sentence s's added to row ``sent_rows[s]`` times
        ``signs[s]``."""
        jit = loops("structsvm.structures.dependency._factors_jit")
        n = Xs.lengths()
        head_off = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        ptr = np.empty(len(Xs) + 1, dtype=np.int64)
        cols = jit.tree_factor_columns(Xs.tok, Xs.off, heads, head_off,
                                       *self._factor_args(), ptr)
        counts = np.diff(ptr)
        return sp.csr_matrix((np.repeat(signs, counts),
                              (np.repeat(sent_rows, counts), cols)),
                             shape=(n_rows, self.n_features_))

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs = Xe.select(idx)
        h, dep, rel, sent = self._arcs(Xs, Ye)
        out = self._rows(Xs, h, dep, rel, sent, sent, np.ones(h.size), len(Xs))
        if self._second_order:
            out = out + self._factor_rows(Xs, h, np.arange(len(Xs)), np.ones(len(Xs)),
                                          len(Xs))
            out.sum_duplicates()
        return out

    def _difference_arcs(self, Xs, Ye, Ye_hat):
        """The true arcs (+1) and predicted arcs (−1) of the words whose heads or
        relations differ."""
        h, dep, rel, sent = self._arcs(Xs, Ye)
        g, _, grel, _ = self._arcs(Xs, Ye_hat)
        diff = np.flatnonzero((h != g) | (rel != grel))
        return (np.concatenate([h[diff], g[diff]]), np.tile(dep[diff], 2),
                np.concatenate([rel[diff], grel[diff]]), np.tile(sent[diff], 2),
                np.concatenate([np.ones(diff.size), -np.ones(diff.size)]), h, g, sent)

    def _differing_sentences(self, h, g, sent, n_sent):
        """Which sentences have another head for some word."""
        return np.bincount(sent, weights=(h != g), minlength=n_sent) > 0

    def joint_feature_differences(self, Xe, Ye, Ye_hat, idx=None):
        """CSR whose row i is Φ(x_i, y_i) − Φ(x_i, ŷ_i), from the words whose heads
        or relations differ (and the second-order factors of the trees whose heads
        differ)."""
        Xs = Xe.select(idx)
        a, dep, rel, sent, sign, h, g, wsent = self._difference_arcs(Xs, Ye, Ye_hat)
        out = self._rows(Xs, a, dep, rel, sent, sent, sign, len(Xs))
        if self._second_order:
            differ = self._differing_sentences(h, g, wsent, len(Xs)).astype(float)
            rows = np.arange(len(Xs))
            out = out + self._factor_rows(Xs, h, rows, differ, len(Xs)) \
                - self._factor_rows(Xs, g, rows, differ, len(Xs))
            out.sum_duplicates()
            out.eliminate_zeros()
        return out

    def joint_feature_difference_sum(self, Xe, Ye, Ye_hat, idx=None, weights=None):
        """Dense Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)), scattered by a compiled pass
        over the words whose heads or relations differ (and the second-order
        factors of the trees whose heads differ).

        Parameters
        ----------
        Xe : EncodedSentences
        Ye, Ye_hat : list of ndarray of int
            True and decoded trees of the sentences ``idx``.
        idx : array-like of int, optional
        weights : ndarray of shape (n_sentences,), optional
            ω_i (ones by default).

        Returns
        -------
        ndarray of shape (n_features,)
        """
        Xs = Xe.select(idx)
        weights = np.ones(len(Xs)) if weights is None else \
            np.asarray(weights, dtype=float).ravel()
        a, dep, rel, sent, sign, h, g, wsent = self._difference_arcs(Xs, Ye, Ye_hat)
        out = np.zeros(self.n_features_)
        jit = loops("structsvm.structures.dependency._arcs_jit")
        jit.scatter_arcs(*Xs.arrays(), a, dep, rel, sent,
                         np.ascontiguousarray(sign * weights[sent]), *self._jit_args(),
                         out)
        if self._second_order:
            fjit = loops("structsvm.structures.dependency._factors_jit")
            differ = self._differing_sentences(h, g, wsent, len(Xs)) * weights
            head_off = np.concatenate([[0], np.cumsum(Xs.lengths())]).astype(np.int64)
            fjit.scatter_tree_factors(Xs.tok, Xs.off, h, head_off, differ,
                                      *self._factor_args(), out)
            fjit.scatter_tree_factors(Xs.tok, Xs.off, g, head_off, -differ,
                                      *self._factor_args(), out)
        return out

    def example_costs(self, Xe):
        """Relative cost of every sentence (its number of arcs, (n + 1)², times the
        relations): the parallel oracle balances its chunks by it."""
        return (Xe.lengths() + 1.0) ** 2 * (1.0 + 0.1 * self.n_labels_)

    def batch_potentials(self, Xe, w, idx=None):
        """The potentials of the sentences ``idx``: :class:`ArcPotentials` (every arc
        and relation scored by one compiled pass), or with second-order factors
        :class:`SecondOrderPotentials`, whose factors are scored over the arcs the
        search keeps."""
        w = np.asarray(w, dtype=np.float64).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        Xs = Xe.select(idx)
        n = Xs.lengths()
        arc_off = np.concatenate([[0], np.cumsum((n + 1) ** 2)]).astype(np.int64)
        # the arcs' entry counts and offsets, and with second-order factors the kept
        # arcs and the pruning's tables of the longest sentence
        check_array_size((int(arc_off[-1]) * 2 + 10 * int(n.max(initial=0) + 1) ** 2,),
                         8, f"the arcs of {len(Xs)} sentences ({int(n.max(initial=0))} "
                         "words at most)")
        jit = loops("structsvm.structures.dependency._arcs_jit")
        if self.labelled_:  # the relations every arc may take
            counts = np.empty(int(arc_off[-1]), dtype=np.int64)
            jit.relation_counts(Xs.tok, Xs.off, arc_off, self._flags, self.n_labels_,
                                self._key_size(), self._rel_ptr, counts)
            slot_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        else:
            slot_off = np.arange(int(arc_off[-1]) + 1, dtype=np.int64)
        check_array_size((int(slot_off[-1]), 2), 8,
                         f"the arc scores of {len(Xs)} sentences ({int(n.max())} "
                         f"words at most, {self.n_labels_} relations)")
        out = np.empty(int(slot_off[-1]))
        rel = np.empty(int(slot_off[-1]), dtype=np.int64)
        warmup.wait(jit.arc_scores)
        w = np.ascontiguousarray(w)
        jit.arc_scores(*Xs.arrays(), arc_off, slot_off, w, *self._jit_args(),
                       self._key_size(), self._rel_ptr, self._rel_ids, out, rel)
        arcs = ArcPotentials(out, n, self.n_labels_, rel, slot_off)
        if not self._second_order:
            return arcs
        return SecondOrderPotentials(arcs, _HashedFactors(self, Xs, w),
                                     siblings=bool(self.siblings),
                                     grandparents=bool(self.grandparents),
                                     max_heads=self.max_heads,
                                     prune_margin=float(self.prune_margin))

    def constrain_potentials(self, batch, constraints):
        """The batch with the heads (and relations) ``constraints`` forbid scored −inf
        (one :class:`~structsvm.structures.constraints.OutputConstraints` or None per
        sentence; part i is word i + 1; see
        :func:`structsvm.structures.dependency.constraints.constrain_heads`)."""
        from .constraints import constrain_heads

        return constrain_heads(list(self.relations_), self._relation_id, batch,
                               constraints)

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw sentence ``x`` and tree ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    def potentials(self, x, w):
        """The potentials of one raw sentence (score encoded trees)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (arrays and json values)."""
        return {"words_": self.words_, "prefixes_": self.prefixes_, "tags_": self.tags_,
                "ctags_": self.ctags_, "lemmas_": self.lemmas_, "feats_": self.feats_,
                "relations_": self.relations_, "columns_": list(self.columns_),
                "relation_keys_": self.relation_keys_,
                "n_features_": int(self.n_features_)}

    def load_fitted_state(self, state):
        """Restore the vocabularies written by :meth:`fitted_state`; return self."""
        self._check_params()
        for name in ("words_", "prefixes_", "tags_", "ctags_", "lemmas_", "feats_",
                     "relations_"):
            setattr(self, name, _str_array([str(v) for v in state[name]]))
        columns = tuple(str(c) for c in state["columns_"])
        if not set(columns) <= {"ctag", "lemma", "feats"}:
            raise ValueError(f"inconsistent dependency state: columns {columns!r}")
        self.columns_ = columns
        self._index()
        keys = np.asarray(state["relation_keys_"])
        if keys.size == 0:
            keys = np.zeros((0, 2), dtype=np.int64)
        if keys.ndim != 2 or keys.shape[1] != 2 or keys.dtype.kind not in "iu":
            raise ValueError("inconsistent dependency state: relation_keys_ of shape "
                             f"{keys.shape} and type {keys.dtype}")
        self.relation_keys_ = keys.astype(np.int64)
        self._index_relations()
        self.n_features_ = int(self.n_hash)
        if self.n_features_ != int(state["n_features_"]):
            raise ValueError(f"inconsistent dependency state: n_hash = {self.n_hash}, "
                             f"the file says {state['n_features_']} features")
        return self


class _HashedFactors:
    """The second-order scores of a batch, from the map's hashed templates and w
    (what :class:`SecondOrderPotentials` asks of its ``factors``)."""

    def __init__(self, fm, Xs, w):
        self.fm, self.Xs, self.w = fm, Xs, w

    def tables(self, batch, kept, sib_off, grand_off):
        fm = self.fm
        sib = np.zeros(int(sib_off[-1]) if fm.siblings else 0)
        grand = np.zeros(int(grand_off[-1]) if fm.grandparents else 0)
        jit = loops("structsvm.structures.dependency._factors_jit")
        jit.factor_tables(self.Xs.tok, self.Xs.off, kept, batch.arc_off, batch.head_off,
                          sib_off, grand_off, self.w, *fm._factor_args(), sib, grand)
        return sib, grand

    def tree_scores(self, batch, heads):
        jit = loops("structsvm.structures.dependency._factors_jit")
        flat = np.concatenate(heads).astype(np.int64) if heads else \
            np.zeros(0, np.int64)
        out = np.empty(len(batch))
        jit.tree_factor_scores(self.Xs.tok, self.Xs.off, flat, batch.head_off, self.w,
                               *self.fm._factor_args(), out)
        return out

    def select(self, i):
        return _HashedFactors(self.fm, self.Xs.select([i]), self.w)


def _str_array(items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr
