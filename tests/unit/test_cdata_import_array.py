"""Tests for quiver.cdata.import_array: ArrowArray structs imported as quiver arrays."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver.array.base import Array
from quiver.errors import ArrowError, ArrowInvalid
from quiver.interop import cdata as c
from quiver.interop import import_array, import_stream, import_type
from tests.unit._cdata_helpers import (
    PA_ARRAYS,
    RELEASED,
    Wrap,
    _registered_extension,  # noqa: F401 (autouse fixture)
    _reset,  # noqa: F401 (autouse fixture)
    array_struct,
    capsules,
    int64_buffer,
    schema_struct,
)


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


def test_capsule_cannot_be_imported_twice():
    schema_capsule, array_capsule = pa.array([1, 2]).__arrow_c_array__()
    import_array((schema_capsule, array_capsule))
    schema2, _ = pa.array([1]).__arrow_c_array__()
    with pytest.raises(ArrowInvalid, match="released"):
        import_array((schema2, array_capsule))


def test_imported_producer_released_when_quiver_arrays_die():
    released = []
    source = pa.array(np.arange(10, dtype=np.int64))
    schema_capsule, array_capsule = source.__arrow_c_array__()
    q = import_array((schema_capsule, array_capsule))
    base = q.buffers[1].base  # a read-only memoryview of the address-space buffer
    owner = (base.obj if isinstance(base, memoryview) else base).owner
    del base
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


def test_hand_built_struct_imports_and_releases_once():
    pair = capsules(schema_struct(b"l"), array_struct(3, [None, int64_buffer([1, 2, 3])]))
    arr = import_array(pair)
    assert arr.to_pylist() == [1, 2, 3]
    assert RELEASED == ["schema"]
    del arr, pair
    gc.collect()
    assert RELEASED == ["schema", "array"]


@pytest.mark.parametrize(
    ("fmt", "array", "words"),
    [
        (b"l", lambda: array_struct(3, [None]), "expected 2 buffers"),
        (b"l", lambda: array_struct(3, [None, None]),
         r"buffer 1 \(values\) of 24 bytes, found NULL"),
        (b"l", lambda: array_struct(-1, [None, int64_buffer([])]), "non-negative length"),
        (b"l", lambda: array_struct(1, [None, int64_buffer([1])], offset=-2),
         "non-negative offset"),
        (b"l", lambda: array_struct(2, [None, int64_buffer([1, 2])], null_count=1),
         "validity bitmap for null_count 1, found NULL"),
        (b"u", lambda: array_struct(1, [None, np.array([0, -5], "<i4").view(np.uint8),
                                        np.zeros(1, np.uint8)]),
         "non-negative last offset"),
        (b"vu", lambda: array_struct(1, [None, np.zeros(16, np.uint8)]),
         "at least 3 buffers"),
        (b"+s", lambda: array_struct(1, [None], children=[array_struct(1, [None])]),
         "expected 0 child arrays"),
    ],
)
def test_malformed_array_raises_invalid_and_releases_once(fmt, array, words):
    pair = capsules(schema_struct(fmt), array())
    with pytest.raises(ArrowInvalid, match=words):
        import_array(pair)
    del pair
    gc.collect()
    assert RELEASED.count("array") == 1
    assert RELEASED.count("schema") == 1


def test_dictionary_type_without_dictionary_array_is_invalid():
    dict_schema = schema_struct(b"c", dictionary=schema_struct(b"u"))
    pair = capsules(dict_schema, array_struct(1, [None, np.zeros(1, np.uint8)]))
    with pytest.raises(ArrowInvalid, match="dictionary array"):
        import_array(pair)


def test_legacy_union_and_null_validity_buffer_is_accepted():
    pair = capsules(schema_struct(b"n"), array_struct(3, [None], null_count=3))
    arr = import_array(pair)
    assert len(arr) == 3 and arr.null_count == 3 and arr.buffers == ()
    child = array_struct(2, [None, np.array([7, 8], np.int8).view(np.uint8)])
    union = capsules(
        schema_struct(b"+us:4", children=[schema_struct(b"c")]),
        array_struct(2, [None, np.array([4, 4], np.int8).view(np.uint8)], children=[child]),
    )
    arr = import_array(union)
    assert arr.to_pylist() == [7, 8]
    assert len(arr.buffers) == 1


def test_validate_level_must_be_known():
    pair = capsules(schema_struct(b"l"), array_struct(1, [None, int64_buffer([1])]))
    with pytest.raises(ValueError, match="validate"):
        import_array(pair, validate="paranoid")


def test_validate_passes_good_data_through():
    import pyarrow as pa

    arr = import_array(pa.array([[1], None, [2, 3]]), validate="full")
    assert arr.to_pylist() == [[1], None, [2, 3]]


def test_stream_import_reports_producer_errors():
    def gen():
        yield pa.record_batch({"a": [1]})
        raise ValueError("bad batch")

    source = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), gen())
    reader = import_stream(source, arrays=True)
    next(reader)
    with pytest.raises(ArrowError, match="bad batch"):
        next(reader)
