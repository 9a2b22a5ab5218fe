"""The model-file codec (structsvm.io): behaviours the mutation run found untested.

Each test pins one behaviour that a one-line change to structsvm/io.py left unnoticed
by the other tests (see docs/testing.md, "Mutation testing").
"""
import json

import numpy as np
import pytest

from structsvm import io as sio


def test_register_model_class_refuses_what_is_not_a_class():
    before = sio.registered_classes()
    with pytest.raises(TypeError, match="needs a class, got function"):
        sio.register_model_class(lambda: None)
    with pytest.raises(TypeError, match="needs a class, got MulticlassFeatures"):
        from structsvm.structures import MulticlassFeatures

        sio.register_model_class(MulticlassFeatures())
    assert sio.registered_classes() == before


def _write_header(path, header_arr):
    """A model file holding only a header member (the arrays do not matter here)."""
    import io as _io
    import zipfile

    buf = _io.BytesIO()
    np.save(buf, header_arr, allow_pickle=False)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__meta__.npy", buf.getvalue())
    return path


def _valid_meta():
    meta = {"format": sio.FORMAT, "version": 2, "arrays": {}, "note": "x"}
    meta["sha256"] = {"__header__": sio._header_digest(meta)}
    return meta


def test_a_valid_header_only_file_loads(tmp_path):
    """The reference for the two tests below: the same header as a 1-D byte string."""
    blob = np.frombuffer(json.dumps(_valid_meta()).encode(), dtype=np.uint8)
    meta, arrays = sio.read_model_file(_write_header(tmp_path / "m.npz", blob))
    assert meta["note"] == "x" and arrays == {}


@pytest.mark.parametrize("shape_or_dtype", ["2d", "int64"])
def test_a_header_that_is_not_a_byte_string_is_refused(tmp_path, shape_or_dtype):
    blob = np.frombuffer(json.dumps(_valid_meta()).encode(), dtype=np.uint8)
    if shape_or_dtype == "2d":     # the same bytes, as a 2-D array
        blob = blob[: blob.size - blob.size % 2].reshape(2, -1) if blob.size % 2 == 0 \
            else np.concatenate([blob, [32]]).astype(np.uint8).reshape(2, -1)
    else:
        blob = blob.astype(np.int64)
    path = _write_header(tmp_path / "m.npz", blob)
    with pytest.raises(sio.ModelFileError, match="not a byte string"):
        sio.read_model_file(path)


def test_a_header_that_cannot_be_checksummed_is_a_model_file_error(tmp_path):
    """A header that parses as JSON but nests too deeply to be re-encoded for its
    checksum is refused as damaged, at every depth up to the interpreter's limit
    (never another exception)."""
    import sys

    limit = sys.getrecursionlimit()
    outcomes = set()
    for depth in range(limit - 300, limit + 5):
        text = ('{"format": "%s", "version": 2, "sha256": {}, "deep": %s%s}'
                % (sio.FORMAT, "[" * depth, "]" * depth))
        path = _write_header(tmp_path / "m.npz", np.frombuffer(text.encode(), np.uint8))
        with pytest.raises(sio.ModelFileError, match="damaged model header|checksum") \
                as info:
            sio.read_model_file(path)
        outcomes.add("checksum" in str(info.value))
    # both outcomes happen: JSON that parses, and JSON too deep to parse or checksum
    assert outcomes == {True, False}
