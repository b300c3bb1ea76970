"""The type policy and its converters, without a Spark session: every Arrow type maps to
the Arrow type Spark reads, and the converted values equal pyarrow's own casts."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (pip install -e '.[spark]')")

from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema

from quiver import errors as E
from quiver import types as t
from quiver.interop import import_array
from quiver.spark.convert import Where, take, to_spark_array
from quiver.spark.policy import (
    DEFAULT_POLICY,
    ReadPolicy,
    from_spark_type,
    spark_arrow_schema,
    spark_arrow_type,
    to_spark_type,
)

# (Arrow type, the Spark type it reads as) — the table of docs/spark.md
POLICY = [
    (t.null(), "void"),
    (t.bool_(), "boolean"),
    (t.int8(), "tinyint"), (t.int16(), "smallint"), (t.int32(), "int"), (t.int64(), "bigint"),
    (t.uint8(), "smallint"), (t.uint16(), "int"), (t.uint32(), "bigint"),
    (t.uint64(), "decimal(20,0)"),
    (t.float16(), "float"), (t.float32(), "float"), (t.float64(), "double"),
    (t.decimal32(7, 2), "decimal(7,2)"), (t.decimal64(18, 3), "decimal(18,3)"),
    (t.decimal128(38, 10), "decimal(38,10)"), (t.decimal256(30, 4), "decimal(30,4)"),
    (t.string(), "string"), (t.large_string(), "string"), (t.string_view(), "string"),
    (t.binary(), "binary"), (t.large_binary(), "binary"), (t.binary_view(), "binary"),
    (t.fixed_size_binary(5), "binary"), (t.uuid(), "binary"),
    (t.date32(), "date"), (t.date64(), "date"),
    (t.time32("s"), "time(6)"), (t.time64("ns"), "time(6)"),
    (t.timestamp("s"), "timestamp_ntz"), (t.timestamp("ns", "Asia/Tokyo"), "timestamp"),
    (t.duration("ms"), "interval day to second"),
    (t.month_interval(), "struct<months:int>"),
    (t.day_time_interval(), "struct<days:int,milliseconds:int>"),
    (t.month_day_nano_interval(), "struct<months:int,days:int,nanoseconds:bigint>"),
    (t.list_(t.int8()), "array<tinyint>"), (t.large_list(t.uint8()), "array<smallint>"),
    (t.list_view(t.string_view()), "array<string>"),
    (t.fixed_size_list(t.float16(), 3), "array<float>"),
    (t.map_(t.large_string(), t.uint32()), "map<string,bigint>"),
    (t.struct([("a", t.uint8()), ("b", t.large_binary())]), "struct<a:smallint,b:binary>"),
    (t.sparse_union([t.field("i", t.int32()), t.field("s", t.string())]),
     "struct<type_code:tinyint,i:int,s:string>"),
    (t.dictionary(t.int16(), t.large_string()), "string"),
    (t.run_end_encoded(t.int32(), t.uint16()), "int"),
]


@pytest.mark.parametrize(("arrow", "spark"), POLICY, ids=[str(a) for a, _ in POLICY])
def test_policy_table(arrow, spark):
    target = spark_arrow_type(arrow)
    spark_type = to_spark_type(target)
    assert spark_type.simpleString() == spark
    # the Arrow type is exactly what Spark demands for that Spark type
    expected = to_arrow_schema(st.StructType([st.StructField("c", spark_type)]), timezone="UTC")
    assert pa.schema(t.schema([t.field("c", target)])).equals(expected)
    assert from_spark_type(spark_type) == target


def test_wide_decimal_is_refused_or_read_as_string():
    with pytest.raises(E.NotSupported, match="wideDecimals"):
        spark_arrow_type(t.decimal256(50, 2))
    assert spark_arrow_type(t.decimal256(50, 2), ReadPolicy(wide_decimals="string")) == t.string()


def test_policy_options_are_checked():
    with pytest.raises(E.NotSupported, match="invalidValues"):
        ReadPolicy(invalid_values="clamp")


def _convert(pa_arr, policy=DEFAULT_POLICY):
    out = to_spark_array(import_array(pa_arr), policy, Where("f.arrow", "c"))
    result = pa.array(out)
    result.validate(full=True)
    return result


def _target_pa(pa_type):
    from tests.roundtrip.pa_types import to_pyarrow_type

    return to_pyarrow_type(spark_arrow_type(import_array(pa.nulls(0, pa_type)).type))


CASTS = [
    pa.array([0, None, 255, 7], pa.uint8()),
    pa.array([0, None, 65535], pa.uint16()),
    pa.array([0, None, 2**32 - 1], pa.uint32()),
    pa.array([1.5, None, -2.25, float("inf")], pa.float16()),
    pa.array(["a", None, "ünïcode", ""], pa.large_string()),
    pa.array(["a", None, "a value longer than twelve", "x" * 13, ""], pa.string_view()),
    pa.array([b"a", None, b"a value longer than twelve"], pa.binary_view()),
    pa.array([b"ab", None, b"cd"], pa.binary(2)),
    pa.array([b"x", None, b"yy"], pa.large_binary()),
    pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-4.56")], pa.decimal32(5, 2)),
    pa.array([decimal.Decimal("-1.234"), None, decimal.Decimal("9" * 15)], pa.decimal64(18, 3)),
    pa.array([decimal.Decimal("-12345678901234567890.1234"), None], pa.decimal256(38, 4)),
    pa.array([dt.date(2020, 1, 1), None, dt.date(1960, 5, 6)], pa.date64()),
    pa.array([dt.time(1, 2, 3), None, dt.time(23, 59, 59)], pa.time32("s")),
    pa.array([dt.time(1, 2, 3, 4000), None], pa.time32("ms")),
    pa.array([dt.time(1, 2, 3, 456789), None], pa.time64("us")),
    pa.array([0, None, 86_399_999_999_999], pa.time64("ns")),
    pa.array([1_000, None, -1_500_000, -1_500_001, 1_999], pa.timestamp("ns", "Asia/Tokyo")),
    pa.array([1, None, -1500], pa.timestamp("s")),
    pa.array([1, None, -1500], pa.timestamp("ms", "UTC")),
    pa.array([1, None, -1500], pa.duration("s")),
    pa.array([1, None, -1500], pa.duration("ms")),
    pa.array([1_000, None, -2_000, -2_999, 2_999], pa.duration("ns")),
    pa.array([[1, 2], None, [], [3]], pa.large_list(pa.int32())),
    pa.array([[1, 2], None, [3, 4]], pa.list_(pa.uint8(), 2)),
    pa.array([[("a", 1)], None, [("b", None), ("c", 3)]], pa.map_(pa.large_string(), pa.uint16())),
    pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "b"}],
             pa.struct([("x", pa.uint8()), ("y", pa.string_view())])),
]


@pytest.mark.parametrize("source", CASTS, ids=[str(a.type) for a in CASTS])
@pytest.mark.parametrize("window", [None, (1, None)], ids=["whole", "sliced"])
def test_converted_values_equal_pyarrow_casts(source, window):
    if window is not None:
        source = source.slice(*[w for w in window if w is not None])
    got = _convert(source)
    target = _target_pa(source.type)
    assert got.type == target
    # nanoseconds are truncated toward zero, as pyarrow's unsafe cast (and Spark) do;
    # Spark's time(6) holds microseconds in its nanosecond Arrow type: cut them too
    if pa.types.is_time(target):
        expected = source.cast(pa.time64("us"), safe=False).cast(target)
    else:
        expected = source.cast(target, safe=False)
    assert got.equals(expected), (got, expected)


def test_dictionary_run_end_and_unions_decode():
    dictionary = pa.array(["a", "b", None, "a", "c"]).dictionary_encode()
    assert _convert(dictionary).to_pylist() == ["a", "b", None, "a", "c"]
    assert _convert(dictionary.slice(2)).to_pylist() == [None, "a", "c"]
    ree = pc.run_end_encode(pa.array([1, 1, 2, None, None, 3], pa.uint32()))
    assert _convert(ree).to_pylist() == [1, 1, 2, None, None, 3]
    assert _convert(ree.slice(1, 3)).to_pylist() == [1, 2, None]
    sparse = pa.UnionArray.from_sparse(
        pa.array([0, 1, 0], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])],
        ["i", "s"],
    )
    assert _convert(sparse).to_pylist() == [
        {"type_code": 0, "i": 1, "s": None},
        {"type_code": 1, "i": None, "s": "b"},
        {"type_code": 0, "i": 3, "s": None},
    ]
    dense = pa.UnionArray.from_dense(
        pa.array([1, 0, 1], pa.int8()), pa.array([0, 0, 1], pa.int32()),
        [pa.array([10]), pa.array(["x", "y"], pa.large_string())], ["i", "s"],
    )
    assert _convert(dense).to_pylist() == [
        {"type_code": 1, "i": None, "s": "x"},
        {"type_code": 0, "i": 10, "s": None},
        {"type_code": 1, "i": None, "s": "y"},
    ]


def test_list_views_gather_their_values():
    views = pa.ListViewArray.from_arrays(
        pa.array([3, 0, 1], pa.int32()), pa.array([2, 0, 2], pa.int32()),
        pa.array([1, 2, 3, 4, 5], pa.uint8()),
    )
    assert _convert(views).to_pylist() == [[4, 5], [], [2, 3]]


def test_intervals_become_structs():
    mdn = pa.array([pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval())
    assert _convert(mdn).to_pylist() == [{"months": 1, "days": 2, "nanoseconds": 3}, None]


def test_uint64_keeps_every_value_as_a_decimal():
    values = pa.array([0, 2**63, 2**64 - 1, None], pa.uint64())
    assert _convert(values).to_pylist() == [0, 2**63, 2**64 - 1, None]


def test_time_of_day_24_00_names_file_column_and_row():
    bad = pa.array([0, None, 86_400], pa.time32("s"))
    with pytest.raises(E.ArrowInvalid, match=r"f\.arrow, column c, row 2.*invalidValues"):
        _convert(bad)
    assert _convert(bad, ReadPolicy(invalid_values="null")).to_pylist()[1:] == [None, None]


def test_timestamp_out_of_spark_range_is_an_error_or_null():
    seconds = pa.array([0, 300_000_000_000], pa.timestamp("s"))  # year ~11476
    with pytest.raises(E.ArrowInvalid, match=r"row 1.*years 1 to 9999"):
        _convert(seconds)
    assert _convert(seconds, ReadPolicy(invalid_values="null")).null_count == 1
    overflow = pa.array([2**62], pa.duration("s"))
    with pytest.raises(E.ArrowInvalid, match="row 0"):
        _convert(overflow)


def test_decimal256_beyond_128_bits_is_refused_per_value():
    big = pa.array([decimal.Decimal("1"), decimal.Decimal("9" * 38)], pa.decimal256(38, 0))
    assert _convert(big).to_pylist() == [1, int("9" * 38)]
    wide = pa.array([decimal.Decimal("-1.50"), None, decimal.Decimal("1" * 48 + ".25")],
                    pa.decimal256(50, 2))
    out = _convert(wide, ReadPolicy(wide_decimals="string"))
    assert out.to_pylist() == ["-1.50", None, "1" * 48 + ".25"]


def test_views_pointing_outside_their_buffers_are_refused():
    good = pa.array(["a value longer than twelve"], pa.string_view())
    views = bytearray(good.buffers()[1].to_pybytes())
    views[12:16] = (1000).to_bytes(4, "little")  # offset far past the data buffer
    bad = pa.Array.from_buffers(pa.string_view(), 1,
                                [None, pa.py_buffer(bytes(views)), good.buffers()[2]])
    with pytest.raises(E.ArrowInvalid, match="view inside its data buffers"):
        to_spark_array(import_array(bad), ReadPolicy(), Where("f", "c"))


@pytest.mark.parametrize("values", [
    pa.array([1, None, 3, 4], pa.int64()),
    pa.array([True, None, False, True]),
    pa.array(["a", None, "ccc", ""]),
    pa.array([[1], None, [2, 3], []], pa.list_(pa.int32())),
    pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}, {"a": 4, "b": None}]),
    pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("-2.5"), None], pa.decimal128(5, 1)),
    pa.array([[("k", 1)], None, [], [("a", None)]], pa.map_(pa.string(), pa.int64())),
])
def test_take_equals_pyarrow_take(values):
    indices = np.array([3, 0, 0, 2, 1], dtype=np.int64)
    got = pa.array(take(import_array(values.slice(0)), indices))
    assert got.equals(values.take(pa.array(indices)))
    sliced = values.slice(1)
    got = pa.array(take(import_array(sliced), np.array([2, 0, 1])))
    assert got.equals(sliced.take(pa.array([2, 0, 1])))


def test_columns_spark_takes_as_they_are_are_still_range_checked():
    cases = [
        pa.Array.from_buffers(pa.time64("ns"), 2, [None, pa.array(
            [5, 86_400_000_000_005], pa.int64()).buffers()[1]]),
        pa.array([0, 253_402_300_800_000_000], pa.timestamp("us")),
        pa.array([0, -62_135_596_800_000_001], pa.timestamp("us", "UTC")),
        pa.array([0, 3_000_000], pa.date32()),
    ]
    for case in cases:
        with pytest.raises(E.ArrowInvalid, match="row 1"):
            _convert(case)
        assert _convert(case, ReadPolicy(invalid_values="null")).to_pylist()[1] is None


def test_decreasing_offsets_never_reach_spark():
    good = pa.array(["ab", "cd", "ef"])
    offsets = pa.array([0, 4, 2, 6], pa.int32()).buffers()[1]
    bad = pa.Array.from_buffers(pa.string(), 3, [None, offsets, good.buffers()[2]])
    with pytest.raises(E.ArrowInvalid, match=r"row 1.*do not decrease"):
        _convert(bad)
    listed = pa.ListArray.from_arrays(pa.array([0, 2, 1, 3], pa.int32()), pa.array([1, 2, 3]))
    with pytest.raises(E.ArrowInvalid, match="do not decrease"):
        _convert(listed)


def test_decimal_scales_spark_refuses_are_errors_or_exact_strings():
    negative = pa.array([decimal.Decimal("12300"), decimal.Decimal("-500")], pa.decimal128(5, -2))
    with pytest.raises(E.NotSupported, match="scale"):
        spark_arrow_type(import_array(negative).type)
    assert _convert(negative, ReadPolicy(wide_decimals="string")).to_pylist() == [
        "12300", "-500"]


# -- values that pass Arrow's structural validation and that Spark still refuses ----------


@pytest.mark.parametrize(("precision", "storage"), [
    (3, pa.decimal32(9, 2)), (3, pa.decimal64(18, 2)), (3, pa.decimal128(38, 2)),
    (3, pa.decimal256(40, 2)), (38, pa.decimal256(76, 2)),
])
def test_decimals_of_more_digits_than_their_precision_are_invalid_values(precision, storage):
    """128.10 in a decimal(3, 2) (Spark: NUMERIC_VALUE_OUT_OF_RANGE, naming nothing); at
    38 digits the limit is 10**38 - 1, both signs."""
    big = decimal.Decimal(f"{10**precision}E-2")  # exact (no context rounding)
    top = decimal.Decimal(f"{10**precision - 1}E-2")
    wide = pa.array([decimal.Decimal("1.25"), -big, None, top], storage)
    width = {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128,
             256: pa.decimal256}[storage.bit_width]
    narrow = pa.Array.from_buffers(width(precision, 2), 4, wide.buffers())
    with pytest.raises(E.ArrowInvalid, match=r"f\.arrow, column c, row 1: expected a decimal "
                                             rf"of at most {precision} digits"):
        _convert(narrow)
    got = _convert(narrow, ReadPolicy(invalid_values="null")).to_pylist()
    assert got == [decimal.Decimal("1.25"), None, None, top]
    assert _convert(narrow.slice(3)).to_pylist() == [top]


def test_time_of_day_is_cut_to_microseconds():
    ns = pa.array([999, 1_000_001, None, 86_399_999_999_999], pa.time64("ns"))
    for source in (ns, ns.slice(1)):
        got = _convert(source).cast(pa.int64()).to_pylist()
        want = source.cast(pa.int64()).to_pylist()
        assert got == [v - v % 1000 if v is not None else None for v in want]


def _map_with_null_key():
    from quiver.array import make_array

    mt = t.map_(t.field("key", t.string(), nullable=False), t.field("value", t.int64()))
    keys, values = import_array(pa.array(["a", None, "c", "d", None])), import_array(
        pa.array([1, 2, 3, 4, 5]))
    entries = make_array(mt.entries_field.type, 5, [None], [keys, values], 0)
    validity = np.packbits(np.array([1, 1, 1, 0], bool), bitorder="little")
    offsets = np.array([0, 2, 3, 4, 5], np.int32).view(np.uint8)
    return make_array(mt, 4, [validity, offsets], [entries], -1)


def test_a_map_with_a_null_key_is_an_invalid_value():
    """Arrow's structural checks let a null key through; pyarrow's import of it aborts
    the Python worker (Spark reports a crash), and Spark allows no null map key."""
    arr = _map_with_null_key()
    with pytest.raises(E.ArrowInvalid, match=r"column c, row 0: expected a map without "
                                             r"null keys"):
        to_spark_array(arr, DEFAULT_POLICY, Where("f.arrow", "c"))
    out = pa.array(to_spark_array(arr, ReadPolicy(invalid_values="null")))
    out.validate(full=True)
    assert out.to_pylist() == [None, [("c", 3)], [("d", 4)], None]
    assert pa.array(to_spark_array(arr.slice(1, 2))).to_pylist() == [[("c", 3)], [("d", 4)]]


def test_duplicate_column_names_are_refused():
    schema = t.schema([t.field("a", t.int64()), t.field("b", t.int64()),
                       t.field("a", t.string())])
    with pytest.raises(E.NotSupported, match=r"distinct column names.*\['a'\]"):
        spark_arrow_schema(schema)
