"""Tests for quiver.array.validate: structural and full validation of every layout.

Valid arrays come from pyarrow (the test oracle) through their raw buffers; malformed ones
are the same arrays with one buffer, offset or child broken on purpose.
"""

from __future__ import annotations

import decimal
import gc
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quiver as qv
import quiver.ipc as ipc
import quiver.types as t
from quiver.array import make_array
from quiver.array.base import Array
from quiver.array.validate import ragged_indices, validate_array, view_slices
from quiver.errors import ArrowInvalid
from quiver.integration import JsonBatch, to_json
from quiver.interop import import_array
from tests.conftest import INTEGRATION, require_shared
from tests.unit._cdata_helpers import (
    RELEASED,
    _reset,  # noqa: F401 (autouse fixture)
    array_struct,
    capsules,
    int64_buffer,
    schema_struct,
)
from tests.unit._helpers import _views, from_pa, i32, rebuild, u8


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype="<i8").view(np.uint8)


def both_levels(arr: Array, path: str = "") -> None:
    validate_array(arr, path=path)
    validate_array(arr, full=True, path=path)


def raises_full_only(arr: Array, *words: str, path: str = "col") -> ArrowInvalid:
    """Passes the structural level, fails the full level with ``words`` in the message."""
    validate_array(arr, path=path)
    with pytest.raises(ArrowInvalid) as info:
        validate_array(arr, full=True, path=path)
    for w in words:
        assert w in str(info.value)
    return info.value


def raises_structural(arr: Array, *words: str, path: str = "col") -> ArrowInvalid:
    with pytest.raises(ArrowInvalid) as info:
        validate_array(arr, path=path)
    for w in words:
        assert w in str(info.value)
    return info.value


# --------------------------------------------------------------------------------------
# valid arrays of every layout pass both levels

VALID = [
    pa.array([1, None, 3], pa.int64()),
    pa.array([1.5, None, float("nan")], pa.float32()),
    pa.array([True, None, False, True] * 5, pa.bool_()),
    pa.nulls(4),
    pa.array(["a", None, "héllo", "", "日本"], pa.string()),
    pa.array(["a", None, "héllo"], pa.large_string()),
    pa.array([b"\xff", None, b""], pa.binary()),
    pa.array([b"ab", None], pa.binary(2)),
    pa.array(["short", None, "a string longer than twelve bytes é"], pa.string_view()),
    pa.array([b"x" * 30, b"y", None], pa.binary_view()),
    pa.array([[1, 2], None, [], [3]], pa.list_(pa.int32())),
    pa.array([[1, 2], None, [3]], pa.large_list(pa.int16())),
    pa.array([[1, 2], None, [3]], pa.list_view(pa.int32())),
    pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int8(), 2)),
    pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}]),
    pa.array([[("k", 1)], None, [("a", 2), ("b", None)]], pa.map_(pa.string(), pa.int64())),
    pa.UnionArray.from_sparse(
        pa.array([0, 1, 0], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])]
    ),
    pa.UnionArray.from_dense(
        pa.array([0, 1, 0], pa.int8()),
        pa.array([0, 0, 1], pa.int32()),
        [pa.array([1, 2]), pa.array(["a"])],
    ),
    pa.array(["x", "y", None, "x"]).dictionary_encode(),
    pa.RunEndEncodedArray.from_arrays(pa.array([2, 5], pa.int32()), pa.array(["a", None])),
    pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-99.99")], pa.decimal128(4, 2)),
    pa.array([[{"a": [1, None]}], None], pa.list_(pa.struct([("a", pa.list_(pa.int64()))]))),
]


@pytest.mark.parametrize("parr", VALID, ids=lambda a: str(a.type))
def test_valid_pyarrow_arrays_pass_both_levels(parr: pa.Array) -> None:
    parr.validate(full=True)
    arr = from_pa(parr)
    both_levels(arr)
    validate_array(arr, full=True, check_decimal_precision=True)


@pytest.mark.parametrize("parr", VALID, ids=lambda a: str(a.type))
def test_valid_slices_pass_both_levels(parr: pa.Array) -> None:
    arr = from_pa(parr)
    for start in range(len(arr) + 1):
        both_levels(arr.slice(start, len(arr) - start))
        both_levels(arr.slice(start, 1))


# --------------------------------------------------------------------------------------
# structural level: buffer counts and sizes, null counts, children


def test_rejects_wrong_buffer_count() -> None:
    arr = from_pa(pa.array([1, 2], pa.int32()))
    err = raises_structural(rebuild(arr, buffers=arr.buffers[1:]), "expected 2 buffers")
    assert err.field_path == "col"
    assert "found 1" in str(err)


def test_rejects_short_values_buffer_with_sizes() -> None:
    arr = from_pa(pa.array([1, 2, 3], pa.int64()))
    short = rebuild(arr, buffers=(None, arr.buffers[1][:16]))
    raises_structural(short, "values", "expected at least 24 bytes", "found 16")


def test_buffer_size_accounts_for_offset() -> None:
    arr = make_array(t.int16(), 2, [None, i32(1, 2)], offset=2)  # 8 bytes = 4 int16
    validate_array(arr)
    raises_structural(rebuild(arr, offset=3), "expected at least 10 bytes", "found 8")


def test_rejects_short_validity_bitmap() -> None:
    arr = make_array(t.int8(), 9, [u8(b"\xff"), u8(bytes(9))])
    raises_structural(arr, "buffer 0 (validity)", "expected at least 2 bytes", "found 1")


def test_rejects_short_boolean_bits() -> None:
    arr = make_array(t.bool_(), 17, [None, u8(b"\xff\xff")])
    raises_structural(arr, "bits", "expected at least 3 bytes")


def test_rejects_short_offsets_buffer() -> None:
    arr = make_array(t.string(), 3, [None, i32(0, 1, 2), u8(b"abc")])
    raises_structural(arr, "offsets", "expected at least 16 bytes", "found 12")


def test_rejects_buffer_that_is_not_uint8_numpy() -> None:
    arr = make_array(t.int32(), 1, [None, b"\x00\x00\x00\x00"])
    raises_structural(arr, "1-D uint8 numpy array", "found bytes")
    arr = make_array(t.int32(), 1, [None, np.zeros(1, np.int32)])
    raises_structural(arr, "found int32 array")


def test_rejects_missing_required_buffer() -> None:
    arr = make_array(t.int32(), 1, [None, None])
    raises_structural(arr, "expected buffer 1 (values) of 4 bytes, found none")


def test_empty_array_may_omit_buffers() -> None:
    both_levels(make_array(t.string(), 0, [None, None, None]))
    both_levels(make_array(t.int64(), 0, [None, None]))


def test_rejects_null_count_above_length() -> None:
    arr = make_array(t.int8(), 2, [u8(b"\x00"), u8(b"\x00\x00")], null_count=3)
    raises_structural(arr, "expected 0 <= null_count <= length, found length 2, null_count 3")


def test_rejects_positive_null_count_without_bitmap() -> None:
    arr = make_array(t.int8(), 2, [None, u8(b"\x00\x00")], null_count=1)
    raises_structural(arr, "expected a validity bitmap for null_count 1, found none")


def test_full_level_checks_null_count_against_bitmap() -> None:
    arr = make_array(t.int8(), 4, [u8(b"\x07"), u8(bytes(4))], null_count=2)
    raises_full_only(arr, "expected null_count 1", "found 2")


def test_null_array_null_count_must_equal_length() -> None:
    both_levels(make_array(t.null(), 5, [], null_count=5))
    raises_structural(make_array(t.null(), 5, [], null_count=2), "expected null_count 5")
    raises_structural(make_array(t.null(), 5, [u8(b"\x00")]), "expected 0 buffers")


def test_rejects_negative_length_and_offset() -> None:
    raises_structural(make_array(t.int8(), -1, [None, u8(b"")]), "non-negative length")
    raises_structural(make_array(t.int8(), 1, [None, u8(b"\x00")], offset=-2), "offset")


def test_rejects_wrong_child_count_and_type() -> None:
    arr = from_pa(pa.array([[1], [2]], pa.list_(pa.int32())))
    raises_structural(rebuild(arr, children=()), "expected 1 children", "found 0")
    wrong = from_pa(pa.array([1, 2], pa.int64()))
    err = raises_structural(rebuild(arr, children=(wrong,)), "expected child type int32")
    assert err.field_path == "col.item"


def test_rejects_struct_child_shorter_than_parent() -> None:
    arr = from_pa(pa.array([{"a": 1, "b": 2}, {"a": 3, "b": 4}]))
    short_b = arr.children[1].slice(0, 1)
    err = raises_structural(rebuild(arr, children=(arr.children[0], short_b)), "child too short")
    assert err.field_path == "col.b"
    assert "expected length >= 2" in str(err) and "found 1" in str(err)


def test_struct_child_length_checked_against_offset_plus_length() -> None:
    arr = from_pa(pa.array([{"a": 1}, {"a": 2}, {"a": 3}]))
    sliced = rebuild(arr, offset=1, length=2)
    validate_array(sliced)
    short = rebuild(sliced, children=(arr.children[0].slice(0, 2),))
    raises_structural(short, "expected length >= 3 (offset + length)")


def test_rejects_fixed_size_list_child_too_short() -> None:
    arr = from_pa(pa.array([[1, 2], [3, 4]], pa.list_(pa.int8(), 2)))
    short = rebuild(arr, children=(arr.children[0].slice(0, 3),))
    raises_structural(short, "expected length >= 4", "list_size", "found 3")


def test_rejects_list_last_offset_past_child() -> None:
    arr = from_pa(pa.array([[1, 2], [3]], pa.list_(pa.int32())))
    bad = rebuild(arr, buffers=(None, i32(0, 2, 7)))
    raises_structural(bad, "expected offsets[2] <= child length 3, found 7")


def test_rejects_binary_last_offset_past_data() -> None:
    arr = make_array(t.binary(), 2, [None, i32(0, 2, 9), u8(b"abcd")])
    raises_structural(arr, "expected offsets[2] <= data size 4, found 9")


def test_rejects_negative_first_offset() -> None:
    arr = make_array(t.binary(), 1, [None, i32(-1, 2), u8(b"abcd")])
    raises_structural(arr, "expected offsets[0] >= 0, found -1")


def test_rejects_dictionary_missing_or_of_wrong_type() -> None:
    arr = from_pa(pa.array(["x", "y"]).dictionary_encode())
    raises_structural(rebuild(arr, dictionary=None), "expected a dictionary of string")
    wrong = from_pa(pa.array([1, 2]))
    raises_structural(rebuild(arr, dictionary=wrong), "found int64")


def test_rejects_run_ends_and_values_of_different_lengths() -> None:
    arr = from_pa(pa.RunEndEncodedArray.from_arrays(pa.array([2, 4], pa.int32()), ["a", "b"]))
    run_ends, values = arr.children
    bad = rebuild(arr, children=(run_ends, values.slice(0, 1)))
    err = raises_structural(bad, "expected as many run ends as values (1), found 2")
    assert err.field_path == "col.run_ends"


def test_rejects_run_ends_not_covering_the_array() -> None:
    arr = from_pa(pa.RunEndEncodedArray.from_arrays(pa.array([2, 4], pa.int32()), ["a", "b"]))
    raises_structural(rebuild(arr, length=5), "expected the last run end >= 5", "found 4")
    validate_array(rebuild(arr, length=3, offset=1))
    raises_structural(rebuild(arr, length=4, offset=1), "expected the last run end >= 5")


def test_rejects_union_with_null_count_and_short_children() -> None:
    arr = from_pa(VALID[16])
    raises_structural(rebuild(arr, null_count=1), "expected null_count 0")
    kids = (arr.children[0].slice(0, 2), arr.children[1])
    err = raises_structural(rebuild(arr, children=kids), "child too short")
    assert err.field_path == "col.0"


def test_view_array_may_have_any_number_of_data_buffers() -> None:
    arr = from_pa(pa.array(["x" * 20, "y"], pa.string_view()))
    both_levels(rebuild(arr, buffers=(*arr.buffers, u8(b"unused"))))
    raises_structural(rebuild(arr, buffers=arr.buffers[:1]), "expected 2 or more buffers")


def test_structural_level_reads_no_values() -> None:
    # garbage offsets in the middle are invisible to the structural level
    arr = make_array(t.string(), 3, [None, i32(0, 9, 1, 3), u8(b"abc")])
    validate_array(arr)
    raises_full_only(arr, "non-decreasing")


# --------------------------------------------------------------------------------------
# full level: values


def test_rejects_non_monotonic_offsets_with_position() -> None:
    offsets = i32(0, 2, 5, 9, 17, 12, 20)
    arr = make_array(t.binary(), 6, [None, offsets, u8(bytes(20))])
    err = raises_full_only(
        arr, "offsets must be non-decreasing: expected offsets[5] >= 17, found 12"
    )
    assert err.field_path == "col"


def test_non_monotonic_offsets_reported_in_buffer_positions_for_slices() -> None:
    arr = make_array(t.binary(), 3, [None, i32(0, 1, 2, 1, 3), u8(bytes(3))], offset=1)
    raises_full_only(arr, "expected offsets[3] >= 2, found 1")
    both_levels(rebuild(arr, offset=0, length=2))


def test_rejects_non_monotonic_list_offsets_in_nested_path() -> None:
    inner = make_array(t.list_(t.int8()), 2, [None, i32(0, 3, 1)], [
        make_array(t.int8(), 3, [None, u8(b"abc")])
    ])
    outer_type = t.struct([t.field("a", inner.type)])
    outer = make_array(outer_type, 2, [None], [inner])
    err = raises_full_only(outer, "expected offsets[2] >= 3, found 1", path="col")
    assert err.field_path == "col.a"


def test_rejects_invalid_utf8_with_slot() -> None:
    arr = make_array(t.string(), 3, [None, i32(0, 1, 3, 4), u8(b"a\xc3(z")])
    err = raises_full_only(arr, "expected valid UTF-8 in slot 1", "0xc3")
    assert err.field_path == "col"


def test_rejects_utf8_split_across_two_values() -> None:
    # "é" is valid as a whole range, but not once split between slot 0 and slot 1
    arr = make_array(t.string(), 2, [None, i32(0, 1, 2), u8("é".encode())])
    raises_full_only(arr, "expected valid UTF-8 in slot 1", "continuation byte 0xa9")


def test_rejects_utf8_truncated_at_end_of_last_value() -> None:
    arr = make_array(t.large_string(), 2, [None, i64(0, 1, 2), u8(b"a\xe6")])
    raises_full_only(arr, "slot 1")


def test_invalid_utf8_in_null_slot_is_allowed_like_pyarrow() -> None:
    arr = make_array(t.string(), 3, [u8(b"\x05"), i32(0, 1, 2, 3), u8(b"a\xffb")])
    both_levels(arr)


def test_invalid_utf8_in_valid_slot_after_null_slot_is_found() -> None:
    arr = make_array(t.string(), 3, [u8(b"\x06"), i32(0, 1, 2, 3), u8(b"\xffa\xff")])
    raises_full_only(arr, "slot 2")


def test_binary_accepts_any_bytes() -> None:
    both_levels(make_array(t.binary(), 2, [None, i32(0, 1, 2), u8(b"\xff\xfe")]))


def test_rejects_dictionary_index_out_of_range_in_valid_slot() -> None:
    arr = from_pa(pa.array(["x", "y", "x"]).dictionary_encode())
    bad = rebuild(arr, buffers=(None, i32(0, 2, 1)))
    raises_full_only(bad, "dictionary index out of range: expected 0..1 at slot 1, found 2")
    negative = rebuild(arr, buffers=(None, i32(0, -1, 1)))
    raises_full_only(negative, "found -1")


def test_dictionary_index_out_of_range_in_null_slot_is_allowed() -> None:
    arr = from_pa(pa.array(["x", "y", "x"]).dictionary_encode())
    both_levels(rebuild(arr, buffers=(u8(b"\x05"), i32(0, 99, 1))))


def test_rejects_undeclared_union_type_code() -> None:
    parr = pa.UnionArray.from_sparse(
        pa.array([5, 7, 5], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])],
        type_codes=[5, 7],
    )
    arr = from_pa(parr)
    both_levels(arr)
    bad = rebuild(arr, buffers=(u8(b"\x05\x06\x05"),))
    raises_full_only(bad, "expected a declared union type code [5, 7] at slot 1, found 6")


def test_rejects_dense_union_offset_outside_child() -> None:
    arr = from_pa(VALID[17])  # children lengths 2 and 1
    bad = rebuild(arr, buffers=(arr.buffers[0], i32(0, 1, 1)))
    err = raises_full_only(
        bad, "dense union offset out of range: expected offsets[1] in 0..0", "found 1"
    )
    assert "'1'" in str(err)
    raises_full_only(rebuild(arr, buffers=(arr.buffers[0], i32(0, -1, 1))), "found -1")


def test_rejects_bad_run_ends() -> None:
    values = make_array(t.string(), 3, [None, i32(0, 1, 2, 3), u8(b"abc")])
    ree_t = t.run_end_encoded(t.int32(), t.string())

    def ree(*ends: int) -> Array:
        run_ends = make_array(t.int32(), len(ends), [None, i32(*ends)])
        return make_array(ree_t, 6, [], [run_ends, values])

    both_levels(ree(2, 3, 6))
    err = raises_full_only(ree(2, 2, 6), "strictly increasing", "expected run_ends[1] > 2, found 2")
    assert err.field_path == "col.run_ends"
    raises_full_only(ree(0, 3, 6), "expected run ends > 0, found run_ends[0] = 0")
    raises_full_only(ree(4, 3, 6), "expected run_ends[1] > 4, found 3")


def test_rejects_null_run_end() -> None:
    values = make_array(t.int8(), 2, [None, u8(b"\x01\x02")])
    run_ends = make_array(t.int16(), 2, [u8(b"\x02"), np.array([1, 4], "<i2").view(np.uint8)])
    arr = make_array(t.run_end_encoded(t.int16(), t.int8()), 4, [], [run_ends, values])
    raises_full_only(arr, "expected no null run ends, found 1")


def test_handmade_views_pass_both_levels() -> None:
    data = u8(b"0123456789abcdefghij")
    views = _views((3, b"abc"), (15, b"5678", 0, 5), (0, b""))
    arr = make_array(t.string_view(), 3, [None, views, data])
    both_levels(arr)
    assert from_pa(pa.array(["abc", "56789abcdefghij", ""], pa.string_view())).type == arr.type


def test_rejects_view_past_its_data_buffer() -> None:
    data = u8(b"0123456789abcdefghij")
    views = _views((3, b"abc"), (16, b"5678", 0, 5))
    arr = make_array(t.binary_view(), 2, [None, views, data])
    raises_full_only(arr, "view out of range", "slot 1", "5 + 16")


def test_rejects_view_buffer_index_out_of_range() -> None:
    data = u8(b"0123456789abcdefghij")
    arr = make_array(t.binary_view(), 1, [None, _views((13, b"0123", 1, 0)), data])
    raises_full_only(arr, "view buffer index out of range: expected 0..0 at slot 0, found 1")


def test_rejects_view_prefix_mismatch() -> None:
    data = u8(b"0123456789abcdefghij")
    arr = make_array(t.binary_view(), 1, [None, _views((13, b"XXXX", 0, 0)), data])
    raises_full_only(arr, "view prefix mismatch at slot 0", "b'0123'", "b'XXXX'")


def test_rejects_negative_view_length() -> None:
    arr = make_array(t.binary_view(), 1, [None, _views((-1, b""))])
    raises_full_only(arr, "expected a view length >= 0 at slot 0, found -1")


def test_rejects_invalid_utf8_in_string_view() -> None:
    data = u8(b"0123456789abc\xff")
    views = _views((2, b"ok"), (14, b"0123", 0, 0))
    raises_full_only(make_array(t.string_view(), 2, [None, views, data]), "UTF-8 in slot 1")
    inline = _views((2, b"\xc3("),)
    raises_full_only(make_array(t.string_view(), 1, [None, inline]), "UTF-8 in slot 0")
    both_levels(make_array(t.binary_view(), 1, [None, inline]))


def test_bad_view_in_null_slot_is_allowed() -> None:
    views = _views((2, b"ok"), (99, b"zzzz", 5, 0))
    both_levels(make_array(t.string_view(), 2, [u8(b"\x01"), views]))


def test_rejects_list_view_out_of_child() -> None:
    child = make_array(t.int32(), 3, [None, i32(1, 2, 3)])
    lv_t = t.list_view(t.int32())

    def lv(offsets: np.ndarray, sizes: np.ndarray, validity: np.ndarray | None = None) -> Array:
        return make_array(lv_t, 2, [validity, offsets, sizes], [child])

    both_levels(lv(i32(2, 0), i32(1, 3)))
    raises_full_only(lv(i32(2, 0), i32(2, 1)), "expected offsets + sizes[0] <= child length 3")
    raises_full_only(lv(i32(0, 0), i32(1, -1)), "expected sizes[1] >= 0, found -1")
    raises_full_only(lv(i32(0, 4), i32(1, 0)), "expected offsets[1] in 0..3, found 4")
    # spec: every list-view value, null ones included, stays within the child
    raises_full_only(lv(i32(0, 100), i32(1, 5), u8(b"\x01")), "offsets[1]")


def test_decimal_precision_is_opt_in() -> None:
    parr = pa.array([decimal.Decimal("123.45"), None], pa.decimal128(5, 2))
    arr = from_pa(parr)
    narrow = rebuild(arr, type=t.decimal128(4, 2))
    validate_array(narrow, full=True)
    with pytest.raises(ArrowInvalid, match="at most 4 digits at slot 0, found unscaled value 123"):
        validate_array(narrow, full=True, check_decimal_precision=True)


@pytest.mark.parametrize("width", [32, 64, 128, 256])
def test_decimal_precision_bounds_for_every_width(width: int) -> None:
    precision = {32: 9, 64: 18, 128: 38, 256: 76}[width]
    limit = 10**precision - 1
    nbytes = width // 8

    def arr(*values: int, valid: bytes | None = None) -> Array:
        raw = b"".join(v.to_bytes(nbytes, "little", signed=True) for v in values)
        return make_array(
            t.DecimalType(width, precision, 0),
            len(values),
            [None if valid is None else u8(valid), u8(raw)],
        )

    validate_array(arr(limit, -limit, 0, 1, -1), full=True, check_decimal_precision=True)
    for bad in (limit + 1, -limit - 1, -(2 ** (width - 1))):
        with pytest.raises(ArrowInvalid, match=f"found unscaled value {bad}"):
            validate_array(arr(0, bad), full=True, check_decimal_precision=True)
    # out-of-range value in a null slot is fine
    validate_array(arr(0, limit + 1, valid=b"\x01"), full=True, check_decimal_precision=True)


def test_decimal_precision_of_small_precision_128() -> None:
    ok = pa.array([decimal.Decimal("-999"), decimal.Decimal("999")], pa.decimal128(3, 0))
    arr = from_pa(ok)
    validate_array(arr, full=True, check_decimal_precision=True)
    with pytest.raises(ArrowInvalid, match="found unscaled value -999"):
        validate_array(rebuild(arr, type=t.decimal128(2, 0)), full=True,
                       check_decimal_precision=True)


def test_rejects_null_map_keys() -> None:
    keys = make_array(t.string(), 2, [u8(b"\x01"), i32(0, 1, 1), u8(b"a")])
    items = make_array(t.int8(), 2, [None, u8(b"\x01\x02")])
    map_t = t.map_(t.string(), t.int8())
    entries = make_array(map_t.entries_field.type, 2, [None], [keys, items])
    arr = make_array(map_t, 1, [None, i32(0, 2)], [entries])
    err = raises_full_only(arr, "expected no null map keys, found 1")
    assert err.field_path == "col.entries.key"


def test_errors_inside_children_carry_the_field_path() -> None:
    parr = pa.array([[{"a": ["x"]}]], pa.list_(pa.struct([("a", pa.list_(pa.string()))])))
    arr = from_pa(parr)
    leaf = arr.children[0].children[0].children[0]
    broken_leaf = rebuild(leaf, buffers=(None, leaf.buffers[1], u8(b"\xff")))
    inner = rebuild(arr.children[0].children[0], children=(broken_leaf,))
    struct = rebuild(arr.children[0], children=(inner,))
    top = rebuild(arr, children=(struct,))
    err = raises_full_only(top, "UTF-8", path="col")
    assert err.field_path == "col.item.a.item"


def test_dictionary_errors_are_located_in_the_dictionary() -> None:
    arr = from_pa(pa.array(["x", "y"]).dictionary_encode())
    d = arr.dictionary
    bad_dict = rebuild(d, buffers=(None, i32(0, 1, 0), d.buffers[2]))
    err = raises_full_only(rebuild(arr, dictionary=bad_dict), "non-decreasing")
    assert err.field_path == "col.dictionary"


def test_extension_array_validates_its_storage() -> None:
    ext = t.uuid()
    good = make_array(ext, 1, [None, u8(bytes(16))])
    both_levels(good)
    raises_structural(make_array(ext, 2, [None, u8(bytes(16))]), "expected at least 32 bytes")


def test_rejects_non_array_input() -> None:
    with pytest.raises(ArrowInvalid, match="expected a quiver Array, found list"):
        validate_array([1, 2])  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# helpers


def test_ragged_indices_concatenates_ranges() -> None:
    assert ragged_indices(np.array([3, 10, 0]), np.array([2, 0, 3])).tolist() == [3, 4, 0, 1, 2]
    assert ragged_indices(np.array([], np.int64), np.array([], np.int64)).tolist() == []


def test_view_slices_reads_inline_and_buffer_values() -> None:
    parr = pa.array(["tiny", "a value past twelve bytes", "", "x" * 13], pa.string_view())
    arr = from_pa(parr)
    gathered, starts, lengths = view_slices(
        arr.buffers[1], list(arr.buffers[2:]), np.arange(4)
    )
    got = [bytes(gathered[s : s + n]).decode() for s, n in zip(starts, lengths)]
    assert got == parr.to_pylist()


def test_large_string_full_validation_is_vectorized_over_a_million_values() -> None:
    parr = pa.array([f"v{i % 977}é" for i in range(1_000_000)], pa.large_string())
    arr = from_pa(parr)
    validate_array(arr, full=True)
    data = np.array(arr.buffers[2])
    data[-1] = 0xFF
    with pytest.raises(ArrowInvalid, match="slot 999999"):
        validate_array(rebuild(arr, buffers=(arr.buffers[0], arr.buffers[1], data)), full=True)


def test_string_view_inline_padding_need_not_be_zero() -> None:
    views = u8(np.int32(2).tobytes() + b"ok\xff\xff\xfe" + bytes(7))
    both_levels(make_array(t.string_view(), 1, [None, views]))


def test_string_view_inline_value_cut_inside_a_character() -> None:
    views = u8(np.int32(2).tobytes() + "aé".encode() + bytes(9))  # 'a' + first byte of 'é'
    raises_full_only(make_array(t.string_view(), 1, [None, views]), "UTF-8 in slot 0")


def test_string_view_ignores_bad_bytes_outside_referenced_ranges() -> None:
    data = u8(b"\xff\xff" + b"0123456789abcdef" + b"\xfe")
    views = _views((16, b"0123", 0, 2))
    both_levels(make_array(t.string_view(), 1, [None, views, data]))
    bad = _views((17, b"0123", 0, 2))  # reaches the 0xfe byte
    raises_full_only(make_array(t.string_view(), 1, [None, bad, data]), "UTF-8 in slot 0")


def test_string_view_value_ending_inside_a_character_of_a_valid_buffer() -> None:
    data = u8("0123456789abcé".encode())  # 15 bytes, 'é' is the last two
    views = _views((14, b"0123", 0, 0))
    raises_full_only(
        make_array(t.string_view(), 1, [None, views, data]), "UTF-8 in slot 0", "inside"
    )
    both_levels(make_array(t.string_view(), 1, [None, _views((15, b"0123", 0, 0)), data]))


def test_string_value_ending_inside_a_character_before_a_null_slot() -> None:
    # slot 0 = b"a\xc3" (cut), slot 1 is null and holds b"\xa9": the region decodes fine
    arr = make_array(t.string(), 2, [u8(b"\x01"), i32(0, 2, 3), u8("aé".encode())])
    raises_full_only(arr, "UTF-8 in slot 0")


# --------------------------------------------------------------------------------------
# mutation: any damage is either harmless or an ArrowInvalid, never another exception

def _damage(arr: Array, data: st.DataObject) -> Array:
    """``arr`` with one byte of one buffer (here or below) changed, or a bad length/offset."""
    nodes = [arr]
    k = 0
    while k < len(nodes):
        nodes.extend(nodes[k].children)
        if nodes[k].dictionary is not None:
            nodes.append(nodes[k].dictionary)
        k += 1
    target = data.draw(st.integers(0, len(nodes) - 1), label="node")
    node = nodes[target]
    kind = data.draw(st.sampled_from(["byte", "length", "offset", "truncate"]), label="kind")
    if kind == "length":
        changed = rebuild(node, length=data.draw(st.integers(0, len(node) + 5)))
    elif kind == "offset":
        changed = rebuild(node, offset=data.draw(st.integers(0, 5)))
    else:
        present = [i for i, b in enumerate(node.buffers) if b is not None and b.size]
        if not present:
            return arr
        i = data.draw(st.sampled_from(present), label="buffer")
        buf = np.array(node.buffers[i])
        if kind == "truncate":
            buf = buf[: data.draw(st.integers(0, buf.size - 1))]
        else:
            buf[data.draw(st.integers(0, buf.size - 1))] = data.draw(st.integers(0, 255))
        bufs = list(node.buffers)
        bufs[i] = buf
        changed = rebuild(node, buffers=tuple(bufs))
    return _replace_node(arr, node, changed)


def _replace_node(root: Array, old: Array, new: Array) -> Array:
    if root is old:
        return new
    kids = tuple(_replace_node(c, old, new) for c in root.children)
    dictionary = root.dictionary
    if dictionary is not None:
        dictionary = _replace_node(dictionary, old, new)
    if all(a is b for a, b in zip(kids, root.children)) and dictionary is root.dictionary:
        return root
    return rebuild(root, children=kids, dictionary=dictionary)


@pytest.mark.parametrize("parr", VALID, ids=lambda a: str(a.type))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_damaged_arrays_validate_or_raise_arrow_invalid(
    parr: pa.Array, data: st.DataObject
) -> None:
    from quiver.array.equal import array_equals

    arr = _damage(from_pa(parr), data)
    try:
        validate_array(arr, full=True, check_decimal_precision=True)
    except ArrowInvalid:
        return
    # fully valid: equality must work and see the array equal to itself (no NaN here)
    has_nan = pa.types.is_floating(parr.type)
    result = array_equals(arr, arr)
    assert result or has_nan
    assert len(arr.to_pylist()) == len(arr)


# --------------------------------------------------------------------------------------
# the arrow-testing integration files: everything pyarrow reads validates fully

_GOLD_STREAMS = sorted((INTEGRATION / "cpp-21.0.0").glob("*.stream"))


@pytest.mark.parametrize("path", _GOLD_STREAMS or [None], ids=lambda p: getattr(p, "name", "none"))
def test_gold_integration_columns_pass_full_validation(path: Path | None) -> None:
    import pyarrow.ipc as pipc

    from quiver.array.equal import array_equals

    require_shared(INTEGRATION / "cpp-21.0.0")
    assert path is not None
    tbl = pipc.open_stream(path.read_bytes()).read_all()
    checked = 0
    for i, column in enumerate(tbl.columns):
        name = tbl.schema.field(i).name
        for k in range(column.num_chunks):
            try:
                chunk = column.chunk(k)
            except KeyError:
                continue  # pyarrow 26 has no Python class for month / day-time intervals
            arr = from_pa(chunk)
            validate_array(arr, full=True, check_decimal_precision=True, path=name)
            copy = pa.concat_arrays([chunk])
            assert array_equals(arr, from_pa(copy)) == chunk.equals(copy), name
            checked += 1
    assert checked or not tbl.num_rows or "interval" in path.name


def test_full_validation_catches_non_monotonic_offsets() -> None:
    batch = qv.record_batch({"s": qv.array(["ab", "cd", "ef"])})
    sink = ipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue())
    pos = data.find(struct.pack("<iiii", 0, 2, 4, 6))
    data[pos + 4 : pos + 8] = struct.pack("<i", 5)
    data[pos + 8 : pos + 12] = struct.pack("<i", 1)
    with pytest.raises(qv.ArrowInvalid) as info:
        list(ipc.open_stream(bytes(data), validate="full"))
    assert info.value.field_path and info.value.field_path.startswith("s")
    assert info.value.message_index == 1


def test_validate_full_catches_offsets_past_the_child():
    child = array_struct(2, [None, int64_buffer([1, 2])])
    offsets = np.array([0, 1, 5], "<i4").view(np.uint8)  # 5 > child length 2
    pair = capsules(
        schema_struct(b"+l", children=[schema_struct(b"l")]),
        array_struct(2, [None, offsets], children=[child]),
    )
    with pytest.raises(ArrowInvalid):
        import_array(pair, validate="full")
    gc.collect()
    assert RELEASED.count("array") == 1


def test_writer_rejects_an_array_whose_buffer_is_too_short() -> None:
    from quiver.array import make_array
    from quiver.errors import ArrowInvalid

    short = make_array(t.int64(), 4, [None, np.zeros(8, np.uint8)])
    schema = t.schema([t.field("c", t.int64())])
    with pytest.raises(ArrowInvalid, match="expected at least 32 bytes for 4 slots, found 8"):
        to_json(schema, [JsonBatch(schema, (short,), 4)])


def test_from_buffers_runs_the_structural_validation() -> None:
    with pytest.raises(ArrowInvalid):
        qv.Array.from_buffers(qv.int32(), 4, [None, b"\x00" * 8])


def test_validate_full_catches_bad_offsets() -> None:
    bad = make_array(t.string(), 2, [None, np.array([0, 3, 1], "<i4").view(np.uint8),
                                     np.frombuffer(b"abc", np.uint8)])
    bad.validate()  # sizes are fine
    with pytest.raises(ArrowInvalid):
        bad.validate(full=True)
