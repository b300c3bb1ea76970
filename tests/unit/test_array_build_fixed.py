"""Tests for quiver.array.build_fixed: fixed-width builders, the temporal table above all."""

from __future__ import annotations

import datetime
from decimal import Decimal

import numpy as np
import pytest

import quiver as qv
from quiver import registry
from quiver import types as t
from quiver.array import build_fixed


def test_one_temporal_builder_serves_every_temporal_type_class() -> None:
    for cls in (t.DateType, t.TimestampType, t.TimeType, t.DurationType):
        assert registry.lookup("builder", cls) is build_fixed._build_temporal
        assert cls in build_fixed._TEMPORAL


@pytest.mark.parametrize(
    ("dtype", "obj", "raw"),
    [
        (t.date32(), datetime.date(1970, 1, 3), 2),
        (t.date64(), datetime.datetime(1970, 1, 2, 5), 86_400_000),
        (t.timestamp("ms"), datetime.datetime(1970, 1, 1, 0, 0, 1), 1000),
        (t.time32("s"), datetime.time(0, 1), 60),
        (t.duration("ns"), datetime.timedelta(microseconds=2), 2000),
    ],
)
def test_temporal_objects_and_raw_ints(dtype: t.DataType, obj: object, raw: int) -> None:
    width = np.dtype(f"<i{dtype.bit_width // 8}")
    for values in ([obj, None], [raw, None]):
        arr = qv.array(values, dtype)
        assert arr.buffers[1].view(width)[0] == raw
        assert arr.null_count == 1
    if not isinstance(dtype, t.DateType):  # dates take objects or ints, not both in one list
        assert qv.array([obj, raw], dtype).buffers[1].view(width).tolist() == [raw, raw]


def test_temporal_kind_errors_name_the_value() -> None:
    with pytest.raises(qv.ArrowTypeError, match="found 'x' of type str"):
        qv.array(["x"], t.time64("us"))


def test_temporal_builders_refuse_bools_with_quiver_errors():
    import pytest

    import quiver as qv
    from quiver import types as t

    for dtype in (t.time32("s"), t.timestamp("us"), t.duration("s"), t.date32()):
        with pytest.raises(qv.ArrowTypeError, match="found True of type bool"):
            qv.array([True, None], dtype)


# -- nanoseconds, numpy temporal scalars, overflow, NaT (differential review against pyarrow) --

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


def _same_as_pyarrow(values: list, dtype: t.DataType, pa_type: object, **kw: object) -> None:
    try:
        expected = pa.array(values, pa_type, **kw)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        with pytest.raises(qv.ArrowError):
            qv.array(values, dtype, **kw)
        return
    got = qv.array(values, dtype, **kw)
    assert got.type == dtype
    assert got.to_pylist() == expected.to_pylist()
    width = np.dtype(f"<i{dtype.bit_width // 8}")
    assert got.buffers[1].view(width).tolist() == [
        0 if v is None else v for v in expected.cast(pa.int64()).to_pylist()
    ]


def test_build_keeps_nanoseconds() -> None:
    ts = pd.Timestamp("2020-01-01 00:00:00.000000001")
    assert qv.array([ts], qv.timestamp("ns")).to_pylist() == [ts]
    assert qv.array([np.datetime64(1, "ns")], qv.timestamp("ns")).cast(qv.int64()).to_pylist() \
        == [1]
    assert qv.array([pd.Timedelta(1)], qv.duration("ns")).to_pylist() == [pd.Timedelta(1)]


UNITS = ["s", "ms", "us", "ns"]
EDGE_TIMESTAMPS = [
    pd.Timestamp("2020-01-01 00:00:00.000001001"),
    pd.Timestamp(-1_001_001),  # before the epoch: pyarrow floors
    pd.Timestamp("2020-01-01 00:00:00.000001001", tz="Europe/Paris"),
    pd.Timestamp.max, pd.Timestamp.min,
    pd.Timestamp("3000-01-01 00:00:00.000001"),  # past the nanosecond range (pandas unit us)
    datetime.datetime(2020, 1, 1, 0, 0, 0, 1001),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999),
    datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    datetime.datetime(2262, 4, 11, 23, 47, 16, 854775),  # the last microsecond in ns
    datetime.datetime(2262, 4, 11, 23, 47, 16, 854776),  # past it
    datetime.datetime(1677, 9, 21, 0, 12, 43, 145225),
    datetime.datetime(1677, 9, 21, 0, 12, 43, 145224),
]
EDGE_DURATIONS = [
    pd.Timedelta(1_001_001), pd.Timedelta(-1_001_001), pd.Timedelta(-1),
    pd.Timedelta.max, pd.Timedelta.min,
    pd.Timedelta(np.timedelta64(200_000, "D")),  # past the nanosecond range (pandas unit s)
    datetime.timedelta(microseconds=1001), datetime.timedelta(microseconds=-1001),
    datetime.timedelta(days=106751, seconds=86399), datetime.timedelta(days=106752),
    datetime.timedelta(days=999_999_999), -datetime.timedelta(days=999_999_999),
    datetime.timedelta.max, datetime.timedelta.min,
]


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("value", EDGE_TIMESTAMPS, ids=repr)
def test_build_timestamps_like_pyarrow(unit: str, value: object) -> None:
    tz = None if getattr(value, "tzinfo", None) is None else "UTC"
    _same_as_pyarrow([value, None, 5], qv.timestamp(unit, tz), pa.timestamp(unit, tz))


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("value", EDGE_DURATIONS, ids=repr)
def test_build_durations_like_pyarrow(unit: str, value: object) -> None:
    _same_as_pyarrow([value, None, 5], qv.duration(unit), pa.duration(unit))


@pytest.mark.parametrize("unit", UNITS)
def test_build_numpy_scalars_of_the_type_unit_like_pyarrow(unit: str) -> None:
    for v in (7, -7, 1_001_001, -1_001_001):
        _same_as_pyarrow([np.datetime64(v, unit), None], qv.timestamp(unit), pa.timestamp(unit))
        _same_as_pyarrow([np.timedelta64(v, unit), None], qv.duration(unit), pa.duration(unit))


@pytest.mark.parametrize("unit", UNITS)
def test_build_pandas_values_in_and_past_the_nanosecond_range(unit: str) -> None:
    ts = [pd.Timestamp("3000-01-01 00:00:00.000001"), pd.Timestamp(-1_001_001),
          datetime.datetime(2020, 1, 1, 0, 0, 0, 7)]
    _same_as_pyarrow(ts, qv.timestamp(unit), pa.timestamp(unit))
    _same_as_pyarrow(ts[1:], qv.timestamp(unit), pa.timestamp(unit))
    td = [pd.Timedelta(np.timedelta64(200_000, "D")), pd.Timedelta(-1_001_001),
          datetime.timedelta(microseconds=7)]
    _same_as_pyarrow(td, qv.duration(unit), pa.duration(unit))
    _same_as_pyarrow(td[1:], qv.duration(unit), pa.duration(unit))


def test_build_numpy_scalars_of_other_units_are_converted_exactly() -> None:
    # pyarrow refuses a unit other than the type's; quiver converts exactly, and refuses
    # what a coarser unit would floor (as a numpy array's safe conversion does)
    got = qv.array([np.datetime64(-1_000_000, "ns"), np.datetime64(2, "s")], qv.timestamp("ms"))
    assert got.cast(qv.int64()).to_pylist() == [-1, 2000]
    with pytest.raises(qv.ArrowInvalid, match="exactly"):
        qv.array([np.datetime64(-1_001_001, "ns")], qv.timestamp("ms"))
    got = qv.array([np.timedelta64(3, "D"), np.timedelta64(-1000, "ns")], qv.duration("us"))
    assert got.cast(qv.int64()).to_pylist() == [3 * 86_400_000_000, -1]
    with pytest.raises(qv.ArrowInvalid, match="duration"):
        qv.array([np.timedelta64(10**6, "D")], qv.duration("ns"))  # does not fit
    with pytest.raises(qv.ArrowInvalid, match="timestamp"):
        qv.array([np.datetime64(10**6, "D")], qv.timestamp("ns"))


def test_build_numpy_timedelta64_scalars() -> None:
    assert qv.array([np.timedelta64(5, "s")]).type != qv.uint64()
    assert qv.array([np.timedelta64(3, "D")], qv.duration("s")).to_pylist() == [
        datetime.timedelta(days=3)]  # found timedelta(seconds=3)


def test_numpy_timedelta64_is_not_an_integer() -> None:
    for dtype in (qv.int64(), qv.float64(), qv.timestamp("s"), qv.time64("us"),
                  qv.decimal128(5, 0)):
        with pytest.raises(qv.ArrowTypeError, match="timedelta64"):
            qv.array([np.timedelta64(5, "s")], dtype)


def test_build_duration_overflow() -> None:
    big = datetime.timedelta(days=999_999_999)
    assert qv.array([big], qv.duration("s")).to_pylist() == [big]  # fits in seconds
    with pytest.raises(qv.ArrowError):
        qv.array([big], qv.duration("us"))  # does not fit: silently wrapped


def test_build_nat_raises_quiver_error() -> None:
    for ty in (qv.timestamp("us"), qv.date32()):
        with pytest.raises(qv.ArrowTypeError, match="found NaT"):
            qv.array([pd.NaT], ty)
    with pytest.raises(qv.ArrowTypeError, match="found NaT"):
        qv.array([pd.NaT], qv.duration("ns"))


@pytest.mark.parametrize("unit", UNITS)
def test_numpy_nat_scalars_are_nulls(unit: str) -> None:
    for values, dtype in [([np.datetime64("NaT", unit), 5, None], qv.timestamp(unit)),
                          ([np.timedelta64("NaT", unit), 5, None], qv.duration(unit)),
                          ([np.datetime64("NaT"), np.datetime64(5, unit)], qv.timestamp(unit))]:
        got = qv.array(values, dtype)
        assert got.null_count == len(values) - 1 and got.to_pylist()[0] is None
        got.validate(full=True)
    assert qv.array([np.datetime64("NaT", "D"), None], qv.date32()).null_count == 2


def test_build_decimal_from_ints_checks_the_precision() -> None:
    for values, ty in [([2**70], qv.decimal32(3, 1)), ([-(2**70)], qv.decimal64(18, 0)),
                       ([2**70], qv.decimal128(3, 1)), ([2**300], qv.decimal256(76, 0)),
                       ([100], qv.decimal32(3, 1))]:
        with pytest.raises(qv.ArrowInvalid, match="precision"):
            qv.array(values, ty)
    assert qv.array([99, -99, None], qv.decimal32(3, 1)).to_pylist() == [
        Decimal("99.0"), Decimal("-99.0"), None]
    assert qv.array([2**70], qv.decimal128(38, 0)).to_pylist() == [Decimal(2**70)]
