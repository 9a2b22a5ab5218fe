"""The model-file reader's machinery (structsvm.io._format): behaviours the mutation
run found untested (see docs/testing.md, "Mutation testing")."""
import io
import json
import zipfile

import numpy as np
import pytest

import structsvm
from structsvm.io import ModelFileError


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = [rng.normal(size=40) + (1 if i % 2 else -1) for i in range(20)]
    Y = ["a" if i % 2 else "b" for i in range(20)]
    model = structsvm.fit(X, Y, C=1.0)
    path = tmp_path_factory.mktemp("models") / "model.npz"
    model.save(path)
    return path


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return path


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def test_one_member_over_the_limit_is_refused_from_the_zip_directory(saved, tmp_path):
    """A member whose declared size exceeds max_bytes is refused from the archive's
    directory, before the header is read: a damaged header is not what is reported."""
    members = _members(saved)
    meta = json.loads(np.load(io.BytesIO(members["__meta__.npy"])).tobytes())
    meta["C"] = 123.0                     # the header's checksum no longer matches
    members["__meta__.npy"] = _npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))
    members["big.npy"] = _npy(np.zeros(3750))          # 30 kB in one member
    path = _write(tmp_path / "big.npz", members)
    # the arrays' total stays within max_bytes + 4 kB per member: only the check of
    # each member refuses this file before its header is read
    total = sum(len(v) for k, v in members.items() if k != "__meta__.npy")
    assert len(members["big.npy"]) > 25_000 + 4096 and total <= 25_000 + 4096 * len(members)
    with pytest.raises(ModelFileError, match=r"member big\.npy declares \d+ bytes "
                       r"uncompressed, more than the limit of 25000"):
        structsvm.load(path, max_bytes=25_000)
    with pytest.raises(ModelFileError, match="checksum differs"):
        structsvm.load(path)              # within the default limit: the header's turn


def test_a_header_member_over_its_own_limit_is_refused(tmp_path, monkeypatch):
    """The header member has its own limit (MAX_HEADER_BYTES), checked from the zip
    directory like any other member."""
    from structsvm.io import _format as _model_format

    monkeypatch.setattr(_model_format, "MAX_HEADER_BYTES", 1000)
    blob = np.frombuffer(json.dumps({"pad": "x" * 10_000}).encode(), np.uint8)
    path = _write(tmp_path / "m.npz", {"__meta__.npy": _npy(blob)})
    with pytest.raises(ModelFileError, match=r"member __meta__\.npy declares \d+ bytes "
                       "uncompressed, more than the limit of 1000"):
        structsvm.load(path)


def _round_trip(value):
    """``value`` through the header codec and JSON text, as a model file stores it."""
    from structsvm.io._format import ValueDecoder, ValueEncoder

    enc = ValueEncoder(allowed={})
    text = json.dumps(enc(value, "value"))
    return json.loads(text), ValueDecoder(enc.arrays, {}, decoders=lambda name: name)(
        json.loads(text))


def test_header_codec_round_trips_every_kind_of_value():
    import networkx as nx

    g = nx.DiGraph([("root", "a"), ("root", ("b", 1)), (("b", 1), "c")])
    g.add_node("lonely")
    value = {"t": (1, (2.5, "x"), None), "l": [(3,), [True, False]],
             "keys": {1: "one", ("k", 2): (4,), "__x": 5},
             "obj": np.array(["a", ("b", 2), None], dtype=object),
             "arr": np.arange(6.0).reshape(2, 3), "g": g}
    text, back = _round_trip(value)
    assert back["t"] == (1, (2.5, "x"), None) and isinstance(back["t"][1], tuple)
    assert back["l"] == [(3,), [True, False]] and isinstance(back["l"][0], tuple)
    assert back["keys"] == {1: "one", ("k", 2): (4,), "__x": 5}
    assert back["obj"].dtype == object and back["obj"].tolist() == ["a", ("b", 2), None]
    np.testing.assert_array_equal(back["arr"], value["arr"])
    assert isinstance(back["g"], nx.DiGraph)
    assert set(back["g"].nodes) == set(g.nodes) and set(back["g"].edges) == set(g.edges)


def test_header_codec_writes_plain_mappings_as_json_objects():
    """A mapping with string keys stays a JSON object in the header (readable as is);
    only other keys need the pair-list form."""
    text, back = _round_trip({"C": 1.0, "inner": {"a": [1, 2]}})
    assert text == {"C": 1.0, "inner": {"a": [1, 2]}}
    assert back == {"C": 1.0, "inner": {"a": [1, 2]}}
    text, _ = _round_trip({1: "x"})
    assert text == {"__dict__": [[1, "x"]]}


@pytest.mark.parametrize("odd", ["a..b", ".."])
def test_a_member_name_with_dots_is_refused_even_when_the_header_lists_it(saved, tmp_path,
                                                                          odd):
    """A member named with ``..`` is refused by its name, even in a file whose header
    lists it under that name with valid checksums (a checksum proves no origin)."""
    from structsvm import io as sio

    members = _members(saved)
    meta = json.loads(np.load(io.BytesIO(members["__meta__.npy"])).tobytes())
    old = next(n for n in meta["arrays"])
    text = json.dumps(meta).replace(json.dumps(old), json.dumps(odd))
    meta = json.loads(text)
    del meta["sha256"]["__header__"]
    meta["sha256"]["__header__"] = sio._header_digest(meta)
    members["__meta__.npy"] = _npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))
    members[odd + ".npy"] = members.pop(old + ".npy")
    path = _write(tmp_path / "dots.npz", members)
    with pytest.raises(ModelFileError, match="unexpected archive member"):
        structsvm.load(path)
    # the same file with a plain name loads: only the name is wrong
    text = json.dumps(meta).replace(json.dumps(odd), json.dumps("plain"))
    meta = json.loads(text)
    del meta["sha256"]["__header__"]
    meta["sha256"]["__header__"] = sio._header_digest(meta)
    members["__meta__.npy"] = _npy(np.frombuffer(json.dumps(meta).encode(), np.uint8))
    members["plain.npy"] = members.pop(odd + ".npy")
    structsvm.load(_write(tmp_path / "plain.npz", members))
