"""Shared test fixtures: data and optional engines that skip locally and fail under CI."""
import importlib

import pytest
from hypothesis import settings

from structsvm.corpora import DataNotFoundError, require_data

# hypothesis drives the random-input invariants (decoders vs enumeration, Φ/score
# identity): derandomised (the same examples on every run and machine), no deadline
# (timings on a shared CI machine are noise), no example database written to disk.
# Tests set their own modest max_examples.
settings.register_profile("structsvm", derandomize=True, deadline=None, database=None,
                          print_blob=True)
settings.load_profile("structsvm")

# a structure's folder as a contributor writes it: it runs inside a copy of the
# package (tests/test_adding_a_structure.py), not as test modules
collect_ignore = ["adding_a_structure"]


@pytest.fixture
def need_data():
    """Call ``need_data(loader, *args, **kw)``: the loader's result, or a skip/fail.

    Where the shared data sets are absent (a user's machine) the test is skipped with
    the loader's message; with ``STRUCTSVM_REQUIRE_DATA=1`` (CI) it fails instead.
    """
    def _load(loader, *args, **kwargs):
        try:
            return loader(*args, **kwargs)
        except DataNotFoundError as exc:
            if require_data():
                pytest.fail(f"required data missing: {exc}")
            pytest.skip(f"data not available: {exc}")
    return _load


@pytest.fixture(scope="session")
def need_module():
    """Call ``need_module(name, hint)``: the imported module, or a skip/fail.

    For the optional engines of the ``test`` extra (dask, ray): where one is not
    installed the test is skipped with ``hint``; with ``STRUCTSVM_REQUIRE_DATA=1``
    (CI, which installs the extra) it fails instead, so a broken install cannot
    pass as a skip. Session-scoped, so module-scoped fixtures can use it.
    """
    def _import(name, hint=""):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            if require_data():
                pytest.fail(f"required module {name!r} missing: {exc} {hint}".rstrip())
            pytest.skip(f"{name} is not installed: {exc} {hint}".rstrip())
    return _import
