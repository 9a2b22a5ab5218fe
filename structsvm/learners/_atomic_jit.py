"""An atomic addition into a float64 array, for loops whose vector other processes
write at the same time (no validation here).

``w[c] += v`` is a read, an addition and a write: when two processes step on one w in
shared memory (``partitioned_cd`` in memory), one of two simultaneous additions to a
column is lost, and a column every example touches (a transition weight, a bias)
loses many. The dual steps that follow then see a w that is not Σ α ψ, and the
asynchronous method no longer converges to the optimum (Hsieh, Yu & Dhillon 2015:
their "wild" variant solves a perturbed problem; the "atomic" one converges).
:func:`atomic_add` is LLVM's ``atomicrmw fadd`` (a compare-and-swap loop on x86), as
cheap as a plain addition when no other core holds the cache line.

References
----------
C.-J. Hsieh, H.-F. Yu, I. S. Dhillon. PASSCoDe: parallel asynchronous stochastic dual
co-ordinate descent. ICML 2015.
"""
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def atomic_add(typingctx, array, index, value):
    """``array[index] += value`` as one atomic operation (float64 C array, no bounds
    check, no wrap-around of negative indices); returns the value before."""
    if not (isinstance(array, types.Array) and array.dtype == types.float64
            and isinstance(index, types.Integer) and isinstance(value, types.Float)):
        return None
    sig = types.float64(array, types.intp, types.float64)

    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        data = context.make_array(kind)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, kind, data, [args[1]],
                                       wraparound=False)
        return builder.atomic_rmw("fadd", ptr, args[2], "monotonic")

    return sig, codegen
