"""Object (and str) arrays in model files: every shape loads back exactly (shape, dtype,
element types and values), files written before the items were stored in C order
still load, and a header declaring an impossible array is refused with a message
saying why, before numpy is asked to build it."""
import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import structsvm
from structsvm import io as sio
from structsvm.io._format import _MAX_NDIM, MAX_DEPTH, ValueDecoder, ValueEncoder
from structsvm.structures import MulticlassFeatures
from structsvm.io import ModelFileError


def _obj(nested, shape):
    """An object array of ``shape`` whose items, in C order, are ``nested`` (a flat list:
    numpy would otherwise turn equal-length tuples or lists into dimensions)."""
    out = np.empty(len(nested), dtype=object)
    for i, v in enumerate(nested):
        out[i] = v
    return out.reshape(shape)


def _same(a, b):
    """``a`` and ``b`` equal element by element, with the same types, shapes, dtypes."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray):
        assert (a.shape, a.dtype) == (b.shape, b.dtype), (a, b)
        if a.dtype == object:
            for idx in np.ndindex(a.shape):
                _same(a[idx], b[idx])
        else:
            np.testing.assert_array_equal(a, b)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b, (a, b)


def _round_trip(value):
    """``value`` through the header codec and JSON text, as a model file stores it."""
    enc = ValueEncoder(allowed={})
    text = json.dumps(enc(value, "value"))
    return json.loads(text), ValueDecoder(enc.arrays, {}, decoders=lambda n: n)(json.loads(text))


def _decode(header):
    return ValueDecoder({}, {}, decoders=lambda n: n)(header, "value")


VALUES = {
    "(n, 2) of tuples and strings": _obj([("a", 1), "first", ("b", 2), "second",
                                          ("c", 3), "third"], (3, 2)),
    "(2, 2) of str": np.array([["x", "y"], ["z", "w"]], dtype=object),
    "0-d holding a tuple": _obj([("x", 1)], ()),
    "0-d holding a str": _obj(["abc"], ()),
    "0-d holding an int": _obj([5], ()),
    "0-d holding None": _obj([None], ()),
    "empty (0, 3)": np.empty((0, 3), dtype=object),
    "empty (3, 0)": np.empty((3, 0), dtype=object),
    "empty (0,)": np.empty(0, dtype=object),
    "None, mixed str and int": _obj([None, "a", 1, 2.5, True, "b", None, 3], (2, 2, 2)),
    "lists of equal length": _obj([[1, 2], [3, 4]], (2,)),
    "lists in 2-D": _obj([["a"], [], [1, [2, [3]]], "s"], (2, 2)),
    "nested object arrays": _obj([_obj(["a", ("b", 1), None, 4], (2, 2)),
                                  _obj([_obj([7], ())], (1,)), "plain",
                                  np.empty((0, 2), dtype=object)], (2, 2)),
    "numeric arrays inside": _obj([np.arange(6.0).reshape(2, 3), "x"], (1, 2)),
    "not contiguous": _obj(list(range(12)), (3, 4))[::2, ::-1],
    "Fortran order": np.asfortranarray(_obj(list("abcdef"), (2, 3))),
    "dicts and tuples": _obj([{"k": (1, 2)}, {3: "v"}, (None,), ()], (2, 2)),
    "str array (2, 3)": np.array([["ab", "c", ""], ["d", "efg", "h"]]),
    "str array 0-d": np.array("word"),
    "str array wider than its items": np.array(["a", "b"], dtype="<U7").reshape(2, 1),
    "str array (0, 2)": np.empty((0, 2), dtype="<U3"),
}


@pytest.mark.parametrize("name", list(VALUES))
def test_object_arrays_of_every_shape_round_trip_exactly(name):
    value = VALUES[name]
    _, back = _round_trip({"v": value, "in a tuple": (value, 1)})
    _same(back["v"], value)
    _same(back["in a tuple"], (value, 1))


_SCALARS = st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=3) \
    | st.floats(allow_nan=False, width=32)
_ITEMS = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.lists(inner, max_size=3).map(tuple), max_leaves=6)


@settings(max_examples=80)
@given(shape=st.lists(st.integers(0, 3), max_size=3), data=st.data())
def test_random_object_arrays_round_trip_exactly(shape, data):
    items = data.draw(st.lists(_ITEMS, min_size=int(np.prod(shape)),
                               max_size=int(np.prod(shape))))
    value = _obj(items, tuple(shape))
    _same(_round_trip(value)[1], value)


def test_the_items_are_stored_in_c_order_with_the_shape():
    """The header form, written out: the items in C order, whatever the array's memory
    layout, with its shape and ``"order": "C"``; str arrays also record their dtype."""
    arr = np.asfortranarray(_obj([1, "a", None, ("t", 2)], (2, 2)))
    text, _ = _round_trip(arr)
    assert text == {"__objarray__": [1, "a", None, {"__tuple__": ["t", 2]}],
                    "shape": [2, 2], "order": "C"}
    text, _ = _round_trip(_obj(["abc"], ()))
    assert text == {"__objarray__": ["abc"], "shape": [], "order": "C"}
    text, _ = _round_trip(np.array([["a"], ["bc"]]))
    assert text == {"__objarray__": ["a", "bc"], "shape": [2, 1], "order": "C",
                    "dtype": "<U2"}


# ------------------------------------------------------------ files written earlier
@pytest.mark.parametrize("header, expected", [
    # 1-D: a plain list of the items, with the shape; no "order"
    ({"__objarray__": ["a", {"__tuple__": ["b", 2]}, None, 3], "shape": [4]},
     _obj(["a", ("b", 2), None, 3], (4,))),
    ({"__objarray__": [[1, 2], [3, 4]], "shape": [2]}, _obj([[1, 2], [3, 4]], (2,))),
    ({"__objarray__": [], "shape": [0]}, np.empty(0, dtype=object)),
    # more dimensions: the items nested as tolist() nests them
    ({"__objarray__": [[{"__tuple__": ["a", 1]}, "x"], ["c", None]], "shape": [2, 2]},
     _obj([("a", 1), "x", "c", None], (2, 2))),
    ({"__objarray__": [[["p", "q"]], [["r"]]], "shape": [2, 1]},
     _obj([["p", "q"], ["r"]], (2, 1))),
    ({"__objarray__": [[], []], "shape": [2, 0]}, np.empty((2, 0), dtype=object)),
])
def test_object_arrays_in_the_earlier_layout_still_load(header, expected):
    _same(_decode(header), expected)


def test_an_earlier_0d_object_array_is_refused_not_guessed():
    # the earlier writer iterated over the item itself: "abc" was stored as its letters
    with pytest.raises(ModelFileError, match="0-d object array written by a structsvm "
                                             "that did not keep its item"):
        _decode({"__objarray__": ["a", "b", "c"], "shape": []})


# ------------------------------------------------------------ public save / load
class TableFeatures(MulticlassFeatures):
    """Multiclass features with an object-array parameter ``table`` and an
    object-array fitted attribute ``label_table_`` of shape (n_classes, 2)."""

    def __init__(self, attributes=None, classes=None, bias=0.0, table=None):
        super().__init__(attributes=attributes, classes=classes, bias=bias)
        self.table = table

    def fit(self, X, Y):
        super().fit(X, Y)
        self.label_table_ = _obj([v for c in self.classes_ for v in (c, repr(c))],
                                 (len(self.classes_), 2))
        return self

    def fitted_state(self):
        return {**super().fitted_state(), "label_table_": self.label_table_}

    def load_fitted_state(self, state):
        state = dict(state)
        self.label_table_ = state.pop("label_table_")
        return super().load_fitted_state(state)


@pytest.fixture
def table_features():
    sio.register_model_class(TableFeatures)
    yield TableFeatures
    sio._REGISTERED.pop(sio.class_key(TableFeatures))


def _tuple_blobs(n=12):
    rng = np.random.default_rng(0)
    X = [rng.normal(size=3) + (2 if i % 2 else -2) for i in range(n)]
    return X, [("a", 1) if i % 2 else ("b", 2) for i in range(n)]


@pytest.mark.parametrize("name", ["(n, 2) of tuples and strings", "0-d holding a tuple",
                                  "empty (0, 3)", "nested object arrays",
                                  "None, mixed str and int", "str array (2, 3)"])
def test_a_feature_map_with_object_arrays_saves_and_loads_exactly(table_features,
                                                                  tmp_path, name):
    X, Y = _tuple_blobs()
    model = structsvm.fit(X, Y, feature_map=TableFeatures(table=VALUES[name]))
    back = structsvm.load(model.save(tmp_path / "m.npz"))
    assert type(back.feature_map_) is TableFeatures
    _same(back.feature_map.table, VALUES[name])
    _same(back.feature_map_.table, VALUES[name])
    _same(back.feature_map_.label_table_, model.feature_map_.label_table_)
    assert back.feature_map_.label_table_.shape == (2, 2)
    _same(back.feature_map_.classes_, model.feature_map_.classes_)
    np.testing.assert_array_equal(back.coef_, model.coef_)
    assert back.predict(X) == model.predict(X) and ("a", 1) in back.predict(X)


# ------------------------------------------------------------ hostile headers
def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, Y = _tuple_blobs()
    model = structsvm.fit(X, Y, C=1.0)
    path = tmp_path_factory.mktemp("models") / "model.npz"
    model.save(path)
    return model, path, X


def _with_classes(src, dst, entry):
    """A copy of the model file ``src`` whose feature map's ``classes_`` entry is
    ``entry`` (a JSON value), the header's checksum recomputed (an attacker's file)."""
    members = _members(src)
    meta = json.loads(np.load(io.BytesIO(members["__meta__.npy"])).tobytes())
    meta["feature_map_state"]["classes_"] = entry
    meta["sha256"]["__header__"] = sio._header_digest(meta)
    blob = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    members["__meta__.npy"] = _npy(blob)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return dst


def test_the_saved_classes_are_an_object_array_in_c_order(saved):
    model, src, _ = saved
    members = _members(src)
    meta = json.loads(np.load(io.BytesIO(members["__meta__.npy"])).tobytes())
    assert meta["feature_map_state"]["classes_"] == {
        "__objarray__": [{"__tuple__": ["a", 1]}, {"__tuple__": ["b", 2]}],
        "shape": [2], "order": "C"}


def test_a_file_written_before_the_order_key_still_loads(saved, tmp_path):
    """The 1-D form without ``"order"`` (what every earlier model file holds) loads to
    the same model."""
    model, src, X = saved
    old = {"__objarray__": [{"__tuple__": ["a", 1]}, {"__tuple__": ["b", 2]}],
           "shape": [2]}
    back = structsvm.load(_with_classes(src, tmp_path / "old.npz", old))
    _same(back.feature_map_.classes_, model.feature_map_.classes_)
    assert back.predict(X) == model.predict(X)


def _deep(depth):
    value = "x"
    for _ in range(depth):
        value = [value]
    return value


A, B = {"__tuple__": ["a", 1]}, {"__tuple__": ["b", 2]}
HOSTILE = {
    "items that are not a list": (
        {"__objarray__": "ab", "shape": [2], "order": "C"},
        r"damaged object array \(its items are a str, not a list\)"),
    "more items than the shape": (
        {"__objarray__": [A, B, A], "shape": [2], "order": "C"},
        r"declares shape \[2\] \(2 items\) but holds 3 items"),
    "fewer items than the shape": (
        {"__objarray__": [A, B], "shape": [2, 2], "order": "C"},
        r"declares shape \[2, 2\] \(4 items\) but holds 2 items"),
    "a negative dimension": (
        {"__objarray__": [A, B], "shape": [-1, 2], "order": "C"},
        r"declares shape \[-1, 2\]; expected a list of at most 32 integers"),
    "an absurd dimension": (
        {"__objarray__": [], "shape": [0, 2 ** 62], "order": "C"},
        r"declares shape \[0, 4611686018427387904\]; expected a list of at most 32 "
        r"integers from 0 to 67108864"),
    "too many dimensions": (
        {"__objarray__": [A], "shape": [1] * 65, "order": "C"},
        r"expected a list of at most 32 integers"),
    "dimensions that are not ints": (
        {"__objarray__": [A, B], "shape": [2.0], "order": "C"}, r"declares shape \[2\.0\]"),
    "a product that overflows 64 bits": (
        {"__objarray__": [], "shape": [2 ** 26] * 3 + [0], "order": "C"},
        r"302231454903657293676544 items \(without its zero dimensions\), more than a "
        r"model header can hold"),
    "deeply nested lists": (
        {"__objarray__": [_deep(600), B], "shape": [2], "order": "C"},
        rf"nests values deeper than {MAX_DEPTH} levels"),
    "earlier layout, nesting unlike the shape": (
        {"__objarray__": [A, B], "shape": [2, 1]},
        r"its nested lists do not match its shape \[2, 1\]"),
    "an order other than C": (
        {"__objarray__": [A, B], "shape": [2], "order": "F"}, r"object array order 'F'"),
    "a str array holding a longer string": (
        {"__objarray__": ["a", "bcd"], "shape": [2], "order": "C", "dtype": "<U2"},
        r"a str array of dtype <U2 holds 'bcd', not a string of at most 2 characters"),
    "a str array holding a number": (
        {"__objarray__": ["a", 7], "shape": [2], "order": "C", "dtype": "<U2"},
        r"a str array of dtype <U2 holds 7, not a string"),
    "a str array of an absurd width": (
        {"__objarray__": ["a"], "shape": [1], "order": "C", "dtype": "<U100000000"},
        r"declares dtype <U100000000 for 1 items, more characters than"),
    "a dtype other than str": (
        {"__objarray__": ["a"], "shape": [1], "order": "C", "dtype": "|O"},
        r"declares dtype '\|O'; model files hold str arrays"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_an_impossible_object_array_is_refused_with_the_reason(saved, tmp_path, name):
    _, src, _ = saved
    entry, reason = HOSTILE[name]
    bad = _with_classes(src, tmp_path / "bad.npz", entry)
    with pytest.raises(ModelFileError, match=r"bad\.npz: feature_map_\.classes_.*"
                                             + reason):
        structsvm.load(bad)


def test_saving_values_nested_too_deep_is_refused_naming_them():
    with pytest.raises(ValueError, match=rf"Cannot save the model: table nests values "
                                         rf"deeper than {MAX_DEPTH} levels"):
        ValueEncoder(allowed={})(_obj([_deep(5000)], (1,)), "table")
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="is a list holding itself"):
        ValueEncoder(allowed={})(loop, "table")
    # the deepest nesting allowed is written and read back; one level more is not
    for value in (_deep(MAX_DEPTH), _obj([_deep(MAX_DEPTH - 1)], (1,))):
        _same(_round_trip(value)[1], value)
    with pytest.raises(ValueError, match=f"deeper than {MAX_DEPTH} levels"):
        ValueEncoder(allowed={})(_deep(MAX_DEPTH + 1), "table")
    with pytest.raises(ModelFileError, match=f"deeper than {MAX_DEPTH} levels"):
        _decode(_deep(MAX_DEPTH + 1))


def test_the_format_page_states_the_limits_the_reader_applies():
    doc = " ".join(sio.__doc__.split())
    assert f"nested more than {MAX_DEPTH} levels deep" in doc
    assert f"a list of at most {_MAX_NDIM} integers" in doc
    assert '"order": "C"' in doc and '"dtype": "<U5"' in doc
