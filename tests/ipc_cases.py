"""pyarrow arrays of every type (with nulls, nesting and slices) for the IPC tests."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa


def _union_sparse() -> pa.Array:
    return pa.UnionArray.from_sparse(
        pa.array([0, 1, 0, 1], pa.int8()),
        [pa.array([1, None, 3, 4]), pa.array(["a", "b", None, "d"])],
        ["i", "s"],
        [0, 1],
    )


def _union_dense() -> pa.Array:
    return pa.UnionArray.from_dense(
        pa.array([5, 7, 5, 5], pa.int8()),
        pa.array([0, 0, 1, 2], pa.int32()),
        [pa.array([1.5, None, 3.0]), pa.array([True])],
        ["f", "b"],
        [5, 7],
    )


def all_type_arrays() -> dict[str, pa.Array]:
    """One array per type family; several have nulls, nesting or a non-zero offset."""
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 6000)
    arrays: dict[str, pa.Array] = {
        "null": pa.nulls(4),
        "bool": pa.array([True, None, False, True]),
        "int8": pa.array([1, None, -3, 4], pa.int8()),
        "int16": pa.array([1, 2, None, -4], pa.int16()),
        "int32": pa.array([None, 2, 3, 4], pa.int32()),
        "int64": pa.array([1, 2, 3, None], pa.int64()),
        "uint8": pa.array([1, 2, 255, None], pa.uint8()),
        "uint16": pa.array([1, None, 65535, 0], pa.uint16()),
        "uint32": pa.array([1, 2, None, 2**32 - 1], pa.uint32()),
        "uint64": pa.array([1, None, 2**64 - 1, 0], pa.uint64()),
        "float16": pa.array([1.5, None, -2.0, 0.0], pa.float16()),
        "float32": pa.array([1.5, None, -2.25, 0.0], pa.float32()),
        "float64": pa.array([1.5, float("inf"), None, -0.0], pa.float64()),
        "decimal32": pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-4.56"),
                               decimal.Decimal("0.00")], pa.decimal32(5, 2)),
        "decimal64": pa.array([decimal.Decimal("123456.789"), None, decimal.Decimal("-1.000"),
                               decimal.Decimal("0.001")], pa.decimal64(12, 3)),
        "decimal128": pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-99999.99"),
                                decimal.Decimal("0.01")], pa.decimal128(7, 2)),
        "decimal256": pa.array([decimal.Decimal("1" * 40), None, decimal.Decimal("-5"),
                                decimal.Decimal("0")], pa.decimal256(50, 0)),
        "date32": pa.array(
            [dt.date(2020, 1, 1), None, dt.date(1969, 12, 31), dt.date(2000, 2, 29)]
        ),
        "date64": pa.array([dt.date(2020, 1, 1), None, dt.date(1970, 1, 1), dt.date(2001, 1, 1)],
                           pa.date64()),
        "time32s": pa.array([dt.time(1, 2, 3), None, dt.time(0), dt.time(23, 59, 59)],
                            pa.time32("s")),
        "time32ms": pa.array([dt.time(1, 2, 3, 4000), None, dt.time(0), dt.time(12)],
                             pa.time32("ms")),
        "time64us": pa.array([dt.time(1, 2, 3, 4), None, dt.time(0), dt.time(12)],
                             pa.time64("us")),
        "time64ns": pa.array([1000, None, 0, 86399999999000], pa.time64("ns")),
        "timestamp_s": pa.array([ts, None, ts, ts], pa.timestamp("s")),
        "timestamp_ms_utc": pa.array([ts, None, ts, ts], pa.timestamp("ms", tz="UTC")),
        "timestamp_us_ny": pa.array([ts, None, ts, ts], pa.timestamp("us", tz="America/New_York")),
        "timestamp_ns": pa.array([1_000, None, 2_000, 3_000], pa.timestamp("ns")),
        "duration_s": pa.array([1, None, -5, 0], pa.duration("s")),
        "duration_us": pa.array([dt.timedelta(seconds=1), None, dt.timedelta(0),
                                 dt.timedelta(days=-1)], pa.duration("us")),
        "interval_mdn": pa.array([pa.MonthDayNano([1, 2, 3]), None,
                                  pa.MonthDayNano([-1, 0, 5]), pa.MonthDayNano([0, 0, 0])]),
        "binary": pa.array([b"ab", None, b"", b"xyz"]),
        "string": pa.array(["ab", None, "", "héllo"]),
        "large_binary": pa.array([b"ab", None, b"", b"xyz"], pa.large_binary()),
        "large_string": pa.array(["ab", None, "", "xyz"], pa.large_string()),
        "binary_view": pa.array([b"short", None, b"a value longer than twelve", b""],
                                pa.binary_view()),
        "string_view": pa.array(["short", None, "a value longer than twelve bytes", ""],
                                pa.string_view()),
        "fixed_size_binary": pa.array([b"abc", None, b"xyz", b"\x00\x01\x02"], pa.binary(3)),
        "list": pa.array([[1, 2], None, [], [None, 4]], pa.list_(pa.int32())),
        "large_list": pa.array([[1, 2], None, [], [3]], pa.large_list(pa.int64())),
        "list_view": pa.array([[1, 2], None, [], [3]], pa.list_view(pa.int16())),
        "large_list_view": pa.array([["a"], None, [], ["b", None]],
                                    pa.large_list_view(pa.string())),
        "fixed_size_list": pa.array([[1, 2], None, [3, None], [5, 6]], pa.list_(pa.int8(), 2)),
        "struct": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}, {"a": 4, "b": None}],
                           pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "map": pa.array([[("k", 1), ("j", None)], None, [], [("z", 3)]],
                        pa.map_(pa.string(), pa.int64())),
        "sparse_union": _union_sparse(),
        "dense_union": _union_dense(),
        "dictionary": pa.array(["a", "b", None, "a"]).dictionary_encode(),
        "dictionary_int8_ordered": pa.DictionaryArray.from_arrays(
            pa.array([1, 0, None, 1], pa.int8()), pa.array([10.5, 20.5]), ordered=True
        ),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(
            pa.array([1, 3, 4], pa.int32()), pa.array(["x", None, "z"])
        ),
        "nested_list_struct": pa.array(
            [[{"p": [1, None], "q": {"r": True}}], None, [], [{"p": None, "q": None}]],
            pa.list_(pa.struct([("p", pa.list_(pa.int64())),
                                ("q", pa.struct([("r", pa.bool_())]))])),
        ),
        "list_of_dictionary": pa.ListArray.from_arrays(
            pa.array([0, 2, 3, 3, 4], pa.int32()),
            pa.array(["u", "v", "u", "w"]).dictionary_encode(),
        ),
        "uuid": pa.ExtensionArray.from_storage(
            pa.uuid(), pa.array([b"\x01" * 16, None, b"\x02" * 16, b"\x03" * 16], pa.binary(16))
        ),
    }
    return arrays


def sliced(arr: pa.Array) -> pa.Array:
    """The array without its first and last values (a non-zero offset)."""
    return arr.slice(1, len(arr) - 2)
