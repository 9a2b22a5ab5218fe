"""Numba kernel of the sequence map's aggregated feature differences (private).

No validation here: :meth:`SequenceFeatures.joint_feature_difference_sum` and
:func:`structsvm.features._chain.aggregate_chain_violation` check their inputs. The
reference the tests compare against is the COO construction of
:meth:`SequenceFeatures.joint_feature_differences` (weighted sum of its rows).
"""
from __future__ import annotations

import numba

__all__ = ["scatter_differences"]


@numba.njit(cache=True, nogil=True)
def scatter_differences(indptr, indices, data, y, yh, tok_weight, offsets, n_states,
                        base, out):
    """out += Σ_i ω_i (Φ(x_i, y_i) − Φ(x_i, ŷ_i)) over tokens where y and ŷ differ.

    Emissions: column ``j * K + state`` of feature j; transitions ``base + a * K + b``;
    start ``base + K * K + s``; end ``base + K * K + K + s``. ``tok_weight[t]`` is
    the weight ω of token t's sentence.
    """
    K = n_states
    n_seq = offsets.shape[0] - 1
    for i in range(n_seq):
        lo = offsets[i]
        hi = offsets[i + 1]
        for t in range(lo, hi):
            a = y[t]
            b = yh[t]
            om = tok_weight[t]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    c = indices[p] * K
                    v = om * data[p]
                    out[c + a] += v
                    out[c + b] -= v
            if t > lo:
                pa = y[t - 1]
                pb = yh[t - 1]
                if a != b or pa != pb:
                    out[base + pa * K + a] += om
                    out[base + pb * K + b] -= om
        if hi > lo:
            if y[lo] != yh[lo]:
                out[base + K * K + y[lo]] += tok_weight[lo]
                out[base + K * K + yh[lo]] -= tok_weight[lo]
            if y[hi - 1] != yh[hi - 1]:
                out[base + K * K + K + y[hi - 1]] += tok_weight[hi - 1]
                out[base + K * K + K + yh[hi - 1]] -= tok_weight[hi - 1]
