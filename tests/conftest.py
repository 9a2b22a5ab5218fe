"""Shared test fixtures: data discovery that skips locally and fails under CI."""
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
