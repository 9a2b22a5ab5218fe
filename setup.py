"""Build step of structsvm: the loops of the default paths compiled ahead of time.

The project's metadata is in pyproject.toml. This file adds one optional extension
module, ``structsvm._compiled._aot``: the numba loops that the loop modules
(``structsvm/**/*_jit.py``, each in the folder of the structure or learner it serves)
declare in their ``SIGNATURES``, compiled by ``numba.pycc`` for the machine that
installs the package, so that a first run does not spend seconds compiling them
(numba's JIT and its on-disk cache still compile every other loop, and these ones
for other argument types).

The extension is optional: without a C compiler, or where the compilation fails, the
package installs without it (a warning says why) and numba compiles the loops on
first use, as it would otherwise. Environment variables:

``STRUCTSVM_AOT=0``
    Skip the extension.
``STRUCTSVM_AOT_CPU``
    The CPU to compile for: ``host`` (default: this machine's instruction set, as
    numba's JIT does) or an LLVM CPU name such as ``x86-64-v2`` or ``generic`` for a
    wheel that other machines will install.
"""
import importlib.util
import os
import sys
import types

from setuptools import setup

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(ROOT, "structsvm")


def _loop_table():
    """structsvm/_compiled/_table.py as the module ``structsvm._compiled._table``,
    with ``structsvm`` and the packages of the loop modules registered as empty
    packages: the loop modules import numba and numpy only, but the packages'
    ``__init__`` import the runtime dependencies, which a build environment does not
    have."""
    def empty_package(name):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [os.path.join(PACKAGE, *name.split(".")[1:])]
            sys.modules[name] = pkg

    empty_package("structsvm")
    empty_package("structsvm._compiled")
    spec = importlib.util.spec_from_file_location(
        "structsvm._compiled._table", os.path.join(PACKAGE, "_compiled", "_table.py"))
    table = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = table
    spec.loader.exec_module(table)
    for key in table.signatures(PACKAGE):
        parts = table.split_key(key)[0].split(".")
        for k in range(2, len(parts)):
            empty_package(".".join(parts[:k]))
    return table


def _release_gil(compiler_module):
    """numba.pycc compiles its Python wrappers with numba's default flags, which keep
    the GIL during a call; the loops are declared ``nogil=True`` and the oracle runs
    them on several threads at once, so their wrappers release it as numba's JIT
    versions do."""
    base = compiler_module.Flags

    class NoGilFlags(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    compiler_module.Flags = NoGilFlags


def _own_flags(compiler_module):
    """numba.pycc compiles every exported loop with one shared Flags object, which
    numba's inlining of an ``inline="always"`` function changes (it turns SSA off):
    every loop compiled after such a one would be compiled differently from numba's
    JIT version (and one was wrong). Each loop gets a copy of the flags instead."""
    compile_extra = compiler_module.compile_extra

    def compile_with_own_flags(typingctx, targetctx, func, args, return_type, flags,
                               locals, **kwargs):
        return compile_extra(typingctx, targetctx, func, args, return_type, flags.copy(),
                             locals, **kwargs)

    compiler_module.compile_extra = compile_with_own_flags


def aot_extensions():
    """The extension module ``structsvm._compiled._aot`` (a list of one), or an empty
    list when
    it is turned off or numba cannot prepare it."""
    if os.environ.get("STRUCTSVM_AOT", "1") == "0":
        return []
    try:
        import importlib

        import numba.pycc.compiler as pycc_compiler
        from numba.pycc import CC

        table = _loop_table()
        _release_gil(pycc_compiler)
        _own_flags(pycc_compiler)
        cc = CC(table.MODULE.rsplit(".", 1)[1], source_module=table)
        cc.target_cpu = os.environ.get("STRUCTSVM_AOT_CPU", "host")
        for key, types_ in table.signatures(PACKAGE).items():
            module, function = table.split_key(key)
            loop = getattr(importlib.import_module(module), function)
            cc.export(table.export_name(key), table.numba_signature(types_))(loop.py_func)
        namespace = {}
        exec(f"def source_stamp():\n    return {table.source_stamp(PACKAGE)}", namespace)
        cc.export("source_stamp", "i8()")(namespace["source_stamp"])
        return [cc.distutils_extension(optional=True)]
    except Exception as exc:  # noqa: BLE001 - the package works without it
        print(f"structsvm: not compiling loops ahead of time ({exc!r}); numba "
              "compiles them on first use", file=sys.stderr)
        return []


def _build_ext_class():
    """setuptools' build_ext (as numba.pycc patched it) that turns any failure of the
    optional extension into a warning: numba's compilation raises more kinds of
    errors than the compiler errors setuptools expects of an optional extension."""
    from setuptools.command import build_ext

    base = build_ext.build_ext

    class BuildExt(base):
        def build_extension(self, ext):
            try:
                super().build_extension(ext)
            except Exception as exc:  # noqa: BLE001
                if not getattr(ext, "optional", False):
                    raise
                print(f"structsvm: building {ext.name} failed ({exc!r}); numba compiles "
                      "its loops on first use", file=sys.stderr)

    return BuildExt


extensions = aot_extensions()
setup(ext_modules=extensions, cmdclass={"build_ext": _build_ext_class()})
