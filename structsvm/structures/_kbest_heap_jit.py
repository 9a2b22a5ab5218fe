"""The binary max-heap of the k-best decoders' frontiers (no validation here).

Huang & Chiang's (2005) lazy k-best merge keeps, for an item, a frontier of
candidate sums "hyperedge e with its first part's j1-th best and its second part's
j2-th best", and pops them best first. The heap lives in four preallocated arrays:
the sums ``hs`` and, at the same positions, ``he``, ``hj1``, ``hj2``; ``size`` is
passed in and the new size returned, so that no allocation happens in the loops.

References
----------
L. Huang, D. Chiang. Better k-best parsing. IWPT 2005.
"""
import numba


@numba.njit(cache=True, nogil=True)
def heap_push(hs, he, hj1, hj2, size, v, e, j1, j2):
    """Push the sum ``v`` of (e, j1, j2); returns the new size."""
    p = size
    hs[p] = v
    he[p] = e
    hj1[p] = j1
    hj2[p] = j2
    while p > 0:
        q = (p - 1) // 2
        if hs[q] >= hs[p]:
            break
        hs[p], hs[q] = hs[q], hs[p]
        he[p], he[q] = he[q], he[p]
        hj1[p], hj1[q] = hj1[q], hj1[p]
        hj2[p], hj2[q] = hj2[q], hj2[p]
        p = q
    return size + 1


@numba.njit(cache=True, nogil=True)
def heap_pop(hs, he, hj1, hj2, size):
    """Remove the top (read ``hs[0]``, ``he[0]``, ... first); returns the new size."""
    size -= 1
    hs[0] = hs[size]
    he[0] = he[size]
    hj1[0] = hj1[size]
    hj2[0] = hj2[size]
    p = 0
    while True:
        c = 2 * p + 1
        if c >= size:
            break
        if c + 1 < size and hs[c + 1] > hs[c]:
            c += 1
        if hs[p] >= hs[c]:
            break
        hs[p], hs[c] = hs[c], hs[p]
        he[p], he[c] = he[c], he[p]
        hj1[p], hj1[c] = hj1[c], hj1[p]
        hj2[p], hj2[c] = hj2[c], hj2[p]
        p = c
    return size
