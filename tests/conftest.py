"""Shared test fixtures: data discovery that skips locally and fails under CI."""
import pytest

from structsvm.corpora import DataNotFoundError, require_data


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
