"""Joint features of pairwise sequence alignments: symbol pairs, context pairs, affine
gaps."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...limits import check_weights
from . import losses as _alignment_loss  # noqa: F401  (registers the loss)
from ...protocols import FeatureMapBase, as_sequence
from ._encoding import (AlignmentPotentials, EncodedPairs, check_alignment,
                                  flat_pairs, gap_counts)
from ._symbols import SymbolCodes, check_pairs
from .needleman_wunsch import check_trace
from .._names import FeatureNamesMixin
from .._state import StateReader
from .._validation import as_label_array

__all__ = ["AlignmentFeatures", "AlignmentPotentials", "EncodedPairs"]

END_GAPS = ("separate", "internal", "free")


class AlignmentFeatures(FeatureMapBase, FeatureNamesMixin, BaseEstimator):
    r"""Joint features of pairwise alignments of two sequences (Joachims et al. 2005).

    An input is a pair x = (s, t) of sequences of symbols (strings work); an output
    y is the set of aligned index pairs (i, j), increasing in both, every other
    position being a gap. With the symbol pairs counted at the aligned pairs, the
    pairs of their neighbours at offsets ±1 .. ±``context`` counted in tables of
    their own, and the gap runs counted by their opens and extensions,

    .. math::

        \Phi(x, y) = \Big( \sum_{(i, j) \in y} e_{\{s_i, t_j\}},\;
            \Big[\sum_{(i, j) \in y} e_{\{s_{i-k}, t_{j-k}\}}
                + e_{\{s_{i+k}, t_{j+k}\}}\Big]_{k=1..K},\;
            n_{\mathrm{open}},\, n_{\mathrm{ext}},\,
            n^{\mathrm{end}}_{\mathrm{open}},\, n^{\mathrm{end}}_{\mathrm{ext}} \Big),

    where a gap run of length L (consecutive unaligned positions of one sequence
    between two aligned pairs) counts one open and L − 1 extensions, and runs before
    the first or after the last pair count as end gaps. Then w·Φ(x, y) = Σ_{(i,j)∈y}
    S_ij + Σ_runs (o + (L − 1) e): a substitution matrix and affine gap costs, learnt
    (Gotoh's scoring; decoders :func:`~structsvm.structures.alignment.needleman_wunsch.needleman_wunsch`
    and :func:`~structsvm.structures.alignment.needleman_wunsch.smith_waterman`).

    Parameters
    ----------
    context : int, default=0
        K: tables of the symbol pairs at offsets 1..K before and after every aligned
        pair (a position outside a sequence reads ``<END>``).
    symmetric : bool, default=True
        Unordered symbol pairs, e_{a,b} = e_{b,a} (a symmetric substitution matrix:
        both sequences drawn from one process, as two descendants of an ancestor);
        False gives ordered pairs (s symbol, t symbol).
    end_gaps : {"separate", "internal", "free"}, default="separate"
        End gap runs with their own open and extend weights, scored as internal
        runs (classic global alignment), or free (no features: the score is that of
        a local alignment, which ``smith_waterman`` decodes).

    Attributes
    ----------
    alphabet_ : ndarray
        The symbols seen in training, sorted; others read as ``<UNK>``.
    n_features_ : int
        (1 + K)·P + 2 (+ 2 for separate end gaps) for P symbol-pair features per
        table (Q(Q + 1)/2 symmetric, Q² ordered, Q = |alphabet| + 2 with ``<UNK>``
        and ``<END>``).
    feature_names_ : ndarray of str of shape (n_features_,)
        ``sub:<a>-<b>`` (``sub:<a>><b>`` ordered), ``ctx<k>:<a>-<b>``, ``gap:open``,
        ``gap:extend``, ``end_gap:open``, ``end_gap:extend``.

    Notes
    -----
    X is a list of pairs (s, t); Y a list of integer arrays of shape (k, 2) (k may be
    0); predictions are such arrays. The loss is "alignment" (the fraction of gold
    pairs missed), the decoder "needleman_wunsch". docs/alignment.md has the math.

    References
    ----------
    T. Joachims, T. Galor, R. Elber. Learning to align sequences: a maximum-margin
    approach. In New Algorithms for Macromolecular Simulation, Springer, 2005.
    O. Gotoh. An improved algorithm for matching biological sequences. J. Mol. Biol.
    162, 1982.

    Examples
    --------
    >>> fm = AlignmentFeatures().fit([("ACD", "AD")], [[(0, 0), (2, 1)]])
    >>> fm.alphabet_.tolist(), fm.n_features_
    (['A', 'C', 'D'], 19)
    >>> phi = fm.joint_feature(("ACD", "AD"), [(0, 0), (2, 1)])
    >>> {fm.feature_names_[j]: float(phi[j]) for j in np.flatnonzero(phi)}
    {'sub:A-A': 1.0, 'sub:D-D': 1.0, 'gap:open': 1.0}
    """

    structure: ClassVar[str] = "alignment"
    default_loss: ClassVar[str] = "alignment"
    default_decoder: ClassVar[str] = "needleman_wunsch"
    #: chosen on 300 simulated protein pairs (docs/learners.md): held-out Q 0.666 in
    #: 47 passes; C from 0.01 to 0.3 gave 0.657-0.675, C = 1 did not converge in 200
    default_C: ClassVar[float] = 0.03
    #: a relative duality gap of 2 %: at 10 % held-out Q varied from 0.626 to 0.660
    default_tol: ClassVar[float] = 0.02
    # the learner, and its parameters, measured to train this structure fastest
    # (docs/learners.md); the first that accepts the fitted problem is used
    default_learners: ClassVar[tuple] = (("dual_cd", {}),)
    # its compiled loops, in the order its default training path calls them
    compiled_loops: ClassVar[tuple] = (
        "structsvm.structures.alignment._jit:align_batch",)

    def __init__(self, context=0, symmetric=True, end_gaps="separate"):
        self.context = context
        self.symmetric = symmetric
        self.end_gaps = end_gaps

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        c = self.context
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c <= 10:
            raise ValueError(f"context must be an int in [0, 10], got {c!r}")
        if not isinstance(self.symmetric, (bool, np.bool_)):
            raise ValueError(f"symmetric must be a bool, got {self.symmetric!r}")
        if self.end_gaps not in END_GAPS:
            raise ValueError(f"end_gaps must be one of {END_GAPS}, got {self.end_gaps!r}")

    # ------------------------------------------------------------------ fitting
    def fit(self, X, Y):
        """Learn the alphabet from the training pairs (and check their alignments)."""
        self._check_params()
        pairs = check_pairs(X)
        self._check_outputs(pairs, Y)
        symbols = set()
        for i, (s, t) in enumerate(pairs):
            try:
                symbols.update(s)
                symbols.update(t)
            except TypeError:
                raise TypeError(f"Sample {i}: symbols must be hashable (strings, "
                                "numbers, tuples)") from None
        self._set_layout(SymbolCodes.from_symbols(symbols))
        check_weights(self.n_features_, f"{len(self.alphabet_)} symbols, "
                                        f"{1 + self.context} pair tables")
        return self

    def _set_layout(self, codes):
        self._codes = codes
        self.alphabet_ = as_label_array(codes.symbols)
        Q = codes.n_codes
        self._pidx = _pair_index(Q, bool(self.symmetric))
        self._n_pair_features = int(self._pidx.max()) + 1
        self._gap_base = (1 + self.context) * self._n_pair_features
        self.n_features_ = int(self._gap_base + (4 if self.end_gaps == "separate" else 2))
        # table of every channel: 0 (the pair), then k, k for context k (before, after)
        self._chan_table = np.array([0] + [k for k in range(1, self.context + 1)
                                           for _ in range(2)], dtype=np.int64)

    @staticmethod
    def _check_outputs(pairs, Y):
        Y = as_sequence(Y, "Y")
        if len(Y) != len(pairs):
            raise ValueError(f"X has {len(pairs)} pairs but Y has {len(Y)} alignments")
        return [check_alignment(y, len(s), len(t), i)
                for i, ((s, t), y) in enumerate(zip(pairs, Y))]

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, X):
        """:class:`EncodedPairs`: the codes of every position, one row per channel."""
        pairs = check_pairs(X)
        check_trace([len(s) for s, _ in pairs], [len(t) for _, t in pairs])
        s_list = [self._codes.encode(s) for s, _ in pairs]
        t_list = [self._codes.encode(t) for _, t in pairs]
        s_codes, s_off = self._codes.channels(s_list, self.context)
        t_codes, t_off = self._codes.channels(t_list, self.context)
        return EncodedPairs(s_codes, s_off, t_codes, t_off)

    def encode_outputs(self, Y, X=None):
        """Alignments as int64 arrays of shape (k, 2), checked against X when given."""
        if X is not None:
            return self._check_outputs(check_pairs(X), Y)
        Y = as_sequence(Y, "Y")
        big = np.iinfo(np.int64).max
        return [check_alignment(y, big, big, i) for i, y in enumerate(Y)]

    def decode_outputs(self, Ye):
        """The alignments (int arrays of shape (k, 2)) as they are."""
        return [np.asarray(y, dtype=np.int64).reshape(-1, 2) for y in Ye]

    def example_costs(self, Xe):
        """Decoding cost of every pair, relative: its (n + 1)(m + 1) cells."""
        n, m = Xe.lengths()
        return (n + 1.0) * (m + 1.0)

    # ------------------------------------------------------------------ weights
    def split_weights(self, w):
        """Views of ``w``: the pair tables (1 + context, P) and the gap weights."""
        w = np.asarray(w, dtype=float).ravel()
        if w.size != self.n_features_:
            raise ValueError(f"w has {w.size} entries, the feature map has "
                             f"{self.n_features_} features")
        g = self._gap_base
        return w[:g].reshape(1 + self.context, self._n_pair_features), w[g:]

    def _gap_scores(self, gw):
        if self.end_gaps == "separate":
            return np.array(gw[:4], dtype=float)
        end = gw[:2] if self.end_gaps == "internal" else np.zeros(2)
        return np.concatenate([gw[:2], end]).astype(float)

    # ------------------------------------------------------------------ potentials
    def batch_potentials(self, Xe, w, idx=None):
        """:class:`AlignmentPotentials` of the pairs ``idx`` of ``Xe`` under ``w``."""
        W, gw = self.split_weights(w)
        Xs = Xe.select(idx)
        tables = W[:, self._pidx][self._chan_table]
        return AlignmentPotentials(Xs.s_codes, Xs.s_off, Xs.t_codes, Xs.t_off, tables,
                                   self._gap_scores(gw), self.end_gaps == "free")

    def potentials(self, x, w):
        """:class:`AlignmentPotentials` of one raw pair (s, t)."""
        return self.batch_potentials(self.encode_inputs([x]), w)

    # ------------------------------------------------------------------ features
    def _coo(self, Xs, Ye):
        n, m = Xs.lengths()
        if len(Ye) != len(n):
            raise ValueError(f"{len(n)} inputs but {len(Ye)} outputs")
        flat, off = flat_pairs(Ye)
        seq = np.repeat(np.arange(len(n)), np.diff(off))
        if len(flat) and (np.any(flat < 0) or np.any(flat[:, 0] >= n[seq])
                          or np.any(flat[:, 1] >= m[seq])):
            raise ValueError("an alignment has pairs out of range of its sequences")
        si, tj = Xs.s_off[seq] + flat[:, 0], Xs.t_off[seq] + flat[:, 1]
        P = self._n_pair_features
        rows, cols = [], []
        for c, k in enumerate(self._chan_table):
            rows.append(seq)
            cols.append(k * P + self._pidx[Xs.s_codes[c, si], Xs.t_codes[c, tj]])
        counts = gap_counts(flat, off, n, m)
        if self.end_gaps == "internal":
            counts[:, :2] += counts[:, 2:]
        ncol = 4 if self.end_gaps == "separate" else 2
        G = np.arange(len(n))
        data = [np.ones(len(seq) * len(self._chan_table))]
        for j in range(ncol):
            rows.append(G)
            cols.append(np.full(len(G), self._gap_base + j))
            data.append(counts[:, j])
        return np.concatenate(rows), np.concatenate(cols), np.concatenate(data)

    def joint_features(self, Xe, Ye, idx=None):
        """CSR matrix whose row i is Φ(x_i, y_i) (``Ye`` aligned with ``idx``)."""
        Xs = Xe.select(idx)
        rows, cols, data = self._coo(Xs, Ye)
        out = sp.csr_matrix((data, (rows, cols)), shape=(len(Xs), self.n_features_))
        out.eliminate_zeros()
        return out

    def joint_feature(self, x, y):
        """Φ(x, y) as a dense vector (raw pair ``x`` = (s, t), alignment ``y``)."""
        Xe = self.encode_inputs([x])
        return self.joint_features(Xe, self.encode_outputs([y], [x])).toarray().ravel()

    # ------------------------------------------------------------------ names
    def _feature_names_key(self):
        return self._codes

    def _build_feature_names(self):
        """Feature names in the order of :meth:`split_weights`."""
        sym = [str(a) for a in self.alphabet_] + ["<UNK>", "<END>"]
        Q = len(sym)
        sep = "-" if self.symmetric else ">"
        pair_names = [""] * self._n_pair_features
        for a in range(Q):
            for b in range(a if self.symmetric else 0, Q):  # symmetric: a <= b
                pair_names[self._pidx[a, b]] = f"{sym[a]}{sep}{sym[b]}"
        names = []
        for k in range(1 + self.context):
            prefix = "sub" if k == 0 else f"ctx{k}"
            names += [f"{prefix}:{p}" for p in pair_names]
        names += ["gap:open", "gap:extend"]
        if self.end_gaps == "separate":
            names += ["end_gap:open", "end_gap:extend"]
        return names

    # ------------------------------------------------------------------ model files
    def fitted_state(self):
        """Fitted attributes for :mod:`structsvm.io` (the alphabet, the size)."""
        return {"alphabet_": self.alphabet_, "n_features_": int(self.n_features_)}

    def load_fitted_state(self, state):
        """Restore the fitted alphabet from :meth:`fitted_state`; return self (an
        alphabet that repeats a symbol, or a size that does not fit it, is a
        :class:`~structsvm.io.ModelFileError`)."""
        self._check_params()
        r = StateReader(state, type(self).__name__)
        self._set_layout(SymbolCodes(r.labels("alphabet_")))
        r.count("n_features_", self.n_features_, "the alphabet and the parameters")
        return self


def _pair_index(Q, symmetric):
    """Feature index of every symbol pair (a, b) within a table, shape (Q, Q)."""
    if not symmetric:
        return np.arange(Q * Q, dtype=np.int64).reshape(Q, Q)
    a, b = np.triu_indices(Q)
    out = np.empty((Q, Q), dtype=np.int64)
    out[a, b] = np.arange(a.size)
    out[b, a] = np.arange(a.size)
    return out
