"""cast (quiver.array.cast) against pyarrow's cast: numeric, decimal, temporal and
string/binary types; safe casts refuse overflow and truncation and name the row."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import quiver as qv
from quiver.interop import import_array, import_type

ts = dt.datetime(2024, 1, 2, 3, 4, 5)
CASES = [
    (pa.array([1, None, -3, 127], pa.int64()), pa.int8()),
    (pa.array([1, None, 3], pa.int8()), pa.uint64()),
    (pa.array([1, None, 2**32 - 1], pa.uint32()), pa.int64()),
    (pa.array([1, None, 2**53], pa.int64()), pa.float64()),
    (pa.array([1.0, None, -2.0, 3.0]), pa.int32()),
    (pa.array([1.5, None, -2.25]), pa.float32()),
    (pa.array([0.5, None], pa.float32()), pa.float64()),
    (pa.array([True, None, False]), pa.int8()),
    (pa.array([0, None, 7]), pa.bool_()),
    (pa.array([Decimal("1.25"), None, Decimal("-3.50")], pa.decimal128(5, 2)),
     pa.decimal128(12, 4)),
    (pa.array([Decimal("1.20"), None], pa.decimal128(5, 2)), pa.decimal64(4, 1)),
    (pa.array([Decimal("12.00"), None], pa.decimal32(6, 2)), pa.int16()),
    (pa.array([Decimal("1.25"), None], pa.decimal256(40, 2)), pa.float64()),
    (pa.array([5, None, -7], pa.int32()), pa.decimal128(12, 2)),
    (pa.array([Decimal("-1.25"), None, Decimal("12345678901234567890123.45")],
              pa.decimal256(40, 2)), pa.decimal256(45, 4)),
    (pa.array([Decimal("-123.00"), None, Decimal("-0.00")], pa.decimal128(20, 2)), pa.int64()),
    (pa.array([Decimal("-1234567890123456789.5"), None], pa.decimal128(30, 1)), pa.float64()),
    (pa.array([ts, None], pa.timestamp("s")), pa.timestamp("ns")),
    (pa.array([ts, None], pa.timestamp("us", "UTC")), pa.timestamp("ms", "UTC")),
    (pa.array([ts, None], pa.timestamp("us")), pa.date32()),
    (pa.array([ts, None], pa.timestamp("ms")), pa.date64()),
    (pa.array([dt.date(2020, 1, 1), None], pa.date32()), pa.date64()),
    (pa.array([dt.date(1969, 12, 31), None], pa.date64()), pa.date32()),
    (pa.array([dt.date(2020, 1, 1), None], pa.date32()), pa.timestamp("us")),
    (pa.array([5, None], pa.duration("s")), pa.duration("ms")),
    (pa.array([dt.time(1, 2, 3), None], pa.time32("s")), pa.time64("us")),
    (pa.array([1000, None], pa.int64()), pa.timestamp("ms")),
    (pa.array([ts, None], pa.timestamp("ms")), pa.int64()),
    (pa.array([100, None], pa.int32()), pa.date32()),
    (pa.array(["ab", None, "", "héllo"]), pa.large_string()),
    (pa.array(["ab", None, "a string longer than twelve"], pa.large_string()), pa.string()),
    (pa.array(["ab", None, "a string longer than twelve"]), pa.string_view()),
    (pa.array([b"ab", None, b"a value longer than twelve"], pa.binary_view()),
     pa.large_binary()),
    (pa.array(["x", None, "a value longer than twelve"], pa.string_view()), pa.binary()),
    (pa.array([b"ok", None], pa.binary()), pa.string()),
    (pa.array(["ab", None], pa.string()), pa.binary_view()),
    (pa.array(["1", None, "-42"]), pa.int32()),
    (pa.array(["1.5", None, "2"]), pa.float64()),
    (pa.array(["b", "a", None, "b"]).dictionary_encode(), pa.large_string()),
]


@pytest.mark.parametrize(("arr", "target"), CASES, ids=[f"{a.type}->{t}" for a, t in CASES])
def test_cast_matches_pyarrow(arr: pa.Array, target: pa.DataType) -> None:
    for source in (arr, arr.slice(1)):
        ours = import_array(source).cast(import_type(target))
        ours.validate(full=True)
        theirs = pc.cast(source, target)
        assert ours.type == import_type(target)
        assert ours.to_pylist() == import_array(theirs).to_pylist()


@pytest.mark.parametrize(
    ("values", "qtype", "target", "words"),
    [
        ([1, None, 300], qv.int64(), qv.int8(), "fit int8, found 300 at row 2"),
        ([0, -1], qv.int32(), qv.uint32(), "fit uint32, found -1 at row 1"),
        ([1.0, 2.5], qv.float64(), qv.int64(), "whole numbers .* 2.5 at row 1"),
        ([1e20], qv.float64(), qv.int32(), "fit int32, found 1e\\+20 at row 0"),
        ([2**53 + 1], qv.int64(), qv.float64(), "found 9007199254740993 at row 0"),
        ([None, 1500], qv.timestamp("ms"), qv.timestamp("s"), "losing data.* 1500 at row 1"),
        (["7", "x7"], qv.string(), qv.int64(), "'x7' at row 1"),
    ],
)
def test_safe_casts_name_the_row(values: list, qtype: qv.DataType, target: qv.DataType,
                                  words: str) -> None:
    with pytest.raises(qv.ArrowInvalid, match=words):
        qv.array(values, qtype).cast(target)


def test_unsafe_casts_truncate_like_pyarrow() -> None:
    src = pa.array([1.7, -1.7, None])
    ours = import_array(src).cast(qv.int8(), safe=False).to_pylist()
    assert ours == pc.cast(src, pa.int8(), safe=False).to_pylist()
    ms = pa.array([-1500, 1500], pa.timestamp("ms"))
    got = import_array(ms).cast(qv.timestamp("s"), safe=False)
    assert got.to_pylist() == pc.cast(ms, pa.timestamp("s"), safe=False).to_pylist()


def test_decimal_casts_check_precision_and_digits() -> None:
    with pytest.raises(qv.ArrowInvalid, match="fit decimal128\\(3, 0\\)"):
        qv.array([Decimal("1234")], qv.decimal128(6, 0)).cast(qv.decimal128(3, 0))
    with pytest.raises(qv.ArrowInvalid, match=r"losing digits.* 125 at row 0"):
        qv.array([Decimal("1.25")], qv.decimal128(5, 2)).cast(qv.decimal128(5, 1))


def test_binary_to_string_checks_utf8_per_row() -> None:
    with pytest.raises(qv.ArrowInvalid, match=r"UTF-8 .* row 1"):
        qv.array([b"ok", b"\xff\xfe"], qv.binary()).cast(qv.string())
    # a character split across two values is caught even though the bytes join up
    split = "é".encode()
    with pytest.raises(qv.ArrowInvalid, match="row 0"):
        qv.array([split[:1], split[1:]], qv.binary()).cast(qv.string())


def test_cast_accepts_pyarrow_types_and_refuses_the_unsupported() -> None:
    assert qv.array([1]).cast(pa.int16()).type == qv.int16()
    with pytest.raises(qv.NotSupported, match="casting list<item: int64> to string"):
        qv.array([[1]]).cast(qv.string())


@pytest.mark.parametrize("target", ["string", "large_string", "string_view"])
def test_integers_and_booleans_cast_to_text_as_pyarrow(target):
    import pyarrow as pa

    from quiver.array.cast import cast as q_cast
    from quiver.interop import import_array

    pa_target = getattr(pa, target)()
    cases = [
        pa.array([0, -5, None, 7, 127, -128], pa.int8()),
        pa.array([0, 5, None, 2**64 - 1], pa.uint64()),
        pa.array([-(2**63), 1, None, 2**63 - 1], pa.int64()),
        pa.array([True, False, None]),
        pa.array([], pa.int32()),
        pa.array([None, None], pa.int16()),
        pa.array([1, 2, 3, 4], pa.int32()).slice(1, 2),
    ]
    for case in cases:
        got = pa.array(q_cast(import_array(case), import_array(pa.nulls(0, pa_target)).type))
        expected = case.cast(pa_target)
        assert got.type == expected.type and got.to_pylist() == expected.to_pylist(), case


# -- floats to text, floats to decimals, zoned timestamps to dates (issue 14) -------------

import math  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FLOAT_SAMPLES = [
    0.1, 1e20, 1e-7, 1.0, -0.0, 0.0, math.nan, math.inf, -math.inf, 123456789012345680.0,
    1e15, 1e16, 1e21, 123.456, 1e-5, 1e-4, 0.001, 5e-324, 1.7976931348623157e308, 2.5,
    100.0, 1234567.0, 1e-6, -1.5e-6, 9999999999.5, 12345678901.5, 3e10, -123.0,
    0.000099, 2.2250738585072014e-308, None,
]


def _as_pa(values: list, pa_type: pa.DataType) -> pa.Array:
    if pa_type == pa.float16():
        return pa.array([None if v is None else np.float16(v) for v in values], pa_type)
    return pa.array(values, pa_type)


@pytest.mark.parametrize("target", [pa.string(), pa.large_string(), pa.string_view()])
@pytest.mark.parametrize("src_type", [pa.float64(), pa.float32(), pa.float16()])
def test_floats_cast_to_text_as_pyarrow(src_type: pa.DataType, target: pa.DataType) -> None:
    with np.errstate(over="ignore"):
        arr = _as_pa(FLOAT_SAMPLES, src_type)
    for source in (arr, arr.slice(3), arr.slice(1, 5), arr.slice(0, 0)):
        ours = import_array(source).cast(import_type(target))
        ours.validate(full=True)
        assert ours.to_pylist() == source.cast(target).to_pylist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats()), max_size=60),
       st.lists(st.floats(width=32), max_size=30))
def test_any_float_casts_to_the_text_pyarrow_writes(f64: list, f32: list) -> None:
    for arr in (pa.array(f64, pa.float64()), pa.array(f32, pa.float32())):
        assert import_array(arr).cast(qv.string()).to_pylist() == arr.cast(
            pa.string()).to_pylist()


DECIMAL_FLOATS = [0.1, 1.25, -2.5, None, 123.4, 0.0, -0.0, 99.99, -0.5, 1e-2, 7.0]


@pytest.mark.parametrize("target", [pa.decimal128(10, 2), pa.decimal128(38, 20),
                                    pa.decimal256(40, 3), pa.decimal128(6, 2),
                                    pa.decimal64(12, 2), pa.decimal32(7, 3)])
@pytest.mark.parametrize("src_type", [pa.float64(), pa.float32()])
def test_floats_cast_to_decimals_as_pyarrow(src_type: pa.DataType,
                                            target: pa.DataType) -> None:
    arr = pa.array(DECIMAL_FLOATS, src_type)
    for source in (arr, arr.slice(2), arr.slice(1, 4)):
        ours = import_array(source).cast(import_type(target))
        ours.validate(full=True)
        assert ours.to_pylist() == source.cast(target).to_pylist()


def test_float_to_decimal_rounds_half_even_only_when_unsafe() -> None:
    # the exact binary value rounds half to even: 0.125 is exact, 2.675 is 2.67499...
    arr = pa.array([0.125, 2.675, 1.005, -0.125, 2.5, 123.456, 1e-30, None])
    for target in (pa.decimal128(10, 2), pa.decimal256(50, 2), pa.decimal128(5, 0),
                   pa.decimal128(5, -1)):
        ours = import_array(arr).cast(import_type(target), safe=False)
        assert ours.to_pylist() == arr.cast(target, safe=False).to_pylist()


@pytest.mark.parametrize(
    ("values", "target", "words"),
    [
        ([1.0, None, 123.456], qv.decimal128(10, 2), "losing digits.* 123.456 at row 2"),
        ([2.5], qv.decimal128(5, 0), "losing digits.* 2.5 at row 0"),
        ([5.0, 99999.0, 100000.0], qv.decimal128(5, 0), "fit decimal128\\(5, 0\\).* at row 2"),
        ([1.0, math.nan], qv.decimal128(5, 2), "finite values .* nan at row 1"),
        ([math.inf], qv.decimal256(50, 2), "finite values .* inf at row 0"),
    ],
)
def test_safe_float_to_decimal_names_the_row(values: list, target: qv.DataType,
                                             words: str) -> None:
    with pytest.raises(qv.ArrowInvalid, match=words):
        qv.array(values, qv.float64()).cast(target)


def test_float32_to_decimal_checks_the_float32_digits() -> None:
    # 0.1f is 0.100000001490116...: its shortest text is 0.1, so scale 1 is enough
    arr = pa.array([0.1, None, 2.5], pa.float32())
    assert import_array(arr).cast(qv.decimal128(20, 10)).to_pylist() == arr.cast(
        pa.decimal128(20, 10)).to_pylist()
    assert import_array(arr).cast(qv.decimal128(5, 1)).to_pylist() == [
        Decimal("0.1"), None, Decimal("2.5")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(-1e12, 1e12)), max_size=40),
       st.integers(0, 12))
def test_any_float_to_decimal_as_pyarrow(values: list, scale: int) -> None:
    arr = pa.array(values, pa.float64())
    target = pa.decimal128(38, scale)
    unsafe = import_array(arr).cast(import_type(target), safe=False).to_pylist()
    assert unsafe == arr.cast(target, safe=False).to_pylist()
    # safe refuses exactly the values whose shortest text has more fraction digits than
    # the scale, and names the first
    lost = [i for i, v in enumerate(values)
            if v is not None and -Decimal(repr(v)).normalize().as_tuple().exponent > scale]
    if lost:
        with pytest.raises(qv.ArrowInvalid, match=f"losing digits.* at row {lost[0]} "):
            import_array(arr).cast(import_type(target))
    else:
        assert import_array(arr).cast(import_type(target)).to_pylist() == unsafe


ZONES = ["America/New_York", "Europe/London", "Asia/Kolkata", "Australia/Lord_Howe",
         "+05:30", "-03:00", "Pacific/Chatham", "America/St_Johns"]
ZONED = [0, 3600 * 4, 3600 * 5, -1, 1710054000, 1710050000, None, 1699164000,
         1699167600, -2_000_000_000, 4_000_000_000, 1_000_000_000]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", ZONES)
def test_zoned_timestamps_cast_to_the_local_date(tz: str, unit: str) -> None:
    scale = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[unit]
    arr = pa.array([None if v is None else v * scale + (scale // 3) for v in ZONED],
                   pa.timestamp(unit, tz))
    for source in (arr, arr.slice(3), arr.slice(5, 4)):
        for target in (pa.date32(), pa.date64()):
            ours = import_array(source).cast(import_type(target))
            ours.validate(full=True)
            assert ours.to_pylist() == source.cast(target).to_pylist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62 - 1)), max_size=50),
       st.sampled_from(ZONES))
def test_any_zoned_timestamp_casts_to_the_date_pyarrow_gives(values: list, tz: str) -> None:
    arr = pa.array(values, pa.timestamp("ns", tz))
    assert import_array(arr).cast(qv.date32()).to_pylist() == arr.cast(
        pa.date32()).to_pylist()


def test_unknown_zone_and_out_of_range_dates_are_errors() -> None:
    with pytest.raises(qv.ArrowInvalidArgument, match=r"time zone name .* 'Foo/Bar'"):
        qv.timestamp("s", "Foo/Bar")  # the factory refuses it; a file may still hold one
    unknown = qv.types.TimestampType("s", "Foo/Bar")
    with pytest.raises(qv.ArrowInvalid, match=r"time zone name .* 'Foo/Bar'"):
        qv.array([1], unknown).cast(qv.date32())
    with pytest.raises(qv.ArrowInvalid, match=r"years 1 to 9999 .* at row 1"):
        qv.array([0, 10**15], qv.timestamp("ms", "America/New_York")).cast(qv.date32())


# -- reproducers from the differential review against pyarrow ---------------------------


def test_cast_date_to_timestamp_ns() -> None:
    d = qv.array([dt.date(2020, 1, 1)])
    assert d.cast(qv.timestamp("ns")).to_pylist() == [pd.Timestamp("2020-01-01")]
    first = qv.array([dt.date(1, 1, 1)])
    assert first.cast(qv.timestamp("us")).to_pylist() == [dt.datetime(1, 1, 1)]


def test_cast_temporal_to_unsigned_is_checked() -> None:
    with pytest.raises(qv.ArrowError):
        qv.array([dt.date(1969, 12, 31)]).cast(qv.uint32())  # gave 4294967295
    with pytest.raises(qv.ArrowError):
        qv.array([-1], qv.timestamp("s")).cast(qv.uint8())  # gave 255
    with pytest.raises(qv.ArrowError):
        qv.array([2**63], qv.uint64()).cast(qv.duration("us"))  # gave a negative duration


def test_cast_string_to_uint64_beyond_int64() -> None:
    text = qv.array(["18446744073709551615"])
    assert text.cast(qv.uint64()).to_pylist() == [2**64 - 1]  # raw OverflowError
    with pytest.raises(qv.ArrowError):
        qv.array(["9223372036854775808"]).cast(qv.int64())  # raw OverflowError


def test_cast_string_to_number_refuses_python_only_syntax() -> None:
    for text, target in [("1_000", qv.int64()), (" 1", qv.float64()), ("١٢", qv.int32())]:
        with pytest.raises(qv.ArrowError):
            qv.array([text]).cast(target)  # pyarrow: ArrowInvalid; quiver parses them


TEMPORAL = [pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"),
            pa.time64("ns"), *(pa.timestamp(u) for u in ("s", "ms", "us", "ns")),
            pa.timestamp("us", "UTC"), *(pa.duration(u) for u in ("s", "ms", "us", "ns"))]
INTEGERS = [pa.int8(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64()]
EDGES = [0, 1, -1, 1500, -1500, 86_400_000, -86_400_001, 106_751, -106_752, 106_752,
         2**31 - 1, -(2**31), 9_223_286_400_000, 2**62, 2**63 - 1, -(2**63), 2**63, 2**64 - 1]


def _edge_array(src: pa.DataType, target: pa.DataType) -> pa.Array:
    """Edge values that fit ``src`` (as storage integers for a temporal type; times within
    a day, as their type requires)."""
    if pa.types.is_integer(src):
        storage = src
    else:
        storage = pa.int32() if src.bit_width == 32 else pa.int64()
    info = np.iinfo(storage.to_pandas_dtype())
    values = [v for v in EDGES if info.min <= v <= info.max]
    if pa.types.is_time(src):
        values = [v for v in values if 0 <= v < 86_400 * {"s": 1, "ms": 10**3, "us": 10**6,
                                                          "ns": 10**9}[src.unit]]
    if pa.types.is_timestamp(src) and pa.types.is_date(target):
        values = [v for v in values if abs(v) < 2**50]  # pyarrow wraps the day's ms beyond
    values.append(None)
    return pa.array(values, storage).view(src) if storage != src else pa.array(values, src)


def _ints(arr: pa.Array) -> list:
    """The stored integers of a temporal (or integer) pyarrow array."""
    if pa.types.is_integer(arr.type):
        return arr.to_pylist()
    return arr.view(pa.int32() if arr.type.bit_width == 32 else pa.int64()).to_pylist()


@pytest.mark.parametrize("src", TEMPORAL + INTEGERS, ids=str)
def test_temporal_casts_match_pyarrow_value_by_value(src: pa.DataType) -> None:
    for target in TEMPORAL + INTEGERS:
        if pa.types.is_integer(src) and pa.types.is_integer(target):
            continue
        if pa.types.is_timestamp(src) and pa.types.is_time(target):
            continue  # quiver does not cast timestamps to times of day
        arr = _edge_array(src, target)
        for safe in (True, False):
            for one in [arr.slice(i, 1) for i in range(len(arr))] + [arr]:
                try:
                    expected: Any = _ints(pc.cast(one, target, safe=safe))
                except pa.ArrowNotImplementedError:
                    expected = qv.NotSupported
                except pa.ArrowInvalid:
                    expected = qv.ArrowInvalid
                if isinstance(expected, list):
                    ours = import_array(one).cast(import_type(target), safe=safe)
                    ours.validate(full=True)
                    assert _ints(pa.array(ours)) == expected, (src, target, safe, one)
                else:
                    with pytest.raises(expected):
                        import_array(one).cast(import_type(target), safe=safe)


TEXTS = ["1", "+1", "-1", "-0", "+0", "01", "007", "1_000", " 1", "1 ", "", "+", "-", "1e5",
         "1.", ".5", "1.5", "-.5", "+.5", "inf", "-inf", "+inf", "INF", "Infinity",
         "iNfInItY", "infin", "nan", "NaN", "-nan", "+nan", "nana", "1E5", "1e+5", "1e-5",
         "1e", "e5", "0x10", "0X1f", "0xff", "0xFF", "0x", "-0x10", "0x80", "0x7fff",
         "0x7fffffffffffffff", "0x8000000000000000", "0xffffffffffffffff",
         "0x10000000000000000", "0x0000000000000000001", "0xg", "0b1", "0x1p3", "1.5e3",
         "1,5", "١٢", "１", "1..2", "--1", "+-1", "1d", ".", ".e1", "1.e1", "-0.0", "1e5.5",
         "1e+-1", "1-1", "9" * 30, "1e400", "1e-400", "4.9e-324", "1e999999999999999999999",
         "0." + "0" * 400 + "1", "1" + "0" * 400, "0" * 40 + "1", "127", "128", "-128",
         "-129", "255", "256", "32767", "32768", "65535", "2147483647", "2147483648",
         "-2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807",
         "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
         "18446744073709551615", "18446744073709551616", "99999999999999999999",
         "-18446744073709551615", "\t1", "1\n", "65504", "65520", "6.1e-5", "0.1",
         "3.14159", "2.2250738585072011e-308",
         "1.00000000000000011102230246251565404236316680908203125"]
NUMBERS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
           pa.uint32(), pa.uint64(), pa.float16(), pa.float32(), pa.float64()]


def _same_numbers(ours: list, theirs: list) -> bool:
    return all(a == b or (a != a and b != b) for a, b in zip(ours, theirs, strict=True))


@pytest.mark.parametrize("target", NUMBERS, ids=str)
def test_text_parses_as_numbers_as_pyarrow(target: pa.DataType) -> None:
    for text_type in (pa.string(), pa.large_string(), pa.string_view()):
        for safe in (True, False):
            good = []
            for text in TEXTS:
                one = pa.array([text], text_type)
                try:  # as pa.string(): pyarrow does not parse string_view as halffloat
                    expected = pc.cast(one.cast(pa.string()), target, safe=safe).to_pylist()
                except pa.ArrowInvalid:
                    with pytest.raises(qv.ArrowInvalid, match="at row 0"):
                        import_array(one).cast(import_type(target), safe=safe)
                    continue
                ours = import_array(one).cast(import_type(target), safe=safe).to_pylist()
                assert _same_numbers(ours, expected), (text, target)
                good.append(text)
            # the good ones together, with nulls holding any text, and a slice
            texts = [None, *good, None]
            arr = pa.array(texts, text_type)
            for source in (arr, arr.slice(2, len(good) // 2)):
                ours = import_array(source).cast(import_type(target), safe=safe)
                ours.validate(full=True)
                assert _same_numbers(ours.to_pylist(), pc.cast(
                    source.cast(pa.string()), target, safe=safe).to_pylist())


def test_a_bad_text_is_named_with_its_row() -> None:
    texts = ["1"] * 5 + [None, "3", "2", "1_0", "x"]
    with pytest.raises(qv.ArrowInvalid, match=r"parses as int32, found '1_0' at row 8"):
        qv.array(texts).cast(qv.int32())
    with pytest.raises(qv.ArrowInvalid, match=r"fit int8, found '300' at row 1"):
        qv.array(["1", "300"]).cast(qv.int8(), safe=False)  # out of range even unsafe
    with pytest.raises(qv.ArrowInvalid, match=r"parses as double, found ' 1' at row 2"):
        qv.array(["1", "2", " 1"]).cast(qv.float64())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text("0123456789+-.eExXafinINty _", max_size=8)),
                max_size=20),
       st.sampled_from(NUMBERS))
def test_any_text_parses_as_pyarrow_does(texts: list, target: pa.DataType) -> None:
    arr = pa.array(texts, pa.string())
    try:
        expected = pc.cast(arr, target).to_pylist()
    except pa.ArrowInvalid:
        with pytest.raises(qv.ArrowInvalid):
            import_array(arr).cast(import_type(target))
        return
    assert _same_numbers(import_array(arr).cast(import_type(target)).to_pylist(), expected)


def _with_hidden_text(texts: list, nulls: list[int]) -> pa.Array:
    """A string array of ``texts`` whose rows ``nulls`` are null but keep their text."""
    full = pa.array(texts, pa.string())
    validity = pa.array([i not in nulls for i in range(len(texts))]).buffers()[1]
    return pa.Array.from_buffers(pa.string(), len(texts), [validity, *full.buffers()[1:]])


@pytest.mark.parametrize("target", [pa.int16(), pa.uint64(), pa.float64(), pa.float32()],
                         ids=str)
def test_null_rows_holding_any_text_parse_as_nulls(target: pa.DataType) -> None:
    arr = _with_hidden_text(["12", "x y", "00", "1_0", "7", ""], nulls=[1, 3, 5])
    ours = import_array(arr).cast(import_type(target))
    assert ours.to_pylist() == pc.cast(arr, target).to_pylist()


@pytest.mark.parametrize("target", [qv.int64(), qv.uint8(), qv.float64()], ids=str)
def test_text_parses_in_pieces(monkeypatch: pytest.MonkeyPatch, target: qv.DataType) -> None:
    from quiver.array import parse

    monkeypatch.setattr(parse, "_PIECE", 8)
    texts = [None if i % 7 == 3 else str(i % 200) for i in range(300)]
    arr = qv.array(texts)
    expected = [None if v is None else (float(v) if target == qv.float64() else int(v))
                for v in texts]
    assert arr.cast(target).to_pylist() == expected
    assert arr.slice(5, 100).cast(target).to_pylist() == expected[5:105]
    texts[250] = "1e"
    with pytest.raises(qv.ArrowInvalid, match="found '1e' at row 250"):
        qv.array(texts).cast(target)
