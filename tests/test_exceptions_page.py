"""The errors page lists every exception class structsvm defines, importable from
where it says, with the base classes it says."""
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import structsvm

PAGE = Path(__file__).resolve().parents[1] / "docs" / "exceptions.md"


def _rows():
    """{name: (import from, derives from)} of the page's table."""
    rows = {}
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[1] != "built-in":
            rows[cells[0].strip("`")] = (cells[1].strip("`"),
                                         re.findall(r"`(\w+)`", cells[2]))
    return rows


def _public_exceptions():
    """Every exception class of structsvm that a public module offers (a module path
    without a private part); one in a private module only is control flow inside
    structsvm (the round tracker's stop signal), never seen by a caller."""
    found = {}
    for mod in pkgutil.walk_packages(structsvm.__path__, "structsvm."):
        if any(part.startswith("_") for part in mod.name.split(".")):
            continue
        module = importlib.import_module(mod.name)
        # a lazy package offers its names through __all__ and __getattr__
        for name in getattr(module, "__all__", None) or list(vars(module)):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseException) \
                    and obj.__module__.startswith("structsvm."):
                found[name] = obj
    return found


def test_every_exception_is_on_the_page():
    rows = _rows()
    missing = sorted(set(_public_exceptions()) - set(rows))
    assert not missing, f"exceptions missing from docs/exceptions.md: {missing}"


@pytest.mark.parametrize("name", sorted(_rows()))
def test_import_path_and_bases_are_right(name):
    where, bases = _rows()[name]
    cls = getattr(importlib.import_module(where), name)
    assert issubclass(cls, BaseException)
    assert [b.__name__ for b in cls.__bases__] == bases, \
        f"{name} derives from {[b.__name__ for b in cls.__bases__]}"
