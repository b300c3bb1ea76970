"""Tests for quiver.array.base: the Array base class."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

import quiver as qv
from quiver import types as t
from quiver.array import (
    BinaryViewArray,
    BooleanArray,
    DictionaryArray,
    ExtensionArray,
    FixedSizeListArray,
    LargeListArray,
    ListArray,
    ListViewArray,
    MapArray,
    NullArray,
    PrimitiveArray,
    RunEndEncodedArray,
    StringArray,
    StructArray,
    UnionArray,
    make_array,
)
from quiver.array.base import OffsetArray, int_array
from quiver.errors import ArrowIndexError, ArrowInvalid, ArrowInvalidArgument
from quiver.interop import import_array

# -- make_array picks the family -------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "cls"),
    [
        (t.null(), NullArray), (t.bool_(), BooleanArray), (t.int32(), PrimitiveArray),
        (t.decimal128(5, 2), PrimitiveArray), (t.string(), StringArray),
        (t.binary_view(), BinaryViewArray), (t.list_(t.int8()), ListArray),
        (t.large_list(t.int8()), LargeListArray), (t.list_view(t.int8()), ListViewArray),
        (t.list_(t.int8(), 2), FixedSizeListArray), (t.struct([("a", t.int8())]), StructArray),
        (t.map_(t.string(), t.int8()), MapArray),
        (t.sparse_union([t.field("a", t.int8())]), UnionArray),
        (t.dictionary(t.int8(), t.string()), DictionaryArray),
        (t.run_end_encoded(t.int32(), t.int8()), RunEndEncodedArray),
        (t.uuid(), ExtensionArray),
    ],
)
def test_make_array_picks_the_registered_family(dtype: t.DataType, cls: type) -> None:
    assert type(make_array(dtype, 0, [None] * 3)) is cls


def test_slice_is_zero_copy_and_clamped() -> None:
    a = qv.array(list(range(10)))
    s = a.slice(3, 100)
    assert len(s) == 7
    assert s.buffers[1] is a.buffers[1]
    assert s.offset == 3
    assert a[2:4].to_pylist() == [2, 3]
    assert a[-1] == 9
    with pytest.raises(ArrowIndexError):
        a[10]
    with pytest.raises(ArrowInvalidArgument):
        a.slice(-1)


def test_null_count_is_lazy_and_respects_the_slice() -> None:
    a = qv.array([None, 1, None, 2])
    assert a.null_count == 2
    assert a.slice(1).null_count == 1
    assert a.slice(1, 1).null_count == 0


def test_from_buffers_rejects_wrong_buffer_and_child_counts() -> None:
    with pytest.raises(ArrowInvalidArgument, match="expected 2 buffers"):
        qv.Array.from_buffers(qv.int32(), 1, [None])
    with pytest.raises(ArrowInvalidArgument, match="expected 1 children"):
        qv.Array.from_buffers(qv.list_(qv.int8()), 0, [None, np.zeros(1, "<i4")])
    with pytest.raises(ArrowInvalidArgument, match="expected a dictionary"):
        qv.Array.from_buffers(qv.dictionary(qv.int8(), qv.string()), 0, [None, b""])


# -- numpy -----------------------------------------------------------------------------


def test_to_numpy_is_a_zero_copy_view_honouring_the_offset() -> None:
    src = np.arange(10, dtype=np.int64)
    a = qv.array(src).slice(2, 3)
    out = a.to_numpy()
    assert out.tolist() == [2, 3, 4]
    assert np.shares_memory(out, src)


def test_to_numpy_temporal_gives_datetime64() -> None:
    a = qv.array([dt.datetime(2020, 1, 1)], qv.timestamp("ms"))
    assert a.to_numpy().dtype == np.dtype("M8[ms]")
    dates = qv.array([dt.date(2020, 1, 1)])
    assert dates.to_numpy(zero_copy_only=False).dtype == np.dtype("M8[D]")
    with pytest.raises(ArrowInvalid, match="zero-copy"):  # int32 days: a copy, as pyarrow
        dates.to_numpy()


def test_to_numpy_with_nulls_needs_a_copy_like_pyarrow() -> None:
    a = qv.array([1, None, 3])
    with pytest.raises(ArrowInvalid, match="zero-copy"):
        a.to_numpy()
    out = a.to_numpy(zero_copy_only=False)
    expected = pa.array([1, None, 3]).to_numpy(zero_copy_only=False)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float64
    ts = qv.array([1, None], qv.timestamp("s")).to_numpy(zero_copy_only=False)
    assert np.isnat(ts[1])


def test_to_numpy_of_non_fixed_width_types_gives_objects() -> None:
    with pytest.raises(ArrowInvalid):
        qv.array(["a"]).to_numpy()
    assert qv.array(["a", None]).to_numpy(zero_copy_only=False).tolist() == ["a", None]
    out = qv.array([True, False]).to_numpy(zero_copy_only=False)
    assert out.dtype == bool and out.tolist() == [True, False]
    assert qv.array([True, None]).to_numpy(zero_copy_only=False).tolist() == [True, None]


def test_dunder_array_works_with_numpy() -> None:
    a = qv.array([1, 2, 3], qv.int32())
    assert np.asarray(a).dtype == np.int32
    assert np.asarray(a, dtype=np.float64).tolist() == [1.0, 2.0, 3.0]
    assert np.array(a).sum() == 6


# -- validate / equals delegate ---------------------------------------------------------


def test_equals_and_eq_compare_logical_values() -> None:
    a = qv.array([1, None, 3])
    assert a == qv.array([1, None, 3])
    assert a.slice(1) == qv.array([None, 3])
    assert a != qv.array([1, 2, 3])
    assert not a.equals("not an array")


def test_repr_shows_type_and_values() -> None:
    r = repr(qv.array(list(range(20))))
    assert "int64" in r and "length=20" in r and "..." in r


def test_from_buffers_binary_view_with_variadic_buffers() -> None:
    views = np.zeros((2, 4), dtype="<i4")
    views[0, 0] = 3
    views[0, 1] = int.from_bytes(b"abc\x00", "little")
    views[1] = [20, int.from_bytes(b"0123", "little"), 0, 5]
    data = b"xxxxx01234567890123456789"
    a = qv.Array.from_buffers(qv.binary_view(), 2, [None, views, data])
    assert a.to_pylist() == [b"abc", b"01234567890123456789"]
    assert a.slice(1).to_pylist() == [b"01234567890123456789"]
    with pytest.raises(ArrowInvalidArgument, match="at least 2 buffers"):
        qv.Array.from_buffers(qv.binary_view(), 0, [None])


def test_an_absent_buffer_is_empty_for_an_empty_array_and_an_error_otherwise() -> None:
    assert make_array(t.string(), 0, [None, None, None]).value_offsets().tolist() == [0]
    assert make_array(t.int8(), 0, [None, None]).to_pylist() == []
    with pytest.raises(qv.ArrowInvalid, match="expected an offsets buffer for list<item: int8>"):
        make_array(t.list_(t.int8()), 1, [None, None], [qv.array([1], t.int8())]).value_offsets()
    with pytest.raises(qv.ArrowInvalid, match="expected a views buffer for string_view"):
        make_array(t.string_view(), 1, [None, None]).views()


def test_binary_string_list_and_map_share_the_offsets_code() -> None:
    for arr in (qv.array([b"a", b"bc"]), qv.array(["a", "bc"], t.large_string()),
                qv.array([[1], [2, 3]]), qv.array([[("k", 1)]], t.map_(t.string(), t.int8()))):
        assert isinstance(arr, OffsetArray)
        sliced = arr.slice(1)
        assert sliced.offsets.to_pylist() == sliced.value_offsets().tolist()
        assert np.shares_memory(sliced.value_offsets(), arr.buffers[1])


def test_int_array_keeps_width_and_sign() -> None:
    assert int_array(np.array([1, 2], dtype="<u2")).type == t.uint16()
    assert int_array(np.array([-1], dtype="<i8")).to_pylist() == [-1]


_NUMPY_CASES = [
    pa.array([1, 2, 3], pa.int8()),
    pa.array([1, 2, 3], pa.uint64()).slice(1),
    pa.array([1.5, 2.0], pa.float32()),
    pa.array([1, 2], pa.timestamp("ms", "UTC")),
    pa.array([1, 2], pa.duration("s")),
    pa.array([1, 2], pa.date32()),
    pa.array([1, 2], pa.date64()),
    pa.array([1, 2], pa.time32("s")),
    pa.array([1, None]),
    pa.array([True, False]),
    pa.array(["a", "b", "a"]).dictionary_encode(),
]


@pytest.mark.parametrize("source", _NUMPY_CASES, ids=lambda a: str(a.type))
@pytest.mark.parametrize(
    "kw", [{}, {"zero_copy_only": False}, {"zero_copy_only": False, "writable": True}],
    ids=["default", "copy-allowed", "writable"],
)
def test_to_numpy_as_pyarrow_for_each_kind_of_type(source: pa.Array, kw: dict) -> None:
    # the plain view (numbers, timestamps, durations without nulls) is a fast path of its
    # own: it must agree with pyarrow and with the general path on dtype, values,
    # writeability and refusals
    ours = import_array(source)
    try:
        expected = source.to_numpy(**kw)
    except pa.ArrowInvalid:
        with pytest.raises(ArrowInvalid):
            ours.to_numpy(**kw)
        return
    got = ours.to_numpy(**kw)
    assert got.dtype == expected.dtype
    assert got.tolist() == expected.tolist() or np.array_equal(got, expected, equal_nan=True)
    if not expected.flags.writeable:  # pyarrow's zero-copy views: ours are read-only too
        assert not got.flags.writeable
    if kw.get("writable"):
        assert got.flags.writeable
