"""Unit tests of the array families: to_pylist against pyarrow, accessors, slicing,
from_buffers, to_numpy and __array__."""

from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo
from decimal import Decimal

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
from quiver.errors import ArrowIndexError, ArrowInvalid, ArrowInvalidArgument, ArrowKeyError
from tests.roundtrip.pa_types import from_pyarrow
from tests.roundtrip.pa_types import to_pyarrow_type as to_pa


def same_as_pyarrow(pa_arr: pa.Array) -> list:
    """quiver's to_pylist over pyarrow's buffers, checked equal to pyarrow's."""
    got = from_pyarrow(pa_arr).to_pylist()
    assert got == pa_arr.to_pylist()
    return got


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


# -- to_pylist matches pyarrow -----------------------------------------------------------


def test_integers_and_floats_convert_like_pyarrow() -> None:
    assert same_as_pyarrow(pa.array([1, None, -3], pa.int8())) == [1, None, -3]
    assert same_as_pyarrow(pa.array([2**64 - 1, None], pa.uint64())) == [2**64 - 1, None]
    got = same_as_pyarrow(pa.array([1.5, None], pa.float16()))
    assert type(got[0]) is float
    assert same_as_pyarrow(pa.array([1.1], pa.float32())) == [1.100000023841858]


def test_decimals_of_every_width_convert_to_decimal() -> None:
    for make, p in [(pa.decimal32, 7), (pa.decimal64, 15), (pa.decimal128, 30),
                    (pa.decimal256, 70)]:
        vals = [Decimal("-1.25"), None, Decimal("3.00"), Decimal(f"{'9' * (p - 2)}.99")]
        assert same_as_pyarrow(pa.array(vals, make(p, 2))) == vals


def test_negative_scale_decimal_keeps_the_exponent() -> None:
    assert same_as_pyarrow(pa.array([Decimal("100")], pa.decimal128(5, -2))) == [
        Decimal("1E+2")
    ]


@pytest.mark.parametrize("tz", ["UTC", "+01:00", "-05:30", "America/New_York"])
def test_timestamps_with_a_time_zone_are_aware_like_pyarrow(tz: str) -> None:
    pa_arr = pa.array([0, None, 1_600_000_000], pa.timestamp("s", tz))
    got = same_as_pyarrow(pa_arr)
    assert got[0].tzinfo is not None
    assert got[0].utcoffset() == pa_arr.to_pylist()[0].utcoffset()


def test_utc_and_named_zones_use_zoneinfo() -> None:
    got = qv.array([0], qv.timestamp("ms", "UTC")).to_pylist()[0]
    assert got.tzinfo == zoneinfo.ZoneInfo("UTC")
    got = qv.array([0], qv.timestamp("ms", "+01:00")).to_pylist()[0]
    assert got.tzinfo == dt.timezone(dt.timedelta(hours=1))
    assert got.hour == 1


def test_naive_timestamps_in_every_unit() -> None:
    for unit in ("s", "ms", "us", "ns"):
        same_as_pyarrow(pa.array([dt.datetime(2020, 1, 2, 3, 4, 5), None], pa.timestamp(unit)))


def test_nanoseconds_convert_like_pyarrow_without_pandas(monkeypatch) -> None:
    from quiver.array import primitive as prim

    monkeypatch.setattr(prim, "_pandas", lambda: None)
    with pytest.raises(ArrowInvalid, match="whole microseconds"):
        qv.array([1], qv.timestamp("ns")).to_pylist()
    with pytest.raises(ArrowInvalid, match="whole microseconds"):
        qv.array([1], qv.duration("ns")).to_pylist()
    # a time of day truncates to microseconds, as pyarrow does
    assert qv.array([1001], qv.time64("ns")).to_pylist() == [dt.time(0, 0, 0, 1)]
    # null slots never fail the conversion
    assert qv.array([None, 1000], qv.timestamp("ns")).to_pylist()[1] == dt.datetime(
        1970, 1, 1, 0, 0, 0, 1
    )


def test_nanoseconds_convert_to_pandas_scalars_like_pyarrow_with_pandas() -> None:
    pd = pytest.importorskip("pandas")
    for qtype, ptype in [
        (qv.timestamp("ns"), pa.timestamp("ns")),
        (qv.timestamp("ns", "UTC"), pa.timestamp("ns", "UTC")),
        (qv.duration("ns"), pa.duration("ns")),
    ]:
        got = qv.array([1001, None, -5], qtype).to_pylist()
        want = pa.array([1001, None, -5], ptype).to_pylist()
        assert got == want
        assert isinstance(got[0], (pd.Timestamp, pd.Timedelta))


def test_the_smallest_duration_is_a_value_not_null() -> None:
    low = -(2**63)
    assert qv.array([low], qv.duration("us")).to_pylist() == pa.array(
        [low], pa.duration("us")
    ).to_pylist()


def test_out_of_range_timestamp_raises_a_quiver_error() -> None:
    with pytest.raises(ArrowInvalid, match="expected"):
        qv.array([2**62], qv.timestamp("us")).to_pylist()
    with pytest.raises(ArrowInvalid, match="expected"):
        qv.array([2**62], qv.timestamp("s")).to_pylist()


def test_dates_times_durations_like_pyarrow() -> None:
    same_as_pyarrow(pa.array([dt.date(2020, 1, 2), None, dt.date(1, 1, 1)]))
    same_as_pyarrow(pa.array([0, -1, None, 86_400_000 * 3 + 5], pa.date64()))
    for typ in (pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")):
        same_as_pyarrow(pa.array([dt.time(1, 2, 3), None, dt.time(23, 59, 59)], typ))
    for unit in ("s", "ms", "us", "ns"):
        same_as_pyarrow(pa.array([dt.timedelta(days=-3, seconds=5), None], pa.duration(unit)))


def test_month_day_nano_is_a_named_tuple_with_pyarrow_fields() -> None:
    pa_arr = pa.array([(1, -2, 3), None], pa.month_day_nano_interval())
    got = from_pyarrow(pa_arr).to_pylist()
    assert got[0] == (1, -2, 3)
    assert (got[0].months, got[0].days, got[0].nanoseconds) == (1, -2, 3)
    assert got[1] is None
    assert got == pa_arr.to_pylist()


def test_other_intervals_give_ints_and_day_time_pairs() -> None:
    assert qv.array([5, None], qv.month_interval()).to_pylist() == [5, None]
    got = qv.array([(1, 500)], qv.day_time_interval()).to_pylist()
    assert got == [(1, 500)]
    assert got[0].days == 1 and got[0].milliseconds == 500


def test_strings_and_binaries_of_every_layout() -> None:
    vals = ["a", None, "héllo", "", "x" * 40]
    for typ in (pa.string(), pa.large_string(), pa.string_view()):
        assert same_as_pyarrow(pa.array(vals, typ)) == vals
    bvals = [b"a", None, b"", b"\xff" * 20]
    for typ in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert same_as_pyarrow(pa.array(bvals, typ)) == bvals
    assert same_as_pyarrow(pa.array([b"ab", None], pa.binary(2))) == [b"ab", None]


def test_invalid_utf8_raises_a_quiver_error() -> None:
    arr = make_array(t.string(), 1, [None, np.array([0, 1], "<i4").view(np.uint8),
                                     np.frombuffer(b"\xff", np.uint8)])
    with pytest.raises(ArrowInvalid, match="UTF-8"):
        arr.to_pylist()


def test_nested_types_like_pyarrow() -> None:
    same_as_pyarrow(pa.array([[1, None], None, []], pa.list_(pa.int64())))
    same_as_pyarrow(pa.array([[1, None], None, []], pa.large_list_view(pa.int64())))
    same_as_pyarrow(pa.array([[1, None], None], pa.list_(pa.int64(), 2)))
    same_as_pyarrow(pa.array([{"a": 1, "b": [1]}, None, {"a": None, "b": None}]))
    got = same_as_pyarrow(pa.array([[("k", 1), ("j", None)], None, []],
                                   pa.map_(pa.string(), pa.int64())))
    assert got[0] == [("k", 1), ("j", None)]


def test_out_of_order_list_views_convert() -> None:
    pa_arr = pa.ListViewArray.from_arrays(
        pa.array([3, 0, 1], pa.int32()), pa.array([1, 2, 0], pa.int32()),
        pa.array([1, 2, 3, 4])
    )
    assert same_as_pyarrow(pa_arr) == [[4], [1, 2], []]


def test_unions_give_the_selected_childs_value() -> None:
    sparse = pa.UnionArray.from_sparse(
        pa.array([5, 1, 5], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", None])],
        ["i", "s"], [1, 5],
    )
    assert same_as_pyarrow(sparse) == ["a", 2, None]
    assert same_as_pyarrow(sparse.slice(1)) == [2, None]
    dense = pa.UnionArray.from_dense(
        pa.array([0, 1, 0], pa.int8()), pa.array([1, 0, 0], pa.int32()),
        [pa.array([1, None]), pa.array(["a"])],
    )
    assert same_as_pyarrow(dense) == [None, "a", 1]


def test_dictionary_and_run_end_encoded_decode() -> None:
    d = pa.array(["a", "b", None, "a"]).dictionary_encode()
    assert same_as_pyarrow(d) == ["a", "b", None, "a"]
    assert same_as_pyarrow(d.slice(1, 2)) == ["b", None]
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 4, 5], pa.int32()),
                                            pa.array([1, None, 2]))
    assert same_as_pyarrow(ree) == [1, 1, None, None, 2]
    assert same_as_pyarrow(ree.slice(1, 3)) == [1, None, None]


def test_uuid_extension_gives_uuid_objects_like_pyarrow() -> None:
    raw = b"0123456789abcdef"
    pa_arr = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([raw, None], pa.binary(16)))
    assert same_as_pyarrow(pa_arr) == [uuid.UUID(bytes=raw), None]
    other = qv.array([1, None], qv.extension("my.ext", qv.int32(), b"meta"))
    assert other.to_pylist() == [1, None]
    assert other.storage.type == qv.int32()


def test_struct_with_duplicate_names_refuses_dicts_like_pyarrow() -> None:
    arr = make_array(t.struct([("a", t.int8()), ("a", t.int8())]), 1, [None],
                     [qv.array([1], qv.int8()), qv.array([2], qv.int8())])
    with pytest.raises(ArrowInvalid, match="distinct field names"):
        arr.to_pylist()


def test_null_array_is_all_null() -> None:
    arr = qv.array([None, None])
    assert arr.type == qv.null()
    assert arr.null_count == 2
    assert arr.to_pylist() == [None, None]


# -- accessors -------------------------------------------------------------------------


def test_struct_field_is_sliced_to_the_parent() -> None:
    s = qv.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": None}]).slice(1)
    assert s.field("a").to_pylist() == [2, 3]
    assert s.field(1).to_pylist() == ["y", None]
    with pytest.raises(ArrowKeyError, match="'zz'"):
        s.field("zz")
    with pytest.raises(ArrowIndexError):
        s.field(5)


def test_list_accessors() -> None:
    a = qv.array([[1, 2], None, [3]]).slice(1)
    assert a.offsets.to_pylist() == [2, 2, 3]
    assert a.flatten().to_pylist() == [3]
    assert a.values.to_pylist() == [1, 2, 3]


def test_map_keys_and_items_cover_the_slice() -> None:
    m = qv.array([{"a": 1}, {"b": 2, "c": 3}], qv.map_(qv.string(), qv.int64())).slice(1)
    assert m.keys.to_pylist() == ["b", "c"]
    assert m.items.to_pylist() == [2, 3]


def test_union_accessors() -> None:
    ut = qv.dense_union([qv.field("i", qv.int64()), qv.field("s", qv.string())], [3, 7])
    u = qv.array([1, "a", 2], ut)
    assert u.type_codes.to_pylist() == [3, 7, 3]
    assert u.offsets.to_pylist() == [0, 0, 1]
    assert u.field(0).to_pylist() == [1, 2]
    assert u.slice(1).type_codes.to_pylist() == [7, 3]
    sp = qv.array([1, "a", 2], qv.sparse_union(list(ut.fields), [3, 7])).slice(1)
    assert sp.field(1).to_pylist() == ["a", None]


def test_dictionary_indices_share_the_buffers() -> None:
    d = qv.array(["x", "y", None, "x"], qv.dictionary(qv.int16(), qv.string())).slice(1)
    assert d.indices.to_pylist() == [1, None, 0]
    assert d.indices.type == qv.int16()
    assert d.indices.buffers[1] is d.buffers[1]
    assert d.dictionary.to_pylist() == ["x", "y"]


def test_run_end_encoded_accessors() -> None:
    r = qv.array(["a", "a", "b"], qv.run_end_encoded(qv.int16(), qv.string()))
    assert r.run_ends.to_pylist() == [2, 3]
    assert r.values.to_pylist() == ["a", "b"]
    assert r.null_count == 0


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


# -- from_buffers ------------------------------------------------------------------------


def test_from_buffers_accepts_bytes_and_numpy() -> None:
    a = qv.Array.from_buffers(qv.string(), 2, [None, np.array([0, 1, 3], "<i4"), b"abc"])
    assert a.to_pylist() == ["a", "bc"]
    b = qv.Array.from_buffers(qv.int16(), 2, [b"\x02", b"\x01\x00\x02\x00"])
    assert b.to_pylist() == [None, 2]
    assert b.null_count == 1


def test_from_buffers_builds_nested_arrays() -> None:
    child = qv.array([1, 2, 3])
    a = qv.Array.from_buffers(qv.list_(qv.int64()), 2, [None, np.array([0, 1, 3], "<i4")],
                              children=[child])
    assert a.to_pylist() == [[1], [2, 3]]
    d = qv.Array.from_buffers(qv.dictionary(qv.int8(), qv.string()), 2,
                              [None, np.array([1, 0], np.int8)], dictionary=qv.array(["a", "b"]))
    assert d.to_pylist() == ["b", "a"]


def test_from_buffers_rejects_wrong_buffer_and_child_counts() -> None:
    with pytest.raises(ArrowInvalidArgument, match="expected 2 buffers"):
        qv.Array.from_buffers(qv.int32(), 1, [None])
    with pytest.raises(ArrowInvalidArgument, match="expected 1 children"):
        qv.Array.from_buffers(qv.list_(qv.int8()), 0, [None, np.zeros(1, "<i4")])
    with pytest.raises(ArrowInvalidArgument, match="expected a dictionary"):
        qv.Array.from_buffers(qv.dictionary(qv.int8(), qv.string()), 0, [None, b""])


def test_from_buffers_runs_the_structural_validation() -> None:
    with pytest.raises(ArrowInvalid):
        qv.Array.from_buffers(qv.int32(), 4, [None, b"\x00" * 8])


def test_malformed_arrays_raise_quiver_errors_not_index_errors() -> None:
    short = make_array(t.int32(), 4, [None, np.zeros(8, np.uint8)])
    with pytest.raises(ArrowInvalid, match="expected a values buffer of at least 16 bytes"):
        short.to_pylist()
    bad_offsets = make_array(t.list_(t.int8()), 1, [None, np.array([0, 5], "<i4").view(np.uint8)],
                             [qv.array([1], qv.int8())])
    with pytest.raises(ArrowInvalid, match="at least 5"):
        bad_offsets.to_pylist()
    bad_dict = make_array(t.dictionary(t.int8(), t.string()), 1,
                          [None, np.array([4], np.uint8)], dictionary=qv.array(["a"]))
    with pytest.raises(ArrowInvalid, match="below 1"):
        bad_dict.to_pylist()
    bad_union = make_array(t.sparse_union([t.field("a", t.int8())]), 1,
                           [np.array([9], np.uint8)], [qv.array([1], qv.int8())])
    with pytest.raises(ArrowInvalid, match="type codes"):
        bad_union.to_pylist()


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
    assert qv.array([dt.date(2020, 1, 1)]).to_numpy().dtype == np.dtype("M8[D]")


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


def test_validate_full_catches_bad_offsets() -> None:
    bad = make_array(t.string(), 2, [None, np.array([0, 3, 1], "<i4").view(np.uint8),
                                     np.frombuffer(b"abc", np.uint8)])
    bad.validate()  # sizes are fine
    with pytest.raises(ArrowInvalid):
        bad.validate(full=True)


def test_repr_shows_type_and_values() -> None:
    r = repr(qv.array(list(range(20))))
    assert "int64" in r and "length=20" in r and "..." in r


def test_maps_as_pydicts_like_pyarrow() -> None:
    mt = qv.map_(qv.string(), qv.int64())
    vals = [[("a", 1), ("b", 2)], None, []]
    a = qv.array(vals, mt)
    expected = pa.array(vals, to_pa(mt)).to_pylist(maps_as_pydicts="strict")
    assert a.to_pylist(maps_as_pydicts="strict") == expected
    nested = qv.array([[{"m": [("k", 1)]}]],
                      qv.list_(qv.struct([("m", mt)])))
    assert nested.to_pylist(maps_as_pydicts="lossy") == [[{"m": {"k": 1}}]]
    dup = qv.array([[("a", 1), ("a", 2)]], mt)
    assert dup.to_pylist(maps_as_pydicts="lossy") == [{"a": 2}]
    with pytest.raises(ArrowInvalid, match="distinct map keys"):
        dup.to_pylist(maps_as_pydicts="strict")
    with pytest.raises(ArrowInvalidArgument):
        dup.to_pylist(maps_as_pydicts="yes")


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


def test_run_end_encoded_from_children() -> None:
    ree = qv.Array.from_buffers(
        qv.run_end_encoded(qv.int32(), qv.string()), 3, [], offset=1,
        children=[qv.array([2, 4], qv.int32()), qv.array(["a", None])],
    )
    assert ree.to_pylist() == ["a", None, None]


def test_slice_rejects_a_length_that_is_not_an_int_with_quivers_error() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match="slice length"):
        qv.array([1, 2, 3]).slice(0, "2")  # type: ignore[arg-type]
    with pytest.raises(qv.ArrowInvalidArgument, match="slice length"):
        qv.record_batch({"a": qv.array([1])}).slice(0, "2")  # type: ignore[arg-type]


def test_to_numpy_views_are_read_only_unless_a_copy_is_asked() -> None:
    import quiver as qv

    arr = qv.array([1, 2, 3])
    view = arr.to_numpy()
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 99
    copy = arr.to_numpy(writable=True)
    copy[0] = 99
    assert arr.to_pylist() == [1, 2, 3]
    assert np.shares_memory(view, arr.buffers[1])  # still zero-copy
    assert not np.asarray(arr).flags.writeable
