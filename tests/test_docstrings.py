"""Every public name has a docstring (the API reference is built from them).

Public means: a module of the package whose dotted path has no component starting
with an underscore; in it, every function and class named in ``__all__`` (or,
without ``__all__``, defined there under a public name); in each such class, every
public method, property, classmethod and staticmethod that a structsvm class defines
(inherited docstrings count, as they do in the reference).
"""
import importlib
import inspect
import pkgutil

import pytest

import structsvm

def _public_modules():
    names = ["structsvm"]
    for info in pkgutil.walk_packages(structsvm.__path__, "structsvm."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts):
            continue
        names.append(info.name)
    return sorted(names)


PUBLIC_MODULES = _public_modules()


def _public_names(module):
    """(name, object) of the module's public functions and classes."""
    exported = getattr(module, "__all__", None)
    if exported is None:
        exported = [name for name, obj in vars(module).items()
                    if not name.startswith("_")
                    and (inspect.isclass(obj) or callable(obj))
                    and getattr(obj, "__module__", None) == module.__name__]
    out = []
    for name in exported:
        obj = getattr(module, name)
        compiled = callable(obj) and type(obj).__module__.startswith("numba")
        if inspect.isclass(obj) or inspect.isroutine(obj) or compiled:
            out.append((name, obj))
    return out


def _own_doc(obj):
    """The docstring of ``obj``; a class's own one, not a base class's nor the
    signature that namedtuple and dataclass write in place of a missing one."""
    if not inspect.isclass(obj):
        return inspect.getdoc(obj)
    doc = vars(obj).get("__doc__")
    if not isinstance(doc, str):
        return None
    if "\n" not in doc.strip() and doc.strip().startswith(obj.__name__ + "("):
        return None
    return inspect.cleandoc(doc)


def _is_method(raw):
    return (inspect.isfunction(raw) or isinstance(raw, (classmethod, staticmethod, property))
            or inspect.isroutine(raw))


def _undocumented_members(cls):
    """Public methods/properties defined by structsvm classes in ``cls``'s MRO."""
    missing = []
    seen = set()
    for klass in cls.__mro__:
        if not getattr(klass, "__module__", "").startswith("structsvm"):
            continue
        for name, raw in vars(klass).items():
            if name.startswith("_") or name in seen or not _is_method(raw):
                continue
            seen.add(name)
            doc = inspect.getdoc(raw if isinstance(raw, property) else getattr(cls, name))
            if not (doc and doc.strip()):
                missing.append(f"{cls.__name__}.{name}")
    return missing


def test_the_walk_finds_the_public_modules():
    assert "structsvm.estimator" in PUBLIC_MODULES
    assert "structsvm.structures" in PUBLIC_MODULES
    assert "structsvm.structures.sequence.features" in PUBLIC_MODULES
    assert not any("._" in m for m in PUBLIC_MODULES)


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_public_names_have_docstrings(modname):
    module = importlib.import_module(modname)
    missing = [] if (module.__doc__ or "").strip() else [f"{modname} (module docstring)"]
    for name, obj in _public_names(module):
        doc = _own_doc(obj)
        if not (doc and doc.strip()):
            missing.append(f"{modname}.{name}")
        if inspect.isclass(obj) and getattr(obj, "__module__", "").startswith("structsvm"):
            missing += [f"{modname}.{m}" for m in _undocumented_members(obj)]
    assert not missing, "no docstring: " + ", ".join(missing)


def test_n_jobs_thresholds_stated_are_the_problems():
    """Where docstrings say which oracle calls run in parallel, they name the
    thresholds of structsvm.learners.problem (a call of fewer than 2 MIN_CHUNK examples is
    one chunk; problems under MIN_REMOTE examples open no pool)."""
    import re

    from structsvm.learners import FrankWolfe, Pegasos, Perceptron
    from structsvm.learners.problem import MIN_CHUNK, MIN_REMOTE

    for obj in (structsvm.StructuredSVM, Pegasos, FrankWolfe, Perceptron):
        doc = " ".join(inspect.getdoc(obj).split())
        stated = {int(n) for n in re.findall(r"(?:fewer than|on|of|with) (\d+)(?: or more)? "
                                             r"(?:training )?examples", doc)}
        assert stated, obj.__name__
        assert stated <= {2 * MIN_CHUNK, MIN_REMOTE}, (obj.__name__, stated)

