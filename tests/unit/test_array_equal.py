"""Tests for quiver.array.equal: logical equality, checked against pyarrow's Array.equals."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

import quiver.types as t
from quiver.array import make_array
from quiver.array.equal import array_equals
from quiver.errors import ArrowInvalid
from tests.unit._helpers import from_pa, i32, rebuild, u8


def _doubled(values: list, pt: pa.DataType) -> pa.Array:
    return pa.array(values + values, pt)


def _sparse_union() -> pa.Array:
    ids = pa.array([0, 1, 0, 1, 0, 1, 0, 1], pa.int8())
    return pa.UnionArray.from_sparse(
        ids,
        [pa.array([1, 2, None, 4, 1, 9, None, 4]), pa.array(["a", "b", "c", None] * 2)],
    )


def _dense_union() -> pa.Array:
    return pa.UnionArray.from_dense(
        pa.array([0, 1, 0, 0, 1, 0], pa.int8()),
        pa.array([0, 0, 1, 2, 1, 3], pa.int32()),
        [pa.array([7, None, 7, None]), pa.array(["q", "q"])],
    )


# arrays whose two halves are equal, so that slices at different offsets can be equal
CASES = [
    _doubled([1, None, 3, 3], pa.int64()),
    _doubled([1.5, None, float("nan"), -0.0], pa.float64()),
    _doubled([0.0, 2.5, None], pa.float16()),
    _doubled([True, None, False, True, True], pa.bool_()),
    _doubled(["a", None, "héllo", "", "a"], pa.string()),
    _doubled([b"x", None, b"yy", b"x"], pa.large_binary()),
    _doubled([b"ab", None, b"ab"], pa.binary(2)),
    _doubled(["short", None, "a string longer than twelve bytes", "short"], pa.string_view()),
    _doubled([b"z" * 20, b"y", None, b"z" * 20], pa.binary_view()),
    _doubled([[1, 2], None, [], [1, 2]], pa.list_(pa.int32())),
    _doubled([[1, None], None, [3]], pa.large_list(pa.int16())),
    _doubled([[1, 2], None, [3], [1, 2]], pa.list_view(pa.int32())),
    _doubled([[1, 2], None, [1, 2]], pa.list_(pa.int8(), 2)),
    _doubled([{"a": 1, "b": "x"}, None, {"a": None, "b": "x"}, {"a": 1, "b": "x"}], None),
    _doubled([[("k", 1)], None, [("k", 1)], []], pa.map_(pa.string(), pa.int64())),
    _doubled([decimal.Decimal("1.5"), None, decimal.Decimal("1.5")], pa.decimal128(5, 2)),
    _doubled([decimal.Decimal("1.5"), None], pa.decimal256(40, 2)),
    _doubled([(1, 2, 3), None, (1, 2, 3)], pa.month_day_nano_interval()),
    _doubled([[["a"], None], [], None, [["a"], None]], pa.list_(pa.list_(pa.string()))),
    _sparse_union(),
    _dense_union(),
    pa.array(["x", "y", None, "x", "x", "y", None, "x"]).dictionary_encode(),
    pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 5, 7, 8], pa.int32()), [1, None, 1, 2, 1]),
    pa.nulls(6),
]


@pytest.mark.parametrize("parr", CASES, ids=lambda a: str(a.type))
def test_slice_equality_matches_pyarrow(parr: pa.Array) -> None:
    arr = from_pa(parr)
    n = len(arr)
    for length in (0, 1, 2, 3):
        for i in range(n - length + 1):
            for j in range(n - length + 1):
                expected = parr.slice(i, length).equals(parr.slice(j, length))
                got = array_equals(arr.slice(i, length), arr.slice(j, length))
                assert got == expected, (i, j, length)


@pytest.mark.parametrize("parr", CASES, ids=lambda a: str(a.type))
def test_equal_to_a_fresh_copy_unless_nan(parr: pa.Array) -> None:
    copy = pa.concat_arrays([parr])
    assert array_equals(from_pa(parr), from_pa(copy)) == parr.equals(copy)


@pytest.mark.parametrize("parr", CASES, ids=lambda a: str(a.type))
def test_equal_to_a_sliced_copy_of_the_second_half(parr: pa.Array) -> None:
    half = len(parr) // 2
    second = pa.concat_arrays([parr.slice(half)])
    got = array_equals(from_pa(parr).slice(0, half), from_pa(second).slice(0, half))
    assert got == parr.slice(0, half).equals(second.slice(0, half))


def test_nan_is_not_equal_to_nan_like_pyarrow() -> None:
    arr = from_pa(pa.array([1.0, float("nan")]))
    assert not array_equals(arr, arr)
    assert array_equals(arr.slice(0, 1), arr.slice(0, 1))
    assert array_equals(from_pa(pa.array([-0.0])), from_pa(pa.array([0.0])))


def test_null_slots_with_different_garbage_are_equal() -> None:
    validity = u8(b"\x05")  # slots 0 and 2 valid
    a = make_array(t.int32(), 3, [validity, i32(1, 111, 3)])
    b = make_array(t.int32(), 3, [validity, i32(1, 222, 3)])
    assert array_equals(a, b)
    c = make_array(t.int32(), 3, [validity, i32(1, 222, 4)])
    assert not array_equals(a, c)


def test_null_string_slots_with_different_lengths_are_equal() -> None:
    validity = u8(b"\x01")
    a = make_array(t.string(), 2, [validity, i32(0, 1, 1), u8(b"x")])
    b = make_array(t.string(), 2, [validity, i32(0, 1, 9), u8(b"xgarbage!")])
    assert array_equals(a, b)


def test_null_list_slots_with_different_children_are_equal() -> None:
    child_a = make_array(t.int8(), 3, [None, u8(b"\x01\x02\x03")])
    child_b = make_array(t.int8(), 2, [None, u8(b"\x01\x09")])
    a = make_array(t.list_(t.int8()), 2, [u8(b"\x01"), i32(0, 1, 3)], [child_a])
    b = make_array(t.list_(t.int8()), 2, [u8(b"\x01"), i32(0, 1, 2)], [child_b])
    assert array_equals(a, b)


def test_padding_and_unused_buffer_tails_are_ignored() -> None:
    a = make_array(t.int16(), 2, [None, np.array([5, 6, 7, 8], "<i2").view(np.uint8)])
    b = make_array(t.int16(), 2, [None, np.array([5, 6, 0, 0], "<i2").view(np.uint8)])
    assert array_equals(a, b)
    bools_a = make_array(t.bool_(), 3, [None, u8(b"\xfd")])
    bools_b = make_array(t.bool_(), 3, [None, u8(b"\x05")])
    assert array_equals(bools_a, bools_b)


def test_offsets_honoured_between_differently_based_buffers() -> None:
    a = make_array(t.string(), 2, [None, i32(0, 2, 3, 5), u8(b"xxbcd")], offset=1)
    b = make_array(t.string(), 2, [None, i32(10, 11, 13), u8(b"..........bcd")])
    assert array_equals(a, b)


def test_validity_difference_makes_arrays_unequal() -> None:
    a = make_array(t.int8(), 2, [None, u8(b"\x01\x02")])
    b = make_array(t.int8(), 2, [u8(b"\x01"), u8(b"\x01\x02")])
    assert not array_equals(a, b)
    assert array_equals(a.slice(0, 1), b.slice(0, 1))


def test_different_types_or_lengths_are_unequal() -> None:
    a = from_pa(pa.array([1, 2], pa.int32()))
    b = rebuild(a, type=t.uint32())
    assert not array_equals(a, b)
    assert not array_equals(a, a.slice(0, 1))
    assert not array_equals(a, [1, 2])  # type: ignore[arg-type]


def test_dictionary_arrays_compare_indices_and_dictionaries_like_pyarrow() -> None:
    p1 = pa.DictionaryArray.from_arrays(pa.array([0, 1]), pa.array(["a", "b"]))
    p2 = pa.DictionaryArray.from_arrays(pa.array([1, 0]), pa.array(["b", "a"]))
    p3 = pa.DictionaryArray.from_arrays(pa.array([0, 1]), pa.array(["a", "b", "c"]))
    assert array_equals(from_pa(p1), from_pa(p1))
    assert array_equals(from_pa(p1), from_pa(p2)) == p1.equals(p2)
    assert array_equals(from_pa(p1), from_pa(p3)) == p1.equals(p3)


def test_run_end_encoded_compares_decoded_runs() -> None:
    r1 = pa.RunEndEncodedArray.from_arrays([2, 3], [1, 2])
    r2 = pa.RunEndEncodedArray.from_arrays([1, 2, 3], [1, 1, 2])
    assert r1.equals(r2)
    assert array_equals(from_pa(r1), from_pa(r2))
    assert not array_equals(from_pa(r1), from_pa(r2).slice(0, 3).slice(0, 2).slice(0, 3))
    assert array_equals(from_pa(r1).slice(1), from_pa(r2).slice(1))


def test_extension_arrays_compare_type_and_storage() -> None:
    storage = u8(bytes(range(32)))
    a = make_array(t.uuid(), 2, [None, storage])
    b = make_array(t.uuid(), 2, [None, storage.copy()])
    c = make_array(t.extension("other", t.binary(16)), 2, [None, storage])
    assert array_equals(a, b)
    assert not array_equals(a, c)
    assert not array_equals(a.slice(0, 1), b.slice(1, 1))


def test_fixed_size_list_of_size_zero() -> None:
    child = make_array(t.int8(), 0, [None, u8(b"")])
    fl = t.list_(t.int8(), 0)
    a = make_array(fl, 3, [None], [child])
    assert array_equals(a, make_array(fl, 3, [None], [child]))


def test_malformed_arrays_raise_arrow_invalid_not_index_error() -> None:
    good = make_array(t.string(), 1, [None, i32(0, 2), u8(b"ab")])
    bad = make_array(t.string(), 1, [None, i32(50, 52), u8(b"ab")])
    with pytest.raises(ArrowInvalid, match="validate"):
        array_equals(good, bad)


def test_large_fixed_width_equality_is_exact() -> None:
    values = np.arange(1_000_000, dtype="<i8")
    a = make_array(t.int64(), values.size, [None, values.view(np.uint8)])
    other = values.copy()
    b = make_array(t.int64(), values.size, [None, other.view(np.uint8)])
    assert array_equals(a, b)
    other[777_777] = -1
    assert not array_equals(a, b)


# --------------------------------------------------------------------------------------
# views compared in place, and property tests against pyarrow

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TEXT = st.one_of(
    st.none(),
    st.text(alphabet="ab\u00e9", max_size=3),
    st.text(alphabet="ab", min_size=10, max_size=90),
)


def test_inline_views_with_different_padding_are_equal() -> None:
    from tests.unit._helpers import _views

    a = make_array(t.binary_view(), 1, [None, _views((3, b"abc\x01\x02"))])
    b = make_array(t.binary_view(), 1, [None, _views((3, b"abc\x09"))])
    assert array_equals(a, b)
    c = make_array(t.binary_view(), 1, [None, _views((3, b"abd"))])
    assert not array_equals(a, c)


def test_out_of_line_views_equal_across_buffers_and_offsets() -> None:
    from tests.unit._helpers import _views

    value = b"0123456789" * 8  # 80 bytes: past the word-by-word part
    a = make_array(
        t.binary_view(), 1, [None, _views((80, b"0123", 1, 3)), u8(b"x"), u8(b"xyz" + value)]
    )
    b = make_array(t.binary_view(), 1, [None, _views((80, b"0123", 0, 0)), u8(value)])
    assert array_equals(a, b)
    changed = value[:-1] + b"!"
    c = make_array(t.binary_view(), 1, [None, _views((80, b"0123", 0, 0)), u8(changed)])
    assert not array_equals(a, c)
    mid = value[:20] + b"!" + value[21:]
    d = make_array(t.binary_view(), 1, [None, _views((80, b"0123", 0, 0)), u8(mid)])
    assert not array_equals(b, d)


@settings(max_examples=60, deadline=None)
@given(st.lists(_TEXT, max_size=12), st.lists(_TEXT, max_size=12), st.integers(0, 4))
def test_string_like_equality_matches_pyarrow(left: list, right: list, cut: int) -> None:
    for pt in (pa.string(), pa.string_view(), pa.large_binary()):
        values_l = left if pt != pa.large_binary() else [
            None if v is None else v.encode() for v in left
        ]
        values_r = right if pt != pa.large_binary() else [
            None if v is None else v.encode() for v in right
        ]
        x, y = pa.array(values_l, pt), pa.array(values_r, pt)
        assert array_equals(from_pa(x), from_pa(y)) == x.equals(y)
        both = pa.array(values_l + values_l, pt)
        n = len(values_l)
        q = from_pa(both)
        assert array_equals(q.slice(0, n), q.slice(n, n))
        k = max(n - cut, 0)
        assert array_equals(q.slice(cut, k), q.slice(n + cut, k)) == both.slice(cut, k).equals(
            both.slice(n + cut, k)
        )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-3, 3)),
                                           max_size=4)), max_size=10),
    st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-3, 3)),
                                           max_size=4)), max_size=10),
)
def test_list_equality_matches_pyarrow(left: list, right: list) -> None:
    for pt in (pa.list_(pa.int8()), pa.large_list(pa.int8()), pa.list_view(pa.int8())):
        x, y = pa.array(left, pt), pa.array(right, pt)
        assert array_equals(from_pa(x), from_pa(y)) == x.equals(y)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 3), st.one_of(st.none(), st.integers(0, 2))), max_size=6),
    st.lists(st.tuples(st.integers(1, 3), st.one_of(st.none(), st.integers(0, 2))), max_size=6),
    st.integers(0, 3),
    st.integers(0, 3),
)
def test_run_end_encoded_equality_matches_decoded_values(
    left: list, right: list, off_l: int, off_r: int
) -> None:
    def ree(runs: list) -> pa.Array:
        ends = np.cumsum([n for n, _ in runs]).astype(np.int32)
        return pa.RunEndEncodedArray.from_arrays(
            pa.array(ends, pa.int32()), pa.array([v for _, v in runs], pa.int64())
        )

    if not left or not right:
        return
    x, y = ree(left), ree(right)
    off_l, off_r = min(off_l, len(x)), min(off_r, len(y))
    n = min(len(x) - off_l, len(y) - off_r)
    xs, ys = x.slice(off_l, n), y.slice(off_r, n)
    expected = xs.to_pylist() == ys.to_pylist()
    assert array_equals(from_pa(x).slice(off_l, n), from_pa(y).slice(off_r, n)) == expected


def test_floats_by_bits_tells_nan_from_nan_and_minus_zero_from_zero_at_any_depth():
    nan = float("nan")
    cases = [  # (a, b, equal by value, equal by bits)
        (pa.array([1.0, nan]), pa.array([1.0, nan]), False, True),
        (pa.array([-0.0]), pa.array([0.0]), True, False),
        (pa.array([[nan]], pa.list_(pa.float32())), pa.array([[nan]], pa.list_(pa.float32())),
         False, True),
        (pa.array([{"f": -0.0}]), pa.array([{"f": 0.0}]), True, False),
        (pa.array([nan, 2.0]).dictionary_encode(), pa.array([nan, 2.0]).dictionary_encode(),
         False, True),
    ]
    for a, b, by_value, by_bits in cases:
        qa, qb = from_pa(a), from_pa(b)
        assert array_equals(qa, qb) is by_value, a.type
        assert array_equals(qa, qb, floats_by_bits=True) is by_bits, a.type
        assert array_equals(qa, qa, floats_by_bits=True)
