"""Hostile model files: crafted headers, tampering, decompression bombs, bit flips.

A model file is data. Whatever its bytes, :func:`structsvm.load` either returns the
model that was saved or raises :class:`ModelFileError` naming the file; it never
calls a function named by the file, never unpickles, never inflates more than the
declared-size limits allow.
"""
import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import structsvm
from structsvm import io as sio
from structsvm.estimator import allowed_classes
from structsvm.structures import MulticlassFeatures, SequenceFeatures
from structsvm.io import ModelFileError


# ------------------------------------------------------------------ helpers
def _blobs(seed=0, n=12):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=3) + (2 if i % 2 else -2) for i in range(n)]
    return X, ["a" if i % 2 else "b" for i in range(n)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, Y = _blobs()
    model = structsvm.fit(X, Y, C=1.0, loss="hamming")
    path = tmp_path_factory.mktemp("models") / "model.npz"
    model.save(path)
    return model, path, X


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _meta(members):
    arr = np.load(io.BytesIO(members["__meta__.npy"]), allow_pickle=False)
    return json.loads(arr.tobytes().decode("utf-8"))


def _write(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return path


def _npy(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _rewrite(src, dst, mutate, rehash=True):
    """Copy a model file with its header changed by ``mutate(meta)`` (an attacker
    who recomputes the header checksum when ``rehash``); the string "DEEP" becomes
    50,000 nested lists."""
    members = _members(src)
    meta = _meta(members)
    mutate(meta)
    if rehash:
        meta["sha256"]["__header__"] = sio._header_digest(meta)
    text = json.dumps(meta).replace('"DEEP"', "[" * 50_000 + "]" * 50_000)
    blob = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    members["__meta__.npy"] = _npy(blob)
    return _write(dst, members)


def _same_model(a, b, X):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.predict(X) == b.predict(X)
    pa, pb = a.get_params(deep=False), b.get_params(deep=False)
    assert {k: v for k, v in pa.items() if k != "feature_map"} == \
        {k: v for k, v in pb.items() if k != "feature_map"}


# ------------------------------------------------------------------ crafted headers
FUNCTIONS = ["structsvm.cli:main", "structsvm.corpora.svmlight:write_svm_rank",
             "structsvm.corpora:write_svm_rank", "structsvm.io:write_model_file",
             "os:system", "builtins:eval", "structsvm:fit",
             "structsvm.structures.losses:CallableLoss", "structsvm.learners.problem:Problem"]


@pytest.mark.parametrize("target", FUNCTIONS)
@pytest.mark.parametrize("where", ["feature_map", "loss", "learner", "estimator"])
def test_header_naming_a_function_runs_nothing(saved, tmp_path, target, where):
    _, src, _ = saved
    victim = tmp_path / "written_by_the_file.txt"
    params = {"argv": ["learn", "--task", "multiclass", str(victim), str(victim)],
              "path": str(victim), "X": [], "Y": [], "qids": [],
              "cmd": f"touch {victim}", "func": "print"}

    def mutate(meta):
        if where == "estimator":
            meta["estimator"] = target
        else:
            obj = {"__object__": target, "params": params}
            if where == "feature_map":
                meta["feature_map"] = obj
            else:
                meta["params"][where] = obj

    bad = _rewrite(src, tmp_path / "crafted.npz", mutate)
    with pytest.raises(ModelFileError, match="crafted.npz.*not a (class model files may "
                                             "name|structsvm estimator)"):
        structsvm.load(bad)
    assert not victim.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_params_of_the_wrong_shape_are_model_file_errors(saved, tmp_path):
    _, src, _ = saved
    cases = {
        "list params": lambda m: m["feature_map"].__setitem__("params", [1, 2]),
        "unknown param": lambda m: m["feature_map"]["params"].__setitem__("evil", 1),
        "unknown class": lambda m: m["feature_map"].__setitem__(
            "__object__", "structsvm.features:NoSuchFeatures"),
        "params list": lambda m: m.__setitem__("params", [1]),
        "no coef": lambda m: m.pop("coef"),
        "missing array": lambda m: m.__setitem__("coef", {"__array__": "zz"}),
        "estimator is a map": lambda m: m.__setitem__(
            "estimator", "structsvm.features:MulticlassFeatures"),
        "feature map is a loss": lambda m: m.__setitem__(
            "feature_map", {"__object__": "structsvm.losses:HammingLoss", "params": {}}),
        "negative C": lambda m: m["params"].__setitem__("C", -5),
        "bad learner": lambda m: m["params"].__setitem__("learner", "nope"),
        "wrong n_features": lambda m: m["feature_map_state"].__setitem__("n_features_", 7),
        "deep nesting": lambda m: m["params"].__setitem__("random_state", "DEEP"),
    }
    for name, mutate in cases.items():
        bad = _rewrite(src, tmp_path / "bad.npz", mutate)
        with pytest.raises(ModelFileError, match="bad.npz"):
            structsvm.load(bad)


def test_tampered_header_is_refused(saved, tmp_path):
    _, src, _ = saved
    for value in (-5, 5.0, 1.0000001):
        bad = _rewrite(src, tmp_path / "tampered.npz",
                       lambda m: m["params"].__setitem__("C", value), rehash=False)
        with pytest.raises(ModelFileError, match="header's checksum differs"):
            structsvm.load(bad)
    bad = _rewrite(src, tmp_path / "nosum.npz",
                   lambda m: m["sha256"].pop("__header__"), rehash=False)
    with pytest.raises(ModelFileError, match="header's checksum differs"):
        structsvm.load(bad)


def test_pickled_member_is_never_unpickled(saved, tmp_path):
    model, src, _ = saved
    victim = tmp_path / "unpickled.txt"

    class Evil:
        def __reduce__(self):
            return (open, (str(victim), "w"))

    members = _members(src)
    name = next(n for n in members if "coef" in n)
    members[name] = _npy(np.array([Evil()], dtype=object))
    bad = _write(tmp_path / "pickle.npz", members)
    with pytest.raises(ModelFileError, match="plain numbers only"):
        structsvm.load(bad)
    assert not victim.exists()


# ------------------------------------------------------------------ format version 1
def test_version_1_file_with_package_level_class_paths_loads(saved, tmp_path):
    """Format version 1 (no checksum of the header) is read; a class may be named by
    the package that exports it."""
    model, src, X = saved

    def as_version_1(meta):
        meta["version"] = 1
        meta["params"]["loss"] = {"__object__": "structsvm.losses:HammingLoss",
                                  "params": {"normalize": False}}
        meta["sha256"].pop("__header__")

    old = _rewrite(src, tmp_path / "old.npz", as_version_1, rehash=False)
    again = structsvm.load(old)
    assert type(again.loss_).__name__ == "HammingLoss"
    np.testing.assert_array_equal(again.coef_, model.coef_)
    allowed = allowed_classes()
    assert allowed["structsvm.losses:TreeDistanceLoss"].__name__ == "TreeDistanceLoss"
    assert "structsvm.tree_losses:TreeDistanceLoss" not in allowed


def test_allow_list_follows_the_registries(monkeypatch, tmp_path):
    """A structure registered by name (e.g. a new built-in's folder) is allowed in
    model files without editing the list; an unregistered lookalike is not."""
    from structsvm.registry import register, unregister

    class GrammarLikeFeatures(MulticlassFeatures):
        structure = "grammar_like"

    GrammarLikeFeatures.__module__ = "structsvm.structures.grammar_like.features"
    key = "structsvm.structures.grammar_like.features:" \
          "test_allow_list_follows_the_registries.<locals>.GrammarLikeFeatures"
    assert key not in allowed_classes()
    register("structure", "grammar_like", GrammarLikeFeatures)
    try:
        allowed = allowed_classes()
        assert allowed[key] is GrammarLikeFeatures
        # also under the names of the packages that export it
        name = GrammarLikeFeatures.__qualname__
        assert allowed[f"structsvm.structures.grammar_like:{name}"] is \
            allowed[f"structsvm.structures:{name}"] is GrammarLikeFeatures
        X, Y = _blobs(3)
        model = structsvm.fit(X, Y, feature_map=GrammarLikeFeatures(), decoder="exhaustive")
        again = structsvm.load(model.save(tmp_path / "g.npz"))
        assert type(again.feature_map_) is GrammarLikeFeatures
        assert again.predict(X) == model.predict(X)
    finally:
        unregister("structure", "grammar_like")
    assert key not in allowed_classes()


def test_register_model_class_with_alias():
    class Plugin(MulticlassFeatures):
        pass

    try:
        sio.register_model_class(Plugin, "old.place:Plugin")
        assert allowed_classes()["old.place:Plugin"] is Plugin
    finally:
        sio._REGISTERED.clear()
    assert "old.place:Plugin" not in allowed_classes()


# ------------------------------------------------------------------ decompression bombs
def _zip_bytes(name, crc, comp_size, size, payload):
    """A one-member zip (deflate), written by hand so the payload can be streamed."""
    fname = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, comp_size, size,
                        len(fname), 0) + fname
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc,
                          comp_size, size, len(fname), 0, 0, 0, 0, 0, 0) + fname
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central),
                      len(local) + comp_size, 0)
    return local + payload + central + end


def _zero_bomb(name, n_bytes, header=b""):
    """``header`` then ``n_bytes`` zeros, deflated: ~1 MB per GB (repeated blocks)."""
    chunk = bytes(1 << 24)
    assert n_bytes % len(chunk) == 0
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = head.compress(header) + head.flush(zlib.Z_FULL_FLUSH)
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = body.compress(chunk) + body.flush(zlib.Z_FULL_FLUSH)  # state reset: repeatable
    tail = body.flush()
    reps = n_bytes // len(chunk)
    payload = first + block * reps + tail
    crc = zlib.crc32(header)
    for _ in range(reps):
        crc = zlib.crc32(chunk, crc)
    return _zip_bytes(name, crc, len(payload), len(header) + n_bytes, payload)


def _raw_npy_header(shape, dtype):
    d = {"descr": dtype, "fortran_order": False, "shape": shape}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, d)
    return buf.getvalue()


@pytest.mark.parametrize("member", ["a0_coef_.npy", "__meta__.npy"])
def test_decompression_bomb_is_refused_without_inflating(tmp_path, member):
    gb = 1 << 30
    header = _raw_npy_header((gb // 8,), "<f8")
    data = _zero_bomb(member, gb, header)
    assert len(data) < 2 << 20   # a ~1 MB file ...
    with zipfile.ZipFile(io.BytesIO(data)) as zf:  # ... that declares 1 GB
        assert zf.infolist()[0].file_size > gb
    path = tmp_path / "bomb.npz"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="bomb.npz.*more than the limit"):
            structsvm.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"peak {peak / 2**20:.0f} MiB while refusing the bomb"


def test_npy_header_larger_than_its_member_is_refused(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    name = next(n for n in members if "coef" in n)
    for shape in [(10 ** 12,), (2 ** 40, 2 ** 40), (3,)]:
        members[name] = _raw_npy_header(shape, "<f8") + bytes(16)
        bad = _write(tmp_path / "liar.npz", members)
        tracemalloc.start()
        try:
            with pytest.raises(ModelFileError, match="liar.npz"):
                structsvm.load(bad)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 8 << 20


def test_member_that_inflates_beyond_its_declared_size_is_refused(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    name = next(n for n in members if "coef" in n)
    real = members[name]
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = body.compress(real + bytes(1 << 26)) + body.flush()
    data = _zip_bytes(name, zlib.crc32(real), len(payload), len(real), payload)
    path = tmp_path / "understated.npz"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="understated.npz"):
            structsvm.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


# ------------------------------------------------------------------ random damage
def test_random_bit_flips_give_model_file_error_or_the_same_model(saved, tmp_path):
    model, src, X = saved
    raw = bytearray(src.read_bytes())
    rng = np.random.default_rng(0)
    outcomes = {"refused": 0, "identical": 0}
    path = tmp_path / "flipped.npz"
    for _ in range(1000):
        pos = int(rng.integers(len(raw)))
        bit = 1 << int(rng.integers(8))
        raw[pos] ^= bit
        path.write_bytes(bytes(raw))
        raw[pos] ^= bit
        try:
            again = structsvm.load(path)
        except ModelFileError as exc:
            assert "flipped.npz" in str(exc)
            outcomes["refused"] += 1
            continue
        _same_model(model, again, X)
        outcomes["identical"] += 1
    assert outcomes["refused"] > 500, outcomes


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096))
def test_random_bytes_give_model_file_error(tmp_path, data):
    path = tmp_path / "random.npz"
    path.write_bytes(data)
    with pytest.raises(ModelFileError, match="random.npz"):
        structsvm.load(path)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                     lambda inner: st.lists(inner, max_size=3) |
                     st.dictionaries(st.text(max_size=12), inner, max_size=3),
                     max_leaves=8)
_KEYS = ["estimator", "params", "feature_map", "feature_map_state", "coef", "fitted",
         "decoder", "version", "format"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(_KEYS), sub=st.one_of(st.none(), st.text(max_size=12)),
       value=_JSON | st.sampled_from([
           {"__object__": "structsvm.features:MulticlassFeatures", "params": {}},
           {"__object__": "structsvm.cli:main", "params": {"argv": ["--help"]}},
           {"__tuple__": [1, 2]}, {"__dict__": [[1, 2]]}, {"__array__": "a0_coef_"},
           {"__objarray__": [1, "a"], "shape": [2]}, {"__decoder__": "viterbi"},
           {"__digraph__": {"nodes": [[1]], "edges": []}}]))
def test_near_valid_headers_give_model_file_error_or_load(saved, tmp_path, key, sub, value):
    _, src, _ = saved

    def mutate(meta):
        if sub is not None and isinstance(meta.get(key), dict):
            meta[key][sub] = value
        else:
            meta[key] = value

    path = _rewrite(src, tmp_path / "near.npz", mutate)
    try:
        structsvm.load(path)
    except ModelFileError as exc:
        assert "near.npz" in str(exc)


def test_sequence_model_round_trip_and_missing_folder(tmp_path):
    X = [["the", "dog", "runs"], ["a", "cat", "sleeps"]] * 3
    Y = [["D", "N", "V"]] * 6
    model = structsvm.fit(X, Y, feature_map=SequenceFeatures(), max_iter=5)
    again = structsvm.load(model.save(tmp_path / "seq.npz"))
    assert again.predict(X) == model.predict(X)
    with pytest.raises(FileNotFoundError, match="folder .*missing.* does not exist"):
        model.save(tmp_path / "missing" / "m.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seq.npz"]


def test_a_saved_model_file_has_the_users_file_mode(tmp_path):
    """A model file is created like any new file of the user's (0666 less the
    umask), not private to its owner as a temporary file would be."""
    import os
    import stat

    from structsvm.io import write_model_file

    old = os.umask(0o022)
    try:
        path = write_model_file(tmp_path / "m.npz", {"w": {"__array__": "w"}},
                                {"w": np.ones(2)})
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no temporary left


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    with pytest.raises(sio.ModelFileError, match="not a regular file"):
        structsvm.load(fifo)


# ------------------------------------------------------------------ archive members
def _stream_zeros(path, members, name, n_bytes, header=b""):
    """``members`` plus ``name``: ``header`` then ``n_bytes`` zeros, deflated while
    written (the file stays small; the member declares its full size)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        with zf.open(name, "w", force_zip64=True) as fp:
            fp.write(header)
            chunk = bytes(1 << 22)
            for _ in range(n_bytes // len(chunk)):
                fp.write(chunk)
    return path


def _load_peak(path, **kw):
    """The error of ``structsvm.load(path)`` and the peak memory traced meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError) as err:
            structsvm.load(path, **kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return str(err.value), peak


def test_unlisted_member_of_400_mb_zeros_is_refused_before_inflating(saved, tmp_path):
    _, src, _ = saved
    size = 400 << 20
    bad = _stream_zeros(tmp_path / "stowaway.npz", _members(src), "junk.npy", size,
                        _raw_npy_header((size // 8,), "<f8"))
    assert bad.stat().st_size < 4 << 20
    msg, peak = _load_peak(bad)
    assert "stowaway.npz" in msg and "does not list ['junk']" in msg
    assert peak < 50 << 20, f"peak {peak / 2**20:.0f} MiB while refusing the member"


def test_missing_and_extra_arrays_are_named(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    extra = {**members, "extra.npy": members[coef]}
    msg, _ = _load_peak(_write(tmp_path / "extra.npz", extra))
    assert "arrays missing or extra" in msg and "['extra']" in msg
    missing = {n: v for n, v in members.items() if n != coef}
    msg, _ = _load_peak(_write(tmp_path / "missing.npz", missing))
    assert "arrays missing or extra: the archive lacks" in msg and repr(coef[:-4]) in msg


def test_header_is_checked_before_any_array(saved, tmp_path):
    _, src, _ = saved
    edited = _rewrite(src, tmp_path / "edited.npz",
                      lambda meta: meta.update(C=2.0), rehash=False)
    members = _members(edited)
    coef = next(n for n in members if "coef" in n)
    members[coef] = _raw_npy_header((3,), "<f8") + bytes(16)  # a broken array too
    msg, _ = _load_peak(_write(tmp_path / "edited.npz", members))
    assert "header's checksum differs" in msg


def test_arrays_larger_in_total_than_the_limit_are_refused(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    members.update({f"x{i}.npy": _npy(np.zeros(100_000 // 8)) for i in range(3)})
    bad = _write(tmp_path / "heavy.npz", members)
    msg, _ = _load_peak(bad, max_bytes=150_000)
    assert "heavy.npz: the arrays declare" in msg and "limit of 150000" in msg


def test_too_many_members_are_refused(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    members.update({f"x{i}.npy": b"" for i in range(10_000)})
    msg, _ = _load_peak(_write(tmp_path / "crowd.npz", members))
    assert "crowd.npz: the archive has 10002 members, more than the limit" in msg


def test_duplicate_member_names_are_refused(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    path = _write(tmp_path / "twice.npz", members)
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(coef, members[coef])
    msg, _ = _load_peak(path)
    assert "twice.npz: the archive has duplicate members" in msg


@pytest.mark.parametrize("odd", ["{}", "{}.npy.txt", "sub/{}.npy", "../{}.npy",
                                 "..\\{}.npy", "/{}.npy", ".npy"])
def test_odd_member_names_are_refused(saved, tmp_path, odd):
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    members[odd.format(coef[:-4])] = members.pop(coef)
    msg, _ = _load_peak(_write(tmp_path / "odd.npz", members))
    assert "odd.npz: unexpected archive member" in msg


@pytest.mark.parametrize("version", [b"\x04\x00", b"\x00\x05"])
def test_npy_versions_other_than_1_to_3_are_refused(saved, tmp_path, version):
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    data = members[coef]
    members[coef] = data[:6] + version + data[8:]
    msg, _ = _load_peak(_write(tmp_path / "future.npz", members))
    assert "future.npz: array" in msg and f"has .npy version {tuple(version)}" in msg


def test_max_bytes_refuses_a_normal_model_below_its_size(saved, tmp_path):
    model, src, X = saved
    msg, _ = _load_peak(src, max_bytes=8)
    assert "more than the limit of 8" in msg
    nbytes = model.coef_.nbytes
    _same_model(model, structsvm.load(src, max_bytes=nbytes), X)
    msg, _ = _load_peak(src, max_bytes=nbytes - 1)
    assert f"more than the limit of {nbytes - 1}" in msg


# ------------------------------------------------------------------ declared dtypes and shapes
def test_header_records_each_arrays_dtype_and_shape(saved):
    model, src, _ = saved
    meta, arrays = sio.read_model_file(src)
    assert set(meta["arrays"]) == set(arrays)
    for name, arr in arrays.items():
        assert meta["arrays"][name] == {"dtype": arr.dtype.str, "shape": list(arr.shape)}


def test_member_larger_than_its_declared_shape_is_refused_before_inflating(saved, tmp_path):
    _, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    size = 256 << 20
    del members[coef]
    bad = _stream_zeros(tmp_path / "swollen.npz", members, coef, size,
                        _raw_npy_header((size // 8,), "<f8"))
    msg, peak = _load_peak(bad)
    assert "swollen.npz: member" in msg and "the header's dtype float64 and shape" in msg
    assert peak < 50 << 20, f"peak {peak / 2**20:.0f} MiB while refusing the member"


def test_member_of_another_dtype_or_shape_is_refused(saved, tmp_path):
    model, src, _ = saved
    members = _members(src)
    coef = next(n for n in members if "coef" in n)
    for arr in [model.coef_.view("<i8"), model.coef_.reshape(1, -1)]:
        members[coef] = _npy(arr)
        msg, _ = _load_peak(_write(tmp_path / "changed.npz", members))
        assert f"changed.npz: array {coef} has dtype {arr.dtype}" in msg
        assert "the header declares float64" in msg


def test_file_without_the_dtype_and_shape_record_loads(saved, tmp_path):
    model, src, X = saved
    old = _rewrite(src, tmp_path / "old.npz", lambda meta: meta.pop("arrays"))
    _same_model(model, structsvm.load(old), X)


@pytest.mark.parametrize("record", [{}, {"a0_coef_": {"dtype": "O", "shape": [6]}},
                                    {"a0_coef_": {"dtype": "<f8", "shape": [-1]}},
                                    {"a0_coef_": {"dtype": "<f8"}}, [1]])
def test_damaged_dtype_and_shape_record_is_refused(saved, tmp_path, record):
    _, src, _ = saved
    bad = _rewrite(src, tmp_path / "record.npz", lambda meta: meta.update(arrays=record))
    msg, _ = _load_peak(bad)
    assert "record.npz: damaged model header" in msg
