"""The kernels compiled ahead of time, with their argument and result types (private).

Numba compiles a kernel on its first call in a process whose on-disk cache does not
hold it yet: seconds per kernel, paid by a user's first run. The kernels on the
default paths (the sequence oracle and dual coordinate descent of the main job,
Viterbi for tagging, the multiclass sweep, the oracles and decoders of the other
built-in structures, the 1-slack SMO, the flat Pegasos steps) are also compiled when
the package is installed, by ``numba.pycc`` in ``setup.py``, into the extension module
``structsvm._aot``; :mod:`structsvm._compiled` calls them there when a call's
arguments have exactly the types below, and numba's JIT version otherwise.

This module is read by ``setup.py`` in a build environment without the package's
dependencies: it imports nothing but the standard library.

Type codes: ``"f8:2"`` is a float64, 2-D, C-contiguous array; ``"i4:1"`` an int32
array; ``"i8"`` / ``"f8"`` / ``"b1"`` int64, float64 and bool scalars; a result in
parentheses is a tuple, ``"void"`` none.
"""
from __future__ import annotations

import hashlib
import os

__all__ = ["KERNELS", "LEARNER_KERNELS", "MODULE", "STRUCTURE_KERNELS", "export_name",
           "numba_signature", "source_stamp", "split_key"]

MODULE = "structsvm._aot"  # the extension module built by setup.py

# "module:function" -> (argument types, result type)
KERNELS = {
    "structsvm.structures.sequence._oracle_jit:chain_oracle": (
        "i4:1 i4:1 f8:1 i8:1 i8:1 i8:1 f8:2 f8:2 f8:1 f8:1 f8:1 b1 b1",
        "(i8:1 f8:1 f8:1 i8:1 i8:1 f8:1)"),
    "structsvm.structures.sequence._jit:shared_unaries": (
        "i8:2 i8:1 i4:1 i4:1 f8:2", "f8:2"),
    "structsvm.structures.sequence._viterbi_jit:viterbi_batch": (
        "f8:2 i8:1 f8:2 f8:1 f8:1 i8:1 b1 i8:1", "i1:1"),
    "structsvm.learners._dual_cd_jit:insert_rows": (
        "i8:1 i8:1 f8:1 f8:1 i4:1 f8:1 i8:1 i8:1 i8:2 f8:2 f8:2 f8:3 i8:2 f8 f8 i8 i8 "
        "i8:2 f8:2 f8:1", "i8"),
    "structsvm.learners._dual_cd_jit:cached_pass": (
        "i8:1 f8:1 i4:1 f8:1 i8:1 i8:1 i8:2 f8:2 f8:2 f8:3 f8 f8 i8 f8:1", "f8"),
    "structsvm.learners._dual_cd_jit:compact_pool": (
        "i4:1 f8:1 i8:1 i8:1 i8:2 i4:1 f8:1 i8:1 i8:1", "(i8 i8)"),
    "structsvm.learners._dual_cd_jit:weights_from_alpha": (
        "i8 i4:1 f8:1 i8:1 i8:1 i8:2 f8:2", "f8:1"),
    "structsvm.learners._multiclass_cd_jit:sweep": (
        "i8:1 i8:1 i4:1 f8:1 b1 i8:1 f8:1 f8:2 f8 f8:2 f8:2 i4:2 i4:1 b1 f8:1",
        "(i8 f8)"),
    # multiclass maps other than the plain one (class attributes, taxonomies)
    "structsvm.structures.multiclass._jit:class_scores": (
        "i4:1 i4:1 f8:1 i8:1 f8:2 f8:2", "void"),
    "structsvm.structures.multiclass._jit:attribute_differences": (
        "i4:1 i4:1 f8:1 i8:1 f8:2 i8:1 i8:1 i8 i4:1", "(i4:1 i4:1 f8:1)"),
    "structsvm.structures.multiclass._jit:dense_rows_to_csr": (
        "f8:2 i8:1 i4:1", "(i4:1 i4:1 f8:1)"),
    # rankings: the aggregated oracle, the 1-slack cutting plane's SMO and sparse sums
    "structsvm.structures.ranking._jit:aggregate_kernel": (
        "f8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 i8:1 f8:1 f8:1 i8:1 f8:1", "void"),
    "structsvm.learners._smo_jit:smo": (
        "f8:2 f8:1 i8:1 i8 f8 f8:1 f8 i8", "(i8 f8)"),
    "structsvm.learners._sparse_jit:gather_dot": ("i4:1 f8:1 f8:1", "f8"),
    "structsvm.learners._sparse_jit:scatter_add": ("f8:1 i4:1 f8:1 f8", "void"),
    # parse trees, graphs, alignments: the grammar's scores and the decoders
    "structsvm.structures.grammar._jit:_gather_sum": ("i4:2 f8:2 f8:2", "void"),
    "structsvm.structures.grammar._cky_jit:cky_batch": (
        "f8:2 i8:1 f8:2 i8:1 i8:1 i8:1 f8:1 i8:1 i8:1 i8:1 f8:1 i8:1 i8 i8:2 i8:1 f8:1",
        "b1:1"),
    "structsvm.structures.graph._max_product_jit:max_product_batch": (
        "f8:2 i8:1 i8:2 f8:3 i8:1 i8:1 i8:1 i8 f8 f8 i8:1 i8:1 i8:1 i8:1", "void"),
    "structsvm.structures.alignment._jit:align_batch": (
        "i4:2 i8:1 i4:2 i8:1 f8:3 f8:1 b1 i8:1 f8:1 i8:2 i8:1 i8:1 f8:1", "void"),
    # the flat Pegasos SVMs (primal mode)
    "structsvm.svm._pegasos_jit:steps": (
        "b1 i8 i8:1 i8 f8:1 f8 f8 b1 f8 f8 i8 i8 i8:1 i8:1 f8:1 f8:2 f8:1 i8 b1 f8:1 f8:1 "
        "f8:1 f8:1 f8:1", "(i8 i8)"),
    "structsvm.svm._pegasos_jit:objective": (
        "b1 i8 f8:1 f8 f8:1 f8 f8 i8:1 i8:1 f8:1 f8:2", "f8"),
    "structsvm.svm._pegasos_jit:new_state": ("b1 i8 i8", "(f8:1 f8:1 f8:1 f8:1 f8:1)"),
    "structsvm.svm._pegasos_jit:averaged_sum": ("f8:1 f8:1 f8:1 f8:1", "(f8:1 f8 f8)"),
}


# the kernels a learner's fit calls, and those of a structure's oracle and decoder:
# when every kernel of a fit's learner and structure is compiled at installation,
# the fit compiles nothing (its log does not announce a compilation)
_DUAL_CD = ["structsvm.learners._dual_cd_jit:" + f for f in (
    "insert_rows", "cached_pass", "compact_pool", "weights_from_alpha")]
_MULTICLASS = ["structsvm.structures.multiclass._jit:" + f for f in (
    "class_scores", "attribute_differences", "dense_rows_to_csr")]
LEARNER_KERNELS = {
    "dual_cd": _DUAL_CD,
    "multiclass_cd": ["structsvm.learners._multiclass_cd_jit:sweep"],
    "one_slack": ["structsvm.learners._smo_jit:smo",
                  "structsvm.learners._sparse_jit:gather_dot",
                  "structsvm.learners._sparse_jit:scatter_add"],
}
STRUCTURE_KERNELS = {
    "chain": ["structsvm.structures.sequence._oracle_jit:chain_oracle",
              "structsvm.structures.sequence._jit:shared_unaries",
              "structsvm.structures.sequence._viterbi_jit:viterbi_batch"],
    "multiclass": _MULTICLASS,
    "tree": _MULTICLASS,
    "ranking": ["structsvm.structures.ranking._jit:aggregate_kernel"],
    "parse": ["structsvm.structures.grammar._jit:_gather_sum",
              "structsvm.structures.grammar._cky_jit:cky_batch"],
    "graph": ["structsvm.structures.graph._max_product_jit:max_product_batch"],
    "alignment": ["structsvm.structures.alignment._jit:align_batch"],
}


def split_key(key):
    """``"pkg.module:function"`` -> ``("pkg.module", "function")``."""
    module, _, function = key.partition(":")
    return module, function


def export_name(key):
    """The kernel's name in the extension module (unique across modules)."""
    module, function = split_key(key)
    return module.rsplit(".", 1)[-1].strip("_") + "__" + function


def numba_signature(key):
    """The numba signature ``result(arguments)`` of the kernel ``key`` (imports
    numba)."""
    import numba
    import numpy as np

    def typ(spec):
        if spec == "void":
            return numba.types.void
        if spec.startswith("("):
            return numba.types.Tuple(tuple(typ(s) for s in spec[1:-1].split()))
        code, _, ndim = spec.partition(":")
        scalar = numba.from_dtype(np.dtype(code))
        return numba.types.Array(scalar, int(ndim), "C") if ndim else scalar

    args, result = KERNELS[key]
    return typ(result)(*(typ(a) for a in args.split()))


def source_stamp(root):
    """A 63-bit digest of the kernels' source: every ``*_jit.py`` module under the
    package folder ``root`` and this table. The extension module records the stamp
    of the source it was compiled from; a different stamp at run time (the source
    was edited after the build) leaves the extension unused."""
    digest = hashlib.sha256()
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        paths += [os.path.join(folder, f) for f in files if f.endswith("_jit.py")]
    paths.append(os.path.join(root, "_kernel_table.py"))
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return int.from_bytes(digest.digest()[:8], "little") >> 1
