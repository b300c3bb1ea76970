"""Tests for quiver.cdata.array: exporting arrays as ArrowArray structs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array import make_array
from quiver.array.base import Array
from quiver.errors import NotSupported
from quiver.interop import export_array, export_schema, export_stream, import_array, import_type
from tests.unit._cdata_helpers import (
    PA_ARRAYS,
    SCHEMA,
    Batches,
    UuidLike,
    Wrap,
    _batch,
    _registered_extension,  # noqa: F401 (autouse fixture)
    u8a,
)


def bitmap(bits) -> np.ndarray:
    return np.packbits(np.asarray(bits, dtype=bool), bitorder="little")


# --------------------------------------------------------------------------------------
# quiver-built arrays -> pyarrow -> quiver


def _quiver_arrays() -> dict[str, tuple[Array, pa.Array]]:
    i64 = make_array(
        qv.int64(), 4, [bitmap([1, 0, 1, 1]), u8a([10, 0, 30, 40], "<i8")], null_count=1
    )
    strings = make_array(
        qv.string(), 3, [None, u8a([0, 2, 2, 7], "<i4"), np.frombuffer(b"abhello", np.uint8)]
    )
    boolean = make_array(qv.bool_(), 5, [None, bitmap([1, 0, 1, 1, 0])], offset=0)
    lst = make_array(
        qv.list_(qv.int32()), 3, [bitmap([1, 0, 1]), u8a([0, 2, 2, 3], "<i4")],
        [make_array(qv.int32(), 3, [None, u8a([1, 2, 3], "<i4")])],
    )
    struct_type = qv.struct([qv.field("a", qv.int8()), qv.field("b", qv.string())])
    struct = make_array(
        struct_type, 2, [None],
        [make_array(qv.int8(), 2, [None, u8a([5, 6], "i1")]),
         make_array(qv.string(), 2, [None, u8a([0, 1, 2], "<i4"), np.frombuffer(b"xy", np.uint8)])],
    )
    dictionary = make_array(
        qv.dictionary(qv.int8(), qv.string()), 3, [None, u8a([1, 0, 1], "i1")],
        dictionary=make_array(
            qv.string(), 2, [None, u8a([0, 1, 3], "<i4"), np.frombuffer(b"pqr", np.uint8)]
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
        [make_array(qv.int32(), 2, [None, u8a([2, 5], "<i4")]),
         make_array(qv.int64(), 2, [None, u8a([7, 8], "<i8")])],
    )
    dense = make_array(
        qv.dense_union([qv.field("i", qv.int64()), qv.field("s", qv.string())]), 3,
        [u8a([0, 1, 0], "i1"), u8a([0, 0, 1], "<i4")],
        [make_array(qv.int64(), 2, [None, u8a([1, 2], "<i8")]),
         make_array(qv.string(), 1, [None, u8a([0, 1], "<i4"), np.frombuffer(b"z", np.uint8)])],
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
        make_array(qv.month_interval(), 2, [None, u8a([3, 4], "<i4")]),
        make_array(qv.day_time_interval(), 2, [None, u8a([1, 2, 3, 4], "<i4")]),
        make_array(qv.month_day_nano_interval(), 1, [None, u8a([1, 2, 3, 0], "<i4")]),
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
    child = make_array(qv.int8(), 2, [None, u8a([1, 2], "i1")])
    q = make_array(qv.struct([qv.field("c", qv.int8())]), 2, [], [child])
    assert pa.array(Wrap(q)).to_pylist() == [{"c": 1}, {"c": 2}]


def test_stream_honours_an_equal_requested_schema_and_refuses_another():
    source = Batches(SCHEMA, [_batch(0, 2)])
    capsule = export_stream(source, export_schema(SCHEMA))
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows == 2
    with pytest.raises(NotSupported, match="requested_schema"):
        export_stream(source, export_schema(qv.schema([qv.field("a", qv.int32())])))
    # same fields, other types: answered with the data's own schema (spec: best effort)
    other = qv.schema([qv.field("a", qv.int32()), qv.field("s", qv.string_view())])
    capsule = export_stream(source, export_schema(other))
    reader = pa.RecordBatchReader._import_from_c_capsule(capsule)
    assert reader.schema.field("s").type == pa.string()
