"""Tests for quiver.interop: the C data interface both ways, checked against pyarrow."""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import decimal
import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.array.base import Array
from quiver.errors import ArrowInvalid, ArrowTypeError, NotSupported
from quiver.interop import cdata as c
from quiver.interop import (
    export_array,
    export_schema,
    import_array,
    import_field,
    import_schema,
    import_type,
    live_exports,
)


class Wrap:
    """A protocol-speaking wrapper, so tests do not depend on the classes' own methods."""

    def __init__(self, obj):
        self.obj = obj

    def __arrow_c_array__(self, requested_schema=None):
        return export_array(self.obj, requested_schema)


def u8(values, dtype) -> np.ndarray:
    return np.asarray(values, dtype=dtype).view(np.uint8)


def bitmap(bits) -> np.ndarray:
    return np.packbits(np.asarray(bits, dtype=bool), bitorder="little")


class UuidLike(pa.ExtensionType):
    def __init__(self):
        super().__init__(pa.binary(4), "test.quiver.tag")

    def __arrow_ext_serialize__(self):
        return b"meta\x00data"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


@pytest.fixture(scope="module", autouse=True)
def _registered_extension():
    with contextlib.suppress(pa.ArrowKeyError):
        pa.register_extension_type(UuidLike())
    yield
    pa.unregister_extension_type("test.quiver.tag")


# --------------------------------------------------------------------------------------
# pyarrow arrays of every type


def _pa_arrays() -> dict[str, pa.Array]:
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5)
    long = "a string well past twelve bytes"
    struct = pa.array(
        [{"x": 1, "y": "a"}, None, {"x": 3, "y": None}],
        pa.struct([("x", pa.int32()), pa.field("y", pa.string(), metadata={"k": "v"})]),
    )
    arrays = {
        "null": pa.nulls(4),
        "bool": pa.array([True, None, False, True, True, False, None, True, False]),
        "int8": pa.array([1, None, -3], pa.int8()),
        "uint16": pa.array([1, None, 65535], pa.uint16()),
        "int32": pa.array([1, None, 3, 4], pa.int32()),
        "uint64": pa.array([1, 2**64 - 1, None], pa.uint64()),
        "int64": pa.array([1, None, 3, -4, 5]),
        "float16": pa.array(np.array([1.5, 2.0, -0.5], dtype=np.float16)),
        "float32": pa.array([1.5, None], pa.float32()),
        "float64": pa.array([1.5, None, float("inf")]),
        "decimal32": pa.array([decimal.Decimal("1.23"), None], pa.decimal32(5, 2)),
        "decimal64": pa.array([decimal.Decimal("1.23"), None], pa.decimal64(12, 2)),
        "decimal128": pa.array([decimal.Decimal("1.23"), None], pa.decimal128(20, 2)),
        "decimal256": pa.array([decimal.Decimal("-1.23"), None], pa.decimal256(40, 2)),
        "date32": pa.array([datetime.date(2024, 1, 2), None]),
        "date64": pa.array([datetime.date(2024, 1, 2), None], pa.date64()),
        "time32s": pa.array([1, None], pa.time32("s")),
        "time32ms": pa.array([1, None], pa.time32("ms")),
        "time64us": pa.array([1, None], pa.time64("us")),
        "time64ns": pa.array([1, None], pa.time64("ns")),
        "timestamp": pa.array([ts, None], pa.timestamp("us")),
        "timestamp_tz": pa.array([ts, None], pa.timestamp("ns", tz="Europe/Paris")),
        "duration": pa.array([5, None], pa.duration("ms")),
        "month_day_nano": pa.array(
            [pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval()
        ),
        "binary": pa.array([b"ab", None, b"", b"xyz"]),
        "large_binary": pa.array([b"ab", None, b"xyz"], pa.large_binary()),
        "string": pa.array(["ab", None, "", "héllo"]),
        "large_string": pa.array(["ab", None, "xyz"], pa.large_string()),
        "string_view": pa.array(["ab", None, long, "short", long + "!"], pa.string_view()),
        "binary_view": pa.array([b"ab", None, long.encode()], pa.binary_view()),
        "fixed_size_binary": pa.array([b"abc", None, b"xyz"], pa.binary(3)),
        "list": pa.array([[1, 2], None, [], [3]], pa.list_(pa.int32())),
        "large_list": pa.array([[1, 2], None, [3]], pa.large_list(pa.int8())),
        "list_view": pa.array([[1, 2], None, [], [3]], pa.list_view(pa.int32())),
        "large_list_view": pa.array([["a", "b"], None, ["c"]], pa.large_list_view(pa.string())),
        "fixed_size_list": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int16(), 2)),
        "struct": struct,
        "map": pa.array(
            [[("a", 1), ("b", None)], None, []], pa.map_(pa.string(), pa.int32())
        ),
        "map_sorted": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int32(), keys_sorted=True)),
        "sparse_union": pa.UnionArray.from_sparse(
            pa.array([0, 1, 0], pa.int8()),
            [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])],
            ["i", "s"],
        ),
        "dense_union": pa.UnionArray.from_dense(
            pa.array([5, 7, 5, 7], pa.int8()),
            pa.array([0, 0, 1, 1], pa.int32()),
            [pa.array([1, None]), pa.array(["a", "b"])],
            ["i", "s"],
            [5, 7],
        ),
        "dictionary": pa.array(["a", "b", None, "a"]).dictionary_encode(),
        "dictionary_ordered": pa.DictionaryArray.from_arrays(
            pa.array([0, 1, 1], pa.int16()), pa.array(["x", "y"]), ordered=True
        ),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array([2, 5, 6], pa.int32()), pa.array(["a", None, "c"])
        ),
        "ree_int64": pa.RunEndEncodedArray.from_arrays(
            pa.array([1, 3], pa.int64()), pa.array([1.5, 2.5])
        ),
        "uuid": pa.ExtensionArray.from_storage(
            pa.uuid(), pa.array([b"0123456789abcdef", None], pa.binary(16))
        ),
        "custom_extension": pa.ExtensionArray.from_storage(
            UuidLike(), pa.array([b"abcd", None, b"wxyz"], pa.binary(4))
        ),
        "nested": pa.array(
            [[{"k": "a", "v": [1.0]}], None, [{"k": None, "v": None}, {"k": "c", "v": []}]],
            pa.list_(pa.struct([("k", pa.string()), ("v", pa.list_(pa.float64()))])),
        ),
        "list_of_dictionary": pa.ListArray.from_arrays(
            pa.array([0, 2, 3], pa.int32()), pa.array(["p", "q", "p"]).dictionary_encode()
        ),
        "empty_string": pa.array([], pa.string()),
        "empty_list": pa.array([], pa.list_(pa.int64())),
    }
    return arrays


PA_ARRAYS = _pa_arrays()


def _cases():
    for name, arr in PA_ARRAYS.items():
        yield pytest.param(arr, id=name)
        if len(arr) >= 2:
            yield pytest.param(arr.slice(1), id=name + "-sliced")
        if len(arr) >= 3:
            yield pytest.param(arr.slice(1, len(arr) - 2), id=name + "-middle")


@pytest.mark.parametrize("arr", list(_cases()))
def test_pyarrow_array_round_trips_through_quiver_unchanged(arr):
    q = import_array(arr)
    assert isinstance(q, Array)
    assert len(q) == len(arr)
    assert q.offset == arr.offset
    back = pa.array(Wrap(q))
    assert back.type == arr.type
    back.validate(full=True)
    assert back.equals(arr)
    assert back.to_pylist() == arr.to_pylist()


@pytest.mark.parametrize("arr", list(_cases()))
def test_imported_type_matches_imported_schema(arr):
    q = import_array(arr)
    assert q.type == import_type(arr.type)


def test_imported_buffers_view_producer_memory():
    arr = pa.array(["ab", None, "cde"])
    q = import_array(arr)
    pa_bufs = arr.buffers()
    for mine, theirs in zip(q.buffers, pa_bufs):
        assert mine.__array_interface__["data"][0] == theirs.address
        assert not mine.flags.writeable
    # never longer than the layout: 3 offsets + 1, 5 data bytes, 1 validity byte
    assert [b.size for b in q.buffers] == [1, 16, 5]


def test_view_import_uses_variadic_sizes_buffer():
    long = "x" * 40
    arr = pa.array(["a", long, None, long + "y"], pa.string_view())
    q = import_array(arr)
    data = q.buffers[2:]
    assert sum(b.size for b in data) == sum(b.size for b in arr.buffers()[2:])
    assert q.type == qv.string_view()


# --------------------------------------------------------------------------------------
# types and schemas


TYPES = [
    qv.null(), qv.bool_(), qv.int8(), qv.uint64(), qv.float16(), qv.decimal32(5, 2),
    qv.decimal64(10, 3), qv.decimal128(38, 10), qv.decimal256(76, -2), qv.date32(),
    qv.date64(), qv.time32("s"), qv.time64("ns"), qv.timestamp("s"),
    qv.timestamp("us", "America/New_York"), qv.duration("ns"), qv.month_interval(),
    qv.day_time_interval(), qv.month_day_nano_interval(), qv.binary(), qv.large_binary(),
    qv.string(), qv.large_string(), qv.string_view(), qv.binary_view(),
    qv.fixed_size_binary(7), qv.list_(qv.int32()), qv.large_list(qv.string()),
    qv.list_view(qv.int8()), qv.large_list_view(qv.int8()), qv.fixed_size_list(qv.int8(), 3),
    qv.struct([qv.field("a", qv.int8(), nullable=False, metadata={"m": "1"}),
               qv.field("b", qv.string())]),
    qv.map_(qv.string(), qv.int64()), qv.map_(qv.int32(), qv.string(), keys_sorted=True),
    qv.sparse_union([qv.field("a", qv.int8()), qv.field("b", qv.string())], [3, 9]),
    qv.dense_union([qv.field("a", qv.int8())]),
    qv.dictionary(qv.int32(), qv.string()), qv.dictionary(qv.uint8(), qv.int64(), True),
    qv.run_end_encoded(qv.int16(), qv.float64()), qv.uuid(),
    qv.extension("my.ext", qv.struct([("x", qv.int8())]), b"\x00\x01"),
]


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_type_round_trips_through_capsule_unchanged(dtype):
    f = import_field(export_schema(dtype))
    assert f.type == dtype
    assert f.name == ""


@pytest.mark.parametrize("dtype", [d for d in TYPES if not isinstance(d, qv.ExtensionType)],
                         ids=str)
def test_type_round_trips_through_pyarrow(dtype):
    p = pa.field(qv.field("f", dtype, nullable=False, metadata={"a": "b"}))
    assert p.name == "f" and not p.nullable and p.metadata == {b"a": b"b"}
    assert import_field(p) == qv.field("f", dtype, nullable=False, metadata={"a": "b"})


def test_extension_travels_as_storage_plus_metadata():
    dtype = qv.extension("my.ext", qv.int32(), b"params")
    p = pa.field(qv.field("e", dtype, metadata={"own": "1"}))
    # pyarrow does not know my.ext, so it keeps the storage type and the metadata keys
    assert p.type == pa.int32()
    assert p.metadata == {
        b"own": b"1",
        b"ARROW:extension:name": b"my.ext",
        b"ARROW:extension:metadata": b"params",
    }
    back = import_field(p)
    assert back.type == dtype
    assert back.metadata == qv.KeyValueMetadata({"own": "1"})


def test_registered_pyarrow_extension_is_recognised_on_both_sides():
    q = import_type(UuidLike())
    assert q == qv.extension("test.quiver.tag", qv.binary(4), b"meta\x00data")
    assert pa.field(qv.field("t", q)).type == UuidLike()


def test_schema_metadata_and_flags_cross_both_ways():
    p = pa.schema(
        [pa.field("a", pa.int32(), nullable=False, metadata={"x": "y"}),
         pa.field("d", pa.dictionary(pa.int8(), pa.string(), ordered=True))],
        metadata={"k": "v", "empty": ""},
    )
    q = import_schema(p)
    assert q.names == ["a", "d"]
    assert q.field("a").nullable is False
    assert q.field("a").metadata == qv.KeyValueMetadata({"x": "y"})
    assert q.field("d").type == qv.dictionary(qv.int8(), qv.string(), ordered=True)
    assert q.metadata == qv.KeyValueMetadata([("k", "v"), ("empty", "")])
    assert pa.schema(q).equals(p, check_metadata=True)


def test_metadata_encoding_round_trips_binary_and_duplicates():
    pairs = [(b"k", b"\x00\x01"), (b"k", b"two"), (b"", b"")]
    raw = c.encode_metadata(pairs)
    buf = np.frombuffer(raw, np.uint8)
    assert c.decode_metadata(buf.__array_interface__["data"][0]) == pairs
    assert c.encode_metadata([]) is None


def test_dunders_are_attached_to_types_fields_and_schemas():
    sch = qv.schema([qv.field("a", qv.list_(qv.int8()))])
    assert pa.schema(sch) == pa.schema([("a", pa.list_(pa.int8()))])
    assert pa.field(qv.field("z", qv.int8())) == pa.field("z", pa.int8())
    assert pa.DataType._import_from_c_capsule(qv.int64().__arrow_c_schema__()) == pa.int64()


def test_unknown_format_string_is_not_supported():
    with pytest.raises(NotSupported, match="'q'"):
        c.parse_format(b"q", [], "col")


def test_malformed_format_strings_raise_invalid_with_path():
    with pytest.raises(ArrowInvalid, match="d:precision"):
        c.parse_format(b"d:1", [], "col")
    with pytest.raises(ArrowInvalid, match="comma-separated integers"):
        c.parse_format(b"w:x", [], "col")
    with pytest.raises(ArrowInvalid, match="expected 1 child") as info:
        c.parse_format(b"+l", [], "a.b")
    assert info.value.field_path == "a.b"
    with pytest.raises(ArrowInvalid, match="precision"):
        c.parse_format(b"d:99,2,32", [], "col")


def test_import_rejects_objects_without_the_protocol():
    with pytest.raises(ArrowTypeError, match="__arrow_c_schema__"):
        import_field(42)
    with pytest.raises(ArrowTypeError, match="__arrow_c_array__"):
        import_array("nope")
    with pytest.raises(ArrowTypeError, match="__arrow_c_array__"):
        import_array((1, 2))  # a tuple of values is not a capsule pair


def test_import_rejects_capsule_with_wrong_name():
    schema_capsule = export_schema(qv.int8())
    with pytest.raises(ArrowTypeError, match="arrow_array"):
        import_array((schema_capsule, export_schema(qv.int8())))


def test_capsule_cannot_be_imported_twice():
    schema_capsule, array_capsule = pa.array([1, 2]).__arrow_c_array__()
    import_array((schema_capsule, array_capsule))
    schema2, _ = pa.array([1]).__arrow_c_array__()
    with pytest.raises(ArrowInvalid, match="released"):
        import_array((schema2, array_capsule))


# --------------------------------------------------------------------------------------
# quiver-built arrays -> pyarrow -> quiver


def _quiver_arrays() -> dict[str, tuple[Array, pa.Array]]:
    i64 = make_array(
        qv.int64(), 4, [bitmap([1, 0, 1, 1]), u8([10, 0, 30, 40], "<i8")], null_count=1
    )
    strings = make_array(
        qv.string(), 3, [None, u8([0, 2, 2, 7], "<i4"), np.frombuffer(b"abhello", np.uint8)]
    )
    boolean = make_array(qv.bool_(), 5, [None, bitmap([1, 0, 1, 1, 0])], offset=0)
    lst = make_array(
        qv.list_(qv.int32()), 3, [bitmap([1, 0, 1]), u8([0, 2, 2, 3], "<i4")],
        [make_array(qv.int32(), 3, [None, u8([1, 2, 3], "<i4")])],
    )
    struct_type = qv.struct([qv.field("a", qv.int8()), qv.field("b", qv.string())])
    struct = make_array(
        struct_type, 2, [None],
        [make_array(qv.int8(), 2, [None, u8([5, 6], "i1")]),
         make_array(qv.string(), 2, [None, u8([0, 1, 2], "<i4"), np.frombuffer(b"xy", np.uint8)])],
    )
    dictionary = make_array(
        qv.dictionary(qv.int8(), qv.string()), 3, [None, u8([1, 0, 1], "i1")],
        dictionary=make_array(
            qv.string(), 2, [None, u8([0, 1, 3], "<i4"), np.frombuffer(b"pqr", np.uint8)]
        ),
    )
    long = b"abcdefghijklmnopqrstuvwxyz"
    views = np.zeros(2, dtype=[("len", "<i4"), ("rest", "V12")])
    view_bytes = bytearray(32)
    view_bytes[0:4] = (2).to_bytes(4, "little")
    view_bytes[4:6] = b"hi"
    view_bytes[16:20] = (26).to_bytes(4, "little")
    view_bytes[20:24] = long[:4]
    view_bytes[24:28] = (0).to_bytes(4, "little")
    view_bytes[28:32] = (0).to_bytes(4, "little")
    del views
    sview = make_array(
        qv.string_view(), 2,
        [None, np.frombuffer(bytes(view_bytes), np.uint8), np.frombuffer(long, np.uint8)],
    )
    ree = make_array(
        qv.run_end_encoded(qv.int32(), qv.int64()), 5, [],
        [make_array(qv.int32(), 2, [None, u8([2, 5], "<i4")]),
         make_array(qv.int64(), 2, [None, u8([7, 8], "<i8")])],
    )
    dense = make_array(
        qv.dense_union([qv.field("i", qv.int64()), qv.field("s", qv.string())]), 3,
        [u8([0, 1, 0], "i1"), u8([0, 0, 1], "<i4")],
        [make_array(qv.int64(), 2, [None, u8([1, 2], "<i8")]),
         make_array(qv.string(), 1, [None, u8([0, 1], "<i4"), np.frombuffer(b"z", np.uint8)])],
    )
    null = make_array(qv.null(), 3, [])
    ext = make_array(
        qv.extension("test.quiver.tag", qv.binary(4), b"meta\x00data"), 1,
        [None, np.frombuffer(b"wxyz", np.uint8)],
    )
    sliced = i64.slice(1, 3)
    expected = {
        "int64": (i64, pa.array([10, None, 30, 40])),
        "int64_sliced": (sliced, pa.array([None, 30, 40])),
        "string": (strings, pa.array(["ab", "", "hello"])),
        "bool": (boolean, pa.array([True, False, True, True, False])),
        "list": (lst, pa.array([[1, 2], None, [3]], pa.list_(pa.int32()))),
        "struct": (struct, pa.array([{"a": 5, "b": "x"}, {"a": 6, "b": "y"}],
                                    pa.struct([("a", pa.int8()), ("b", pa.string())]))),
        "dictionary": (dictionary, pa.DictionaryArray.from_arrays(
            pa.array([1, 0, 1], pa.int8()), pa.array(["p", "qr"]))),
        "string_view": (sview, pa.array(["hi", long.decode()], pa.string_view())),
        "ree": (ree, pa.RunEndEncodedArray.from_arrays(pa.array([2, 5], pa.int32()),
                                                        pa.array([7, 8]))),
        "dense_union": (dense, pa.UnionArray.from_dense(
            pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
            [pa.array([1, 2]), pa.array(["z"])], ["i", "s"])),
        "null": (null, pa.nulls(3)),
        "extension": (ext, pa.ExtensionArray.from_storage(
            UuidLike(), pa.array([b"wxyz"], pa.binary(4)))),
    }
    return expected


def _same_memory(a: Array, b: Array) -> None:
    assert a.type == b.type
    assert len(a) == len(b) and a.offset == b.offset
    assert a.null_count == b.null_count
    for x, y in zip(a.buffers, b.buffers):
        if x is None or y is None:
            assert x is None or y is None
            continue
        assert y.size <= x.size
        if y.size:
            assert x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
    assert len(a.children) == len(b.children)
    for x, y in zip(a.children, b.children):
        _same_memory(x, y)
    assert (a.dictionary is None) == (b.dictionary is None)
    if a.dictionary is not None:
        _same_memory(a.dictionary, b.dictionary)


@pytest.mark.parametrize("name", list(_quiver_arrays()))
def test_quiver_array_exports_to_pyarrow_and_back_unchanged(name):
    q, expected = _quiver_arrays()[name]
    p = pa.array(Wrap(q))
    p.validate(full=True)
    assert p.type == expected.type
    assert p.equals(expected)
    back = import_array(p)
    _same_memory(q, back)


@pytest.mark.parametrize(
    "q",
    [
        make_array(qv.month_interval(), 2, [None, u8([3, 4], "<i4")]),
        make_array(qv.day_time_interval(), 2, [None, u8([1, 2, 3, 4], "<i4")]),
        make_array(qv.month_day_nano_interval(), 1, [None, u8([1, 2, 3, 0], "<i4")]),
    ],
    ids=str,
)
def test_interval_arrays_round_trip_through_capsules(q):
    # pyarrow has no Python array class for month and day-time intervals, so these go
    # quiver -> capsule -> quiver
    back = import_array(export_array(q))
    _same_memory(q, back)


def test_requested_schema_equal_to_the_type_is_honoured():
    q, _ = _quiver_arrays()["int64"]
    schema_capsule, _ = export_array(q, requested_schema=export_schema(qv.int64()))
    assert import_type(schema_capsule) == qv.int64()
    assert pa.array(q, type=pa.int64()).to_pylist() == [10, None, 30, 40]


def test_requested_other_representation_gets_the_data_schema():
    # the spec's best effort: same fields, other types -> the data's own schema
    q, _ = _quiver_arrays()["int64"]
    requested = export_schema(qv.int32())
    schema_capsule, _ = export_array(q, requested_schema=requested)
    assert import_type(schema_capsule) == qv.int64()
    # the request capsule stays the caller's: still readable after the call
    assert import_type(requested) == qv.int32()


def test_requested_schema_with_other_fields_is_not_supported():
    q, _ = _quiver_arrays()["struct"]
    other = qv.struct([qv.field("a", qv.int8()), qv.field("zzz", qv.string())])
    with pytest.raises(NotSupported, match="select or cast"):
        export_array(q, requested_schema=export_schema(other))


def test_array_dunder_is_attached():
    q, _ = _quiver_arrays()["string"]
    assert pa.array(q).to_pylist() == ["ab", "", "hello"]


# --------------------------------------------------------------------------------------
# zero copy and lifetimes


def test_five_million_int64_cross_both_ways_at_the_same_address():
    n = 5_000_000
    data = np.arange(n, dtype=np.int64)
    q = make_array(qv.int64(), n, [None, data.view(np.uint8)], null_count=0)
    p = pa.array(Wrap(q))
    address = data.__array_interface__["data"][0]
    assert p.buffers()[1].address == address
    back = import_array(p)
    assert back.buffers[1].__array_interface__["data"][0] == address

    source = pa.array(np.arange(n, dtype=np.int64))
    imported = import_array(source)
    assert imported.buffers[1].__array_interface__["data"][0] == source.buffers()[1].address
    again = pa.array(Wrap(imported))
    assert again.buffers()[1].address == source.buffers()[1].address


def test_exported_buffers_live_until_consumer_releases():
    data = np.arange(100, dtype=np.int64)
    q = make_array(qv.int64(), 100, [None, data.view(np.uint8)])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    p = pa.array(Wrap(q))
    del q
    gc.collect()
    assert ref() is not None  # pyarrow still holds it through private_data
    assert live_exports() > before
    del p
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_unconsumed_capsules_release_on_destruction():
    q = make_array(qv.int8(), 1, [None, u8([1], "i1")])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    capsules = export_array(q)
    del q
    assert ref() is not None
    del capsules
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_consumer_moving_children_keeps_them_alive_independently():
    child = make_array(qv.int32(), 2, [None, u8([1, 2], "<i4")])
    parent = make_array(qv.struct([qv.field("c", qv.int32())]), 2, [None], [child])
    ref = weakref.ref(child)
    gc.collect()
    before = live_exports()
    p = pa.array(Wrap(parent))
    del parent, child
    only_child = p.field(0)
    del p
    gc.collect()
    assert only_child.to_pylist() == [1, 2]
    del only_child
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_imported_producer_released_when_quiver_arrays_die():
    released = []
    source = pa.array(np.arange(10, dtype=np.int64))
    schema_capsule, array_capsule = source.__arrow_c_array__()
    q = import_array((schema_capsule, array_capsule))
    owner = q.buffers[1].base.owner
    original = c.ArrayRelease(ctypes.cast(owner.struct.release, ctypes.c_void_p).value)

    @c.ArrayRelease
    def spy(ptr):
        released.append(1)
        original(ptr)

    owner.struct.release = spy
    del owner
    view = q.buffers[1][8:16]
    del q
    gc.collect()
    assert released == []  # a slice of a buffer still views the memory
    assert int(view.view("<i8")[0]) == 1
    del view
    gc.collect()
    assert released == [1]


def test_export_loop_does_not_grow_memory():
    data = np.arange(1000, dtype=np.int64)
    q = make_array(qv.list_(qv.int64()), 999, [None, data[:1000].astype("<i4").view(np.uint8)],
                   [make_array(qv.int64(), 1000, [None, data.view(np.uint8)])])

    def rss_pages() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1])

    for _ in range(2000):
        pa.array(Wrap(q))
    gc.collect()
    start = rss_pages()
    for _ in range(20000):
        pa.array(Wrap(q))
    gc.collect()
    grown_bytes = (rss_pages() - start) * 4096
    assert grown_bytes < 8 * 1024 * 1024
    assert live_exports() == 0 or live_exports() < 10


# pyarrow's to_pylist drops nanoseconds, so the values rebuilt from it differ by design
_LOSSY_PYLIST = {"time64ns"}


@pytest.mark.parametrize(
    "name", [n for n in PA_ARRAYS if n not in _LOSSY_PYLIST]
)
def test_quiver_built_array_of_every_type_exports_equal_to_pyarrow(name):
    arr = PA_ARRAYS[name]
    q = qv.array(arr.to_pylist(), import_type(arr.type))
    p = pa.array(Wrap(q))
    p.validate(full=True)
    assert p.equals(arr)
    _same_memory(q, import_array(p))


def test_strided_buffer_is_exported_as_a_contiguous_copy():
    step = np.arange(16, dtype=np.uint8)[::2]
    assert not step.flags.c_contiguous
    q = make_array(qv.uint8(), 8, [None, step])
    assert pa.array(Wrap(q)).to_pylist() == list(range(0, 16, 2))


def test_missing_trailing_validity_entry_is_exported_as_null():
    child = make_array(qv.int8(), 2, [None, u8([1, 2], "i1")])
    q = make_array(qv.struct([qv.field("c", qv.int8())]), 2, [], [child])
    assert pa.array(Wrap(q)).to_pylist() == [{"c": 1}, {"c": 2}]


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_import_loop_does_not_grow_memory():
    source = pa.record_batch({"a": pa.array(np.arange(1000)), "s": pa.array(["x"] * 1000)})
    from quiver.interop import import_batch

    for _ in range(2000):
        import_batch(source)
    gc.collect()
    start = _rss_bytes()
    for _ in range(20000):
        import_batch(source)
    gc.collect()
    assert _rss_bytes() - start < 8 * 1024 * 1024


def test_consumer_may_release_from_another_thread():
    import threading

    data = np.arange(50, dtype=np.int64)
    q = make_array(qv.int64(), 50, [None, data.view(np.uint8)])
    ref = weakref.ref(q)
    gc.collect()
    before = live_exports()
    holder = [pa.array(Wrap(q))]
    del q

    def consume():
        assert holder[0].to_pylist()[-1] == 49
        holder.clear()  # pyarrow calls our release callback on this thread

    worker = threading.Thread(target=consume)
    worker.start()
    worker.join()
    gc.collect()
    assert ref() is None
    assert live_exports() == before


def test_export_and_import_cost_does_not_grow_with_rows():
    import time

    def cost(rows: int) -> float:
        q = make_array(qv.int64(), rows, [None, np.zeros(rows * 8, np.uint8)], null_count=0)
        p = pa.array(np.zeros(rows, dtype=np.int64))
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(50):
                pa.array(Wrap(q))
                import_array(p)
            best = min(best, time.perf_counter() - t0)
        return best

    small, large = cost(1_000), cost(10_000_000)
    assert large < 5 * small


def test_a_schema_imported_twice_is_parsed_once_and_still_checked() -> None:
    import pyarrow as pa

    from quiver.interop import import_ as imp

    imp._FIELD_CACHE.clear()
    first = imp.import_batch(pa.record_batch({"a": [1], "b": ["x"]}))
    again = imp.import_batch(pa.record_batch({"a": [2], "b": ["y"]}))
    assert first.schema is again.schema or first.schema.fields[0] is again.schema.fields[0]
    assert len(imp._FIELD_CACHE) == 1
    # another name, type, nullability or metadata is another schema
    other = imp.import_batch(pa.record_batch({"a": [1.5], "b": ["x"]}))
    assert str(other.schema.field("a").type) == "double"
    meta = imp.import_batch(
        pa.record_batch({"a": [1], "b": ["x"]}).replace_schema_metadata({"k": "v"})
    )
    assert meta.schema.metadata == {b"k": b"v"}
    renamed = imp.import_batch(pa.record_batch({"z": [1], "b": ["x"]}))
    assert renamed.schema.names == ["z", "b"]
    assert len(imp._FIELD_CACHE) == 4


def test_batch_importer_reuses_the_schema_while_the_producer_says_it_is_the_same() -> None:
    import pyarrow as pa

    from quiver.interop.import_ import BatchImporter

    imp = BatchImporter()
    first = imp(pa.record_batch({"a": [1], "b": ["x"]}))
    second = imp(pa.record_batch({"a": [2], "b": ["y"]}))
    assert second.schema is first.schema and second.to_pydict() == {"a": [2], "b": ["y"]}
    other = imp(pa.record_batch({"a": [1.5], "b": ["x"]}))  # another schema: parsed again
    assert str(other.schema.field("a").type) == "double"
    assert other.to_pydict() == {"a": [1.5], "b": ["x"]}


def test_batch_importer_fast_path_matches_the_general_import_on_leaf_types() -> None:
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa

    from quiver.interop import import_ as imp

    n = 37
    values = {
        "i8": pa.array([None if i % 7 == 0 else i - 18 for i in range(n)], pa.int8()),
        "u64": pa.array(range(n), pa.uint64()),
        "f32": pa.array([i / 3 for i in range(n)], pa.float32()),
        "b": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)]),
        "s": pa.array([None if i % 4 == 0 else "é" * (i % 3) for i in range(n)]),
        "ls": pa.array(["x" * i for i in range(n)], pa.large_string()),
        "bin": pa.array([bytes([i]) * (i % 4) for i in range(n)], pa.binary()),
        "ts": pa.array([dt.datetime(2020, 1, 1) + dt.timedelta(seconds=i) for i in range(n)],
                       pa.timestamp("ns", "UTC")),
        "d": pa.array([Decimal(i) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "fsb": pa.array([bytes([i]) * 3 for i in range(n)], pa.binary(3)),
        "date": pa.array(range(n), pa.date32()),
    }
    batch = pa.record_batch(values)
    for sliced in (batch, batch.slice(5, 20), batch.slice(0, 0), batch.slice(36)):
        importer = imp.BatchImporter()
        ours = importer(sliced)
        assert importer._leaves is not None  # the fast path applies to every column here
        # the general walk, by hand
        general = imp._batch_from_struct(*imp._import_array_field(sliced.__arrow_c_array__()))
        for got in (ours, imp.import_batch(sliced)):  # import_batch takes the fast path too
            assert got.equals(general)
            assert got.to_pydict() == general.to_pydict() == sliced.to_pydict()
            got.validate(full=True)
    # a nested column takes the general walk
    nested = pa.record_batch({"l": pa.array([[1], None, [2, 3]])})
    importer = imp.BatchImporter()
    assert importer(nested).to_pydict() == {"l": [[1], None, [2, 3]]}
    assert importer._leaves is None


def test_batch_fast_path_keeps_the_producer_memory_until_its_views_die() -> None:
    import pyarrow as pa

    from quiver.interop import import_ as imp

    def imported(importer: object) -> object:
        batch = pa.record_batch({"a": pa.array(np.arange(1100)) * 3,  # pyarrow's memory
                                 "s": pa.array(["x" * 50] * 1000 + [None] * 100)})
        return importer(batch)  # the pyarrow batch dies here

    gc.collect()
    before = pa.total_allocated_bytes()
    for importer in (imp.BatchImporter(), imp.import_batch):
        ours = imported(importer)
        gc.collect()
        assert pa.total_allocated_bytes() - before >= 8 * 1100  # held by our views
        view = ours.column(1).buffers[2][10:20]
        del ours
        gc.collect()
        assert pa.total_allocated_bytes() - before >= 8 * 1100  # a slice holds it too
        assert bytes(view) == b"x" * 10
        del view
        gc.collect()
        assert pa.total_allocated_bytes() == before  # released once the views are gone
